/**
 * Reading and changing existing keys: list, get, update (PUT answers `{}`), delete (answers `{}`).
 *
 * The scope is picked from the target key's kind, so it is checked in the handler once the key is
 * found (and visible: a workspace key never learns that another workspace's key exists). A
 * deleted key is gone for every operation here; its record stays for the audit trail.
 */
import { AdminErrors, assertVisible, crudRoutes, listPage, nowIso, S, type AnyAdminRoute, type GuardrailService, type Principal, type Records, type Store } from '../../core/index.js';
import { apiKeySchema, keyFields, view, type KeyFieldsBody } from './payloads.js';
import { applyFields, checkFields, nextStamp } from './fields.js';
import { assertMayManageKeys, grantableScopes, KEY_TYPES, keyScope, requireKeyScope, type KeyAction } from './permissions.js';

type ApiKey = Records.ApiKeyRecord;

interface ListQuery {
  type?: Records.ApiKeyType;
  current_page: number;
  page_size: number;
}

interface UpdateBody extends KeyFieldsBody {
  reset_usage?: boolean;
}

const resource = 'api_key';
const crud = crudRoutes({ path: '/v1/api-keys', key: 'id', resource, scopes: null, level: 'workspace' });

/** The live key `id`, visible to the principal, which holds the scope for `action` on its kind. */
export function findKey(store: Store, principal: Principal, id: string, action: KeyAction): ApiKey {
  const found = store.c.apiKeys.get(id);
  const key = assertVisible(principal, found?.deleted_at === null ? found : undefined, 'API key');
  requireKeyScope(principal, key.type, action);
  return key;
}

/** The routes on existing keys; `guardrails` checks the saved guardrails a key's defaults name. */
export const manageRoutes = (guardrails: () => GuardrailService | undefined): AnyAdminRoute[] => [
  crud.list<never, ListQuery>({
    summary: 'List API keys',
    // Checked in the handler: one of the three `.list` scopes suffices, each showing its own kind.
    workspaceDefault: 'all',
    query: {
      properties: {
        workspace_id: S.workspaceRef,
        type: { type: 'string', enum: [...KEY_TYPES] },
        ...S.pagination,
      },
    },
    response: S.listOf(apiKeySchema),
    handler({ query, workspace, principal, store }) {
      const kinds = new Set(KEY_TYPES.filter((t) => principal.scopes.has(keyScope(t, 'list'))));
      if (kinds.size === 0) throw AdminErrors.insufficientScope('This key lacks every API key list scope (e.g. "workspace_service_api_keys.list").');
      if (query.type !== undefined && !kinds.has(query.type)) {
        throw AdminErrors.insufficientScope(`This key lacks the scope "${keyScope(query.type, 'list')}".`);
      }
      return listPage(store.c.apiKeys, query, {
        workspace,
        filter: (k) => k.deleted_at === null && kinds.has(k.type) && (query.type === undefined || k.type === query.type),
        view,
      });
    },
  }),
  crud.read({
    summary: 'Get an API key (its secret masked)',
    workspaceDefault: 'all',
    response: apiKeySchema,
    handler({ params, principal, store }) {
      return view(findKey(store, principal, params.id!, 'read'));
    },
  }),
  crud.update<UpdateBody>({
    summary: 'Update an API key (its kind and user binding cannot change)',
    workspaceDefault: 'all',
    body: {
      type: 'object',
      properties: { ...keyFields, reset_usage: { type: 'boolean' } },
      additionalProperties: false,
    },
    response: S.empty,
    handler({ params, body, principal, store }) {
      const key = findKey(store, principal, params.id!, 'update');
      assertMayManageKeys(principal);
      const scopes = body.scopes === undefined ? undefined : grantableScopes(principal, key.type, body.scopes);
      checkFields(store, body, { workspaceId: key.workspace_id, guardrails });
      store.c.apiKeys.update(key.id, function applyUpdate(current) {
        // Deleted between the read above and this transaction: nothing to update.
        if (current.deleted_at !== null) throw AdminErrors.notFound('API key does not exist.');
        const next = applyFields(current, body, scopes);
        next.last_updated_at = nextStamp(current.last_updated_at);
        if (body.reset_usage === true) {
          next.status = 'active';
          next.last_reset_at = next.last_updated_at;
        }
        return next;
      });
      return {};
    },
  }),
  crud.delete({
    summary: 'Delete an API key (it stops authenticating at once)',
    workspaceDefault: 'all',
    response: S.empty,
    handler({ params, principal, store }) {
      const key = findKey(store, principal, params.id!, 'delete');
      assertMayManageKeys(principal);
      // A soft delete: the auth plugin refuses a key with `deleted_at` from the next request on
      // (the write bumps the collection version, which drops every process's key cache), and
      // the record stays so audit entries still name a key that existed. Deleting the key this
      // request came with is allowed: it is this request's last.
      store.c.apiKeys.update(key.id, (current) => ({ ...current, deleted_at: current.deleted_at ?? nowIso(), last_updated_at: nextStamp(current.last_updated_at) }));
      return {};
    },
  }),
];
