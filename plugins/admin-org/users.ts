/**
 * Organisation users (`/v1/admin/users`): list (filters `role`, `email`; paginated), get, change
 * the role, delete, and create directly (the reference only has invites; an admin provisioning
 * users from a script should not need a round trip through an invite link).
 *
 * Organisation keys only. The owner's role is fixed, and the last owner cannot be deleted: an
 * organisation must always have someone who can do everything.
 */
import { AdminErrors, crudRoutes, listPage, nowIso, uuidv7, S, type AnyAdminRoute, type Records } from '../../core/index.js';
import { userSchema, userView } from './views.js';
import { grantsSchema, resolveGrants } from './workspace-refs.js';
import { putMember, removeAllMemberships } from './memberships.js';
import { assertMayManage } from './permissions.js';

type User = Records.User;
type WorkspaceRole = Records.WorkspaceRole;

interface CreateBody {
  email: string;
  first_name?: string;
  last_name?: string;
  role: 'admin' | 'member';
  workspaces: Array<{ id: string; role: WorkspaceRole }>;
}

interface ListQuery {
  role?: User['role'];
  email?: string;
  current_page: number;
  page_size: number;
}

const resource = 'user';
const crud = crudRoutes({ path: '/v1/admin/users', key: 'id', resource, scopes: 'organisation_users', level: 'organisation' });
/** RFC 5321 bounds an address to 254 octets; 320 leaves room for odd but valid ones. */
export const emailSchema = { type: 'string', format: 'email', minLength: 3, maxLength: 320 };
const personName = { type: 'string', maxLength: 255 };

function findUser(users: { get(id: string): User | undefined }, id: string): User {
  const user = users.get(id);
  if (user === undefined) throw AdminErrors.notFound('The user does not exist.');
  return user;
}

export const userRoutes: AnyAdminRoute[] = [
  crud.create<CreateBody>({
    summary: 'Create a user',
    body: {
      type: 'object',
      properties: {
        email: emailSchema,
        first_name: personName,
        last_name: personName,
        role: { type: 'string', enum: ['admin', 'member'], default: 'member' },
        workspaces: { ...grantsSchema, default: [] },
      },
      required: ['email'],
      additionalProperties: false,
    },
    response: S.record({ id: S.str, object: S.str }),
    handler({ body, principal, store }) {
      assertMayManage(principal);
      if (store.c.users.getBy('email', body.email.toLowerCase()) !== undefined) {
        throw AdminErrors.conflict('A user with this email already exists.', 'email');
      }
      const grants = resolveGrants(store, body.workspaces, 'workspaces');
      const now = nowIso();
      const user: User = {
        id: uuidv7(),
        email: body.email,
        first_name: body.first_name ?? null,
        last_name: body.last_name ?? null,
        role: body.role,
        organisation_id: principal.organisation_id,
        created_at: now,
        last_updated_at: now,
      };
      store.root.transactionSync(() => {
        store.c.users.insert(user);
        for (const g of grants) putMember(store, g.workspace.id, user.id, g.role);
      });
      return { id: user.id, object: 'user' };
    },
  }),
  crud.list<never, ListQuery>({
    summary: 'List users',
    query: {
      properties: {
        role: { type: 'string', enum: ['owner', 'admin', 'member'] },
        email: { type: 'string', maxLength: 320, description: 'Exact address, case-insensitive.' },
        ...S.pagination,
      },
    },
    response: S.listOf(userSchema),
    handler({ query, store }) {
      return listPage(store.c.users, query, {
        ...(query.email === undefined ? {} : { index: 'email', value: query.email.toLowerCase() }),
        filter: (u) => query.role === undefined || u.role === query.role,
        view: (u) => userView(store, u),
      });
    },
  }),
  crud.read({
    summary: 'Get a user',
    response: userSchema,
    handler({ params, store }) {
      return userView(store, findUser(store.c.users, params.id!));
    },
  }),
  crud.update<{ role: 'admin' | 'member' }>({
    summary: "Change a user's organisation role",
    body: {
      type: 'object',
      properties: { role: { type: 'string', enum: ['admin', 'member'] } },
      required: ['role'],
      additionalProperties: false,
    },
    response: S.empty,
    handler({ params, body, principal, store }) {
      assertMayManage(principal);
      findUser(store.c.users, params.id!);
      store.c.users.update(params.id!, (u) => {
        // Checked inside the write so a concurrent ownership change cannot slip between.
        if (u.role === 'owner') throw AdminErrors.invalid("The owner's role cannot be changed.", 'role');
        return { ...u, role: body.role, last_updated_at: nowIso() };
      });
      return {};
    },
  }),
  crud.delete({
    summary: 'Remove a user from the organisation',
    response: S.empty,
    handler({ params, principal, store }) {
      assertMayManage(principal);
      const id = params.id!;
      findUser(store.c.users, id);
      // One transaction: the owner count, the memberships, the keys and the user move together.
      store.root.transactionSync(() => {
        const user = findUser(store.c.users, id);
        if (user.role === 'owner' && store.c.users.list({ filter: (u) => u.role === 'owner' }).total <= 1) {
          throw AdminErrors.conflict('The last owner of the organisation cannot be deleted.');
        }
        removeAllMemberships(store, id);
        store.c.users.delete(id);
      });
      return {};
    },
  }),
];
