/**
 * The write path: records leave `onDone` through a bounded in-memory queue and reach LMDB in
 * batches, so no request ever waits on storage.
 *
 *   onDone ─push─▶ [ queue ≤ queue_max ] ──every flush_ms──▶ one batch of async puts ─▶ logs db
 *                   full? drop + count          (LMDB commits the batch as one     + logs#idx
 *                                                transaction, index entries included)
 *
 * A full queue drops the new record and counts it (`log-stats`): under a storage stall the
 * gateway keeps serving with bounded memory rather than queueing without limit or blocking.
 * `close()` writes what is left and waits for it to be durable.
 */
import type { Logger } from '../../core/index.js';
import type { LogDb, StoredLog } from './log-db.js';
import { putLog, type IndexDb } from './log-index.js';
import { logStats } from './stats.js';

export interface LogWriterOptions<P> {
  queueMax: number;
  flushMs: number;
  /** Turns a queued entry into the stored record (bodies are rendered here, off the request path). */
  finish(entry: P): StoredLog;
  log: Logger;
}

export interface LogWriter<P> {
  /** Queues an entry; false when the queue was full and it was dropped. Never blocks. */
  push(entry: P): boolean;
  readonly queued: number;
  /** Writes the queue now; resolves once the batch is committed. */
  flush(): Promise<void>;
  /** Stops the timer, writes the rest and waits until it is durable. */
  close(): Promise<void>;
}

export function createLogWriter<P>(db: LogDb, idx: IndexDb, options: LogWriterOptions<P>): LogWriter<P> {
  let queue: P[] = [];
  let closed = false;
  const timer = setInterval(() => void flush(), options.flushMs);
  timer.unref();

  async function flush(): Promise<void> {
    if (queue.length === 0) return;
    const batch = queue;
    queue = [];
    // Puts issued in one turn are committed by LMDB as one write transaction.
    const writes: Array<Promise<unknown>> = [];
    for (const entry of batch) {
      try {
        const record = options.finish(entry);
        writes.push(putLog(db, idx, record));
      } catch (err) {
        logStats.dropped++;
        options.log.error('log record could not be built', { err });
      }
    }
    const results = await Promise.allSettled(writes);
    const failed = results.filter((r) => r.status === 'rejected');
    if (failed.length > 0) {
      logStats.dropped += failed.length;
      options.log.error('log batch write failed', { records: failed.length, err: (failed[0] as PromiseRejectedResult).reason });
    }
  }

  return {
    push(entry) {
      if (closed || queue.length >= options.queueMax) {
        logStats.dropped++;
        return false;
      }
      queue.push(entry);
      return true;
    },
    get queued() {
      return queue.length;
    },
    flush,
    async close() {
      closed = true;
      clearInterval(timer);
      await flush();
      await db.flushed;
    },
  };
}
