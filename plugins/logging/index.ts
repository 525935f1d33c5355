/**
 * The `logging` plugin: one record per request, whatever its outcome (an answer, an upstream
 * error, a gateway refusal such as 400, 401 or 429, a cache hit, a stream, a pass-through), and
 * the APIs that read them: logs, log exports and feedback.
 *
 * Put it FIRST in the pipeline: response hooks run in reverse, so the first plugin sees the final
 * outcome of everything after it, including a refusal by auth or rate-limit.
 *
 *   onDone ─▶ buildLogRecord (core) ─▶ bounded queue ─every flush_ms─▶ `logs` db + index partitions (batched puts)
 *                                       └ full: dropped, counted (`log-stats` service)
 *   sweeper (every minute) ─▶ removes the oldest past retention_days / max_records by key; an index
 *                             partition left without records is cleared whole (log-parts.ts)
 *   backfill (once, after an upgrade) ─▶ indexes older records in slices (log-index.ts)
 *   close ─▶ writes what is queued and waits until it is durable
 *
 * That is the embedded driver (lmdb-backend.ts). In distributed mode the same routes read and
 * write PostgreSQL instead (pg-backend.ts): a time-partitioned table written in batches, shared
 * by every host. The routes see only the interfaces of backend.ts.
 *
 * Records carry usage and cost (`meterUsage`); bodies only with `bodies.enabled` (see
 * bodies.ts); request headers never, so no credential can end up in a log.
 */
import {
  buildLogRecord,
  definePlugin,
  findWorkspace,
  nowIso,
  uuidv7,
  type GatewayContext,
  type LogRecord,
  type Outcome,
  type PluginHooks,
  optionalService,
  type SseEvent,
} from '../../core/index.js';
import { loggingOptionsSchema, type LoggingOptions } from './schema.js';
import { createBodyCapture, type CapturedBodies } from './bodies.js';
import type { StoredLog } from './log-db.js';
import type { LogBackend } from './backend.js';
import { openLmdbBackend, type BackendOptions } from './lmdb-backend.js';
import { openPgBackend } from './pg-backend.js';
import { logStats } from './stats.js';
import { logRoutes } from './log-routes.js';
import { feedbackRoutes } from './feedback.js';
import { createExportRunner, type ExportSources } from './export-job.js';
import { exportRoutes } from './export-routes.js';

interface Pending {
  record: LogRecord;
  bodies: CapturedBodies | undefined;
}

export default definePlugin<LoggingOptions>({
  name: 'logging',
  configSchema: loggingOptionsSchema,
  async setup(app, options) {
    const store = app.store;
    const capture = options.bodies.enabled ? createBodyCapture(options.bodies) : undefined;
    const backendOptions: BackendOptions<Pending> = {
      queueMax: options.queue_max,
      flushMs: options.flush_ms,
      retentionDays: options.retention_days,
      maxRecords: options.max_records,
      log: app.log,
      // The record gets its bodies in place rather than as a copy of its 30-odd fields: every
      // plugin that reads it did so in `onDone`, before the writer's flush.
      finish: ({ record, bodies }): StoredLog => {
        const stored = record as StoredLog;
        stored.request_body = capture && bodies ? capture.render(bodies.request, bodies.secrets) : null;
        stored.response_body = capture && bodies ? capture.render(bodies.response, bodies.secrets) : null;
        return stored;
      },
    };
    // The driver is chosen once: embedded mode runs exactly the LMDB code it always ran.
    const distributed = store.distributed;
    const backend: LogBackend<Pending> = distributed ? await openPgBackend(distributed, backendOptions) : openLmdbBackend(store, backendOptions);
    const writer = backend.writer;
    app.provide('log-stats', {
      dropped: () => logStats.dropped,
      queued: () => writer.queued,
      ...(distributed ? { droppedByReason: () => ({ ...logStats.byReason }) } : {}),
    });

    // The pricing service may come from a plugin later in the pipeline: looked up at the first request.
    const pricer = optionalService(app, 'pricing', 'logged costs are 0');

    function onDone(ctx: GatewayContext, outcome: Outcome): void {
      writer.push({ record: buildLogRecord(ctx, outcome, pricer()), bodies: capture?.take(ctx) });
    }

    // Feedback other plugins record (a guardrail's on_fail / on_success), stored like /v1/feedback's.
    app.provide('feedback', {
      record(entry) {
        const now = nowIso();
        return backend.feedback.put({ id: uuidv7(), ...entry, created_at: now, last_updated_at: now });
      },
    });

    const sources: ExportSources = {
      logs: backend.logs,
      feedback: backend.feedback,
      resolveWorkspace: (ref) => findWorkspace(store, ref)?.id,
    };
    const runner = createExportRunner(backend.exports, { ...sources, flushLogs: () => writer.flush() }, app.log);
    const keepBody = capture ? (value: unknown): string | null => capture.render(Buffer.from(JSON.stringify(value) ?? 'null')) : (): null => null;

    // Body hooks exist only when bodies are kept: without a chunk hook the core never parses a
    // stream for this plugin, and without a body hook it never collects an answer for it.
    const bodyHooks: PluginHooks = capture
      ? {
          onResponseBody: function captureBody(ctx: GatewayContext, body: Buffer) {
            capture.onBody(ctx, body);
          },
          onResponseChunk: function captureEvent(ctx: GatewayContext, event: SseEvent) {
            capture.onChunk(ctx, event);
          },
        }
      : {};

    return {
      meterUsage: true,
      ...bodyHooks,
      onDone,
      routes: [
        ...logRoutes(app, { logs: backend.logs, keepBody }),
        ...exportRoutes(app, { db: backend.exports, sources, runner }),
        ...feedbackRoutes(app, backend.feedback),
      ],
      async close() {
        runner.close();
        await backend.close();
      },
    };
  },
});
