/**
 * Audit log: every admin write (who, what, where from, the outcome), newest first. Filters by
 * actor (API key or user), action, resource type, method, status, workspace and time range;
 * open an entry to see all its fields and the request body it recorded (secrets masked).
 */
import type { JSX } from 'preact';
import { useState } from 'preact/hooks';
import { api, type ListPage } from '../api';
import { Button, Dialog, Empty, Field, Json, Loaded, Page, Pager, SelectField, StatusBadge, Table, TextField, fmtTime, useLoad, useSession } from '../ui';
import { useWorkspaces } from './api-keys';
import { isoOf } from './provider-fields';
import './audit.css';

interface AuditRecord {
  id: string;
  timestamp: string;
  method: string;
  uri: string;
  request_id: string;
  request_body: string;
  query_params: string;
  user_id: string | null;
  api_key_id: string | null;
  user_type: 'user' | 'api_key';
  workspace_id: string | null;
  response_status_code: number;
  resource_type: string;
  action: string;
  client_ip: string;
}

interface Filters {
  resource_type: string;
  action: string;
  method: string;
  actorKind: '' | 'api_key' | 'user';
  actor: string;
  workspace_id: string;
  response_status_code: string;
  start: string;
  end: string;
}

/** Resource types the gateway's admin routes record (the API does not list them). */
const RESOURCE_TYPES = [
  'api_key', 'config', 'guardrails', 'integration', 'invite', 'log_export', 'mcp_integration', 'mcp_server', 'model_pricing',
  'provider', 'rate_limits_policy', 'usage_limits_policy', 'user', 'virtual_key', 'workspace', 'workspace_member',
];
const ACTIONS = ['create', 'update', 'delete', 'rotate', 'reset', 'resend', 'accept', 'export', 'cancel'];
const EMPTY: Filters = { resource_type: '', action: '', method: '', actorKind: '', actor: '', workspace_id: '', response_status_code: '', start: '', end: '' };
const PAGE_SIZE = 50;

/** The query for the API: the actor id is a user's id when the kind says user, else an API key's. */
function query(f: Filters, page: number): Record<string, string | number | undefined> {
  const id = f.actor.trim();
  const kind = f.actorKind === 'user' ? 'user_id' : 'api_key_id';
  return {
    user_type: f.actorKind || undefined,
    resource_type: f.resource_type || undefined,
    action: f.action.trim() || undefined,
    method: f.method || undefined,
    [kind]: id || undefined,
    workspace_id: f.workspace_id || undefined,
    response_status_code: f.response_status_code || undefined,
    start_time: isoOf(f.start) ?? undefined,
    end_time: isoOf(f.end) ?? undefined,
    current_page: page,
    page_size: PAGE_SIZE,
  };
}

export function Audit(): JSX.Element {
  const [draft, setDraft] = useState<Filters>(EMPTY);
  const [filters, setFilters] = useState<Filters>(EMPTY);
  const [page, setPage] = useState(0);
  const [shown, setShown] = useState<AuditRecord | null>(null);
  const records = useLoad((signal) => api.get<ListPage<AuditRecord>>('/v1/audit-logs', query(filters, page), signal), [filters, page]);
  const apply = (f: Filters): void => {
    setDraft(f);
    setFilters(f);
    setPage(0);
  };
  const filtered = JSON.stringify(filters) !== JSON.stringify(EMPTY);
  const names = useKeyNames();

  return (
    <Page title="Audit log" description="Every change made through the admin API, refused attempts included. Reads are not recorded. Without a time range: the last 30 days.">
      <AuditFilters draft={draft} onDraft={setDraft} onApply={() => apply(draft)} onClear={() => apply(EMPTY)} />
      <Loaded state={records}>
        {(data) => (
          <>
            <p class="muted" role="status">
              {data.total} {data.total === 1 ? 'entry' : 'entries'}
            </p>
            <Table
              caption="Audit log entries"
              rows={data.data}
              rowKey={(r) => r.id}
              empty={
                <Empty title={filtered ? 'No entries match these filters.' : 'Nothing recorded in the last 30 days.'}>
                  {filtered ? 'Widen the time range or clear the filters.' : 'Changes made through the admin API or this console (creating a key, a workspace, …) appear here.'}
                </Empty>
              }
              columns={[
                { label: 'Time', render: (r) => <Button class="link" aria-label={`Open the entry of ${fmtTime(r.timestamp)}: ${r.action} ${r.resource_type}`} onClick={() => setShown(r)}>{fmtTime(r.timestamp)}</Button> },
                { label: 'Action', render: (r) => r.action },
                { label: 'Resource', render: (r) => r.resource_type },
                { label: 'Request', render: (r) => <code class="audit-uri">{r.method} {r.uri}</code> },
                { label: 'Status', render: (r) => <StatusBadge status={r.response_status_code} /> },
                { label: 'Actor', render: (r) => <Actor r={r} names={names} /> },
              ]}
            />
            <Pager page={page} pageSize={PAGE_SIZE} total={data.total} onPage={setPage} />
          </>
        )}
      </Loaded>
      {shown !== null && <AuditEntry record={shown} onClose={() => setShown(null)} onActor={(actorKind, actor) => { setShown(null); apply({ ...EMPTY, actorKind, actor }); }} />}
    </Page>
  );
}

