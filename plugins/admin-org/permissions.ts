/**
 * The role half of authorization, on top of the scope the route framework already checked
 * (admin-api.md §22): organisation owners and admins manage users, invites and workspaces; within
 * a workspace, its admins and managers manage members and settings, and members only read.
 *
 * A workspace-user key's role is its user's membership role (resolved by the auth plugin). Service
 * keys carry no user: holding the scope is what an administrator granted them.
 */
import { AdminErrors, type Principal } from '../../core/index.js';

/** For every write of this plugin (reads need only the scope). */
export function assertMayManage(principal: Principal): void {
  if (principal.workspace_id === null) {
    if (principal.org_role === 'owner' || principal.org_role === 'admin') return;
    throw AdminErrors.forbidden('Only organisation owners and admins manage users and workspaces.');
  }
  if (principal.kind === 'workspace-service') return;
  if (principal.workspace_role === 'admin' || principal.workspace_role === 'manager') return;
  throw AdminErrors.forbidden("Only a workspace's admins and managers manage it.");
}
