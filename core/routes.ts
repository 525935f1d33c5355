/**
 * The route table: built once per pipeline, matched once per request.
 *
 * Order: `/health`, plugin routes (admin APIs), the model routes (POST only: OpenAI's five and
 * Anthropic's `/v1/messages` and `/v1/messages/count_tokens`), then every other
 * `/v1/*` path with GET/POST/PUT/DELETE as pass-through. `GET /v1/chat/completions` (stored
 * completions) or `GET /v1/responses/{id}` are pass-through on purpose: only the POSTs that create
 * a generation are model routes.
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
  | { kind: 'method_not_allowed' };

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
  for (const { plugin, route } of pluginRoutes) {
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
        return PASSTHROUGH_METHODS.has(method) ? { kind: 'passthrough', upstreamPath: path.slice(3) } : METHOD_NOT_ALLOWED;
      }
      return NOT_FOUND;
    },
  };
}
