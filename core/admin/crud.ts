/**
 * CRUD route declarations: what every admin resource repeats, written once.
 *
 * {@link crudRoutes} fills in the parts a resource's create, list, read, update and delete share
 * (method, path, audit resource and action, scope, key level), so a route declares only what is
 * its own (summary, schemas, handler). {@link versionedRoutes} goes one step further for the
 * resources that keep a version history (configs, guardrails, prompts, partials), where list, read,
 * delete and the history behave the same:
 *
 *   POST   /v1/things                 create          scope things.create   (the resource's own)
 *   GET    /v1/things                 list            scope things.list     active unless `status`
 *   GET    /v1/things/:slug           read            scope things.read     by slug or id
 *   PUT    /v1/things/:slug           update          scope things.update   (the resource's own)
 *   DELETE /v1/things/:slug           delete          scope things.delete   archives; history kept
 *   GET    /v1/things/:slug/versions  list            scope things.read     newest first
 *
 * Both only build {@link defineAdminRoute} definitions: validation, audit and the OpenAPI document
 * stay in route.ts and see no difference.
 */
import type { Collection } from '../store/collection.js';
import type { Store } from '../store/store.js';
import { nowIso } from '../store/ids.js';
import { assertVisible, defineAdminRoute, type AdminRouteDef, type AnyAdminRoute } from './route.js';
import { listPage } from './list.js';
import * as S from './schemas.js';

/** What the routes of one resource share. */
export interface CrudBase {
  /** The collection path, e.g. `/v1/virtual-keys`; one record is at `${path}/:${key}`. */
  path: string;
  /** The path parameter that names one record: `slug` or `id`. */
  key: string;
  /** Audit and OpenAPI grouping, e.g. `virtual_key`. */
  resource: string;
  /**
   * Scope prefix: each route needs `${scopes}.<action>` (read for the versions list). Null when
   * the handler authorizes itself (the scope depends on the record, e.g. integrations).
   */
  scopes: string | null;
  level: AdminRouteDef['level'];
}

/** One route of a resource: what {@link CrudBase} does not already say. Scope and level may still be overridden. */
export type CrudRoute<B, Q> = Omit<AdminRouteDef<B, Q>, 'method' | 'path' | 'resource' | 'action' | 'scope' | 'level'> &
  Partial<Pick<AdminRouteDef<B, Q>, 'scope' | 'level'>>;

/**
 * A route under one record (`/v1/prompts/:slug/versions`): `path` is what follows the record's
 * path, and the route says its own method and action.
 */
export type MemberRoute<B, Q> = CrudRoute<B, Q> & Pick<AdminRouteDef<B, Q>, 'method' | 'path' | 'action'>;

export interface CrudBuilder {
  base: CrudBase;
  member<B = Record<string, never>, Q = Record<string, never>>(route: MemberRoute<B, Q>): AnyAdminRoute;
  create<B = Record<string, never>, Q = Record<string, never>>(route: CrudRoute<B, Q>): AnyAdminRoute;
  list<B = Record<string, never>, Q = Record<string, never>>(route: CrudRoute<B, Q>): AnyAdminRoute;
  read<B = Record<string, never>, Q = Record<string, never>>(route: CrudRoute<B, Q>): AnyAdminRoute;
  update<B = Record<string, never>, Q = Record<string, never>>(route: CrudRoute<B, Q>): AnyAdminRoute;
  delete<B = Record<string, never>, Q = Record<string, never>>(route: CrudRoute<B, Q>): AnyAdminRoute;
}

/**
 * The five routes of a resource, each filled in from `base`, and `member` for any other route
 * under one record; the caller keeps the order it lists them in.
 *
 * @example
 *   const crud = crudRoutes({ path: '/v1/policies/rate-limits', key: 'id', resource: 'rate_limits_policy', scopes: 'policies', level: 'workspace' });
 *   const routes = [
 *     crud.create<CreateBody>({ summary: 'Create a rate limits policy', body, response, handler({ body }) { … } }),
 *     crud.delete({ summary: 'Delete (archive) a rate limits policy', response: S.empty, handler({ params }) { … } }),
 *   ];
 */
export function crudRoutes(base: CrudBase): CrudBuilder {
  const one = `${base.path}/:${base.key}`;
  const route =
    (method: AdminRouteDef['method'], path: string, action: string) =>
    <B, Q>(def: CrudRoute<B, Q>): AnyAdminRoute =>
      defineAdminRoute<B, Q>({
        method,
        path,
        resource: base.resource,
        action,
        scope: base.scopes === null ? null : `${base.scopes}.${action}`,
        level: base.level,
        ...def,
      });
  return {
    base,
    member: <B, Q>({ method, path, action, ...def }: MemberRoute<B, Q>) => route(method, `${one}${path}`, action)(def),
    create: route('POST', base.path, 'create'),
    list: route('GET', base.path, 'list'),
    read: route('GET', one, 'read'),
    update: route('PUT', one, 'update'),
    delete: route('DELETE', one, 'delete'),
  };
}

