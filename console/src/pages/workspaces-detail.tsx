/**
 * One workspace (`#/workspaces/<id>`): its facts, edit name and description, archive, and its
 * members: add a user with a role, change a member's role, remove a member.
 */
import type { JSX } from 'preact';
import { useState } from 'preact/hooks';
import { api, ApiError, request, type ListPage } from '../api';
import { Button, Checkbox, Dialog, Empty, ErrorNote, Loaded, SelectField, Table, TextField, fmtTime, useAction, useLoad, useSession } from '../ui';
import type { WorkspaceRecord } from './workspaces';
import './org.css';

export interface Member {
  id: string;
  email: string;
  first_name: string | null;
  last_name: string | null;
  role: string;
  org_role: string;
}

interface Detail extends WorkspaceRecord {
  users: Member[];
}

interface OrgUser {
  id: string;
  email: string;
  first_name: string | null;
  last_name: string | null;
}

export const WORKSPACE_ROLES: Array<[string, string]> = [
  ['member', 'Member (reads)'],
  ['manager', 'Manager'],
  ['admin', 'Admin'],
];

export const personName = (u: { first_name: string | null; last_name: string | null }): string => [u.first_name, u.last_name].filter((p) => p !== null && p !== '').join(' ');

export function WorkspaceDetail(props: { id: string; onClose: () => void; onChanged: () => void }): JSX.Element {
  const session = useSession();
  const detail = useLoad((signal) => api.get<Detail>(`/v1/admin/workspaces/${encodeURIComponent(props.id)}`, undefined, signal), [props.id]);
  const changed = (): void => {
    detail.reload();
    props.onChanged();
  };
  return (
    <Dialog title="Workspace" open onClose={props.onClose} wide>
      <Loaded state={detail}>
        {(ws) => (
          <>
            <h3>{ws.name}</h3>
            <dl class="facts org-facts">
              <dt>Id</dt>
              <dd><code>{ws.id}</code></dd>
              <dt>Slug</dt>
              <dd><code>{ws.slug}</code></dd>
              <dt>Status</dt>
              <dd>{ws.status}{ws.defaults.is_default === 1 ? ' (the default workspace)' : ''}</dd>
              <dt>Description</dt>
              <dd>{ws.description ?? '—'}</dd>
              <dt>Created</dt>
              <dd>{fmtTime(ws.created_at)}</dd>
            </dl>
            {ws.status === 'active' && session.can('workspaces.update') && <EditWorkspace ws={ws} onSaved={changed} />}
            <Members ws={ws} onChanged={changed} />
            {ws.status === 'active' && ws.defaults.is_default !== 1 && session.can('workspaces.delete') && (
              <ArchiveWorkspace
                workspace={ws}
                onDone={() => {
                  props.onChanged();
                  props.onClose();
                }}
              />
            )}
          </>
        )}
      </Loaded>
    </Dialog>
  );
}

function EditWorkspace({ ws, onSaved }: { ws: Detail; onSaved: () => void }): JSX.Element {
  const [name, setName] = useState(ws.name);
  const [description, setDescription] = useState(ws.description ?? '');
  const [saved, setSaved] = useState(false);
  const action = useAction(async () => {
    await api.put(`/v1/admin/workspaces/${encodeURIComponent(ws.id)}`, { name: name.trim(), description: description.trim() === '' ? null : description.trim() });
    setSaved(true);
    onSaved();
  });
  return (
    <form class="card org-card" aria-label="Edit workspace" onSubmit={(e) => { e.preventDefault(); setSaved(false); void action.run(); }}>
      <div class="form-grid">
        <TextField label="Workspace name" value={name} onInput={setName} required />
        <TextField label="Workspace description" value={description} onInput={setDescription} />
      </div>
      <ErrorNote error={action.error} />
      <div class="row end">
        {saved && <span role="status" class="muted">Saved.</span>}
        <Button type="submit" busy={action.busy} disabled={name.trim() === ''}>
          Save
        </Button>
      </div>
    </form>
  );
}

