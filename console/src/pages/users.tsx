/**
 * Users & invites: the organisation's users (change the organisation role, remove) and its
 * invites (invite by email with a role and workspaces; the link is shown once, with copy; resend
 * for a new link; cancel).
 */
import type { JSX } from 'preact';
import { useState } from 'preact/hooks';
import { api, type ListPage } from '../api';
import { Badge, Button, Dialog, Empty, ErrorNote, Loaded, Page, Pager, SecretOnce, Section, SelectField, Table, TextField, fmtTime, useAction, useLoad, useSession } from '../ui';
import { useWorkspaces } from './api-keys';
import { personName, WORKSPACE_ROLES } from './workspaces-detail';

interface User {
  id: string;
  email: string;
  first_name: string | null;
  last_name: string | null;
  role: 'owner' | 'admin' | 'member';
  workspace_ids: string[];
  created_at: string;
}

interface Invite {
  id: string;
  email: string;
  role: string;
  workspaces: Array<{ id: string; role: string }>;
  status: 'pending' | 'accepted' | 'cancelled' | 'expired';
  created_at: string;
  expires_at: string;
}

const PAGE_SIZE = 25;
const ORG_ROLES: Array<[string, string]> = [
  ['member', 'Member'],
  ['admin', 'Admin'],
];
const STATUS_TONE: Record<Invite['status'], 'ok' | 'warn' | 'bad' | 'plain'> = { pending: 'warn', accepted: 'ok', cancelled: 'plain', expired: 'bad' };

export function Users(): JSX.Element {
  const session = useSession();
  const [link, setLink] = useState<{ label: string; value: string } | null>(null);
  const [inviting, setInviting] = useState(false);
  const [inviteTick, setInviteTick] = useState(0);
  return (
    <Page
      title="Users & invites"
      description="People of the organisation. Owners and admins manage everything; members act through the workspaces they belong to."
      actions={session.can('organisation_users.create') && <Button kind="primary" onClick={() => setInviting(true)}>Invite a user</Button>}
    >
      {link !== null && <SecretOnce label={link.label} secret={link.value} />}
      <UserList />
      <Invites tick={inviteTick} onLink={setLink} />
      {inviting && (
        <InviteDialog
          onClose={() => setInviting(false)}
          onInvited={(email, url) => {
            setInviting(false);
            setLink({ label: `${email} is invited: send them this link.`, value: url });
            setInviteTick((n) => n + 1);
          }}
        />
      )}
    </Page>
  );
}

function UserList(): JSX.Element {
  const session = useSession();
  const workspaces = useWorkspaces();
  const [page, setPage] = useState(0);
  const users = useLoad((signal) => api.get<ListPage<User>>('/v1/admin/users', { current_page: page, page_size: PAGE_SIZE }, signal), [page]);
  const change = useAction(async (u: User, role: string) => {
    await api.put(`/v1/admin/users/${encodeURIComponent(u.id)}`, { role });
    users.reload();
  });
  const remove = useAction(async (u: User) => {
    if (!confirm(`Remove ${u.email} from the organisation? Their memberships and user keys go too.`)) return;
    await api.del(`/v1/admin/users/${encodeURIComponent(u.id)}`);
    users.reload();
  });
  const wsSlug = (id: string): string => workspaces.list.find((w) => w.id === id)?.slug ?? id;
  return (
    <Section title="Users">
      <ErrorNote error={change.error ?? remove.error} />
      <Loaded state={users}>
        {(data) => (
          <>
            <Table
              caption="Users"
              rows={data.data}
              rowKey={(u) => u.id}
              empty={<Empty title="No users yet.">Invite people with “Invite a user”; they join when they accept the link.</Empty>}
              columns={[
                { label: 'Email', render: (u) => u.email },
                { label: 'Name', render: (u) => personName(u) || <span class="muted">—</span> },
                { label: 'Role', render: (u) =>
                  u.role !== 'owner' && session.can('organisation_users.update') ? (
                    <select aria-label={`Organisation role of ${u.email}`} value={u.role} disabled={change.busy} onChange={(e) => void change.run(u, (e.currentTarget as HTMLSelectElement).value)}>
                      {ORG_ROLES.map(([v, l]) => <option key={v} value={v}>{l}</option>)}
                    </select>
                  ) : (
                    <Badge tone={u.role === 'owner' ? 'ok' : 'plain'}>{u.role}</Badge>
                  ) },
                { label: 'Workspaces', render: (u) => (u.workspace_ids.length === 0 ? <span class="muted">none</span> : u.workspace_ids.map(wsSlug).join(', ')) },
                { label: 'Joined', render: (u) => fmtTime(u.created_at) },
                { label: 'Actions', render: (u) =>
                  u.role !== 'owner' && session.can('organisation_users.delete') ? (
                    <Button kind="danger" aria-label={`Remove ${u.email}`} busy={remove.busy} onClick={() => void remove.run(u)}>
                      Remove
                    </Button>
                  ) : null },
              ]}
            />
            <Pager page={page} pageSize={PAGE_SIZE} total={data.total} onPage={setPage} />
          </>
        )}
      </Loaded>
    </Section>
  );
}

