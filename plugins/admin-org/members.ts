/**
 * Workspace members (`/v1/admin/workspaces/:id/users`): add in bulk (an existing member gets the
 * new role), list (filters `role`, `email`; paginated), get, change the role, remove. An
 * organisation key acts on any workspace; a workspace key only on its own (403 otherwise).
 *
 * Users must already belong to the organisation: a workspace key cannot conjure up users, only
 * place existing ones. Removing a member revokes their workspace-user keys in that workspace.
 */
import { AdminErrors, crudRoutes, nowIso, S, type AnyAdminRoute, type Records, type Store } from '../../core/index.js';
import { memberSchema, memberView } from './views.js';
import { pathWorkspace } from './workspace-refs.js';
import { memberId, putMember, removeMember } from './memberships.js';
import { assertMayManage } from './permissions.js';

type WorkspaceRole = Records.WorkspaceRole;

interface ListQuery {
  role?: WorkspaceRole;
  email?: string;
  current_page: number;
  page_size: number;
}

const resource = 'workspace_member';
const crud = crudRoutes({ path: '/v1/admin/workspaces/:id/users', key: 'userId', resource, scopes: 'workspace_users', level: 'workspace' });
const role = { type: 'string', enum: ['admin', 'member', 'manager'] };

/** The membership and its user, or 404. */
function findMember(store: Store, workspaceId: string, userId: string): { member: Records.WorkspaceMember; user: Records.User } {
  const member = store.c.members.get(memberId(workspaceId, userId));
  const user = member === undefined ? undefined : store.c.users.get(member.user_id);
  if (member === undefined || user === undefined) throw AdminErrors.notFound('The user is not a member of this workspace.');
  return { member, user };
}

export const memberRoutes: AnyAdminRoute[] = [
  crud.create<{ users: Array<{ id: string; role: WorkspaceRole }> }>({
    summary: 'Add users to a workspace',
    workspaceDefault: 'all',
    body: {
      type: 'object',
      properties: {
        users: {
          type: 'array',
          minItems: 1,
          maxItems: 100,
          items: {
            type: 'object',
            properties: { id: { type: 'string', minLength: 1, maxLength: 64 }, role },
            required: ['id', 'role'],
            additionalProperties: false,
          },
        },
      },
      required: ['users'],
      additionalProperties: false,
    },
    response: S.empty,
    handler({ params, body, principal, store }) {
      const ws = pathWorkspace(store, principal, params.id!);
      assertMayManage(principal);
      if (ws.status !== 'active') throw AdminErrors.conflict('The workspace is archived.');
      // Every user is checked before any membership is written.
      const seen = new Set<string>();
      body.users.forEach((u, i) => {
        if (store.c.users.get(u.id) === undefined) throw AdminErrors.notFound(`The user named by users[${i}].id does not exist.`, `users[${i}].id`);
        if (seen.has(u.id)) throw AdminErrors.invalid(`The user named by users[${i}].id is listed twice.`, `users[${i}].id`);
        seen.add(u.id);
      });
      store.root.transactionSync(() => {
        for (const u of body.users) putMember(store, ws.id, u.id, u.role);
      });
      return {};
    },
  }),
  crud.list<never, ListQuery>({
    summary: 'List the members of a workspace',
    workspaceDefault: 'all',
    query: {
      properties: {
        role,
        email: { type: 'string', maxLength: 320, description: 'Exact address, case-insensitive.' },
        ...S.pagination,
      },
    },
    response: S.listOf(memberSchema),
    handler({ params, query, principal, store }) {
      const ws = pathWorkspace(store, principal, params.id!);
      const email = query.email?.toLowerCase();
      const page = store.c.members.list({
        index: 'workspace',
        value: ws.id,
        filter: (m) => {
          if (query.role !== undefined && m.role !== query.role) return false;
          return email === undefined || store.c.users.get(m.user_id)?.email.toLowerCase() === email;
        },
        offset: query.current_page * query.page_size,
        limit: query.page_size,
        newestFirst: true,
      });
      const data = page.items.flatMap((m) => {
        const user = store.c.users.get(m.user_id);
        return user === undefined ? [] : [memberView(m, user)];
      });
      return { object: 'list', total: page.total, data };
    },
  }),
  crud.read({
    summary: 'Get a workspace member',
    workspaceDefault: 'all',
    response: memberSchema,
    handler({ params, principal, store }) {
      const ws = pathWorkspace(store, principal, params.id!);
      const { member, user } = findMember(store, ws.id, params.userId!);
      return memberView(member, user);
    },
  }),
  crud.update<{ role: WorkspaceRole }>({
    summary: "Change a member's workspace role",
    workspaceDefault: 'all',
    body: { type: 'object', properties: { role }, required: ['role'], additionalProperties: false },
    response: S.empty,
    handler({ params, body, principal, store }) {
      const ws = pathWorkspace(store, principal, params.id!);
      assertMayManage(principal);
      findMember(store, ws.id, params.userId!);
      store.c.members.update(memberId(ws.id, params.userId!), (m) => ({ ...m, role: body.role, last_updated_at: nowIso() }));
      return {};
    },
  }),
  crud.delete({
    summary: 'Remove a member from a workspace',
    workspaceDefault: 'all',
    response: S.empty,
    handler({ params, principal, store }) {
      const ws = pathWorkspace(store, principal, params.id!);
      assertMayManage(principal);
      findMember(store, ws.id, params.userId!);
      // The membership and the user's keys there go together.
      store.root.transactionSync(() => removeMember(store, ws.id, params.userId!));
      return {};
    },
  }),
];
