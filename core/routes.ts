/**
 * The route table: built once per pipeline, matched once per request.
 *
 * Order: `/health`, plugin routes (admin APIs), the model routes (POST only: OpenAI's five and
 * Anthropic's `/v1/messages` and `/v1/messages/count_tokens`), then every other
 * `/v1/*` path with GET/POST/PUT/DELETE as pass-through. `GET /v1/chat/completions` (stored
 * completions) or `GET /v1/responses/{id}` are pass-through on purpose: only the POSTs that create
 * a generation are model routes.
 *
 * Admin areas are the gateway's own: the first segment after `/v1/` of every plugin route
 * (`/v1/admin`, `/v1/policies`, `/v1/logs`, …, derived from the routes the pipeline registers).
 * A path there that no route serves is a 404, a known path with another method a 405 (with
 * `Allow`): an admin mistake is never sent to a provider with the client's credentials. The
 * provider's own areas (model routes, `/v1/models`, `/v1/files`, …) never become admin areas.
 */
import type { RouteDefinition } from './plugin.js';

export type ModelRoute =
  | 'chat.completions'
  | 'completions'
  | 'embeddings'
  | 'moderations'
  | 'responses'
  /** Anthropic's Messages API, served to any provider (core/ingress). */
  | 'messages'
  | 'messages.count_tokens';

export type RouteMatch =
  | { kind: 'health' }
  | { kind: 'model'; name: ModelRoute; /** path after `/v1`, e.g. `/chat/completions` */ upstreamPath: string }
  | { kind: 'passthrough'; upstreamPath: string }
  | { kind: 'plugin'; plugin: string; route: RouteDefinition; params: Record<string, string> }
  | { kind: 'not_found' }
  | { kind: 'method_not_allowed'; /** the methods the path has, for `Allow` (admin areas) */ allow?: string };

/** The match of a model route by name (a plugin route answered by a model call continues as it). */
export function modelRouteMatch(name: ModelRoute): RouteMatch {
  for (const match of MODEL_ROUTES.values()) if (match.kind === 'model' && match.name === name) return match;
  throw new Error(`no model route ${name}`);
}

const MODEL_ROUTES: ReadonlyMap<string, RouteMatch> = new Map(
  (
    [
      ['/v1/chat/completions', 'chat.completions'],
      ['/v1/completions', 'completions'],
      ['/v1/embeddings', 'embeddings'],
      ['/v1/moderations', 'moderations'],
      ['/v1/responses', 'responses'],
      ['/v1/messages', 'messages'],
      ['/v1/messages/count_tokens', 'messages.count_tokens'],
    ] as const
  ).map(([path, name]) => [path, Object.freeze({ kind: 'model', name, upstreamPath: path.slice(3) }) as RouteMatch]),
);

const PASSTHROUGH_METHODS = new Set(['GET', 'POST', 'PUT', 'DELETE']);
const HEALTH: RouteMatch = Object.freeze({ kind: 'health' });
const NOT_FOUND: RouteMatch = Object.freeze({ kind: 'not_found' });
const METHOD_NOT_ALLOWED: RouteMatch = Object.freeze({ kind: 'method_not_allowed' });

/**
 * First segments under `/v1/` that belong to providers, never to an admin area even if a plugin
 * registers a route there: the model routes' and the provider APIs' that pass through.
 */
const PROVIDER_AREAS = new Set([
  ...[...MODEL_ROUTES.keys()].map((path) => path.split('/')[2]!),
  'models',
  'files',
  'batches',
  'uploads',
  'fine_tuning',
  'fine-tunes',
  'assistants',
  'threads',
  'vector_stores',
  'images',
  'audio',
  'realtime',
  'conversations',
  'containers',
  'evals',
  'organization',
]);

const ROUTE_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

