/**
 * Admin routes: one definition per operation, made into a plugin route at boot. Its body and query
 * schemas are checked against JSON Schema at boot; its validators and response serializer are
 * compiled on the route's first call (compiling all 146 of the shipped pipeline's routes took about
 * 0.8 s of a 3 s start, and most routes are never called in a process's life).
 *
 *   request (body ≤ server.admin_body_limit, else 413 before anything is parsed or audited)
 *   ─▶ principal? (401) ─▶ key kind and scope (403) ─▶ query (a GET's unknown names are a 400)
 *   and body (ajv, 400 naming the field) ─▶ target workspace (the key's own; or `workspace_id`
 *   for an organisation key) ─▶ handler ─▶ response (fast-json-stringify: only fields in the response schema leave, so a
 *   secret a handler forgot to drop still never reaches the wire) ─▶ audit record (writes: every
 *   method but GET, unless the route is `readOnly`)
 *
 * The audit record of a successful write commits in the same transaction as the change: the
 * handler runs with the record as the companion of its collection writes (store/companion.ts).
 * A handler that wrote outside collections (or nothing) gets its record written synchronously
 * before the answer. Either way a 2xx the client saw has its record, even after a kill -9.
 * Refused and failed calls are recorded asynchronously, as the answer does not wait on them.
 *
 * When the store is at its size limit (`store.map_size`) or the disk is full, writes answer 503
 * `store_full` (after authentication, scope and validation, which keep their own answers).
 *
 * Distributed mode: a write (any method but GET, unless `readOnly`) runs in a control-plane write
 * scope (store/distributed/replica.ts): its changes and its audit record reach PostgreSQL, and so
 * every host, before the answer; PostgreSQL unreachable is 503 `control_plane_unavailable` with
 * nothing saved. A call with no principal on a closed route is refused (401) without a scope.
 *
 * Admin routes are closed by default: without the auth plugin there is no principal, and every
 * non-public route answers 401.
 */
import { createRequire } from 'node:module';
import type FastJson from 'fast-json-stringify';
import type { Ajv, ValidateFunction } from 'ajv';
import type { GatewayApp, RouteDefinition } from '../plugin.js';
import type { GatewayContext } from '../context.js';
import type { Principal } from '../auth/principal.js';
import type { Store } from '../store/store.js';
import type { Workspace } from '../store/records.js';
import { reply, type Reply } from '../reply.js';
import { fromAjvErrors, ValidationErrors } from '../validation/index.js';
import { schemaProblem } from '../validation/schema-check.js';
import type { GatewayError } from '../errors.js';
import { checkLookup } from '../validation/lookup-bounds.js';
import { nonFiniteNumber } from '../validation/finite-numbers.js';
import { AdminErrors } from './errors.js';
import { buildAuditRecord, recordAudit } from './audit.js';
import { withCompanion } from '../store/companion.js';
import { isNoRoom } from '../store/write-failures.js';
import { StoreErrors } from '../store/errors.js';
import { uuidv7 } from '../store/ids.js';
import type { AuditRecord } from '../store/records.js';
import { findWorkspace, defaultWorkspace } from './workspaces.js';
import type { JsonSchema } from './schemas.js';
import { newAjv } from '../validation/ajv.js';

export interface AdminInput<B, Q> {
  ctx: GatewayContext;
  params: Record<string, string>;
  query: Q;
  body: B;
  /** Undefined only on public routes. */
  principal: Principal;
  /**
   * The workspace the call acts on (level `workspace`): a workspace key's own; for an
   * organisation key the one named by `workspace_id`, else the default one, or null when the
   * route lists across workspaces (`workspaceDefault: 'all'`).
   */
  workspace: Workspace | null;
  store: Store;
}

