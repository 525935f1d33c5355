/**
 * Integrations: provider credentials at organisation level (every workspace's providers may use
 * them) or for one workspace. List (by level and status), create, edit (the key and secret fields
 * write-only: blank keeps them), archive. Providers (the next page) put them to use.
 */
import type { JSX } from 'preact';
import { useState } from 'preact/hooks';
import { api, type ListPage } from '../api';
import { Badge, Button, Dialog, Empty, ErrorNote, Loaded, Page, Pager, SelectField, Table, TextField, fmtTime, useAction, useEditing, useLoad, useSession } from '../ui';
import type { Session } from '../session';
import { useWorkspaces } from './api-keys';
import { ProviderFields, ProviderSelect, SecretField, fieldsBody, initialFields, providerLabel, type FieldValues } from './provider-fields';

export interface Integration {
  id: string;
  slug: string;
  name: string;
  ai_provider_id: string;
  description: string | null;
  status: string;
  workspace_id: string | null;
  created_at: string;
}

interface IntegrationDetail extends Integration {
  masked_key: string | null;
  configurations: Record<string, unknown>;
}

type Action = 'create' | 'update' | 'delete';

/** Whether the session may act on an integration of this level (the API decides per record). */
function may(session: Session, workspaceId: string | null, action: Action): boolean {
  if (workspaceId !== null) return session.can(`workspace_integrations.${action}`);
  return session.isOrganisation && session.can(`organisation_integrations.${action}`);
}

const PAGE_SIZE = 25;

export function Integrations(): JSX.Element {
  const session = useSession();
  const workspaces = useWorkspaces();
  const [type, setType] = useState('all');
  const [status, setStatus] = useState('active');
  const [page, setPage] = useState(0);
  const list = useLoad((signal) => api.get<ListPage<Integration>>('/v1/integrations', { type, status, current_page: page, page_size: PAGE_SIZE }, signal), [type, status, page]);
  const dialog = useEditing<Integration>(list.reload);
  const canCreate = may(session, null, 'create') || may(session, session.principal.workspace_id ?? '', 'create');
  const wsName = (id: string | null): string => (id === null ? 'organisation-wide' : workspaces.list.find((w) => w.id === id)?.slug ?? id);
  const levels: Array<[string, string]> = [['all', 'All'], ...(session.can('organisation_integrations.list') ? [['organisation', 'Organisation-wide'] as [string, string]] : []), ...(session.can('workspace_integrations.list') ? [['workspace', 'Workspace'] as [string, string]] : [])];

  return (
    <Page
      title="Integrations"
      description="Provider credentials, kept sealed. Workspaces turn an integration into a provider (next page) that requests name as @slug/model."
      actions={canCreate && <Button kind="primary" onClick={() => dialog.open('new')}>Create integration</Button>}
    >
      <div class="filters">
        <SelectField label="Level" value={type} onChange={(v) => { setType(v); setPage(0); }} options={levels} />
        <SelectField label="Status" value={status} onChange={(v) => { setStatus(v); setPage(0); }} options={[['active', 'Active'], ['archived', 'Archived']]} />
      </div>
      <Loaded state={list}>
        {(data) => (
          <>
            <Table
              caption="Integrations"
              rows={data.data}
              rowKey={(i) => i.id}
              empty={<Empty title="No integrations here.">{canCreate ? 'Create one with “Create integration”: the provider, its API key and settings. Then add a provider for a workspace.' : 'An administrator creates integrations; this key may not.'}</Empty>}
              columns={[
                { label: 'Name', render: (i) => <Button class="link" onClick={() => dialog.open(i)}>{i.name}</Button> },
                { label: 'Slug', render: (i) => <code>{i.slug}</code> },
                { label: 'Provider', render: (i) => providerLabel(i.ai_provider_id) },
                { label: 'Level', render: (i) => wsName(i.workspace_id) },
                { label: 'Status', render: (i) => <Badge tone={i.status === 'active' ? 'ok' : 'plain'}>{i.status}</Badge> },
                { label: 'Created', render: (i) => fmtTime(i.created_at) },
              ]}
            />
            <Pager page={page} pageSize={PAGE_SIZE} total={data.total} onPage={setPage} />
          </>
        )}
      </Loaded>
      {dialog.current === 'new' && <IntegrationDialog current={null} onClose={dialog.close} onSaved={dialog.done} />}
      {dialog.current !== null && dialog.current !== 'new' && <LoadedIntegration slug={dialog.current.slug} onClose={dialog.close} onSaved={dialog.done} />}
    </Page>
  );
}

/** The detail (masked key, configurations) is loaded before the edit form opens. */
function LoadedIntegration(props: { slug: string; onClose: () => void; onSaved: () => void }): JSX.Element {
  const detail = useLoad((signal) => api.get<IntegrationDetail>(`/v1/integrations/${encodeURIComponent(props.slug)}`, undefined, signal), [props.slug]);
  if (detail.data === undefined) {
    return (
      <Dialog title="Integration" open onClose={props.onClose}>
        <Loaded state={detail}>{() => null}</Loaded>
      </Dialog>
    );
  }
  return <IntegrationDialog current={detail.data} onClose={props.onClose} onSaved={props.onSaved} />;
}