/** API key names by id, when the key may list keys (the audit records carry ids only). */
function useKeyNames(): Map<string, string> {
  const session = useSession();
  const may = session.canAny('organisation_service_api_keys.list', 'workspace_service_api_keys.list', 'workspace_user_api_keys.list');
  const keys = useLoad(async (signal) => (may ? (await api.get<ListPage<{ id: string; name: string }>>('/v1/api-keys', { page_size: 500 }, signal)).data : []), [may]);
  return new Map((keys.data ?? []).map((k) => [k.id, k.name]));
}

function Actor({ r, names }: { r: AuditRecord; names: Map<string, string> }): JSX.Element {
  if (r.user_type === 'user' && r.user_id !== null) return <span>user <code>{r.user_id.slice(0, 8)}…</code></span>;
  if (r.api_key_id !== null) {
    const name = names.get(r.api_key_id);
    return name === undefined ? <span>key <code>{r.api_key_id.slice(0, 8)}…</code></span> : <span>key “{name}”</span>;
  }
  return <span class="muted">—</span>;
}

function AuditFilters(props: { draft: Filters; onDraft: (f: Filters) => void; onApply: () => void; onClear: () => void }): JSX.Element {
  const session = useSession();
  const workspaces = useWorkspaces();
  const f = props.draft;
  const set = <K extends keyof Filters>(k: K) => (v: string) => props.onDraft({ ...f, [k]: v });
  const time = (k: 'start' | 'end', label: string): JSX.Element => (
    <Field label={label}>{(id) => <input id={id} type="datetime-local" value={f[k]} onInput={(e) => set(k)((e.currentTarget as HTMLInputElement).value)} />}</Field>
  );
  return (
    <form class="filters" aria-label="Filter the audit log" onSubmit={(e) => { e.preventDefault(); props.onApply(); }}>
      <SelectField label="Resource type" value={f.resource_type} onChange={set('resource_type')} options={[['', 'Any'], ...RESOURCE_TYPES.map((t): [string, string] => [t, t.replace(/_/g, ' ')])]} />
      <Field label="Action">
        {(id) => (
          <>
            <input id={id} list={`${id}-list`} value={f.action} onInput={(e) => set('action')((e.currentTarget as HTMLInputElement).value)} placeholder="any" />
            <datalist id={`${id}-list`}>{ACTIONS.map((a) => <option key={a} value={a} />)}</datalist>
          </>
        )}
      </Field>
      <SelectField label="Method" value={f.method} onChange={set('method')} options={[['', 'Any'], ['POST', 'POST'], ['PUT', 'PUT'], ['PATCH', 'PATCH'], ['DELETE', 'DELETE']]} />
      <SelectField label="Actor kind" value={f.actorKind} onChange={set('actorKind')} options={[['', 'Anyone'], ['api_key', 'API key'], ['user', 'User']]} />
      <TextField label="Actor id" value={f.actor} onInput={set('actor')} placeholder={f.actorKind === 'user' ? 'user id' : 'API key id'} />
      {session.isOrganisation && workspaces.list.length > 0 && (
        <SelectField label="Workspace" value={f.workspace_id} onChange={set('workspace_id')} options={[['', 'Any'], ...workspaces.list.map((w): [string, string] => [w.id, w.slug])]} />
      )}
      <TextField label="Status code" type="number" value={f.response_status_code} onInput={set('response_status_code')} placeholder="any" />
      {time('start', 'From')}
      {time('end', 'Until')}
      <div class="row">
        <Button kind="primary" type="submit">Apply filters</Button>
        <Button onClick={props.onClear}>Clear</Button>
      </div>
    </form>
  );
}

function parsed(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

function AuditEntry(props: { record: AuditRecord; onClose: () => void; onActor: (kind: Filters['actorKind'], id: string) => void }): JSX.Element {
  const r = props.record;
  const workspaces = useWorkspaces();
  const byUser = r.user_type === 'user' && r.user_id !== null;
  const actor = byUser ? r.user_id! : r.api_key_id ?? '';
  return (
    <Dialog title="Audit log entry" open onClose={props.onClose} wide>
      <dl class="facts org-facts">
        <dt>Time</dt>
        <dd>{fmtTime(r.timestamp)} <span class="muted">({r.timestamp})</span></dd>
        <dt>Action</dt>
        <dd>{r.action} · {r.resource_type}</dd>
        <dt>Request</dt>
        <dd><code>{r.method} {r.uri}</code></dd>
        <dt>Status</dt>
        <dd><StatusBadge status={r.response_status_code} /></dd>
        <dt>Actor</dt>
        <dd>{r.user_type === 'user' ? `user ${r.user_id ?? '—'}` : `API key ${r.api_key_id ?? '—'}`}</dd>
        <dt>Workspace</dt>
        <dd>{r.workspace_id === null ? 'organisation' : workspaces.list.find((w) => w.id === r.workspace_id)?.slug ?? r.workspace_id}</dd>
        <dt>Client IP</dt>
        <dd>{r.client_ip}</dd>
        <dt>Request id</dt>
        <dd><code>{r.request_id}</code></dd>
      </dl>
      <h3>Request body</h3>
      <Json value={parsed(r.request_body)} />
      <h3>Query</h3>
      <Json value={parsed(r.query_params)} />
      <h3>Entry (JSON)</h3>
      <Json value={r} />
      {actor !== '' && (
        <div class="row end">
          <Button onClick={() => props.onActor(byUser ? 'user' : 'api_key', actor)}>Show this actor’s entries</Button>
        </div>
      )}
    </Dialog>
  );
}