export interface AdminRouteDef<B = Record<string, unknown>, Q = Record<string, unknown>> {
  method: RouteDefinition['method'];
  /** Under `/v1`, with `:param` segments. */
  path: string;
  summary: string;
  /** Audit and OpenAPI grouping, e.g. `rate_limits_policy`. */
  resource: string;
  /** Audit action: create, update, delete, rotate, reset, … (reads are not audited). */
  action: string;
  /** The scope the principal must hold; null: every authenticated principal may call it. */
  scope: string | null;
  /** `organisation`: organisation keys only. `workspace`: either kind, scoped to a workspace. */
  level: 'organisation' | 'workspace';
  /** For level `workspace` with an organisation key and no `workspace_id`. Default `default`. */
  workspaceDefault?: 'default' | 'all';
  /** No authentication at all (model pricing). */
  public?: boolean;
  /**
   * Distributed mode: run the write in a control-plane write scope (default true for every method
   * but GET). Routes apps call at volume that write no control-plane record (custom logs,
   * feedback) set false: they are not serialized across hosts, and their audit record reaches the
   * other hosts through the replica's outbox (at-least-once, within ~100 ms) instead.
   */
  writeScope?: boolean;
  /**
   * A method other than GET that changes nothing (a dry-run validation): not audited like a read,
   * run outside any control-plane write scope, and answered even when the store is full.
   */
  readOnly?: boolean;
  query?: JsonSchema;
  body?: JsonSchema;
  response: JsonSchema;
  handler(input: AdminInput<B, Q>): unknown;
}

/** An admin route of any body and query type, as {@link adminRoutes} takes them. */
export type AnyAdminRoute = AdminRouteDef<never, never>;

/**
 * Declares one admin operation with its body and query types (the schemas are the runtime truth;
 * these types describe what they guarantee).
 *
 * @example
 *   defineAdminRoute<{ name: string }>({ method: 'POST', path: '/v1/things', …, handler({ body }) { … } })
 */
export function defineAdminRoute<B = Record<string, never>, Q = Record<string, never>>(def: AdminRouteDef<B, Q>): AnyAdminRoute {
  return def as unknown as AnyAdminRoute;
}

/** Metadata attached to every admin route (read by the OpenAPI builder and the audit). */
export interface AdminRouteMeta {
  admin: true;
  summary: string;
  resource: string;
  action: string;
  scope: string | null;
  level: 'organisation' | 'workspace';
  public: boolean;
  query: JsonSchema | undefined;
  body: JsonSchema | undefined;
  response: JsonSchema;
}

let sharedAjv: { body: Ajv; query: Ajv } | undefined;

const require = createRequire(import.meta.url);
let fastJsonModule: typeof FastJson | undefined;
/** fast-json-stringify, loaded with the first route compiled (about 0.1 s of a start otherwise). */
const fastJson = (): typeof FastJson => (fastJsonModule ??= require('fast-json-stringify') as typeof FastJson);

/** Two ajv instances for all admin routes: bodies as sent (no coercion), queries coerced from strings. */
function ajvs(): { body: Ajv; query: Ajv } {
  if (sharedAjv) return sharedAjv;
  // Schemas are checked at boot by the shared checker ({@link checkSchemas}), not again by each instance.
  const body = newAjv({ allErrors: false, useDefaults: true, coerceTypes: false, strict: false, validateSchema: false }, { formats: true });
  const query = newAjv({ allErrors: false, useDefaults: true, coerceTypes: true, strict: false, validateSchema: false }, { formats: true });
  return (sharedAjv = { body, query });
}

/** What a route compiles from its definition. */
interface Compiled {
  validateBody: ValidateFunction | undefined;
  validateQuery: ValidateFunction | undefined;
  serialize: (doc: unknown) => string;
}

const querySchema = (def: AnyAdminRoute): JsonSchema | undefined => (def.query ? { type: 'object', ...def.query } : undefined);

/**
 * A route's body and query schemas are valid JSON Schema, or the route is refused at boot with
 * the reason (what compiling them at boot used to catch, for a fraction of the cost).
 */
function checkSchemas(def: AnyAdminRoute): void {
  for (const [schema, what] of [
    [def.body, 'body'],
    [querySchema(def), 'query'],
  ] as const) {
    const problem = schema === undefined ? null : schemaProblem(schema);
    if (problem !== null) throw new Error(`admin route ${def.method} ${def.path}: its ${what} schema is not valid JSON Schema: ${problem}`);
  }
}

/** The route's validators and serializer, compiled on its first call and kept. */
function compiler(def: AnyAdminRoute): () => Compiled {
  let compiled: Compiled | undefined;
  return () => {
    if (compiled !== undefined) return compiled;
    const { body: bodyAjv, query: queryAjv } = ajvs();
    const query = querySchema(def);
    compiled = {
      validateBody: def.body ? bodyAjv.compile(def.body) : undefined,
      validateQuery: query ? queryAjv.compile(query) : undefined,
      serialize: fastJson()(def.response as unknown as Parameters<typeof FastJson>[0]) as (doc: unknown) => string,
    };
    return compiled;
  };
}

