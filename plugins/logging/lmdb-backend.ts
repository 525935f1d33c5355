/**
 * The embedded driver of the logging plugin's storage (backend.ts): the `logs` database and its
 * index partitions, the `log_exports` and `feedback` databases of the gateway's LMDB env, with the
 * batching writer, the retention sweeper and the index backfill.
 */
import { isNoRoom, StoreErrors, type Logger, type Store } from '../../core/index.js';
import type { LogBackend } from './backend.js';
import { openLogDb, type StoredLog } from './log-db.js';
import { startBackfill, writeLogs } from './log-index.js';
import { openLogIndex, partSizeFor } from './log-parts.js';
import { createLogWriter } from './log-writer.js';
import { listLogs } from './log-list.js';
import { newWalkState, queryLogs } from './log-query.js';
import { startSweeper } from './retention.js';
import { openExportDb, transition } from './export-store.js';
import { openFeedbackDb, weightedFeedbackByTrace } from './feedback.js';

const DAY_MS = 86_400_000;
const SWEEP_EVERY_MS = 60_000;
/**
 * Removals per slice of a sweep, in the log thread: a record goes by key (about 6 µs), so 2,000
 * hold the thread for some 12 ms, the write batches queued meanwhile wait no longer than that
 * (a slice that frees an index partition takes that partition's clear too), and one slice's
 * removals and dirty pages stay small. A sweep runs slices until the bounds are met.
 */
const SWEEP_LIMIT = 2_000;
/** Between two slices of one sweep: the thread's queued writes go first. */
const SWEEP_PAUSE_MS = 20;

export interface BackendOptions<P> {
  queueMax: number;
  flushMs: number;
  retentionDays: number;
  maxRecords: number;
  /** Turns a queued entry into the stored record (bodies are rendered here, off the request path). */
  finish(entry: P): StoredLog;
  log: Logger;
}

export function openLmdbBackend<P>(store: Store, options: BackendOptions<P>): LogBackend<P> {
  const db = openLogDb(store.root);
  const idx = openLogIndex(store.root);
  const partSize = partSizeFor(options.maxRecords);
  const backfill = startBackfill(db, idx, options.log);
  const writer = createLogWriter<P>({
    path: store.path,
    partSize,
    // A read right after a flush sees the batch: this thread's snapshot may predate the thread's commit.
    onCommitted: () => db.resetReadTxn(),
    queueMax: options.queueMax,
    flushMs: options.flushMs,
    log: options.log,
    storeFull: () => store.capacity.full(),
    finish: options.finish,
  });
  // `store.flush()` (shutdown, tests) waits for the records in the write thread too.
  const removeWriter = store.addWriter(() => writer.flush());
  // In the log thread: on the event loop a slice held every request in flight for its whole length.
  const sweeper = startSweeper((o) => writer.sweep(o), {
    everyMs: SWEEP_EVERY_MS,
    pauseMs: SWEEP_PAUSE_MS,
    retentionMs: options.retentionDays * DAY_MS,
    maxRecords: options.maxRecords,
    limit: SWEEP_LIMIT,
    onError: (err) => options.log.error('log retention sweep failed', { err }),
  });
  const exportDb = openExportDb(store);
  const feedbackDb = openFeedbackDb(store);
  const sources = { db, idx };

  return {
    logs: {
      get: async (id) => db.get(id),
      list: (query, workspace) => listLogs(sources, query, workspace),
      walk: (q) => queryLogs(sources, q, newWalkState()),
      async insert(records) {
        // One transaction for the batch.
        const { failed, error } = await writeLogs(db, idx, records, partSize);
        if (failed > 0) {
          if (isNoRoom(error)) throw StoreErrors.full(error);
          throw new Error('custom logs could not be written', { cause: error });
        }
      },
    },
    exports: {
      get: async (id) => exportDb.get(id),
      put: async (e) => {
        await exportDb.put(e.id, e);
      },
      async list(workspaceId, offset, limit) {
        const data = [];
        let total = 0;
        // Exports are few (people create them by hand): a plain scan, newest first.
        for (const { value: e } of exportDb.getRange({ reverse: true })) {
          if (workspaceId !== null && e.workspace_id !== workspaceId) continue;
          if (total >= offset && data.length < limit) data.push(e);
          total++;
        }
        return { total, data };
      },
      transition: async (id, t) => transition(exportDb, id, t),
    },
    feedback: {
      get: async (id) => feedbackDb.get(id),
      put: async (r) => {
        await feedbackDb.put(r.id, r);
      },
      weightedByTrace: (workspaceId) => weightedFeedbackByTrace(feedbackDb, workspaceId),
    },
    writer,
    async close() {
      removeWriter();
      sweeper.stop();
      backfill.stop();
      await backfill.finished;
      await writer.close();
    },
  };
}
