/**
 * API key → principal. Keys are looked up by SHA-256 hash through the collection's memory cache
 * (invalidated by any write, in any process), and principals are memoized per key version, so
 * the hot path costs a few map lookups and one version read (a key's hash is remembered too).
 */
import { createHash } from 'node:crypto';
import type { Principal, Records, Store } from '../../core/index.js';

type ApiKeyRecord = Records.ApiKeyRecord;
type WorkspaceRole = Records.WorkspaceRole;
import { AuthErrors } from './errors.js';

export interface KeyResolver {
  resolve(raw: string, now: number): Principal;
  /** {@link resolve}, but undefined when no key has this value (a deleted, expired… key still throws). */
  find(raw: string, now: number): Principal | undefined;
}

/** Raw keys whose SHA-256 is remembered; past it the memo starts over. */
const MAX_HASHES = 10_000;

export function createKeyResolver(store: Store): KeyResolver {
  /** Principals by key id, with what they were built from: the key's last update and the membership and user versions. */
  const principals = new Map<string, { updatedAt: string; members: number; users: number; principal: Principal }>();
  /**
   * raw key → its SHA-256, for keys that matched a stored key: a key seen before costs a map
   * lookup instead of a hash (~4 µs, the largest part of auth per request). Unknown values are
   * not kept (random keys cannot grow it), and a key that stops working is still refused by the
   * lookup of its hash.
   */
  const hashes = new Map<string, string>();

  function remember(raw: string, hash: string): void {
    if (hashes.size >= MAX_HASHES) hashes.clear();
    hashes.set(raw, hash);
  }

  function build(key: ApiKeyRecord): Principal {
    let workspaceRole: WorkspaceRole | null = null;
    let orgRole: Principal['org_role'] = key.creation_mode === 'auto' && key.type === 'organisation-service' ? 'owner' : 'admin';
    if (key.type === 'workspace-user' && key.user_id !== null && key.workspace_id !== null) {
      const user = store.c.users.get(key.user_id);
      orgRole = user?.role ?? 'member';
      workspaceRole = store.c.members.get(`${key.workspace_id}:${key.user_id}`)?.role ?? 'member';
    }
    return {
      kind: key.type,
      organisation_id: key.organisation_id,
      workspace_id: key.workspace_id,
      acting_workspace_id: key.workspace_id ?? ((store.meta.get('default_workspace_id') as string | undefined) ?? ''),
      key_id: key.id,
      user_id: key.user_id,
      org_role: orgRole,
      workspace_role: workspaceRole,
      scopes: new Set(key.scopes),
      defaults: key.defaults,
    };
  }

  function find(raw: string, now: number): Principal | undefined {
    const known = hashes.get(raw);
    const hash = known ?? createHash('sha256').update(raw).digest('hex');
    const key = store.c.apiKeys.cachedBy('hash', hash);
    if (key === undefined) return undefined;
    if (known === undefined) remember(raw, hash);
    if (key.deleted_at !== null) throw AuthErrors.invalidKey();
    if (key.expires_at !== null && Date.parse(key.expires_at) <= now) throw AuthErrors.expiredKey();
    if (hash !== key.hash && (key.previous_expires_at === null || Date.parse(key.previous_expires_at) <= now)) {
      // A rotated-out secret after its transition period.
      throw AuthErrors.expiredKey('This API key was rotated and its transition period is over.');
    }
    // Memberships and user roles are part of the principal: their versions invalidate it too.
    const members = store.c.members.version();
    const users = store.c.users.version();
    const memo = principals.get(key.id);
    if (memo !== undefined && memo.updatedAt === key.last_updated_at && memo.members === members && memo.users === users) return memo.principal;
    const principal = build(key);
    if (principals.size > 10_000) principals.clear();
    principals.set(key.id, { updatedAt: key.last_updated_at, members, users, principal });
    return principal;
  }

  return {
    find,
    resolve(raw, now) {
      const principal = find(raw, now);
      if (principal === undefined) throw AuthErrors.invalidKey();
      return principal;
    },
  };
}
