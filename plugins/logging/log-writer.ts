/**
 * The write path of the embedded driver: records leave `onDone` through a bounded in-memory queue
 * and are handed in batches to the log thread (log-thread.ts), which encodes them with their
 * index entries and writes them to LMDB. No request waits on storage, and the event loop that
 * serves requests never encodes a record or an index key.
 *
 *   onDone ─push─▶ [ queue ] ── BATCH records, or every flush_ms ──▶ log thread ─▶ logs + index partitions
 *                   full? drop + count                                (one transaction per batch)
 *                   (queued + in the thread ≤ queue_max)
 *
 * Why a thread: encoding a record and its five index keys on the event loop cost ~15 µs of each
 * request, and a flush of a few hundred records held the loop for milliseconds, which requests
 * arriving meanwhile waited out (the default pipeline's p99 at one connection).
 * Batches leave at BATCH records (or at flush_ms): large enough that what each batch costs beyond
 * its records (its hand-over, the thread's wake-up, its LMDB commit) is spread thin, small enough
 * that under load a batch leaves within tens of milliseconds.
 *
 * A full queue drops the new record and counts it (`log-stats`): under a storage stall the
 * gateway keeps serving with bounded memory rather than queueing without limit or blocking.
 * A full store (its size limit reached, or the disk full) drops the batch the same way, counted;
 * writing resumes by itself once retention or deletes made room. A thread that stops loses the
 * batches it held (counted, logged); the next batch starts a new one.
 * `flush()` resolves once everything queued before it is committed and readable here;
 * `close()` writes what is left and stops the thread.
 */
import { Worker } from 'node:worker_threads';
import type { Logger } from '../../core/index.js';
import type { StoredLog } from './log-db.js';
import type { FromLogThread, LogThreadData, ThreadError, ToLogThread } from './log-thread.js';
import type { SweepOptions } from './retention.js';
import { logStats } from './stats.js';

/**
 * Records per batch handed to the thread before the timer would. Measured with `bench/ab.sh` on
 * the default pipeline (both sizes at once): 128 against 32 took 4–7 % less CPU per request in
 * every window (the thread alone 19 → 15 µs a record), 256 against 128 about 3 % less, 1024
 * against 256 nothing more (at flush_ms 200 a batch holds ~400 records at most then).
 */
export const BATCH = 256;

/** tsc puts the compiled thread next to this module. */
const THREAD_FILE = new URL('./log-thread.js', import.meta.url);
/**
 * The log thread's young generation, MB. Left to V8 (a 48 MB limit here), it grew to 32 MB under
 * load, as the main thread's does, all of it resident, for a thread whose live objects are a few
 * batches. At 12 (4 MB semi-spaces) it commits 8 MB, and the thread scavenges four times as often
 * at no CPU cost measured (`bench/ab.sh`, issue 13's closing note): few of a batch's objects
 * outlive it, and a scavenge costs what survives.
 */
const LOG_THREAD_YOUNG_MB = 12;

export interface LogWriterOptions<P> {
  /** The store's LMDB path (`Store.path`): the thread opens the same environment. */
  path: string;
  /** Records per index partition (log-parts.ts `partSizeFor`). */
  partSize: number;
  queueMax: number;
  flushMs: number;
  /** Turns a queued entry into the stored record (bodies are rendered here, off the request path). */
  finish(entry: P): StoredLog;
  log: Logger;
  /** True while the store refuses growing writes (`store.capacity.full`): batches are dropped, counted. */
  storeFull?: () => boolean;
  /** Runs on this thread once a batch is committed (the backend renews its read snapshot). */
  onCommitted?: () => void;
  /** Tests: another thread module speaking the same messages. */
  threadFile?: URL;
}

export interface LogWriter<P> {
  /** Queues an entry; false when the queue was full and it was dropped. Never blocks. */
  push(entry: P): boolean;
  /** Records not yet committed: queued here or in the thread. */
  readonly queued: number;
  /** Writes the queue now; resolves once it and every batch before it is committed. */
  flush(): Promise<void>;
  /** Stops the timer, writes the rest, waits until it is durable and stops the thread. */
  close(): Promise<void>;
}

/** The embedded driver's writer: its thread also runs the store's retention. */
export interface ThreadLogWriter<P> extends LogWriter<P> {
  /**
   * Runs one slice of retention (retention.ts `sweep`) in the thread, off the event loop, after
   * the records pushed before it; resolves with the records removed (0 once closed).
   */
  sweep(options: SweepOptions): Promise<number>;
}

interface Batch {
  records: number;
  done: Promise<void>;
  settle(): void;
}

/** An error the thread reported, with its code kept (`MDB_MAP_FULL`, …). */
function threadError(e: ThreadError): Error {
  return Object.assign(new Error(e.message), e.code === undefined ? {} : { code: e.code });
}

