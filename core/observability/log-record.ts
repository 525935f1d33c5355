/**
 * The request log record: what one request was, who made it, where it went, how it ended, what it
 * used and cost. Built once per request from the finished context, by one function, so the
 * logging plugin, the analytics rollups and the metrics all see the same numbers.
 *
 * Field names follow the admin API's LogObject `metrics` row (snake_case). Secrets never enter a
 * record: no credential header is copied, bodies are kept only when the logging plugin is told to
 * (and it redacts them).
 */
import type { GatewayContext, Outcome } from '../context.js';
import type { Usage } from '../usage/types.js';
import { costOf, type PricingService } from '../usage/cost.js';
import { headerValue } from '../upstream/headers.js';
import type { HookResults } from '../guardrail-checks.js';
import type { McpCall } from '../mcp.js';
import '../prompt.js';
import { isMcpRoute } from '../mcp.js';
import { isoTime } from '../store/ids.js';

declare module '../context.js' {
  interface ContextVars {
    /** Set by a cache plugin whose answer waited for another request's upstream call (ms). */
    cacheWaitMs: number;
    /** The request's log record, once the first observer built it (see buildLogRecord). */
    logRecord: LogRecord;
    /** Its `created_at` in ms since the epoch (rollups key on it without parsing the string). */
    logRecordAt: number;
  }
}

export interface LogRecord {
  /** The request id (`x-gateway-request-id`), a UUIDv7: time-ordered. */
  id: string;
  created_at: string;
  trace_id: string;
  span_id: string | null;
  parent_span_id: string | null;
  span_name: string | null;
  organisation_id: string | null;
  workspace_id: string | null;
  api_key_id: string | null;
  virtual_key: string | null;
  metadata: Record<string, string>;
  method: string;
  path: string;
  /** `chat.completions`, …, `passthrough`, `mcp` (an MCP endpoint), `realtime` (a WebSocket session), `plugin`, `not_found`. */
  route: string;
  provider: string | null;
  model: string | null;
  /** The config's source (`x-gateway-config`, `config:<slug>`, `virtual-key:<slug>`) or null. */
  config: string | null;
  last_used_option_index: string;
  retry_count: number;
  cache_status: string;
  /**
   * A cache answer that waited for an identical request's upstream call (single-flight): how long
   * it waited, in ms; null otherwise. Absent on records from before it existed and on custom logs.
   */
  cache_wait_ms?: number | null;
  /** The guardrails that ran on the request (absent when none applied), with every result. */
  guardrails?: GuardrailsLog;
  stream: boolean;
  status: number;
  is_success: boolean;
  /** `gateway` | `upstream` | `plugin` */
  source: Outcome['source'];
  error_code: string | null;
  /**
   * Upstream failures only: the socket or protocol error behind the client's fixed message
   * (`ECONNREFUSED: connect ECONNREFUSED 127.0.0.1:9300`), bounded. Absent on records from
   * before it existed and on custom logs.
   */
  error_detail?: string | null;
  aborted: boolean;
  latency: { total_ms: number; upstream_ms: number; gateway_ms: number; ttfb_ms: number | null };
  usage: Usage | null;
  cost_cents: number;
  priced_as: string | null;
  /**
   * The MCP message of a request on an MCP endpoint (route `mcp`), as the mcp-gateway plugin
   * described it: server, JSON-RPC method, tool (or prompt, or resource URI), argument size,
   * outcome, JSON-RPC error code, upstream time. Absent on every other request, and on an MCP
   * request refused before its message was read (a missing key). `outcome` is never null here:
   * one the plugin left unset is taken from the answer (`cancelled` when the client left, `ok`
   * for a 2xx, else `error`).
   */
  mcp?: McpCall;
  /** The stored prompt the request rendered (POST /v1/prompts/{id}/completions); absent otherwise. */
  prompt_slug?: string;
  prompt_version_id?: string;
}

function header(ctx: GatewayContext, name: string): string | null {
  const v = headerValue(ctx.headers, name);
  return v === undefined || v.length === 0 ? null : v.slice(0, 256);
}

const MAX_ERROR_DETAIL = 512;

/**
 * What went wrong below an upstream error (`upstream_unreachable`, `upstream_timeout`, …): the
 * cause's code and message, and its own cause's, for the operator. Only upstream errors: other
 * causes (a JSON parse error) could quote the request.
 */
function errorDetail(error: { code: string; cause?: unknown } | undefined): string | null {
  if (error === undefined || !error.code.startsWith('upstream_')) return null;
  const parts: string[] = [];
  let cause = error.cause;
  for (let depth = 0; depth < 3 && typeof cause === 'object' && cause !== null; depth++) {
    const c = cause as { code?: unknown; message?: unknown; cause?: unknown };
    const code = typeof c.code === 'string' ? c.code : undefined;
    const message = typeof c.message === 'string' ? c.message : '';
    parts.push(code !== undefined && !message.includes(code) ? `${code}: ${message}` : message);
    cause = c.cause;
  }
  const text = parts.filter((p) => p.length > 0).join(' <- ');
  return text.length === 0 ? null : text.slice(0, MAX_ERROR_DETAIL);
}

const round = (ms: number): number => Math.round(ms * 1000) / 1000;

/** What the log keeps of a request's guardrails. */
export interface GuardrailsLog {
  /** `denied`: a deny answered (446, or the error event that ended a stream). */
  verdict: 'passed' | 'failed' | 'denied';
  passed: number;
  failed: number;
  /** Spans replaced by redaction, request and answer. */
  redacted: number;
  results: HookResults;
}

