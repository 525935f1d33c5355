/**
 * Workspace memberships and the keys that hang off them. A workspace-user key acts for its user in
 * its workspace; when the user leaves that workspace (or the organisation) the key is revoked in
 * the same transaction, so no key outlives the membership it was issued under.
 *
 * Callers run these inside one `store.root.transactionSync`, so a multi-record change (user and
 * memberships, memberships and keys) lands whole or not at all.
 */
import { nowIso, type Records, type Store } from '../../core/index.js';

type WorkspaceRole = Records.WorkspaceRole;

export const memberId = (workspaceId: string, userId: string): string => `${workspaceId}:${userId}`;

/** Adds the user to the workspace, or changes the role of an existing membership. */
export function putMember(store: Store, workspaceId: string, userId: string, role: WorkspaceRole): void {
  const id = memberId(workspaceId, userId);
  const now = nowIso();
  if (store.c.members.get(id) !== undefined) {
    store.c.members.update(id, (m) => ({ ...m, role, last_updated_at: now }));
    return;
  }
  store.c.members.insert({ id, workspace_id: workspaceId, user_id: userId, role, created_at: now, last_updated_at: now });
}

/** Removes one membership and revokes the user's keys in that workspace. */
export function removeMember(store: Store, workspaceId: string, userId: string): void {
  store.c.members.delete(memberId(workspaceId, userId));
  revokeUserKeys(store, userId, workspaceId);
}

/** Removes every membership of the user and revokes all their workspace-user keys. */
export function removeAllMemberships(store: Store, userId: string): void {
  for (const m of store.c.members.list({ index: 'user', value: userId }).items) store.c.members.delete(m.id);
  revokeUserKeys(store, userId, undefined);
}

/**
 * Sets `deleted_at` on the user's live workspace-user keys (in one workspace, or everywhere).
 * Keys have no user index, so "everywhere" scans them: a rare admin write, never the hot path.
 */
function revokeUserKeys(store: Store, userId: string, workspaceId: string | undefined): void {
  const now = nowIso();
  const keys = store.c.apiKeys.list({
    ...(workspaceId === undefined ? {} : { index: 'workspace', value: workspaceId }),
    filter: (k) => k.user_id === userId && k.type === 'workspace-user' && k.deleted_at === null,
  }).items;
  for (const k of keys) store.c.apiKeys.update(k.id, (key) => ({ ...key, deleted_at: now, last_updated_at: now }));
}
