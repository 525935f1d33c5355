/**
 * User invites (`/v1/admin/users/invites`): create (answers the one link with the token), list
 * (filters `role`, `email`, `status`), get, cancel, resend (a new token replaces the old one).
 * Accepting is public and lives in invite-accept.ts.
 *
 *   pending ──accept──▶ accepted
 *      │ └──DELETE───▶ cancelled
 *      └─(7 days)────▶ expired (computed on read) ──resend──▶ pending
 */
import { AdminErrors, crudRoutes, listPage, nowIso, Scopes, uuidv7, S, type AnyAdminRoute, type Records } from '../../core/index.js';
import { inviteSchema, inviteStatus, inviteView } from './views.js';
import { grantsSchema, resolveGrants } from './workspace-refs.js';
import { emailSchema } from './users.js';
import { INVITE_TTL_MS, generateInviteToken, hashInviteToken, inviteLink } from './invite-token.js';
import { assertMayManage } from './permissions.js';

type Invite = Records.Invite;
type WorkspaceRole = Records.WorkspaceRole;

interface CreateBody {
  email: string;
  role: 'admin' | 'member';
  workspaces: Array<{ id: string; role: WorkspaceRole }>;
  workspace_api_key_details?: { scopes: string[] };
}

interface ListQuery {
  role?: Invite['role'];
  email?: string;
  status?: Invite['status'];
  current_page: number;
  page_size: number;
}

const resource = 'invite';
const crud = crudRoutes({ path: '/v1/admin/users/invites', key: 'id', resource, scopes: 'organisation_users', level: 'organisation' });
/** The scopes a workspace-user key may hold: checked by the schema, so a bad one is a 400 naming it. */
const keyScopes = [...Scopes.allowedScopes('workspace-user')];

function findInvite(invites: { get(id: string): Invite | undefined }, id: string): Invite {
  const invite = invites.get(id);
  if (invite === undefined) throw AdminErrors.notFound('The invite does not exist.');
  return invite;
}

/** Only a pending or expired invite can be resent; the others are settled. */
function assertResendable(invite: Invite): void {
  if (invite.status === 'accepted' || invite.status === 'cancelled') {
    throw AdminErrors.conflict(`The invite is ${invite.status}; it cannot be resent.`);
  }
}

/** @param secure the gateway serves TLS, so links are `https`. */
export function inviteRoutes(secure: boolean): AnyAdminRoute[] {
  return [
    crud.create<CreateBody>({
      summary: 'Invite a user',
      body: {
        type: 'object',
        properties: {
          email: emailSchema,
          role: { type: 'string', enum: ['admin', 'member'] },
          workspaces: grantsSchema,
          workspace_api_key_details: {
            type: 'object',
            properties: { scopes: { type: 'array', uniqueItems: true, maxItems: keyScopes.length, items: { type: 'string', enum: keyScopes } } },
            required: ['scopes'],
            additionalProperties: false,
          },
        },
        required: ['email', 'role', 'workspaces'],
        additionalProperties: false,
      },
      response: S.record({ id: S.str, invite_link: S.str }),
      handler({ ctx, body, principal, store }) {
        assertMayManage(principal);
        const email = body.email.toLowerCase();
        const grants = resolveGrants(store, body.workspaces, 'workspaces');
        const token = generateInviteToken();
        const now = new Date();
        const invite: Invite = {
          id: uuidv7(),
          email: body.email,
          role: body.role,
          workspaces: grants.map((g) => ({ id: g.workspace.id, role: g.role })),
          workspace_api_key_details: body.workspace_api_key_details ? { scopes: body.workspace_api_key_details.scopes } : null,
          token_hash: hashInviteToken(token),
          status: 'pending',
          invited_by: principal.user_id,
          organisation_id: principal.organisation_id,
          expires_at: new Date(now.getTime() + INVITE_TTL_MS).toISOString(),
          accepted_at: null,
          created_at: now.toISOString(),
          last_updated_at: now.toISOString(),
        };
        // The checks and the insert share one transaction, so two concurrent invites for the same
        // address cannot both pass the "no pending invite" check.
        store.root.transactionSync(() => {
          if (store.c.users.getBy('email', email) !== undefined) throw AdminErrors.conflict('A user with this email already exists.', 'email');
          const open = store.c.invites.list({ index: 'email', value: email, filter: (i) => inviteStatus(i) === 'pending', limit: 1 });
          if (open.total > 0) throw AdminErrors.conflict('A pending invite for this email exists; resend it instead.', 'email');
          store.c.invites.insert(invite);
        });
        return { id: invite.id, invite_link: inviteLink(ctx, secure, token) };
      },
    }),
    crud.list<never, ListQuery>({
      summary: 'List invites',
      query: {
        properties: {
          role: { type: 'string', enum: ['admin', 'member'] },
          email: { type: 'string', maxLength: 320, description: 'Exact address, case-insensitive.' },
          status: { type: 'string', enum: ['pending', 'cancelled', 'accepted', 'expired'] },
          ...S.pagination,
        },
      },
      response: S.listOf(inviteSchema),
      handler({ query, store }) {
        const now = Date.now();
        return listPage(store.c.invites, query, {
          ...(query.email === undefined ? {} : { index: 'email', value: query.email.toLowerCase() }),
          filter: (i) => (query.role === undefined || i.role === query.role) && (query.status === undefined || inviteStatus(i, now) === query.status),
          view: inviteView,
        });
      },
    }),
    crud.read({
      summary: 'Get an invite',
      response: inviteSchema,
      handler({ params, store }) {
        return inviteView(findInvite(store.c.invites, params.id!));
      },
    }),
    crud.delete({
      summary: 'Cancel an invite',
      response: S.empty,
      handler({ params, principal, store }) {
        assertMayManage(principal);
        findInvite(store.c.invites, params.id!);
        store.c.invites.update(params.id!, (i) => {
          if (i.status === 'accepted') throw AdminErrors.conflict('The invite was already accepted; remove the user instead.');
          return { ...i, status: 'cancelled', last_updated_at: nowIso() };
        });
        return {};
      },
    }),
    crud.member({
      method: 'POST',
      path: '/resend',
      summary: 'Resend an invite (a new link; the old one stops working)',
      action: 'resend',
      scope: 'organisation_users.create',
      response: S.record({ invite_link: S.str }),
      handler({ ctx, params, principal, store }) {
        assertMayManage(principal);
        assertResendable(findInvite(store.c.invites, params.id!));
        const token = generateInviteToken();
        const now = new Date();
        store.c.invites.update(params.id!, (i) => {
          assertResendable(i);
          // Replacing the hash drops the old token from the unique index: it no longer resolves.
          return {
            ...i,
            token_hash: hashInviteToken(token),
            status: 'pending',
            expires_at: new Date(now.getTime() + INVITE_TTL_MS).toISOString(),
            last_updated_at: now.toISOString(),
          };
        });
        return { invite_link: inviteLink(ctx, secure, token) };
      },
    }),
  ];
}
