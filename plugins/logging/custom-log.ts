/**
 * POST /v1/logs: a caller logs a request the gateway did not see (the reference's CustomLog).
 * It becomes an ordinary record (`source: 'plugin'`, route `custom`), listed and exported with
 * the rest. Headers are accepted and never kept; bodies follow `bodies.enabled` like any other.
 */
import { Errors, headerString, nestsDeeper, nowIso, S, uuidv7, type GatewayContext, type Principal, type Records, type RouteDefinition, type Usage } from '../../core/index.js';
import type { StoredLog } from './log-db.js';
import { credentialValues } from './bodies.js';

/** A custom log as the handler sees it: headers already dropped (see {@link scrubCustomLog}). */
export interface CustomLog {
  request: { url: string; method?: string; body: unknown };
  response: { status?: number; body: unknown; response_time?: number };
  metadata?: Record<string, unknown>;
}

/** Custom logs in one call: a body is one CustomLog or an array of them. */
export const MAX_CUSTOM_LOGS = 1000;

const anyHeaders = { type: 'object', description: 'Accepted, never stored.' };
const scalar = { type: ['string', 'number', 'boolean'] };

export const customLogSchema: S.JsonSchema = {
  type: 'object',
  properties: {
    request: {
      type: 'object',
      properties: {
        url: { type: 'string', minLength: 1, maxLength: 2048 },
        method: { type: 'string', enum: ['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD'] },
        headers: anyHeaders,
        body: {},
      },
      required: ['url', 'body'],
    },
    response: {
      type: 'object',
      properties: {
        status: { type: 'integer', minimum: 100, maximum: 599 },
        headers: anyHeaders,
        body: {},
        response_time: { type: 'number', minimum: 0 },
      },
      required: ['body'],
    },
    metadata: {
      type: 'object',
      properties: { trace_id: { type: 'string', maxLength: 128 }, span_id: { type: 'string', maxLength: 256 }, span_name: { type: 'string', maxLength: 256 } },
      additionalProperties: scalar,
    },
  },
  required: ['request', 'response'],
};

/** What the route validates: the body normalised to `{logs: [...]}` (see {@link acceptOneOrMany}). */
export const customLogsBody: S.JsonSchema = {
  type: 'object',
  properties: { logs: { type: 'array', minItems: 1, maxItems: MAX_CUSTOM_LOGS, items: customLogSchema } },
  required: ['logs'],
  additionalProperties: false,
};

/** The wire body, as documented: one CustomLog or an array. */
export const customLogsWireBody: S.JsonSchema = { oneOf: [customLogSchema, { type: 'array', items: customLogSchema, maxItems: MAX_CUSTOM_LOGS }] };

/**
 * Lets an admin route take a JSON array as well as an object: the core parses plugin-route
 * bodies as objects only, so the route reads the raw body and wraps it as `{[field]: [...]}`
 * before the admin framework validates it (errors then name `logs[2].request.url`).
 */
export interface OneOrManyOptions {
  /** The body as documented on the wire (the OpenAPI document shows it). */
  wireBody: S.JsonSchema;
  /** Each item, before validation and audit see it. */
  prepare(item: unknown, ctx: GatewayContext): unknown;
}

export function acceptOneOrMany(route: RouteDefinition, field: string, options: OneOrManyOptions): RouteDefinition {
  const inner = route.handler;
  return {
    ...route,
    body: 'raw',
    meta: { ...route.meta, body: options.wireBody },
    handler(ctx, params) {
      const type = headerString(ctx.headers, 'content-type');
      if (type === undefined || !/^application\/json\b/i.test(type)) {
        throw Errors.unsupportedContentType('A content-type of application/json is required.', { param: 'content-type' });
      }
      let value: unknown;
      try {
        value = JSON.parse((ctx.rawBody ?? Buffer.alloc(0)).toString('utf8'));
      } catch {
        // Never echo the input: it may hold a secret (the same rule as the core's body reader).
        throw Errors.invalidJson('The request body is not valid JSON.');
      }
      if (typeof value !== 'object' || value === null) throw Errors.invalidBody('The request body must be a JSON object or an array of objects.');
      // Scrubbing, validation, the audit trail and the store all walk the body recursively; a
      // body nested thousands deep would overflow the stack there (a 500), so it is refused here.
      if (nestsDeeper(value, MAX_BODY_DEPTH - 1)) throw Errors.invalidBody(`The request body nests deeper than ${MAX_BODY_DEPTH} levels.`);
      ctx.body = { [field]: (Array.isArray(value) ? value : [value]).map((item) => options.prepare(item, ctx)) };
      return inner(ctx, params);
    },
  };
}

