/**
 * Providers: a workspace's instance of an integration, with its own slug, limits and expiry.
 * Requests name it as the model `@<slug>/<model>`; the credentials stay on the integration.
 * List, create, edit (name, note, limits, expiry), reset usage, delete.
 */
import type { JSX } from 'preact';
import { useState } from 'preact/hooks';
import { api, type ListPage } from '../api';
import { Badge, Button, Dialog, Empty, ErrorNote, Page, SelectField, TextField, fmtTime, useAction, useLoad, useSession } from '../ui';
import { useWorkspaces } from './api-keys';
import type { Integration } from './integrations';
import { ExpiryField, LimitsFields, isoOf, limitsBody, limitsChanges, limitsForm, limitsText, localInput, providerLabel, useLimitedList, LimitedList, useUsageActions, UsageButtons, type RateLimit, type UsageLimits } from './provider-fields';

interface Provider {
  id: string;
  slug: string;
  name: string;
  integration_id: string | null;
  ai_provider_id: string | null;
  workspace_id: string;
  note: string | null;
  status: string;
  usage_limits: UsageLimits | null;
  rate_limits: RateLimit[];
  expires_at: string | null;
  created_at: string;
}

export function Providers(): JSX.Element {
  const session = useSession();
  const state = useLimitedList<Provider>('/v1/providers');
  const { dialog, wsName } = state;
  const canCreate = session.can('providers.create');
  const canOpen = session.canAny('providers.update', 'providers.delete');

  return (
    <Page
      title="Providers"
      description={<>A workspace's use of an integration. Requests pick it with the model <code>@&lt;slug&gt;/&lt;model&gt;</code>; its limits and expiry are its own.</>}
      actions={canCreate && <Button kind="primary" onClick={() => dialog.open('new')}>Add provider</Button>}
    >
      <LimitedList
        state={state}
        organisation={session.isOrganisation}
        caption="Providers"
        empty={<Empty title="No providers yet.">{canCreate ? 'Add one with “Add provider”, built on an integration (create the integration first on the Integrations page).' : 'This key may not add providers.'}</Empty>}
        columns={[
          { label: 'Name', render: (p) => (canOpen ? <Button class="link" onClick={() => dialog.open(p)}>{p.name}</Button> : p.name) },
          { label: 'Model prefix', render: (p) => <code>@{p.slug}/</code> },
          { label: 'Integration', render: (p) => (p.integration_id === null ? <span class="muted">gone</span> : <code>{p.integration_id}</code>) },
          { label: 'Provider', render: (p) => providerLabel(p.ai_provider_id) },
          { label: 'Workspace', render: (p) => wsName(p.workspace_id) },
          { label: 'Limits', render: (p) => limitsText(p.rate_limits, p.usage_limits) },
          { label: 'Status', render: (p) => <Badge tone={p.status === 'active' ? 'ok' : 'bad'}>{p.status}</Badge> },
          { label: 'Created', render: (p) => fmtTime(p.created_at) },
        ]}
        dialog={(current) => <ProviderDialog current={current} onClose={dialog.close} onSaved={dialog.done} />}
      />
    </Page>
  );
}

function ProviderDialog(props: { current: Provider | null; onClose: () => void; onSaved: () => void }): JSX.Element {
  const session = useSession();
  const workspaces = useWorkspaces();
  const c = props.current;
  const editing = c !== null;
  const [name, setName] = useState(c?.name ?? '');
  const [slug, setSlug] = useState('');
  const [workspace, setWorkspace] = useState(session.principal.workspace_id ?? '');
  const [integration, setIntegration] = useState('');
  const [note, setNote] = useState(c?.note ?? '');
  const [expires, setExpires] = useState(localInput(c?.expires_at));
  const [limits, setLimits] = useState(limitsForm(c?.rate_limits, c?.usage_limits));
  const canListIntegrations = session.canAny('organisation_integrations.list', 'workspace_integrations.list');
  const integrations = useLoad(
    async (signal) => (editing || !canListIntegrations ? [] : (await api.get<ListPage<Integration>>('/v1/integrations', { workspace_id: workspace || undefined, page_size: 500 }, signal)).data),
    [workspace],
  );
  const mayWrite = editing ? session.can('providers.update') : true;

  const save = useAction(async () => {
    const expiry = isoOf(expires);
    if (editing) {
      const body: Record<string, unknown> = { name: name.trim(), ...limitsChanges(limits, limitsForm(c.rate_limits, c.usage_limits)) };
      if (note.trim() !== (c.note ?? '')) body.note = note.trim() === '' ? null : note.trim();
      if (expires !== localInput(c.expires_at)) body.expires_at = expiry;
      await api.put(`/v1/providers/${encodeURIComponent(c.slug)}`, body);
    } else {
      const { rate_limits, usage_limits } = limitsBody(limits);
      const body: Record<string, unknown> = { name: name.trim(), integration_id: integration.trim(), rate_limits };
      if (usage_limits !== null) body.usage_limits = usage_limits;
      if (slug.trim() !== '') body.slug = slug.trim();
      if (workspace !== '') body.workspace_id = workspace;
      if (note.trim() !== '') body.note = note.trim();
      if (expiry !== null) body.expires_at = expiry;
      await api.post('/v1/providers', body);
    }
    props.onSaved();
  });
  const usage = useUsageActions(
    () => `/v1/providers/${encodeURIComponent(c!.slug)}`,
    () => `Delete the provider “${c!.name}”? Models named @${c!.slug}/… stop resolving; the integration stays.`,
    props.onSaved,
  );
  const choices = (integrations.data ?? []).filter((i) => i.status === 'active');

  return (
    <Dialog title={editing ? `Provider “${c.name}”` : 'Add a provider'} open onClose={props.onClose} wide>
      <form onSubmit={(e) => { e.preventDefault(); void save.run(); }}>
        {editing && (
          <dl class="facts org-facts">
            <dt>Model prefix</dt>
            <dd><code>@{c.slug}/</code></dd>
            <dt>Integration</dt>
            <dd>{c.integration_id ?? 'gone'} ({providerLabel(c.ai_provider_id)})</dd>
            <dt>Status</dt>
            <dd>{c.status}</dd>
          </dl>
        )}
        <div class="form-grid">
          <TextField label="Name" value={name} onInput={setName} required placeholder="OpenAI for billing" />
          {!editing && <TextField label="Slug" value={slug} onInput={setSlug} placeholder="openai-billing" hint="Optional; made from the name when blank. Requests use @slug/model." />}
          {!editing && session.isOrganisation && (
            <SelectField label="Workspace" value={workspace} onChange={(v) => { setWorkspace(v); setIntegration(''); }} options={[['', 'Default workspace'], ...workspaces.list.map((w): [string, string] => [w.id, w.slug])]} />
          )}
          {!editing &&
            (canListIntegrations ? (
              <SelectField
                label="Integration"
                value={integration}
                onChange={setIntegration}
                options={[['', choices.length === 0 ? 'None available: create an integration first' : 'Choose an integration'], ...choices.map((i): [string, string] => [i.slug, `${i.name} (${providerLabel(i.ai_provider_id)})`])]}
              />
            ) : (
              <TextField label="Integration slug" value={integration} onInput={setIntegration} />
            ))}
          <TextField label="Note" value={note} onInput={setNote} />
          <ExpiryField value={expires} onInput={setExpires} />
        </div>
        <LimitsFields form={limits} onChange={setLimits} />
        <ErrorNote error={integrations.error ?? save.error ?? usage.error} />
        <div class="row end">
          <UsageButtons actions={usage} canDelete={editing && session.can('providers.delete')} canReset={editing && mayWrite && c.usage_limits !== null} />
          <Button onClick={props.onClose}>Cancel</Button>
          {mayWrite && (
            <Button kind="primary" type="submit" busy={save.busy} disabled={name.trim() === '' || (!editing && integration.trim() === '')}>
              {editing ? 'Save' : 'Add'}
            </Button>
          )}
        </div>
      </form>
    </Dialog>
  );
}