function parseQuery(search: string): Record<string, string> {
  const out: Record<string, string> = {};
  if (search.length > 1) for (const [k, v] of new URLSearchParams(search)) out[k] = v;
  return out;
}

/**
 * The query names a GET route accepts: those its schema declares, plus `workspace_id` on
 * workspace-level routes (read by every one of them, see {@link targetWorkspace}). Undefined
 * when the route takes free-form names (a schema with `additionalProperties`, as analytics
 * declares to answer filters it cannot apply with its own error) or is not a GET: a write's
 * query filters nothing, and is recorded in its audit record as sent.
 */
function acceptedQueryNames(def: AnyAdminRoute): ReadonlySet<string> | undefined {
  const schema = def.query as { properties?: Record<string, unknown>; additionalProperties?: unknown } | undefined;
  if (def.method !== 'GET' || (schema?.additionalProperties !== undefined && schema.additionalProperties !== false)) return undefined;
  const names = new Set(Object.keys(schema?.properties ?? {}));
  if (def.level === 'workspace') names.add('workspace_id');
  return names;
}

/** A typo in a filter (`?staus=active`) is a 400 naming it, never a list that silently ignored it. */
function unknownQueryName(query: Record<string, string>, accepted: ReadonlySet<string>): GatewayError | null {
  for (const name in query) {
    if (accepted.has(name)) continue;
    const list = accepted.size === 0 ? 'This route takes no query parameters.' : `Accepted: ${[...accepted].join(', ')}.`;
    // A name is echoed bounded: it comes from the client, and may be any length.
    return ValidationErrors.unknownParameter(`${JSON.stringify(name.slice(0, 64))} is not a known query parameter. ${list}`, { param: name.slice(0, 255) });
  }
  return null;
}

/**
 * Compiles admin operations into plugin routes.
 *
 * @example
 *   return { routes: adminRoutes(app, [{ method: 'GET', path: '/v1/things', scope: 'things.list', … }]) };
 */
export function adminRoutes(app: GatewayApp, defs: ReadonlyArray<AnyAdminRoute>): RouteDefinition[] {
  return defs.map((def) => {
    checkSchemas(def);
    const compiled = compiler(def);
    const queryNames = acceptedQueryNames(def);
    const meta: AdminRouteMeta = {
      admin: true,
      summary: def.summary,
      resource: def.resource,
      action: def.action,
      scope: def.scope,
      level: def.level,
      public: def.public === true,
      query: def.query,
      body: def.body,
      response: def.response,
    };
    const reads = def.method === 'GET' || def.readOnly === true;
    const replica = reads || def.writeScope === false ? undefined : app.store.replica;
    async function run(ctx: GatewayContext, params: Record<string, string>): Promise<Reply> {
      const principal = ctx.get('principal');
      if (!def.public && principal === undefined) throw AdminErrors.unauthenticated();
      const { validateBody, validateQuery, serialize } = compiled();
      const store = app.store;
      const query = parseQuery(ctx.search);
      const body = (ctx.body ?? {}) as Record<string, unknown>;
      let workspace: Workspace | null = null;
      const audited = !reads && principal !== undefined;
      const auditId = uuidv7();
      const audit = (outcome: number): AuditRecord =>
        buildAuditRecord({
          id: auditId,
          ctx,
          principal: principal!,
          resource: def.resource,
          action: def.action,
          status: outcome,
          workspaceId: workspace?.id ?? principal!.workspace_id,
          body,
          query,
          summaryBytes: app.config.audit.summary_bytes,
        });
      try {
        // Inside the try: a refused write (403, 400) is audited too; that is what auditors look for.
        if (principal !== undefined && !def.public) authorize(principal, def);
        // Path ids are looked up in the store: an oversized one is a 400, not an LMDB error.
        for (const name in params) {
          const err = checkLookup(params[name], name);
          if (err !== null) throw err;
        }
        const unknownName = queryNames === undefined ? null : unknownQueryName(query, queryNames);
        if (unknownName !== null) throw unknownName;
        if (validateQuery && !validateQuery(query)) throw fromAjvErrors(validateQuery.errors, query, def.query!);
        // Coercion turns `?x=1e999` into Infinity, which `type: number` accepts.
        const nonFinite = validateQuery ? nonFiniteNumber(query) : null;
        if (nonFinite !== null) throw nonFinite;
        if (validateBody && !validateBody(body)) throw fromAjvErrors(validateBody.errors, body, def.body!);
        if (def.level === 'workspace' && principal !== undefined) {
          workspace = targetWorkspace(store, principal, body.workspace_id ?? query.workspace_id, def.workspaceDefault ?? 'default');
        }
        const input = { ctx, params, query: query as never, body: body as never, principal: principal!, workspace, store };
        let result: unknown;
        if (audited) {
          // A full store refuses admin writes before they start (DELETE goes on: it makes room).
          if (def.method !== 'DELETE') store.capacity.assertRoom();
          let success: AuditRecord | undefined;
          const companion = store.c.audit.companion(auditId, () => (success ??= audit(200)));
          result = await withCompanion(companion, () => def.handler(input));
          // No collection write carried the record (raw databases, or nothing written): commit it
          // now, before the answer, so the acknowledgement never outruns it.
          if (store.c.audit.get(auditId) === undefined) store.c.audit.appendSync(success ?? audit(200));
        } else {
          result = await def.handler(input);
        }
        return reply(200, serialize(result ?? {}), { 'content-type': 'application/json' });
      } catch (caught) {
        // A handler's own transaction that failed for lack of room (disk full) is the same 503 as a collection's.
        const err = isNoRoom(caught) ? StoreErrors.full(caught) : caught;
        const status = typeof (err as { status?: unknown }).status === 'number' ? (err as { status: number }).status : 500;
        // Same id: a record committed with a change the call then failed after is corrected, not doubled.
        // A full store keeps room for changes, not for the records of refused calls.
        if (audited && store.capacity.full()) ctx.log.warn('store full: audit record of a failed call not written', { requestId: ctx.id, status });
        else if (audited) recordAudit(store, audit(status), (e) => ctx.log.warn('audit record not written', { requestId: ctx.id, err: e }));
        throw err;
      }
    }
    const route: RouteDefinition = {
      method: def.method,
      path: def.path,
      body: def.body ? 'json' : 'none',
      bodyLimit: 'admin',
      meta,
      handler:
        replica === undefined
          ? run
          : (ctx, params) => (def.public || ctx.get('principal') !== undefined ? replica.writeScope(() => run(ctx, params)) : run(ctx, params)),
    };
    return route;
  });
}

