/**
 * The `otel` plugin: one OpenTelemetry span per request, exported over OTLP/HTTP (JSON).
 *
 *   caller ──traceparent: 00-T-C-01──▶ gateway span S (trace T, parent C)
 *                                        │ traceparent: 00-T-S-01
 *                                        ▼
 *                                     upstream
 *
 * A caller's W3C `traceparent` makes the gateway's span its child; without one the gateway starts
 * a trace (reusing `x-gateway-trace-id` when it is already a 32-hex trace id). Every upstream
 * attempt carries the gateway span as its parent, so the provider's spans (when it traces) hang
 * under the gateway's. Sampling is parent-based: a caller's sampled flag decides for its trace;
 * `sample_ratio` decides for the traces the gateway starts.
 *
 * Without `endpoint` the plugin does nothing at all: no hooks, no headers, no metering.
 */
import {
  optionalService, buildLogRecord, checkUpstreamUrl, definePlugin, headerString, OPERATOR_URL_POLICY, type GatewayContext } from '../../core/index.js';
import { otelOptionsSchema, type OtelOptions } from './schema.js';
import { asTraceId, formatTraceparent, newSpanId, newTraceId, parseTraceparent, sampledByRatio } from './trace-context.js';
import { buildSpan, type SpanState } from './span.js';
import { createExporter } from './exporter.js';
import { attributes } from './otlp.js';
import { responseModelOf } from './response-model.js';

declare module '../../core/context.js' {
  interface ContextVars {
    otelSpan: SpanState;
  }
}

/** `tracestate` is passed on only within the spec's bound (512 characters is what must be kept). */
const MAX_TRACESTATE = 512;

export default definePlugin<OtelOptions>({
  name: 'otel',
  configSchema: otelOptionsSchema,
  setup(app, options) {
    if (options.endpoint === undefined) {
      app.log.info('no endpoint: tracing is off');
      return;
    }
    // The operator's own collector may sit on loopback or a private network; a link-local or
    // cloud metadata address (or credentials in the URL) never makes sense and refuses to boot.
    const refused = checkUpstreamUrl(options.endpoint, OPERATOR_URL_POLICY, 'endpoint');
    if (refused !== null) throw refused;
    const exporter = createExporter({
      endpoint: options.endpoint,
      headers: options.headers,
      resource: attributes({ 'service.name': options.service_name, 'telemetry.sdk.name': 'model-gateway', 'telemetry.sdk.language': 'nodejs' }),
      scope: { name: 'model-gateway/otel', version: '1' },
      flushMs: options.flush_ms,
      batchSize: options.batch_size,
      maxQueue: options.max_queue,
      timeoutMs: options.timeout_ms,
      log: app.log,
    });

    const pricer = optionalService(app, 'pricing', 'costs are counted as 0');

    /** The gateway span's ids, made the first time a hook needs them (onDone at the latest). */
    function spanOf(ctx: GatewayContext): SpanState {
      let state = ctx.get('otelSpan');
      if (state !== undefined) return state;
      const parent = parseTraceparent(headerString(ctx.headers, 'traceparent'));
      const traceId = parent?.traceId ?? asTraceId(ctx.traceId) ?? newTraceId();
      const tracestate = parent === undefined ? undefined : headerString(ctx.headers, 'tracestate');
      state = {
        traceId,
        spanId: newSpanId(),
        parentSpanId: parent?.spanId,
        sampled: parent?.sampled ?? sampledByRatio(traceId, options.sample_ratio),
        tracestate: tracestate !== undefined && tracestate.length <= MAX_TRACESTATE ? tracestate : undefined,
        responseModel: undefined,
      };
      ctx.set('otelSpan', state);
      return state;
    }

    return {
      meterUsage: true,
      onUpstreamRequest: function propagateTrace(ctx, attempt) {
        const span = spanOf(ctx);
        // The core copies client headers upstream, the caller's traceparent among them: replace it.
        attempt.headers['traceparent'] = formatTraceparent(span.traceId, span.spanId, span.sampled);
        // A tracestate belongs to its traceparent's trace; for a trace the gateway started it goes.
        if (span.tracestate !== undefined) attempt.headers['tracestate'] = span.tracestate;
        else delete attempt.headers['tracestate'];
      },
      onResponseBody: function readResponseModel(ctx, body) {
        if (ctx.route.kind !== 'model') return;
        const span = spanOf(ctx);
        if (span.sampled) span.responseModel = responseModelOf(body.toString('utf8', 0, Math.min(body.length, 2048)));
      },
      onResponseChunk: function readStreamModel(ctx, event) {
        // Only until the model is known: the first chunk names it, later ones cost one lookup.
        const span = ctx.route.kind === 'model' ? spanOf(ctx) : undefined;
        if (span === undefined || !span.sampled || span.responseModel !== undefined) return;
        span.responseModel = responseModelOf(event.data);
      },
      onDone: function exportSpan(ctx, outcome) {
        const span = spanOf(ctx);
        if (!span.sampled) return;
        exporter.push(buildSpan(ctx, outcome, span, buildLogRecord(ctx, outcome, pricer())));
      },
      close: () => exporter.close(),
    };
  },
});