/** Deeper than any real provider body (tool schemas included); far below what a recursive walk overflows at. */
export const MAX_BODY_DEPTH = 128;

/** True when arrays and objects nest more than `max` levels; iterative, so any depth is safe to ask. */

const lowerKeys = (h: unknown): Record<string, unknown> =>
  typeof h === 'object' && h !== null ? Object.fromEntries(Object.entries(h).map(([k, v]) => [k.toLowerCase(), v])) : {};

/**
 * Drops the logged call's headers before anything else sees the body, and scrubs their
 * credential values (and the posting call's own) from everything left: an echoed key in a
 * response body. Headers are never stored, and this way neither they nor an echo of them reach
 * the admin audit trail (which keeps write bodies).
 */
export function scrubCustomLog(item: unknown, ctx: GatewayContext): unknown {
  if (typeof item !== 'object' || item === null || Array.isArray(item)) return item;
  const out: Record<string, unknown> = { ...item };
  const secrets = credentialValues(ctx.headers);
  for (const part of ['request', 'response']) {
    const v = out[part];
    if (typeof v === 'object' && v !== null && !Array.isArray(v)) {
      const { headers, ...rest } = v as Record<string, unknown>;
      secrets.push(...credentialValues(lowerKeys(headers)));
      out[part] = rest;
    }
  }
  let text = JSON.stringify(out);
  // Longest first, so a token inside its `Bearer …` form is not replaced twice; compared in
  // their JSON-escaped form, as they appear in the text.
  for (const secret of secrets.sort((a, b) => b.length - a.length)) {
    const escaped = JSON.stringify(secret).slice(1, -1);
    if (text.includes(escaped)) text = text.split(escaped).join('[redacted]');
  }
  return JSON.parse(text) as unknown;
}

function usageOf(body: unknown): Usage | null {
  const u = (body as { usage?: Record<string, unknown> } | null)?.usage;
  if (typeof u !== 'object' || u === null) return null;
  const n = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? Math.floor(v) : 0);
  const prompt = n(u.prompt_tokens ?? u.input_tokens);
  const completion = n(u.completion_tokens ?? u.output_tokens);
  if (prompt === 0 && completion === 0 && n(u.total_tokens) === 0) return null;
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: n(u.total_tokens) || prompt + completion, cached_tokens: 0, reasoning_tokens: 0, source: 'upstream' };
}

const strOrNull = (v: unknown): string | null => (typeof v === 'string' && v.length > 0 ? v : null);

export interface CustomLogContext {
  principal: Principal;
  workspace: Records.Workspace | null;
  /** The stored text of a body (credentials already scrubbed), or null when bodies are not kept. */
  keepBody(value: unknown): string | null;
}

export function customLogRecord(log: CustomLog, who: CustomLogContext): StoredLog {
  const id = uuidv7();
  const meta = log.metadata ?? {};
  const metadata: Record<string, string> = {};
  for (const [k, v] of Object.entries(meta)) if (k !== 'trace_id' && k !== 'span_id' && k !== 'span_name' && v !== null) metadata[k] = String(v);
  const status = log.response.status ?? 200;
  const ms = log.response.response_time ?? 0;
  const reqBody = log.request.body as { model?: unknown; stream?: unknown } | null;
  return {
    id,
    created_at: nowIso(),
    trace_id: strOrNull(meta.trace_id) ?? id,
    span_id: strOrNull(meta.span_id),
    parent_span_id: null,
    span_name: strOrNull(meta.span_name),
    organisation_id: who.principal.organisation_id,
    workspace_id: who.workspace?.id ?? who.principal.workspace_id,
    api_key_id: who.principal.key_id,
    virtual_key: null,
    metadata,
    method: log.request.method ?? 'POST',
    path: log.request.url.slice(0, 512),
    route: 'custom',
    provider: null,
    model: typeof reqBody?.model === 'string' ? reqBody.model.slice(0, 256) : null,
    config: null,
    last_used_option_index: 'config',
    retry_count: 0,
    cache_status: 'DISABLED',
    stream: reqBody?.stream === true,
    status,
    is_success: status >= 200 && status < 400,
    source: 'plugin',
    error_code: null,
    aborted: false,
    latency: { total_ms: ms, upstream_ms: ms, gateway_ms: 0, ttfb_ms: null },
    usage: usageOf(log.response.body),
    // The provider is not known, so the usage is not priced.
    cost_cents: 0,
    priced_as: null,
    request_body: who.keepBody(log.request.body),
    response_body: who.keepBody(log.response.body),
  };
}
