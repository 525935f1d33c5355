/**
 * Virtual keys: provider credentials the gateway holds, named by slug in requests
 * (`x-gateway-virtual-key: <slug>` or `@<slug>/<model>`). List, create and edit (provider key and
 * secret provider fields write-only: blank on edit keeps them), limits, reset usage, delete.
 */
import type { JSX } from 'preact';
import { useState } from 'preact/hooks';
import { api } from '../api';
import { Badge, Button, Dialog, Empty, ErrorNote, Page, SelectField, TextField, fmtTime, useAction, useSession } from '../ui';
import { useWorkspaces } from './api-keys';
import {
  ExpiryField, LimitsFields, ProviderFields, ProviderSelect, SecretField,
  fieldsBody, initialFields, isoOf, limitsBody, limitsChanges, limitsForm, limitsText, localInput, providerLabel, useLimitedList, LimitedList, useUsageActions, UsageButtons,
  type FieldValues, type RateLimit, type UsageLimits,
} from './provider-fields';

interface VirtualKey {
  id: string;
  slug: string;
  name: string;
  note: string | null;
  provider: string;
  status: string;
  masked_key: string | null;
  custom_host: string | null;
  custom_header_names: string[];
  model_config: Record<string, unknown>;
  usage_limits: UsageLimits | null;
  rate_limits: RateLimit[];
  expires_at: string | null;
  workspace_id: string;
  created_at: string;
}

export function VirtualKeys(): JSX.Element {
  const session = useSession();
  const state = useLimitedList<VirtualKey>('/v1/virtual-keys');
  const { dialog, wsName } = state;
  const canCreate = session.can('virtual_keys.create');
  const canEdit = session.can('virtual_keys.update') || session.can('virtual_keys.delete');

  return (
    <Page
      title="Virtual keys"
      description={<>A provider key the gateway keeps for you. Apps send <code>x-gateway-virtual-key: &lt;slug&gt;</code> (or the model <code>@&lt;slug&gt;/&lt;model&gt;</code>) and never see the provider key.</>}
      actions={canCreate && <Button kind="primary" onClick={() => dialog.open('new')}>Create virtual key</Button>}
    >
      <LimitedList
        state={state}
        organisation={session.isOrganisation}
        caption="Virtual keys"
        empty={<Empty title="No virtual keys yet.">{canCreate ? 'Create one with “Create virtual key”: pick the provider and paste its API key; apps then use the slug.' : 'This key may not create virtual keys.'}</Empty>}
        columns={[
          { label: 'Name', render: (k) => (canEdit ? <Button class="link" onClick={() => dialog.open(k)}>{k.name}</Button> : k.name) },
          { label: 'Slug', render: (k) => <code>{k.slug}</code> },
          { label: 'Provider', render: (k) => providerLabel(k.provider) },
          { label: 'Key', render: (k) => (k.masked_key === null ? <span class="muted">none</span> : <Badge>set</Badge>) },
          { label: 'Workspace', render: (k) => wsName(k.workspace_id) },
          { label: 'Limits', render: (k) => limitsText(k.rate_limits, k.usage_limits) },
          { label: 'Status', render: (k) => <Badge tone={k.status === 'active' ? 'ok' : 'bad'}>{k.status}</Badge> },
          { label: 'Created', render: (k) => fmtTime(k.created_at) },
        ]}
        dialog={(current) => <VirtualKeyDialog current={current} onClose={dialog.close} onSaved={dialog.done} />}
      />
    </Page>
  );
}

