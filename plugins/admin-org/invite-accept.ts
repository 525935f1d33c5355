/**
 * `POST /v1/admin/users/invites/accept {token, first_name, last_name}`: public, because the
 * token is the credential (the invitee has no API key yet).
 *
 *   token ─▶ SHA-256 ─▶ pending, unexpired invite? (else 400 invalid_invite)
 *         ─▶ one transaction: user + memberships + workspace-user keys + invite accepted + audit record
 *         ─▶ {user_id, object:"user", api_keys?: [{workspace_id, key}]}   (keys shown this once)
 *
 * The whole acceptance is one LMDB write transaction, re-reading the invite inside it: two
 * concurrent accepts of one token (even from two worker processes) serialize, and the second
 * finds the invite accepted.
 */
import {
  AdminErrors,
  defineAdminRoute,
  maskSecrets,
  newApiKey,
  nowIso,
  uuidv7,
  S,
  type AnyAdminRoute,
  type GatewayContext,
  type Records,
  type Store,
} from '../../core/index.js';
import { OrgErrors } from './errors.js';
import { hashInviteToken } from './invite-token.js';
import { putMember } from './memberships.js';
import { inviteStatus } from './views.js';

type Invite = Records.Invite;
type ApiKey = Records.ApiKeyRecord;

interface AcceptBody {
  token: string;
  first_name?: string;
  last_name?: string;
}

interface Accepted {
  user_id: string;
  object: 'user';
  api_keys?: Array<{ workspace_id: string; key: string }>;
}

function workspaceUserKey(invite: Invite, userId: string, workspaceId: string): { record: ApiKey; raw: string } {
  return newApiKey({
    type: 'workspace-user',
    name: `${invite.email} (invite)`.slice(0, 255),
    description: 'Created when the user accepted their invite.',
    organisation_id: invite.organisation_id,
    workspace_id: workspaceId,
    user_id: userId,
    scopes: [...invite.workspace_api_key_details!.scopes],
    creation_mode: 'auto',
  });
}

function accept(store: Store, ctx: GatewayContext, body: AcceptBody): Accepted {
  return store.root.transactionSync(() => {
    const invite = store.c.invites.getBy('token', hashInviteToken(body.token));
    if (invite === undefined || inviteStatus(invite) !== 'pending') throw OrgErrors.invalidInvite();
    if (store.c.users.getBy('email', invite.email.toLowerCase()) !== undefined) {
      throw AdminErrors.conflict('A user with the invited email already exists.', 'email');
    }
    const now = nowIso();
    const user: Records.User = {
      id: uuidv7(),
      email: invite.email,
      first_name: body.first_name ?? null,
      last_name: body.last_name ?? null,
      role: invite.role,
      organisation_id: invite.organisation_id,
      created_at: now,
      last_updated_at: now,
    };
    store.c.users.insert(user);
    const keys: Array<{ workspace_id: string; key: string }> = [];
    for (const grant of invite.workspaces) {
      // A workspace archived since the invite was sent is skipped: the user still joins the
      // organisation, just not a deleted workspace.
      if (store.c.workspaces.get(grant.id)?.status !== 'active') continue;
      putMember(store, grant.id, user.id, grant.role);
      if (invite.workspace_api_key_details !== null) {
        const { record, raw } = workspaceUserKey(invite, user.id, grant.id);
        store.c.apiKeys.insert(record);
        keys.push({ workspace_id: grant.id, key: raw });
      }
    }
    store.c.invites.update(invite.id, (i) => ({ ...i, status: 'accepted', accepted_at: now, last_updated_at: now }));
    auditAcceptance(store, ctx, body, user);
    return { user_id: user.id, object: 'user', ...(invite.workspace_api_key_details === null ? {} : { api_keys: keys }) };
  });
}

/**
 * The framework audits authenticated writes only (a public route has no principal). A successful
 * acceptance still belongs in the trail, so it is recorded here with the new user as the actor and
 * the token masked, inside the acceptance's transaction (an accepted invite always has its record).
 * Failed attempts are not: anyone can send them, and they would let an unauthenticated caller
 * flood the audit log.
 */
function auditAcceptance(store: Store, ctx: GatewayContext, body: AcceptBody, user: Records.User): void {
  store.c.audit.appendSync({
    id: uuidv7(),
    timestamp: nowIso(),
    method: ctx.method,
    uri: ctx.path,
    request_id: ctx.id,
    request_body: JSON.stringify(maskSecrets(body)),
    query_params: '{}',
    user_id: user.id,
    api_key_id: null,
    user_type: 'user',
    organisation_id: user.organisation_id,
    workspace_id: null,
    response_status_code: 200,
    resource_type: 'invite',
    action: 'accept',
    client_ip: ctx.remoteAddress,
  });
}

export const acceptInviteRoute: AnyAdminRoute = defineAdminRoute<AcceptBody>({
  method: 'POST',
  path: '/v1/admin/users/invites/accept',
  summary: 'Accept an invite (public: the token is the credential)',
  resource: 'invite',
  action: 'accept',
  scope: null,
  level: 'organisation',
  public: true,
  body: {
    type: 'object',
    properties: {
      token: { type: 'string', minLength: 1, maxLength: 256 },
      first_name: { type: 'string', maxLength: 255 },
      last_name: { type: 'string', maxLength: 255 },
    },
    required: ['token'],
    additionalProperties: false,
  },
  response: {
    type: 'object',
    properties: {
      user_id: S.str,
      object: S.str,
      // The one place these raw keys are ever sent; the store keeps their SHA-256 only.
      api_keys: { type: 'array', items: S.record({ workspace_id: S.str, key: S.str }) },
    },
    required: ['user_id', 'object'],
  },
  handler({ ctx, body, store }) {
    return accept(store, ctx, body);
  },
});
