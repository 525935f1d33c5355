/**
 * One request as one SERVER span, with the HTTP and GenAI semantic-convention attributes
 * (https://opentelemetry.io/docs/specs/semconv/gen-ai/gen-ai-spans/), from the log record so
 * traces, logs and metrics agree.
 */
import { performance } from 'node:perf_hooks';
import type { GatewayContext, LogRecord, Outcome } from '../../core/index.js';
import { attributes, SPAN_KIND_SERVER, STATUS_ERROR, STATUS_UNSET, unixNano, type OtlpSpan } from './otlp.js';

/** The gateway span's identity, fixed when the request is first seen (see index.ts). */
export interface SpanState {
  traceId: string;
  spanId: string;
  /** The caller's span, when it sent a `traceparent`. */
  parentSpanId: string | undefined;
  sampled: boolean;
  /** The caller's `tracestate`, passed on unchanged. */
  tracestate: string | undefined;
  /** The model the upstream says answered, when seen in its body or first chunks. */
  responseModel: string | undefined;
}

/** `gen_ai.operation.name` per model route. */
const OPERATIONS: Readonly<Record<string, string>> = {
  'chat.completions': 'chat',
  completions: 'text_completion',
  embeddings: 'embeddings',
  responses: 'chat',
  moderations: 'moderations',
  messages: 'chat',
};

/** The route template (`http.route`): low-cardinality, unlike `url.path`. */
function httpRoute(ctx: GatewayContext): string | undefined {
  const r = ctx.route;
  switch (r.kind) {
    case 'model':
      return `/v1${r.upstreamPath}`;
    case 'plugin':
      return r.route.path;
    case 'passthrough':
      return '/v1/*';
    case 'health':
      return '/health';
    default:
      return undefined;
  }
}

export function buildSpan(ctx: GatewayContext, outcome: Outcome, state: SpanState, rec: LogRecord): OtlpSpan {
  const operation = ctx.route.kind === 'model' ? OPERATIONS[ctx.route.name] : undefined;
  const route = httpRoute(ctx);
  // GenAI spans are named `{operation} {model}`; other requests `{method} {route}` (HTTP semconv).
  const name = operation !== undefined ? `${operation} ${rec.model ?? ''}`.trim() : `${rec.method}${route === undefined ? '' : ` ${route}`}`;
  const start = performance.timeOrigin + ctx.timings.start;
  const error = outcome.streamError ?? outcome.error;
  const failed = rec.status >= 500 || outcome.streamError !== undefined;
  const usage = rec.usage;
  const span: OtlpSpan = {
    traceId: state.traceId,
    spanId: state.spanId,
    name,
    kind: SPAN_KIND_SERVER,
    startTimeUnixNano: unixNano(start),
    endTimeUnixNano: unixNano(start + outcome.durationMs),
    attributes: attributes({
      'http.request.method': rec.method,
      'http.response.status_code': rec.status,
      'http.route': route,
      'url.path': rec.path,
      'gateway.request_id': rec.id,
      'gateway.route': rec.route,
      'gateway.cache_status': rec.cache_status,
      'gateway.retry_count': rec.retry_count,
      'gateway.stream': rec.stream,
      'gateway.aborted': rec.aborted || undefined,
      'error.type': error?.code,
      'gen_ai.operation.name': operation,
      // `gen_ai.system` is what most backends read today; `gen_ai.provider.name` is its successor.
      'gen_ai.system': operation !== undefined ? rec.provider : undefined,
      'gen_ai.provider.name': operation !== undefined ? rec.provider : undefined,
      'gen_ai.request.model': operation !== undefined ? rec.model : undefined,
      'gen_ai.response.model': state.responseModel,
      'gen_ai.usage.input_tokens': usage?.prompt_tokens,
      'gen_ai.usage.output_tokens': usage?.completion_tokens,
    }),
    status: failed ? { code: STATUS_ERROR, message: error?.code ?? `HTTP ${rec.status}` } : { code: STATUS_UNSET },
  };
  // Always a double: a cost that is sometimes 0 (an int) and sometimes 0.4 must keep one type.
  span.attributes.push({ key: 'gateway.cost_cents', value: { doubleValue: rec.cost_cents } });
  if (state.parentSpanId !== undefined) span.parentSpanId = state.parentSpanId;
  return span;
}