/** Create (current null) or edit a virtual key. */
function VirtualKeyDialog(props: { current: VirtualKey | null; onClose: () => void; onSaved: () => void }): JSX.Element {
  const session = useSession();
  const workspaces = useWorkspaces();
  const c = props.current;
  const editing = c !== null;
  const [name, setName] = useState(c?.name ?? '');
  const [slug, setSlug] = useState('');
  const [provider, setProvider] = useState(c?.provider ?? 'openai');
  const [workspace, setWorkspace] = useState(session.principal.workspace_id ?? '');
  const [key, setKey] = useState('');
  const [customHost, setCustomHost] = useState(c?.custom_host ?? '');
  const [note, setNote] = useState(c?.note ?? '');
  const [expires, setExpires] = useState(localInput(c?.expires_at));
  const [fields, setFields] = useState<FieldValues>(initialFields(provider, c?.model_config));
  const [limits, setLimits] = useState(limitsForm(c?.rate_limits, c?.usage_limits));
  const mayWrite = editing ? session.can('virtual_keys.update') : true;

  const save = useAction(async () => {
    const body: Record<string, unknown> = {
      name: name.trim(),
      ...fieldsBody(provider, fields, editing ? initialFields(provider, c.model_config) : null),
      ...(editing ? limitsChanges(limits, limitsForm(c.rate_limits, c.usage_limits)) : limitsBody(limits)),
    };
    if (key !== '') body.key = key;
    const host = customHost.trim();
    const expiry = isoOf(expires);
    if (editing) {
      if (host !== (c.custom_host ?? '')) body.custom_host = host === '' ? null : host;
      if (note.trim() !== (c.note ?? '')) body.note = note.trim() === '' ? null : note.trim();
      if (expiry !== c.expires_at && expires !== localInput(c.expires_at)) body.expires_at = expiry;
      await api.put(`/v1/virtual-keys/${encodeURIComponent(c.slug)}`, body);
    } else {
      body.provider = provider;
      if (slug.trim() !== '') body.slug = slug.trim();
      if (workspace !== '') body.workspace_id = workspace;
      if (host !== '') body.custom_host = host;
      if (note.trim() !== '') body.note = note.trim();
      if (expiry !== null) body.expires_at = expiry;
      if (body.usage_limits === null) delete body.usage_limits;
      await api.post('/v1/virtual-keys', body);
    }
    props.onSaved();
  });
  const usage = useUsageActions(
    () => `/v1/virtual-keys/${encodeURIComponent(c!.slug)}`,
    () => `Delete the virtual key “${c!.name}”? Requests naming “${c!.slug}” fail from now on.`,
    props.onSaved,
  );

  return (
    <Dialog title={editing ? `Virtual key “${c.name}”` : 'Create a virtual key'} open onClose={props.onClose} wide>
      <form onSubmit={(e) => { e.preventDefault(); void save.run(); }}>
        {editing && (
          <dl class="facts org-facts">
            <dt>Slug</dt>
            <dd><code>{c.slug}</code></dd>
            <dt>Provider</dt>
            <dd>{providerLabel(c.provider)}</dd>
            <dt>Status</dt>
            <dd>{c.status}</dd>
            {c.custom_header_names.length > 0 && (
              <>
                <dt>Custom headers</dt>
                <dd>{c.custom_header_names.join(', ')}</dd>
              </>
            )}
          </dl>
        )}
        <div class="form-grid">
          <TextField label="Name" value={name} onInput={setName} required placeholder="OpenAI production" />
          {!editing && <TextField label="Slug" value={slug} onInput={setSlug} placeholder="openai-prod" hint="Optional; made from the name when blank." />}
          {!editing && (
            <ProviderSelect
              value={provider}
              onChange={(p) => {
                setProvider(p);
                setFields({});
              }}
            />
          )}
          {!editing && session.isOrganisation && (
            <SelectField label="Workspace" value={workspace} onChange={setWorkspace} options={[['', 'Default workspace'], ...workspaces.list.map((w): [string, string] => [w.id, w.slug])]} />
          )}
        </div>
        <div class="form-grid">
          <SecretField label="Provider API key" value={key} onInput={setKey} editing={editing} isSet={c?.masked_key !== null} />
          <TextField label="Custom host" value={customHost} onInput={setCustomHost} placeholder="https://llm.internal.example/v1" hint="Optional base URL instead of the provider's." />
          <TextField label="Note" value={note} onInput={setNote} />
          <ExpiryField value={expires} onInput={setExpires} />
        </div>
        <ProviderFields provider={provider} values={fields} onChange={setFields} editing={editing} />
        <LimitsFields form={limits} onChange={setLimits} />
        <ErrorNote error={save.error ?? usage.error} />
        <div class="row end">
          <UsageButtons actions={usage} canDelete={editing && session.can('virtual_keys.delete')} canReset={editing && mayWrite && c.usage_limits !== null} />
          <Button onClick={props.onClose}>Cancel</Button>
          {mayWrite && (
            <Button kind="primary" type="submit" busy={save.busy} disabled={name.trim() === ''}>
              {editing ? 'Save' : 'Create'}
            </Button>
          )}
        </div>
      </form>
    </Dialog>
  );
}
