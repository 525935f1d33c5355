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
 * A full store (its size limit reached, or the disk full) drops the batch the same way, counted;
 * writing resumes by itself once retention or deletes made room.
 * A batch is encoded and queued for LMDB a slice at a time (SLICE records per event-loop turn):
 * the requests in flight never wait behind a whole batch's encoding (a 200 ms batch at 2k req/s
 * is 400 records), and each slice commits as its own transaction. Flushes run one after another.
 * `close()` writes what is left and waits for it to be durable.
 */
import type { Logger } from '../../core/index.js';
import type { LogDb, StoredLog } from './log-db.js';
import { putLog, type IndexDb } from './log-index.js';
import { logStats } from './stats.js';

/** Records encoded per event-loop turn during a flush. */
const SLICE = 32;

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

export interface LogWriterOptions<P> {
  queueMax: number;
  flushMs: number;
  /** Turns a queued entry into the stored record (bodies are rendered here, off the request path). */
  finish(entry: P): StoredLog;
  log: Logger;
  /** True while the store refuses growing writes (`store.capacity.full`): batches are dropped, counted. */
  storeFull?: () => boolean;
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
  let full = false;
  /** The flush in progress: the next one starts after it (a sliced flush spans several turns). */
  let running: Promise<void> = Promise.resolve();
  const timer = setInterval(() => void flush(), options.flushMs);
  timer.unref();

  function flush(): Promise<void> {
    running = running.then(writeQueue).catch((err: unknown) => options.log.error('log flush failed', { err }));
    return running;
  }

  async function writeQueue(): Promise<void> {
    if (queue.length === 0) return;
    const batch = queue;
    queue = [];
    if (options.storeFull?.()) {
      logStats.dropped += batch.length;
      // One line when it starts (the count is in the metrics), one when writing resumes.
      if (!full) options.log.warn('store full: log records are dropped until there is room', { records: batch.length });
      full = true;
      return;
    }
    if (full) options.log.info('store has room again: log records are written', { dropped: logStats.dropped });
    full = false;
    // Puts issued in one turn (a slice) are committed by LMDB as one write transaction.
    const writes: Array<Promise<boolean>> = [];
    const failures: unknown[] = [];
    for (let i = 0; i < batch.length; i++) {
      if (i > 0 && i % SLICE === 0) await nextTurn();
      const entry = batch[i]!;
      try {
        const record = options.finish(entry);
        writes.push(putLog(db, idx, record, (err) => failures.push(err)));
      } catch (err) {
        logStats.dropped++;
        options.log.error('log record could not be built', { err });
      }
    }
    const results = await Promise.all(writes);
    const failed = results.filter((ok) => !ok).length;
    if (failed > 0) {
      logStats.dropped += failed;
      options.log.error('log batch write failed', { records: failed, err: failures[0] });
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
