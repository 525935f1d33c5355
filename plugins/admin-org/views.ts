/**
 * What the organisation's records look like on the wire: one response schema and one view
 * function per resource. Only schema fields leave (fast-json-stringify), so an invite's
 * `token_hash` cannot be sent even if a view forgot to drop it.
 */
import { S, type Records, type Store } from '../../core/index.js';

type User = Records.User;
type Invite = Records.Invite;
type Workspace = Records.Workspace;
type Member = Records.WorkspaceMember;

export const userSchema = S.record({
  object: S.str,
  id: S.str,
  first_name: S.strOrNull,
  last_name: S.strOrNull,
  role: S.str,
  email: S.str,
  created_at: S.str,
  last_updated_at: S.str,
  workspace_ids: S.strings,
});

export function userView(store: Store, user: User): Record<string, unknown> {
  const memberships = store.c.members.list({ index: 'user', value: user.id }).items;
  return { ...user, object: 'user', workspace_ids: memberships.map((m) => m.workspace_id) };
}

export const inviteSchema = S.record({
  object: S.str,
  id: S.str,
  email: S.str,
  role: S.str,
  workspaces: { type: 'array', items: S.record({ id: S.str, role: S.str }) },
  workspace_api_key_details: { type: 'object', nullable: true, properties: { scopes: S.strings } },
  status: S.str,
  invited_by: S.strOrNull,
  created_at: S.str,
  last_updated_at: S.str,
  expires_at: S.str,
  accepted_at: S.strOrNull,
});

/** `expired` is not stored: a pending invite past `expires_at` is reported (and filtered) as expired. */
export function inviteStatus(invite: Invite, now = Date.now()): Invite['status'] {
  return invite.status === 'pending' && Date.parse(invite.expires_at) <= now ? 'expired' : invite.status;
}

export function inviteView(invite: Invite): Record<string, unknown> {
  return { ...invite, object: 'invite', status: inviteStatus(invite) };
}

const rateLimitOut = S.record({ type: S.str, unit: S.str, value: S.num });

const workspaceFields = {
  object: S.str,
  id: S.str,
  slug: S.str,
  name: S.str,
  description: S.strOrNull,
  organisation_id: S.str,
  status: S.str,
  created_at: S.str,
  last_updated_at: S.str,
  defaults: {
    type: 'object',
    properties: {
      metadata: S.stringMap,
      is_default: S.int,
      user_api_key_config: S.strOrNull,
      input_guardrails: S.strings,
      output_guardrails: S.strings,
      mcp_tools: S.strings,
      object: S.str,
    },
    required: ['metadata', 'is_default', 'object'],
  },
  usage_limits: { type: 'array', items: S.usageLimits },
  rate_limits: { type: 'array', items: rateLimitOut },
};

export const workspaceSchema = S.record(workspaceFields);

export function workspaceView(ws: Workspace): Record<string, unknown> {
  // The reference puts `object` inside `defaults` and its examples put it at the top: both are sent.
  return { ...ws, object: 'workspace', defaults: { ...ws.defaults, is_default: ws.defaults.is_default ?? 0, object: 'workspace' } };
}

export const memberSchema = S.record({
  object: S.str,
  id: S.str,
  first_name: S.strOrNull,
  last_name: S.strOrNull,
  email: S.str,
  org_role: S.str,
  role: S.str,
  status: S.str,
  workspace_id: S.str,
  created_at: S.str,
  last_updated_at: S.str,
});

/** A workspace member is the membership joined with its user; the id is the user's. */
export function memberView(member: Member, user: User): Record<string, unknown> {
  return {
    object: 'workspace-user',
    id: user.id,
    first_name: user.first_name,
    last_name: user.last_name,
    email: user.email,
    org_role: user.role,
    role: member.role,
    status: 'active',
    workspace_id: member.workspace_id,
    created_at: member.created_at,
    last_updated_at: member.last_updated_at,
  };
}

/** The workspace detail (GET one) adds its members, at most one page of them. */
export const workspaceDetailSchema = S.record({ ...workspaceFields, users: { type: 'array', items: memberSchema } });