function Members({ ws, onChanged }: { ws: Detail; onChanged: () => void }): JSX.Element {
  const session = useSession();
  const base = `/v1/admin/workspaces/${encodeURIComponent(ws.id)}/users`;
  const change = useAction(async (userId: string, role: string) => {
    await api.put(`${base}/${encodeURIComponent(userId)}`, { role });
    onChanged();
  });
  const remove = useAction(async (m: Member) => {
    if (!confirm(`Remove ${m.email} from “${ws.name}”? Their user keys in this workspace are revoked.`)) return;
    await api.del(`${base}/${encodeURIComponent(m.id)}`);
    onChanged();
  });
  const canAdd = ws.status === 'active' && session.can('workspace_users.create');
  return (
    <>
      <h3>Members</h3>
      <ErrorNote error={change.error ?? remove.error} />
      <Table
        caption={`Members of ${ws.name}`}
        rows={ws.users}
        rowKey={(m) => m.id}
        empty={<Empty title="No members yet.">{canAdd ? 'Add a user of the organisation below; invite new people from “Users & invites”.' : 'Members are added by the workspace’s admins.'}</Empty>}
        columns={[
          { label: 'User', render: (m) => (
            <>
              {m.email}
              {personName(m) !== '' && <span class="muted"> · {personName(m)}</span>}
            </>
          ) },
          { label: 'Role', render: (m) =>
            session.can('workspace_users.update') ? (
              <select aria-label={`Role of ${m.email}`} value={m.role} disabled={change.busy} onChange={(e) => void change.run(m.id, (e.currentTarget as HTMLSelectElement).value)}>
                {WORKSPACE_ROLES.map(([v, l]) => <option key={v} value={v}>{l}</option>)}
              </select>
            ) : (
              m.role
            ) },
          { label: 'Organisation role', render: (m) => m.org_role },
          { label: 'Actions', render: (m) =>
            session.can('workspace_users.delete') ? (
              <Button kind="danger" aria-label={`Remove ${m.email}`} busy={remove.busy} onClick={() => void remove.run(m)}>
                Remove
              </Button>
            ) : null },
        ]}
      />
      {canAdd && <AddMember ws={ws} onAdded={onChanged} />}
    </>
  );
}

function AddMember({ ws, onAdded }: { ws: Detail; onAdded: () => void }): JSX.Element {
  const session = useSession();
  const canList = session.can('organisation_users.list');
  const users = useLoad(async (signal) => (canList ? (await api.get<ListPage<OrgUser>>('/v1/admin/users', { page_size: 500 }, signal)).data : []), [canList]);
  const [user, setUser] = useState('');
  const [role, setRole] = useState('member');
  const action = useAction(async () => {
    await api.post(`/v1/admin/workspaces/${encodeURIComponent(ws.id)}/users`, { users: [{ id: user.trim(), role }] });
    setUser('');
    onAdded();
  });
  const candidates = (users.data ?? []).filter((u) => !ws.users.some((m) => m.id === u.id));
  return (
    <form class="card org-card" aria-label="Add a member" onSubmit={(e) => { e.preventDefault(); void action.run(); }}>
      <div class="form-grid">
        {canList ? (
          <SelectField
            label="User to add"
            value={user}
            onChange={setUser}
            options={[['', candidates.length === 0 ? 'No other users: invite them first' : 'Choose a user'], ...candidates.map((u): [string, string] => [u.id, personName(u) === '' ? u.email : `${u.email} (${personName(u)})`])]}
          />
        ) : (
          <TextField label="User id to add" value={user} onInput={setUser} hint="The id of a user of the organisation." />
        )}
        <SelectField label="Role for the new member" value={role} onChange={setRole} options={WORKSPACE_ROLES} />
      </div>
      <ErrorNote error={users.error ?? action.error} />
      <div class="row end">
        <Button type="submit" kind="primary" busy={action.busy} disabled={user.trim() === ''}>
          Add member
        </Button>
      </div>
    </form>
  );
}

/** Archive with a confirm; a 409 (keys or configs left) offers the forced archive. */
function ArchiveWorkspace(props: { workspace: WorkspaceRecord; onDone: () => void }): JSX.Element {
  const [force, setForce] = useState(false);
  const path = `/v1/admin/workspaces/${encodeURIComponent(props.workspace.id)}`;
  const action = useAction(async (forced: boolean) => {
    const question = forced ? `Archive “${props.workspace.name}” anyway? Its API keys are revoked.` : `Archive the workspace “${props.workspace.name}”?`;
    if (!confirm(question)) return;
    // `api.del` sends no body; the forced archive needs `force_delete`.
    await request('DELETE', path, forced ? { force_delete: true } : undefined);
    props.onDone();
  });
  const conflict = action.error instanceof ApiError && action.error.status === 409;
  return (
    <div>
      <ErrorNote error={action.error} />
      {conflict && <Checkbox label="Archive anyway and revoke its API keys" checked={force} onChange={setForce} />}
      <div class="row end">
        <Button kind="danger" busy={action.busy} onClick={() => void action.run(conflict && force)}>
          {conflict && force ? 'Archive anyway' : 'Archive workspace'}
        </Button>
      </div>
    </div>
  );
}