function Invites(props: { tick: number; onLink: (l: { label: string; value: string }) => void }): JSX.Element {
  const session = useSession();
  const workspaces = useWorkspaces();
  const [status, setStatus] = useState('pending');
  const [page, setPage] = useState(0);
  const invites = useLoad((signal) => api.get<ListPage<Invite>>('/v1/admin/users/invites', { status: status || undefined, current_page: page, page_size: PAGE_SIZE }, signal), [status, page, props.tick]);
  const resend = useAction(async (i: Invite) => {
    const r = await api.post<{ invite_link: string }>(`/v1/admin/users/invites/${encodeURIComponent(i.id)}/resend`);
    props.onLink({ label: `A new link for ${i.email}; the old one no longer works.`, value: r.invite_link });
    invites.reload();
  });
  const cancel = useAction(async (i: Invite) => {
    if (!confirm(`Cancel the invite for ${i.email}? Its link stops working.`)) return;
    await api.del(`/v1/admin/users/invites/${encodeURIComponent(i.id)}`);
    invites.reload();
  });
  const wsSlug = (id: string): string => workspaces.list.find((w) => w.id === id)?.slug ?? id;
  const open = (i: Invite): boolean => i.status === 'pending' || i.status === 'expired';
  return (
    <Section
      title="Invites"
      actions={
        <div class="filters">
          <SelectField label="Invite status" value={status} onChange={(v) => { setStatus(v); setPage(0); }} options={[['pending', 'Pending'], ['expired', 'Expired'], ['accepted', 'Accepted'], ['cancelled', 'Cancelled'], ['', 'All']]} />
        </div>
      }
    >
      <ErrorNote error={resend.error ?? cancel.error} />
      <Loaded state={invites}>
        {(data) => (
          <>
            <Table
              caption="Invites"
              rows={data.data}
              rowKey={(i) => i.id}
              empty={<Empty title="No invites with this status.">{session.can('organisation_users.create') ? 'Invite someone with “Invite a user”: they get a link valid for 7 days.' : 'This key may not invite users.'}</Empty>}
              columns={[
                { label: 'Email', render: (i) => i.email },
                { label: 'Role', render: (i) => i.role },
                { label: 'Workspaces', render: (i) => (i.workspaces.length === 0 ? <span class="muted">none</span> : i.workspaces.map((w) => `${wsSlug(w.id)} (${w.role})`).join(', ')) },
                { label: 'Status', render: (i) => <Badge tone={STATUS_TONE[i.status]}>{i.status}</Badge> },
                { label: 'Expires', render: (i) => fmtTime(i.expires_at) },
                { label: 'Actions', render: (i) =>
                  open(i) ? (
                    <div class="row">
                      {session.can('organisation_users.create') && (
                        <Button aria-label={`Resend the invite for ${i.email}`} busy={resend.busy} onClick={() => void resend.run(i)}>
                          Resend
                        </Button>
                      )}
                      {session.can('organisation_users.delete') && (
                        <Button kind="danger" aria-label={`Cancel the invite for ${i.email}`} busy={cancel.busy} onClick={() => void cancel.run(i)}>
                          Cancel
                        </Button>
                      )}
                    </div>
                  ) : null },
              ]}
            />
            <Pager page={page} pageSize={PAGE_SIZE} total={data.total} onPage={setPage} />
          </>
        )}
      </Loaded>
    </Section>
  );
}

function InviteDialog(props: { onClose: () => void; onInvited: (email: string, link: string) => void }): JSX.Element {
  const workspaces = useWorkspaces();
  const [email, setEmail] = useState('');
  const [role, setRole] = useState('member');
  /** Workspace id → role; absent: not granted. */
  const [grants, setGrants] = useState<Record<string, string>>({});
  const action = useAction(async () => {
    const made = await api.post<{ invite_link: string }>('/v1/admin/users/invites', {
      email: email.trim(),
      role,
      workspaces: Object.entries(grants).map(([id, r]) => ({ id, role: r })),
    });
    props.onInvited(email.trim(), made.invite_link);
  });
  const setGrant = (id: string, r: string): void => {
    const next = { ...grants };
    if (r === '') delete next[id];
    else next[id] = r;
    setGrants(next);
  };
  return (
    <Dialog title="Invite a user" open onClose={props.onClose} wide>
      <form onSubmit={(e) => { e.preventDefault(); void action.run(); }}>
        <div class="form-grid">
          <TextField label="Email" type="email" value={email} onInput={setEmail} required placeholder="ada@example.com" />
          <SelectField label="Organisation role" value={role} onChange={setRole} options={ORG_ROLES} />
        </div>
        <fieldset>
          <legend>Workspaces</legend>
          {workspaces.list.length === 0 && <p class="muted">No workspaces to grant.</p>}
          <div class="form-grid">
            {workspaces.list.map((w) => (
              <SelectField key={w.id} label={`Role in ${w.slug}`} value={grants[w.id] ?? ''} onChange={(v) => setGrant(w.id, v)} options={[['', 'No access'], ...WORKSPACE_ROLES]} />
            ))}
          </div>
        </fieldset>
        <ErrorNote error={action.error} />
        <div class="row end">
          <Button onClick={props.onClose}>Cancel</Button>
          <Button kind="primary" type="submit" busy={action.busy} disabled={email.trim() === ''}>
            Send invite
          </Button>
        </div>
      </form>
    </Dialog>
  );
}
