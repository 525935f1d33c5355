/**
 * API keys: list (by workspace), create (the raw key shown once, with copy), rotate (the new
 * secret shown once; the old one works until the transition ends), revoke. Scopes read as groups.
 */
import type { JSX } from 'preact';
import { useMemo, useState } from 'preact/hooks';
import { api, type ListPage } from '../api';
import type { KeyType } from '../session';
import {
  Badge, Button, Checkbox, Dialog, Empty, ErrorNote, Loaded, Page, Pager, ScopeGroups, SecretOnce, SelectField, Table, TextField,
  fmtTime, groupScopes, useAction, useLoad, useSession,
} from '../ui';

export interface ApiKey {
  id: string;
  key: string;
  name: string;
  description: string | null;
  type: KeyType;
  workspace_id: string | null;
  user_id: string | null;
  status: string;
  scopes: string[];
  expires_at: string | null;
  created_at: string;
  last_updated_at: string;
}

export interface Workspace {
  id: string;
  slug: string;
  name: string;
}

const KIND_LABEL: Record<KeyType, string> = {
  'organisation-service': 'Organisation (admin)',
  'workspace-service': 'Workspace service',
  'workspace-user': 'Workspace user',
};

const CREATE_PATH: Record<KeyType, string> = {
  'organisation-service': '/v1/api-keys/organisation/service',
  'workspace-service': '/v1/api-keys/workspace/service',
  'workspace-user': '/v1/api-keys/workspace/user',
};

const SCOPE_PREFIX: Record<KeyType, string> = {
  'organisation-service': 'organisation_service_api_keys',
  'workspace-service': 'workspace_service_api_keys',
  'workspace-user': 'workspace_user_api_keys',
};

const PAGE_SIZE = 25;

/** The workspaces the signed-in key can see (for pickers), or its own. */
export function useWorkspaces(): { list: Workspace[]; loaded: boolean } {
  const session = useSession();
  const state = useLoad(async (signal) => {
    if (!session.can('workspaces.list')) {
      const own = session.principal.workspace_id;
      return own === null ? [] : [{ id: own, slug: session.principal.workspace_slug ?? own, name: session.principal.workspace_slug ?? own }];
    }
    return (await api.get<ListPage<Workspace>>('/v1/admin/workspaces', { page_size: 100 }, signal)).data;
  }, []);
  return { list: state.data ?? [], loaded: state.data !== undefined };
}

export function ApiKeys(): JSX.Element {
  const session = useSession();
  const workspaces = useWorkspaces();
  const [workspace, setWorkspace] = useState('');
  const [page, setPage] = useState(0);
  const keys = useLoad((signal) => api.get<ListPage<ApiKey>>('/v1/api-keys', { workspace_id: workspace || undefined, current_page: page, page_size: PAGE_SIZE }, signal), [workspace, page]);
  const [creating, setCreating] = useState(false);
  const [shown, setShown] = useState<ApiKey | null>(null);
  const [secret, setSecret] = useState<{ label: string; value: string } | null>(null);
  const grantable = useLoad((signal) => api.get<{ data: Grantable[] }>('/v1/api-keys/grantable-scopes', undefined, signal), []);
  const kinds = grantable.data?.data ?? [];
  const wsName = (id: string | null): string => (id === null ? 'organisation' : workspaces.list.find((w) => w.id === id)?.slug ?? id);

  return (
    <Page
      title="API keys"
      description="Keys apps and people use to call the gateway and its admin API. A key's scopes say what it may do."
      actions={kinds.length > 0 && <Button kind="primary" onClick={() => setCreating(true)}>Create key</Button>}
    >
      {secret !== null && <SecretOnce label={secret.label} secret={secret.value} />}
      {session.isOrganisation && workspaces.list.length > 0 && (
        <div class="filters">
          <SelectField
            label="Workspace"
            value={workspace}
            onChange={(v) => { setWorkspace(v); setPage(0); }}
            options={[['', 'All keys'], ...workspaces.list.map((w): [string, string] => [w.id, w.slug])]}
          />
        </div>
      )}
      <Loaded state={keys}>
        {(list) => (
          <>
            <Table
              caption="API keys"
              rows={list.data}
              rowKey={(k) => k.id}
              empty={<Empty title="No keys here yet.">{kinds.length > 0 ? 'Create one with “Create key”; its secret is shown once.' : 'This key may not create keys: ask an organisation admin.'}</Empty>}
              columns={[
                { label: 'Name', render: (k) => <Button class="link" onClick={() => setShown(k)}>{k.name}</Button> },
                { label: 'Kind', render: (k) => KIND_LABEL[k.type] ?? k.type },
                { label: 'Workspace', render: (k) => wsName(k.workspace_id) },
                { label: 'Key', render: (k) => <code>{k.key}</code> },
                { label: 'Status', render: (k) => <Badge tone={k.status === 'active' ? 'ok' : 'bad'}>{k.status}</Badge> },
                { label: 'Scopes', render: (k) => `${k.scopes.length} in ${groupScopes(k.scopes).length} groups` },
                { label: 'Created', render: (k) => fmtTime(k.created_at) },
              ]}
            />
            <Pager page={page} pageSize={PAGE_SIZE} total={list.total} onPage={setPage} />
          </>
        )}
      </Loaded>
      {creating && (
        <CreateKey
          kinds={kinds}
          workspaces={workspaces.list}
          onClose={() => setCreating(false)}
          onCreated={(name, raw) => {
            setCreating(false);
            setSecret({ label: `The key “${name}” was created.`, value: raw });
            keys.reload();
          }}
        />
      )}
      {shown !== null && (
        <KeyDetail
          apiKey={shown}
          workspace={wsName(shown.workspace_id)}
          onClose={() => setShown(null)}
          onChanged={(raw) => {
            if (raw !== undefined) setSecret({ label: `The key “${shown.name}” was rotated; the old secret works until the transition ends.`, value: raw });
            setShown(null);
            keys.reload();
          }}
        />
      )}
    </Page>
  );
}