/** `mcpDenied`: an MCP call the gateway refused (a JSON-RPC error, not an HTTP one): denied if a deny guardrail failed. */
function guardrailsLog(results: HookResults, error: { code: string } | undefined, mcpDenied: boolean): GuardrailsLog {
  let passed = 0;
  let failed = 0;
  let redacted = 0;
  let denyFailed = false;
  for (const list of [results.before_request_hooks, results.after_request_hooks]) {
    for (const o of list) {
      if (o.verdict) passed++;
      else {
        failed++;
        if (o.deny) denyFailed = true;
      }
      redacted += o.redacted ?? 0;
    }
  }
  const verdict = error?.code === 'guardrail_denied' || (mcpDenied && denyFailed) ? 'denied' : failed > 0 ? 'failed' : 'passed';
  return { verdict, passed, failed, redacted, results };
}

/**
 * The record of a finished request (call it from `onDone`). One record per request, however many
 * plugins observe it (logging, analytics, metrics, traces each call this): built by the first,
 * kept on the context for the rest (a context var rather than a WeakMap, whose entries cost the
 * garbage collector on every request).
 */
export function buildLogRecord(ctx: GatewayContext, outcome: Outcome, pricing?: PricingService): LogRecord {
  let record = ctx.get('logRecord');
  if (record === undefined) {
    const at = Date.now() - outcome.durationMs;
    record = makeLogRecord(ctx, outcome, at, pricing);
    ctx.set('logRecord', record);
    ctx.set('logRecordAt', Math.trunc(at));
  }
  return record;
}

function makeLogRecord(ctx: GatewayContext, outcome: Outcome, at: number, pricing?: PricingService): LogRecord {
  const principal = ctx.get('principal');
  // A WebSocket session is named by the plugin serving it (core/upgrade.ts), e.g. `realtime`.
  const route = ctx.route.kind === 'model' ? ctx.route.name : isMcpRoute(ctx.route) ? 'mcp' : ctx.get('upgrade')?.name ?? ctx.route.kind;
  const body = ctx.body;
  const requested = typeof body?.model === 'string' ? body.model : null;
  const overridden = ctx.target?.overrideParams?.model;
  // `@provider/model` names the provider too; the record keeps the model alone.
  const model = typeof overridden === 'string' ? overridden : requested?.startsWith('@') ? requested.replace(/^@[^/]+\//, '') : requested;
  const provider = ctx.provider ?? null;
  const usage = ctx.usage ?? null;
  const cost = usage && provider && model ? costOf(usage, provider, model, pricing) : { cents: 0, priced_as: null };
  const t = ctx.timings;
  const error = outcome.error ?? outcome.streamError;
  const guardrails = ctx.get('guardrailResults');
  // 101: a WebSocket session that was accepted; how it ended is in streamError and aborted.
  const isSuccess = (outcome.status === 101 || (outcome.status >= 200 && outcome.status < 400)) && outcome.streamError === undefined && !outcome.aborted;
  const call = ctx.get('mcpCall');
  const prompt = ctx.get('promptRef');
  return {
    id: ctx.id,
    created_at: isoTime(at),
    trace_id: ctx.traceId,
    span_id: header(ctx, 'x-gateway-span-id'),
    parent_span_id: header(ctx, 'x-gateway-parent-span-id'),
    span_name: header(ctx, 'x-gateway-span-name'),
    organisation_id: principal?.organisation_id ?? null,
    workspace_id: principal?.acting_workspace_id ?? null,
    api_key_id: principal?.key_id ?? null,
    virtual_key: header(ctx, 'x-gateway-virtual-key'),
    metadata: ctx.metadata,
    method: ctx.method,
    path: ctx.path.slice(0, 512),
    route,
    provider,
    model,
    config: ctx.plan?.source ?? null,
    last_used_option_index: ctx.optionPath,
    retry_count: ctx.retryCount,
    cache_status: ctx.cacheStatus,
    cache_wait_ms: ctx.get('cacheWaitMs') ?? null,
    ...(guardrails !== undefined ? { guardrails: guardrailsLog(guardrails, error, ctx.get('mcpCall')?.outcome === 'denied') } : {}),
    stream: ctx.wantsStream,
    status: outcome.status,
    is_success: isSuccess,
    source: outcome.source,
    error_code: error?.code ?? null,
    error_detail: errorDetail(error),
    aborted: outcome.aborted,
    latency: {
      total_ms: round(outcome.durationMs),
      upstream_ms: round(outcome.upstreamMs),
      gateway_ms: round(Math.max(0, outcome.durationMs - outcome.upstreamMs)),
      ttfb_ms: t.firstByte > 0 ? round(t.firstByte - t.start) : null,
    },
    usage,
    cost_cents: cost.cents,
    priced_as: cost.priced_as,
    ...(call !== undefined ? { mcp: mcpLog(call, outcome, isSuccess) } : {}),
    ...(prompt !== undefined ? { prompt_slug: prompt.slug, prompt_version_id: prompt.version_id } : {}),
  };
}

/** A copy of the MCP message as it ended (the plugin's object may still change after the record). */
function mcpLog(call: McpCall, outcome: Outcome, isSuccess: boolean): McpCall {
  return {
    server: call.server,
    method: call.method,
    tool: call.tool,
    argument_bytes: call.argument_bytes,
    outcome: call.outcome ?? (outcome.aborted ? 'cancelled' : isSuccess ? 'ok' : 'error'),
    error_code: call.error_code,
    upstream_ms: round(call.upstream_ms),
  };
}
