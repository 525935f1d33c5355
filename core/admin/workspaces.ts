/**
 * Finding workspaces by id or slug, and the default workspace an organisation key acts on when
 * it names none.
 */
import type { Store } from '../store/store.js';
import type { Workspace } from '../store/records.js';
import { AdminErrors } from './errors.js';

export function findWorkspace(store: Store, idOrSlug: string): Workspace | undefined {
  return store.c.workspaces.get(idOrSlug) ?? store.c.workspaces.getBy('slug', idOrSlug);
}

export function defaultWorkspace(store: Store): Workspace {
  const id = store.meta.get('default_workspace_id') as string | undefined;
  const ws = id === undefined ? undefined : store.c.workspaces.get(id);
  if (ws === undefined) throw AdminErrors.notFound('There is no default workspace; pass workspace_id.', 'workspace_id');
  return ws;
}
