/**
 * Naming workspaces: in a path (`/admin/workspaces/:id…`, where a workspace key may name only its
 * own) and in bodies (`workspaces: [{id, role}]` of users and invites, id or slug).
 */
import { AdminErrors, findWorkspace, type Principal, type Records, type Store } from '../../core/index.js';

type Workspace = Records.Workspace;
type WorkspaceRole = Records.WorkspaceRole;

/** Longer than any id or slug (255): such a path segment cannot name anything. */
const MAX_REF = 255;

/**
 * The workspace a path names. A workspace key may name only its own and gets 403 for any other,
 * whether or not that one exists, so the answer tells it nothing about other workspaces; an
 * organisation key may name any (404 when none has that id or slug).
 */
export function pathWorkspace(store: Store, principal: Principal, idOrSlug: string): Workspace {
  if (principal.workspace_id !== null) {
    const own = store.c.workspaces.get(principal.workspace_id);
    if (own === undefined || (idOrSlug !== own.id && idOrSlug !== own.slug)) {
      throw AdminErrors.forbidden('A workspace key can only act on its own workspace.');
    }
    return own;
  }
  const ws = idOrSlug.length <= MAX_REF ? findWorkspace(store, idOrSlug) : undefined;
  if (ws === undefined) throw AdminErrors.notFound('The workspace does not exist.');
  return ws;
}

export interface WorkspaceGrant {
  workspace: Workspace;
  role: WorkspaceRole;
}

/**
 * `[{id (id or slug), role}]` → the active workspaces, each once. Everything is checked before
 * anything is written: a missing or archived workspace is 404 and a repeat 400, both naming
 * `<field>[i].id`.
 */
export function resolveGrants(store: Store, refs: ReadonlyArray<{ id: string; role: WorkspaceRole }>, field: string): WorkspaceGrant[] {
  const seen = new Set<string>();
  return refs.map((ref, i) => {
    const param = `${field}[${i}].id`;
    const workspace = findWorkspace(store, ref.id);
    // An archived workspace was deleted: nobody joins it any more.
    if (workspace === undefined || workspace.status !== 'active') throw AdminErrors.notFound(`The workspace named by ${param} does not exist.`, param);
    if (seen.has(workspace.id)) throw AdminErrors.invalid(`The workspace named by ${param} is listed twice.`, param);
    seen.add(workspace.id);
    return { workspace, role: ref.role };
  });
}

/** The body fragment for `workspaces: [{id, role}]`. */
export const grantsSchema = {
  type: 'array',
  maxItems: 100,
  items: {
    type: 'object',
    properties: {
      id: { type: 'string', minLength: 1, maxLength: MAX_REF, description: 'Workspace id or slug.' },
      role: { type: 'string', enum: ['admin', 'member', 'manager'] },
    },
    required: ['id', 'role'],
    additionalProperties: false,
  },
};