/** A kind of key the signed-in key may create, and the scopes it may give one. */
interface Grantable {
  type: KeyType;
  scopes: string[];
}

function CreateKey(props: { kinds: Grantable[]; workspaces: Workspace[]; onClose: () => void; onCreated: (name: string, raw: string) => void }): JSX.Element {
  const session = useSession();
  const [kind, setKind] = useState<KeyType>(props.kinds.some((k) => k.type === 'workspace-service') ? 'workspace-service' : props.kinds[0]!.type);
  const [name, setName] = useState('');
  const [workspace, setWorkspace] = useState(session.principal.workspace_id ?? props.workspaces[0]?.id ?? '');
  const grantable = useMemo(() => props.kinds.find((k) => k.type === kind)?.scopes ?? [], [kind]);
  const [scopes, setScopes] = useState<Set<string>>(new Set(['completions.write']));
  const action = useAction(async () => {
    const body: Record<string, unknown> = { name: name.trim(), scopes: [...scopes].filter((s) => grantable.includes(s)) };
    if (kind !== 'organisation-service') body.workspace_id = workspace;
    const made = await api.post<{ id: string; key: string }>(CREATE_PATH[kind], body);
    props.onCreated(name.trim(), made.key);
  });
  const toggle = (scope: string, on: boolean): void => {
    const next = new Set(scopes);
    if (on) next.add(scope);
    else next.delete(scope);
    setScopes(next);
  };
  return (
    <Dialog title="Create an API key" open onClose={props.onClose} wide>
      <form onSubmit={(e) => { e.preventDefault(); void action.run(); }}>
        <div class="form-grid">
          <TextField label="Name" value={name} onInput={setName} required placeholder="billing-service" />
          <SelectField label="Kind" value={kind} onChange={(v) => setKind(v as KeyType)} options={props.kinds.map((k): [string, string] => [k.type, KIND_LABEL[k.type]])} />
          {kind !== 'organisation-service' && (
            <SelectField label="Workspace" value={workspace} onChange={setWorkspace} options={props.workspaces.map((w): [string, string] => [w.id, w.slug])} />
          )}
        </div>
        <fieldset class="scope-picker">
          <legend>Scopes</legend>
          <div class="row">
            <Button onClick={() => setScopes(new Set(grantable))}>All</Button>
            <Button onClick={() => setScopes(new Set(['completions.write']))}>Model calls only</Button>
            <Button onClick={() => setScopes(new Set())}>None</Button>
          </div>
          {groupScopes(grantable).map(([group, actions, full]) => (
            <div class="scope-group" key={group} role="group" aria-label={group}>
              <span class="scope-group-name">{group}</span>
              {full.map((scope, i) => (
                <Checkbox key={scope} label={actions[i]!} checked={scopes.has(scope)} onChange={(on) => toggle(scope, on)} />
              ))}
            </div>
          ))}
        </fieldset>
        <ErrorNote error={action.error} />
        <div class="row end">
          <Button onClick={props.onClose}>Cancel</Button>
          <Button kind="primary" type="submit" busy={action.busy} disabled={name.trim() === '' || (kind !== 'organisation-service' && workspace === '')}>
            Create
          </Button>
        </div>
      </form>
    </Dialog>
  );
}

function KeyDetail(props: { apiKey: ApiKey; workspace: string; onClose: () => void; onChanged: (raw?: string) => void }): JSX.Element {
  const session = useSession();
  const k = props.apiKey;
  const prefix = SCOPE_PREFIX[k.type];
  const rotate = useAction(async () => {
    const r = await api.post<{ key: string }>(`/v1/api-keys/${k.id}/rotate`, {});
    props.onChanged(r.key);
  });
  const revoke = useAction(async () => {
    if (!confirm(`Revoke the key “${k.name}”? Calls with it fail from now on.`)) return;
    await api.del(`/v1/api-keys/${k.id}`);
    props.onChanged();
  });
  return (
    <Dialog title={`Key “${k.name}”`} open onClose={props.onClose} wide>
      <dl class="facts">
        <dt>Id</dt>
        <dd><code>{k.id}</code></dd>
        <dt>Key</dt>
        <dd><code>{k.key}</code></dd>
        <dt>Kind</dt>
        <dd>{KIND_LABEL[k.type] ?? k.type}</dd>
        <dt>Workspace</dt>
        <dd>{props.workspace}</dd>
        <dt>Status</dt>
        <dd>{k.status}</dd>
        <dt>Expires</dt>
        <dd>{k.expires_at === null ? 'never' : fmtTime(k.expires_at)}</dd>
        <dt>Created</dt>
        <dd>{fmtTime(k.created_at)}</dd>
      </dl>
      <h3>Scopes</h3>
      <ScopeGroups scopes={k.scopes} />
      <ErrorNote error={rotate.error ?? revoke.error} />
      {k.status === 'active' && (
        <div class="row end">
          {session.can(`${prefix}.rotate`) && (
            <Button busy={rotate.busy} onClick={() => void rotate.run()}>
              Rotate
            </Button>
          )}
          {session.can(`${prefix}.delete`) && (
            <Button kind="danger" busy={revoke.busy} onClick={() => void revoke.run()}>
              Revoke
            </Button>
          )}
        </div>
      )}
    </Dialog>
  );
}
