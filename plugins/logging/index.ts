/**
 * The `logging` plugin: one record per request, whatever its outcome (an answer, an upstream
 * error, a gateway refusal such as 400, 401 or 429, a cache hit, a stream, a pass-through), and
 * the APIs that read them: logs, log exports and feedback.
 *
 * Put it FIRST in the pipeline: response hooks run in reverse, so the first plugin sees the final
 * outcome of everything after it, including a refusal by auth or rate-limit.
 *
 *   onDone ─▶ buildLogRecord (core) ─▶ bounded queue ─every flush_ms─▶ `logs` db + `logs#idx` (batched puts)
 *                                       └ full: dropped, counted (`log-stats` service)
 *   sweeper (every minute) ─▶ removes the oldest past retention_days / max_records, index entries too
 *   backfill (once, after an upgrade) ─▶ indexes older records in slices (log-index.ts)
 *   close ─▶ writes what is queued and waits until it is durable
 *
 * Records carry usage and cost (`meterUsage`); bodies only with `bodies.enabled` (see
 * bodies.ts); request headers never, so no credential can end up in a log.
 */
import {
  buildLogRecord,
  definePlugin,
  findWorkspace,
  type GatewayContext,
  type LogRecord,
  type Outcome,
  type PluginHooks,
  optionalService,
  type SseEvent,
} from '../../core/index.js';
import { loggingOptionsSchema, type LoggingOptions } from './schema.js';
import { createBodyCapture, type CapturedBodies } from './bodies.js';
import { openLogDb, type StoredLog } from './log-db.js';
import { openLogIndex, startBackfill } from './log-index.js';
import { createLogWriter } from './log-writer.js';
import { startSweeper } from './retention.js';
import { logStats } from './stats.js';
import { logRoutes } from './log-routes.js';
import { feedbackRoutes, openFeedbackDb } from './feedback.js';
import { openExportDb } from './export-store.js';
import { createExportRunner, type ExportSources } from './export-job.js';
import { exportRoutes } from './export-routes.js';

const DAY_MS = 86_400_000;
const SWEEP_EVERY_MS = 60_000;
/** Removals per sweep: a backlog is worked off over several sweeps, never in one long write. */
const SWEEP_LIMIT = 10_000;

interface Pending {
  record: LogRecord;
  bodies: CapturedBodies | undefined;
}

export default definePlugin<LoggingOptions>({
  name: 'logging',
  configSchema: loggingOptionsSchema,
  setup(app, options) {
    const store = app.store;
    const db = openLogDb(store);
    const idx = openLogIndex(store);
    const backfill = startBackfill(db, idx, app.log);
    const capture = options.bodies.enabled ? createBodyCapture(options.bodies) : undefined;

    const writer = createLogWriter<Pending>(db, idx, {
      queueMax: options.queue_max,
      flushMs: options.flush_ms,
      log: app.log,
      storeFull: () => store.capacity.full(),
      finish: ({ record, bodies }): StoredLog => ({
        ...record,
        request_body: capture && bodies ? capture.render(bodies.request, bodies.secrets) : null,
        response_body: capture && bodies ? capture.render(bodies.response, bodies.secrets) : null,
      }),
    });
    const sweeper = startSweeper(db, {
      everyMs: SWEEP_EVERY_MS,
      retentionMs: options.retention_days * DAY_MS,
      maxRecords: options.max_records,
      limit: SWEEP_LIMIT,
      idx,
      onError: (err) => app.log.error('log retention sweep failed', { err }),
    });
    app.provide('log-stats', { dropped: () => logStats.dropped, queued: () => writer.queued });

    // The pricing service may come from a plugin later in the pipeline: looked up at the first request.
    const pricer = optionalService(app, 'pricing', 'logged costs are 0');

    function onDone(ctx: GatewayContext, outcome: Outcome): void {
      writer.push({ record: buildLogRecord(ctx, outcome, pricer()), bodies: capture?.take(ctx) });
    }

    const feedbackDb = openFeedbackDb(store);
    const exportDb = openExportDb(store);
    const sources: ExportSources = {
      logs: db,
      idx,
      feedback: feedbackDb,
      resolveWorkspace: (ref) => findWorkspace(store, ref)?.id,
    };
    const runner = createExportRunner(exportDb, { ...sources, flushLogs: () => writer.flush() }, app.log);
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
      routes: [...logRoutes(app, { db, idx, keepBody }), ...exportRoutes(app, { db: exportDb, sources, runner }), ...feedbackRoutes(app, feedbackDb)],
      async close() {
        sweeper.stop();
        backfill.stop();
        runner.close();
        await backfill.finished;
        await writer.close();
      },
    };
  },
});
