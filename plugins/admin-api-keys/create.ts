/**
 * `POST /v1/api-keys/{organisation/service | workspace/service | workspace/user}`: a new key,
 * whose raw secret is in this one response and nowhere else (the store keeps its SHA-256).
 *
 *   organisation/service  organisation key (owner/admin) only; `organisation_service_api_keys.create`
 *   workspace/service     `workspace_service_api_keys.create`; org key: `workspace_id` or the default
 *   workspace/user        `workspace_user_api_keys.create`; optional `user_id`, a member of the workspace
 *
 * A workspace key acts only in its own workspace (the route framework refuses another
 * `workspace_id`), and a workspace-user key only when its user is that workspace's admin or manager.
 */
import {
  AdminErrors,
  defineAdminRoute,
  newApiKey,
  S,
  type AdminInput,
  type AnyAdminRoute,
  type GuardrailService,
  type Records,
  type Store,
} from '../../core/index.js';
import { keyFields, type KeyFieldsBody } from './payloads.js';
import { applyFields, checkFields } from './fields.js';
import { assertMayManageKeys, grantableScopes, keyScope } from './permissions.js';


interface CreateBody extends KeyFieldsBody {
  name: string;
  scopes: string[];
  organisation_id?: string;
  workspace_id?: string;
  user_id?: string;
}

const resource = 'api_key';

/** The user a workspace-user key acts for: when named, an existing member of the key's workspace. */
function boundUser(store: Store, workspaceId: string, userId: string | undefined): string | null {
  if (userId === undefined) return null;
  if (store.c.users.get(userId) === undefined) throw AdminErrors.notFound('The user named by user_id does not exist.', 'user_id');
  if (store.c.members.get(`${workspaceId}:${userId}`) === undefined) {
    throw AdminErrors.invalid('The user named by user_id is not a member of this workspace.', 'user_id');
  }
  return userId;
}

type Guardrails = () => GuardrailService | undefined;

function createKey(type: Records.ApiKeyType, { body, principal, workspace, store }: AdminInput<CreateBody, Record<string, never>>, guardrails: Guardrails): unknown {
  assertMayManageKeys(principal);
  if (body.organisation_id !== undefined && body.organisation_id !== principal.organisation_id) {
    throw AdminErrors.invalid('organisation_id is not this organisation.', 'organisation_id');
  }
  const scopes = grantableScopes(principal, type, body.scopes);
  const workspaceId = type === 'organisation-service' ? null : workspace!.id;
  const userId = type === 'workspace-user' ? boundUser(store, workspaceId!, body.user_id) : null;
  checkFields(store, body, { workspaceId, guardrails });
  const { record: blank, raw } = newApiKey({
    type,
    name: body.name,
    organisation_id: principal.organisation_id,
    workspace_id: workspaceId,
    user_id: userId,
    scopes,
  });
  const key = store.c.apiKeys.insert(applyFields(blank, body, scopes));
  return { id: key.id, key: raw, object: 'api-key' };
}

const createResponse = S.record({ id: S.str, key: S.str, object: S.str });

function bodySchema(extra: Record<string, S.JsonSchema>): S.JsonSchema {
  return {
    type: 'object',
    properties: { ...keyFields, organisation_id: S.uuid, ...extra },
    required: ['name', 'scopes'],
    additionalProperties: false,
  };
}

/** The create routes; `guardrails` checks the saved guardrails a key's defaults name. */
export const createRoutes = (guardrails: Guardrails): AnyAdminRoute[] => [
  defineAdminRoute<CreateBody>({
    method: 'POST',
    path: '/v1/api-keys/organisation/service',
    summary: 'Create an organisation (admin) API key',
    resource,
    action: 'create',
    scope: keyScope('organisation-service', 'create'),
    level: 'organisation',
    body: bodySchema({}),
    response: createResponse,
    handler: (input) => createKey('organisation-service', input, guardrails),
  }),
  defineAdminRoute<CreateBody>({
    method: 'POST',
    path: '/v1/api-keys/workspace/service',
    summary: 'Create a workspace service API key',
    resource,
    action: 'create',
    scope: keyScope('workspace-service', 'create'),
    level: 'workspace',
    body: bodySchema({ workspace_id: S.workspaceRef }),
    response: createResponse,
    handler: (input) => createKey('workspace-service', input, guardrails),
  }),
  defineAdminRoute<CreateBody>({
    method: 'POST',
    path: '/v1/api-keys/workspace/user',
    summary: 'Create a workspace user API key',
    resource,
    action: 'create',
    scope: keyScope('workspace-user', 'create'),
    level: 'workspace',
    body: bodySchema({ workspace_id: S.workspaceRef, user_id: S.uuid }),
    response: createResponse,
    handler: (input) => createKey('workspace-user', input, guardrails),
  }),
];
