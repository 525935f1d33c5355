/**
 * The OpenAPI 3.1 document of the admin API, generated from the same schemas that validate
 * requests and serialize responses (so the document cannot drift from the behaviour). Served at
 * `GET /v1/openapi.json`, built once per pipeline.
 */
import type { RouteDefinition } from '../plugin.js';
import type { AdminRouteMeta } from './route.js';
import type { JsonSchema } from './schemas.js';

const errorSchema: JsonSchema = {
  type: 'object',
  properties: {
    error: {
      type: 'object',
      properties: { message: { type: 'string' }, type: { type: 'string' }, param: { type: ['string', 'null'] }, code: { type: 'string' } },
      required: ['message', 'type', 'param', 'code'],
    },
  },
  required: ['error'],
};

/** OpenAPI 3.1 is JSON Schema 2020-12: `nullable: true` becomes a `null` type. */
function toOas(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(toOas);
  if (typeof schema !== 'object' || schema === null) return schema;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(schema)) if (k !== 'nullable') out[k] = toOas(v);
  const s = schema as { nullable?: boolean; type?: unknown };
  if (s.nullable === true && typeof s.type === 'string') out.type = [s.type, 'null'];
  return out;
}

export function buildOpenApi(routes: ReadonlyArray<{ route: RouteDefinition }>, version: string): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const { route } of routes) {
    const meta = route.meta as AdminRouteMeta | undefined;
    if (meta?.admin !== true) continue;
    const path = route.path.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
    const pathParams = [...route.path.matchAll(/:([A-Za-z0-9_]+)/g)].map((m) => ({ name: m[1], in: 'path', required: true, schema: { type: 'string' } }));
    const queryProps = ((meta.query as { properties?: Record<string, unknown> } | undefined)?.properties ?? {}) as Record<string, unknown>;
    const queryParams = Object.entries(queryProps).map(([name, schema]) => ({ name, in: 'query', required: false, schema: toOas(schema) }));
    const op: Record<string, unknown> = {
      summary: meta.summary,
      tags: [meta.resource],
      operationId: `${route.method.toLowerCase()}_${route.path.replace(/^\/v1\//, '').replace(/[/:-]+/g, '_')}`,
      parameters: [...pathParams, ...queryParams],
      responses: {
        '200': { description: 'OK', content: { 'application/json': { schema: toOas(meta.response) } } },
        default: { description: 'An error in the gateway error shape', content: { 'application/json': { schema: errorSchema } } },
      },
      security: meta.public ? [] : [{ apiKey: [] }],
      'x-required-scope': meta.scope,
      'x-key-level': meta.level,
    };
    if (meta.body) op.requestBody = { required: true, content: { 'application/json': { schema: toOas(meta.body) } } };
    (paths[path] ??= {})[route.method.toLowerCase()] = op;
  }
  return {
    openapi: '3.1.0',
    info: { title: 'Gateway admin API', version, description: 'Control plane of the gateway. Lists: {object:"list", total, data}; pages are 0-based (current_page, page_size).' },
    // Full paths: most routes live under /v1, public model pricing at the host root.
    servers: [{ url: '/' }],
    components: { securitySchemes: { apiKey: { type: 'apiKey', in: 'header', name: 'x-gateway-api-key' } } },
    paths,
  };
}