/** `admin` of `/v1/admin/keys`, `openapi.json` of `/v1/openapi.json`; undefined outside `/v1/`. */
function areaOf(path: string): string | undefined {
  if (!path.startsWith('/v1/')) return undefined;
  const end = path.indexOf('/', 4);
  return end === -1 ? path.slice(4) : path.slice(4, end);
}

interface CompiledRoute {
  plugin: string;
  route: RouteDefinition;
  segments: string[]; // ':name' marks a parameter
}

export interface RouteTable {
  match(method: string, path: string): RouteMatch;
}

export function buildRouteTable(pluginRoutes: ReadonlyArray<{ plugin: string; route: RouteDefinition }>): RouteTable {
  const exact = new Map<string, CompiledRoute>(); // `${method} ${path}` for routes without params
  // Routes with params by method, then by segment count (in table order): a request is compared
  // only with the few routes of its shape, not with every admin route.
  const withParams = new Map<string, CompiledRoute[][]>();
  const adminAreas = new Set<string>();
  for (const { plugin, route } of pluginRoutes) {
    const area = areaOf(route.path);
    if (area !== undefined && area.length > 0 && !area.startsWith(':') && !PROVIDER_AREAS.has(area)) adminAreas.add(area);
    const compiled = { plugin, route, segments: route.path.split('/').slice(1) };
    if (!route.path.includes('/:')) {
      exact.set(`${route.method} ${route.path}`, compiled);
      continue;
    }
    let byCount = withParams.get(route.method);
    if (byCount === undefined) withParams.set(route.method, (byCount = []));
    (byCount[compiled.segments.length] ??= []).push(compiled);
  }

  /** Segments of a path (`/a/b` has 2), counted without splitting it. */
  function segmentCount(path: string): number {
    let n = 0;
    for (let i = 0; i < path.length; i++) if (path.charCodeAt(i) === 47 /* '/' */) n++;
    return n;
  }

  function matchParams(method: string, path: string): RouteMatch | undefined {
    const candidates = withParams.get(method)?.[segmentCount(path)];
    if (candidates === undefined) return undefined;
    const parts = path.split('/').slice(1);
    outer: for (const c of candidates) {
      const params: Record<string, string> = {};
      for (let i = 0; i < parts.length; i++) {
        const seg = c.segments[i]!;
        const part = parts[i]!;
        if (seg.charCodeAt(0) === 58 /* ':' */) {
          if (part.length === 0) continue outer;
          try {
            params[seg.slice(1)] = decodeURIComponent(part);
          } catch {
            continue outer; // malformed %-escape: not this route
          }
        } else if (seg !== part) continue outer;
      }
      return { kind: 'plugin', plugin: c.plugin, route: c.route, params };
    }
    return undefined;
  }

  /** A path in an admin area no route of this method serves: 405 when another method serves it, else 404. */
  function adminMistake(method: string, path: string): RouteMatch {
    const allow = ROUTE_METHODS.filter((m) => m !== method && (exact.has(`${m} ${path}`) || matchParams(m, path) !== undefined));
    return allow.length === 0 ? NOT_FOUND : { kind: 'method_not_allowed', allow: allow.join(', ') };
  }

  return {
    match(method, path) {
      if (path === '/health' && (method === 'GET' || method === 'HEAD')) return HEALTH;
      const fixed = exact.size > 0 ? exact.get(`${method} ${path}`) : undefined;
      if (fixed) return { kind: 'plugin', plugin: fixed.plugin, route: fixed.route, params: {} };
      const param = matchParams(method, path);
      if (param) return param;
      if (method === 'POST') {
        const model = MODEL_ROUTES.get(path);
        if (model) return model;
      }
      if (path.startsWith('/v1/')) {
        if (adminAreas.size > 0) {
          const area = areaOf(path);
          if (area !== undefined && adminAreas.has(area)) return adminMistake(method, path);
        }
        return PASSTHROUGH_METHODS.has(method) ? { kind: 'passthrough', upstreamPath: path.slice(3) } : METHOD_NOT_ALLOWED;
      }
      return NOT_FOUND;
    },
  };
}