/** Key kind, then scope. A workspace key never reaches organisation-level operations. */
export function authorize(principal: Principal, def: Pick<AdminRouteDef, 'level' | 'scope'>): void {
  if (def.level === 'organisation' && principal.workspace_id !== null) {
    throw AdminErrors.forbidden('This operation needs an organisation (admin) API key.');
  }
  if (def.scope !== null && !principal.scopes.has(def.scope)) {
    throw AdminErrors.insufficientScope(`This key lacks the scope "${def.scope}".`);
  }
}

function targetWorkspace(store: Store, principal: Principal, workspaceRef: unknown, mode: 'default' | 'all'): Workspace | null {
  let requested: string | undefined;
  if (workspaceRef !== undefined && workspaceRef !== null) {
    // Routes without a schema for it still read `workspace_id`: its type and length are checked here.
    const err = checkLookup(workspaceRef, 'workspace_id');
    if (err !== null) throw err;
    requested = workspaceRef as string;
  }
  if (principal.workspace_id !== null) {
    const own = store.c.workspaces.get(principal.workspace_id);
    if (own === undefined) throw AdminErrors.unauthenticated();
    if (requested !== undefined && requested !== own.id && requested !== own.slug) {
      throw AdminErrors.forbidden('A workspace key can only act on its own workspace.', 'workspace_id');
    }
    return own;
  }
  if (requested !== undefined) {
    const ws = findWorkspace(store, requested);
    if (ws === undefined) throw AdminErrors.notFound('The workspace named by workspace_id does not exist.', 'workspace_id');
    return ws;
  }
  return mode === 'all' ? null : defaultWorkspace(store);
}

/**
 * For reads and writes of one record: a workspace key sees only its own workspace's records;
 * others are answered 404, so a key cannot even learn that they exist.
 */
export function assertVisible<T extends { workspace_id: string | null }>(principal: Principal, record: T | undefined, what: string): T {
  if (record === undefined || (principal.workspace_id !== null && record.workspace_id !== principal.workspace_id)) {
    throw AdminErrors.notFound(`${what} does not exist.`);
  }
  return record;
}