function IntegrationDialog(props: { current: IntegrationDetail | null; onClose: () => void; onSaved: () => void }): JSX.Element {
  const session = useSession();
  const workspaces = useWorkspaces();
  const c = props.current;
  const editing = c !== null;
  const orgCreate = may(session, null, 'create');
  const [level, setLevel] = useState(session.isOrganisation && orgCreate ? '' : session.principal.workspace_id ?? workspaces.list[0]?.id ?? '');
  const [name, setName] = useState(c?.name ?? '');
  const [slug, setSlug] = useState('');
  const [provider, setProvider] = useState(c?.ai_provider_id ?? 'openai');
  const [description, setDescription] = useState(c?.description ?? '');
  const [key, setKey] = useState('');
  const stored = c?.configurations ?? {};
  const [customHost, setCustomHost] = useState(typeof stored.custom_host === 'string' ? stored.custom_host : '');
  const [fields, setFields] = useState<FieldValues>(initialFields(provider, stored));
  /** Secret fields the API reports as set (`masked_<name>`), without their values. */
  const setSecrets = new Set(Object.keys(stored).filter((k) => k.startsWith('masked_')).map((k) => k.slice('masked_'.length)));
  const mayWrite = editing ? may(session, c.workspace_id, 'update') && c.status === 'active' : true;

  const save = useAction(async () => {
    const configurations = fieldsBody(provider, fields, editing ? initialFields(provider, stored) : null);
    const host = customHost.trim();
    if (editing) {
      if (host !== (typeof stored.custom_host === 'string' ? stored.custom_host : '')) configurations.custom_host = host === '' ? null : host;
      const body: Record<string, unknown> = { name: name.trim(), configurations };
      if (key !== '') body.key = key;
      if (description.trim() !== (c.description ?? '')) body.description = description.trim() === '' ? null : description.trim();
      await api.put(`/v1/integrations/${encodeURIComponent(c.slug)}`, body);
    } else {
      if (host !== '') configurations.custom_host = host;
      const body: Record<string, unknown> = { name: name.trim(), ai_provider_id: provider, configurations };
      if (slug.trim() !== '') body.slug = slug.trim();
      if (key !== '') body.key = key;
      if (description.trim() !== '') body.description = description.trim();
      // An organisation key that may not create organisation-wide ones names a workspace.
      const target = level !== '' || orgCreate ? level : (workspaces.list[0]?.id ?? '');
      if (session.isOrganisation && target !== '') body.workspace_id = target;
      await api.post('/v1/integrations', body);
    }
    props.onSaved();
  });
  const archive = useAction(async () => {
    if (!confirm(`Archive the integration “${c!.name}”? Providers built on it stop resolving.`)) return;
    await api.del(`/v1/integrations/${encodeURIComponent(c!.slug)}`);
    props.onSaved();
  });

  const levelOptions: Array<[string, string]> = [
    ...(orgCreate ? [['', 'Organisation-wide'] as [string, string]] : []),
    ...(session.can('workspace_integrations.create') ? workspaces.list.map((w): [string, string] => [w.id, `Workspace ${w.slug}`]) : []),
  ];

  return (
    <Dialog title={editing ? `Integration “${c.name}”` : 'Create an integration'} open onClose={props.onClose} wide>
      <form onSubmit={(e) => { e.preventDefault(); void save.run(); }}>
        {editing && (
          <dl class="facts org-facts">
            <dt>Slug</dt>
            <dd><code>{c.slug}</code></dd>
            <dt>Provider</dt>
            <dd>{providerLabel(c.ai_provider_id)}</dd>
            <dt>Level</dt>
            <dd>{c.workspace_id === null ? 'organisation-wide' : c.workspace_id}</dd>
            <dt>Status</dt>
            <dd>{c.status}</dd>
          </dl>
        )}
        <div class="form-grid">
          <TextField label="Name" value={name} onInput={setName} required placeholder="OpenAI (company account)" />
          {!editing && <TextField label="Slug" value={slug} onInput={setSlug} placeholder="openai-company" hint="Optional; made from the name when blank." />}
          {!editing && <ProviderSelect value={provider} onChange={(p) => { setProvider(p); setFields({}); }} />}
          {!editing && session.isOrganisation && levelOptions.length > 0 && <SelectField label="Level" value={level} onChange={setLevel} options={levelOptions} />}
        </div>
        <div class="form-grid">
          <SecretField label="Provider API key" value={key} onInput={setKey} editing={editing} isSet={editing ? c.masked_key !== null : undefined} />
          <TextField label="Custom host" value={customHost} onInput={setCustomHost} placeholder="https://llm.internal.example/v1" hint="Optional base URL instead of the provider's." />
          <TextField label="Description" value={description} onInput={setDescription} />
        </div>
        <ProviderFields provider={provider} values={fields} onChange={setFields} editing={editing} setSecrets={editing ? setSecrets : undefined} />
        <ErrorNote error={save.error ?? archive.error} />
        <div class="row end">
          {editing && c.status === 'active' && may(session, c.workspace_id, 'delete') && (
            <Button kind="danger" busy={archive.busy} onClick={() => void archive.run()}>
              Archive
            </Button>
          )}
          <Button onClick={props.onClose}>Cancel</Button>
          {mayWrite && (
            <Button kind="primary" type="submit" busy={save.busy} disabled={name.trim() === '' || (!editing && levelOptions.length === 0 && session.isOrganisation)}>
              {editing ? 'Save' : 'Create'}
            </Button>
          )}
        </div>
      </form>
    </Dialog>
  );
}