/** What a versioned record holds for the shared routes to work on it. */
export interface VersionedRecord {
  id: string;
  workspace_id: string;
  status: 'active' | 'archived';
  updated_by: string | null;
  last_updated_at: string;
}

/** What every versioned record's list item shows (configs, guardrails, prompts, partials). */
export interface VersionedItemSource extends VersionedRecord {
  slug: string;
  name: string;
  organisation_id: string;
  version_id: string;
  owner_id: string | null;
  created_at: string;
}

/** The schema of {@link versionedItem}'s fields; a resource spreads it and adds its own. */
export const versionedItemFields = {
  id: S.str,
  slug: S.str,
  name: S.str,
  organisation_id: S.str,
  workspace_id: S.str,
  status: S.str,
  version_id: S.str,
  owner_id: S.strOrNull,
  updated_by: S.strOrNull,
  created_at: S.str,
  last_updated_at: S.str,
  object: S.str,
};

/**
 * The list-item fields a versioned record shares with the others, under its `object` name.
 *
 * @example
 *   ({ ...versionedItem(c, 'config'), is_default: c.is_default })
 */
export function versionedItem<O extends string>(r: VersionedItemSource, object: O) {
  return {
    id: r.id,
    slug: r.slug,
    name: r.name,
    organisation_id: r.organisation_id,
    workspace_id: r.workspace_id,
    status: r.status,
    version_id: r.version_id,
    owner_id: r.owner_id,
    updated_by: r.updated_by,
    created_at: r.created_at,
    last_updated_at: r.last_updated_at,
    object,
  };
}

/** A versioned resource: its own create and update, and what list, read, delete and versions need. */
export interface VersionedSpec<T extends VersionedRecord, V extends { id: string }> {
  /** Named in 404s: `${noun} does not exist.` */
  noun: string;
  records(store: Store): Collection<T>;
  /** By slug, else by id. */
  find(store: Store, slugOrId: string): T | undefined;
  create: AnyAdminRoute;
  update: AnyAdminRoute;
  list: { summary: string; item: S.JsonSchema; view(record: T): unknown };
  read: { summary: string; response: S.JsonSchema; view(store: Store, record: T): unknown };
  delete: {
    summary: string;
    /** Fields besides `status` an archive resets (a config's default flag). */
    archived?: Partial<T>;
  };
  versions: {
    summary: string;
    records(store: Store): Collection<V>;
    /** The versions collection's index on the record id. */
    index: string;
    item: S.JsonSchema;
    view(store: Store, record: T, version: V): unknown;
  };
}

/**
 * The six routes of a versioned resource (see the table above), in that order.
 *
 * @example
 *   const crud = crudRoutes({ path: '/v1/guardrails', key: 'slug', resource: 'guardrails', scopes: 'guardrails', level: 'workspace' });
 *   return versionedRoutes(crud, { noun: 'Guardrail', records: (store) => store.c.guardrails, find: findGuardrail, create, update, list, read, delete, versions });
 */
export function versionedRoutes<T extends VersionedRecord, V extends { id: string }>(crud: CrudBuilder, spec: VersionedSpec<T, V>): AnyAdminRoute[] {
  const key = crud.base.key;
  const visible = (input: { params: Record<string, string>; principal: Parameters<typeof assertVisible>[0]; store: Store }): T =>
    assertVisible(input.principal, spec.find(input.store, input.params[key]!), spec.noun);
  return [
    spec.create,
    crud.list<never, { status: T['status']; current_page: number; page_size: number }>({
      summary: spec.list.summary,
      workspaceDefault: 'all',
      query: {
        properties: {
          workspace_id: S.workspaceRef,
          status: { type: 'string', enum: ['active', 'archived'], default: 'active' },
          ...S.pagination,
        },
      },
      response: S.listOf(spec.list.item),
      handler({ query, workspace, store }) {
        return listPage(spec.records(store), query, { workspace, filter: (r) => r.status === query.status, view: spec.list.view });
      },
    }),
    crud.read({
      summary: spec.read.summary,
      response: spec.read.response,
      handler: (input) => spec.read.view(input.store, visible(input)),
    }),
    spec.update,
    crud.delete({
      summary: spec.delete.summary,
      response: S.empty,
      handler(input) {
        const current = visible(input);
        // Archiving keeps the versions (and what requests ran with) for the audit trail; nothing
        // resolves the record any more.
        const archive = (r: T): T => ({ ...r, status: 'archived', ...spec.delete.archived, updated_by: input.principal.user_id, last_updated_at: nowIso() });
        spec.records(input.store).update(current.id, archive);
        return {};
      },
    }),
    crud.member<never, { current_page: number; page_size: number }>({
      method: 'GET',
      path: '/versions',
      action: 'list',
      summary: spec.versions.summary,
      scope: crud.base.scopes === null ? null : `${crud.base.scopes}.read`,
      query: { properties: { ...S.pagination } },
      response: S.listOf(spec.versions.item),
      handler(input) {
        const record = visible(input);
        return listPage(spec.versions.records(input.store), input.query, {
          index: spec.versions.index,
          value: record.id,
          view: (v) => spec.versions.view(input.store, record, v),
        });
      },
    }),
  ];
}
