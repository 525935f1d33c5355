/**
 * The admin list envelope: one page of a collection as `{object: "list", total, data}`. Every
 * admin list route pages the same way (`current_page` from 0, `page_size` records), so the
 * offset arithmetic and the envelope live here once.
 */
import type { Collection } from '../store/collection.js';
import type { Workspace } from '../store/records.js';

export interface ListPageQuery {
  current_page: number;
  page_size: number;
}

export interface ListPageOptions<T, V> {
  /** Restricts to this workspace through the collection's `workspace` index; null means all. */
  workspace?: Workspace | null;
  /** An explicit index lookup; it wins over `workspace`. */
  index?: string;
  value?: string;
  filter?: (record: T) => boolean;
  /** Maps each record of the page to what the route returns. */
  view: (record: T) => V;
  /** Order by id descending (UUIDv7, so newest first). Default true. */
  newestFirst?: boolean;
}

export interface ListEnvelope<V> {
  object: 'list';
  total: number;
  data: V[];
}

/**
 * One page of a collection in the admin list envelope `{object:"list", total, data}`, newest first.
 *
 * `total` counts every record that passes the index and filter, not just the page.
 *
 * @example
 * handler({ query, workspace, store }) {
 *   return listPage(store.c.configs, query, {
 *     workspace,
 *     filter: (c) => c.status === query.status,
 *     view: item,
 *   });
 * }
 */
export function listPage<T extends { id: string }, V>(
  collection: Collection<T>,
  query: ListPageQuery,
  options: ListPageOptions<T, V>,
): ListEnvelope<V> {
  const { workspace, filter, view } = options;
  // An explicit index or value replaces the workspace index. The collection only looks one up
  // when both are set, so a route can leave an optional one (e.g. `?email=`) undefined.
  const explicit = options.index !== undefined || options.value !== undefined;
  const index = explicit ? { index: options.index, value: options.value } : workspace ? { index: 'workspace', value: workspace.id } : {};
  const page = collection.list({
    ...index,
    filter,
    offset: query.current_page * query.page_size,
    limit: query.page_size,
    newestFirst: options.newestFirst ?? true,
  });
  return { object: 'list', total: page.total, data: page.items.map((record) => view(record)) };
}