export function createLogWriter<P>(options: LogWriterOptions<P>): ThreadLogWriter<P> {
  let queue: P[] = [];
  /** Records handed to the thread and not yet acknowledged. */
  let inThread = 0;
  let closed = false;
  let full = false;
  let scheduled = false;
  let seq = 0;
  const batches = new Map<number, Batch>();
  /** Sweeps handed to the thread, by seq: settled by its answer, rejected if it stops first. */
  const sweeps = new Map<number, { resolve(removed: number): void; reject(err: Error): void }>();
  let thread: Worker | undefined;
  const timer = setInterval(() => void flush(), options.flushMs);
  timer.unref();

  /** A thread holding no batch and no sweep never keeps the process alive. */
  function unrefIfIdle(): void {
    if (batches.size === 0 && sweeps.size === 0) thread?.unref();
  }

  function settle(id: number, failed: number, error?: unknown): void {
    const batch = batches.get(id);
    if (batch === undefined) return;
    batches.delete(id);
    inThread -= batch.records;
    unrefIfIdle();
    if (failed > 0) {
      logStats.dropped += failed;
      options.log.error('log batch write failed', { records: failed, err: error });
    }
    batch.settle();
  }

  function onMessage(message: FromLogThread): void {
    if (message.type === 'written') {
      options.onCommitted?.();
      settle(message.seq, message.failed, message.error);
    } else if (message.type === 'swept') {
      const pending = sweeps.get(message.seq);
      sweeps.delete(message.seq);
      unrefIfIdle();
      options.onCommitted?.();
      if (message.error === undefined) pending?.resolve(message.removed);
      else pending?.reject(threadError(message.error));
    } else if (message.type === 'log') {
      options.log[message.level](message.msg, message.fields);
    }
  }

  function startThread(): Worker {
    const data: LogThreadData = { path: options.path, partSize: options.partSize };
    // No inherited Node flags: loaders and preloads given to the gateway (a test runner's, say) are not the thread's business.
    const w = new Worker(options.threadFile ?? THREAD_FILE, { workerData: data, execArgv: [], resourceLimits: { maxYoungGenerationSizeMb: LOG_THREAD_YOUNG_MB } });
    // An idle thread never keeps a process alive; one holding a batch does (see post()).
    w.unref();
    w.on('message', onMessage);
    w.on('error', (err) => options.log.error('log thread failed', { err }));
    w.on('exit', (code) => {
      if (thread !== w) return;
      thread = undefined;
      for (const pending of sweeps.values()) pending.reject(new Error(`log thread stopped (exit code ${code}) before its retention sweep was done`));
      sweeps.clear();
      const lost = [...batches.keys()];
      if (lost.length > 0) options.log.error('log thread stopped: its batches are lost', { code, records: inThread });
      for (const id of lost) {
        logStats.dropped += batches.get(id)!.records;
        settle(id, 0);
      }
    });
    return w;
  }

  /** Hands the queue to the thread as one batch. */
  function post(): void {
    if (queue.length === 0) return;
    const entries = queue;
    queue = [];
    if (options.storeFull?.()) {
      logStats.dropped += entries.length;
      // One line when it starts (the count is in the metrics), one when writing resumes.
      if (!full) options.log.warn('store full: log records are dropped until there is room', { records: entries.length });
      full = true;
      return;
    }
    if (full) options.log.info('store has room again: log records are written', { dropped: logStats.dropped });
    full = false;
    const records: StoredLog[] = [];
    for (const entry of entries) {
      try {
        records.push(options.finish(entry));
      } catch (err) {
        logStats.dropped++;
        options.log.error('log record could not be built', { err });
      }
    }
    if (records.length === 0) return;
    const id = ++seq;
    let settleBatch!: () => void;
    const done = new Promise<void>((resolve) => (settleBatch = resolve));
    batches.set(id, { records: records.length, done, settle: settleBatch });
    inThread += records.length;
    const message: ToLogThread = { type: 'write', seq: id, records };
    try {
      thread ??= startThread();
      if (batches.size === 1) thread.ref();
      thread.postMessage(message);
    } catch (err) {
      // A value that cannot be copied to the thread (none of the gateway's own): the batch is lost, counted.
      settle(id, records.length, err);
    }
  }

  function flush(): Promise<void> {
    post();
    if (batches.size === 0) return Promise.resolve();
    return Promise.all([...batches.values()].map((b) => b.done)).then(() => undefined);
  }

  function postSoon(): void {
    scheduled = false;
    post();
  }

  // Started now, not with the first batch: loading it takes ~0.1 s, which no record should wait out.
  thread = startThread();

  return {
    push(entry) {
      if (closed || queue.length + inThread >= options.queueMax) {
        logStats.dropped++;
        return false;
      }
      queue.push(entry);
      // Not inside the request's onDone: the batch leaves on the next turn.
      if (queue.length >= BATCH && !scheduled) {
        scheduled = true;
        setImmediate(postSoon);
      }
      return true;
    },
    get queued() {
      return queue.length + inThread;
    },
    flush,
    sweep(sweepOptions) {
      if (closed) return Promise.resolve(0);
      // What is queued goes first, so the sweep counts it.
      post();
      const id = ++seq;
      return new Promise<number>((resolve, reject) => {
        sweeps.set(id, { resolve, reject });
        try {
          thread ??= startThread();
          // Held like a batch: a sweep in hand keeps the process alive until the thread answers.
          thread.ref();
          thread.postMessage({ type: 'sweep', seq: id, options: sweepOptions } satisfies ToLogThread);
        } catch (err) {
          sweeps.delete(id);
          reject(err instanceof Error ? err : new Error(String(err)));
        }
      });
    },
    async close() {
      closed = true;
      clearInterval(timer);
      await flush();
      const w = thread;
      if (w === undefined) return;
      thread = undefined;
      w.ref();
      await new Promise<void>((resolve) => {
        w.once('exit', () => resolve());
        w.on('message', (message: FromLogThread) => {
          if (message.type === 'closed') void w.terminate();
        });
        w.postMessage({ type: 'close' } satisfies ToLogThread);
      });
    },
  };
}
