/**
 * The log writer's thread: encodes request records and their index entries and hands them to
 * LMDB, off the event loop that serves requests.
 *
 *   main thread                                   this thread
 *   writer ──{seq, records}──▶ postMessage ──▶    writeLogs (one LMDB transaction)
 *          ◀──{seq, failed, error}─────────────   once committed
 *   sweeper ─{seq, sweep options}─────────────▶   sweep: one slice of retention removals
 *          ◀──{seq, removed, error}────────────   once committed
 *
 * lmdb-js shares one environment between the threads of a process, so this thread opens the
 * gateway's store by its path and writes into the same `logs` database and index partitions that
 * the main thread reads. Only this module and what it imports are loaded here (not the gateway's core).
 */
import os from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import { open } from 'lmdb';
import { guardCommitFailures } from '../../core/store/write-failures.js';
import type { Logger } from '../../core/logger.js';
import { openLogDb, type StoredLog } from './log-db.js';
import { writeLogs } from './log-index.js';
import { openLogIndex } from './log-parts.js';
import { sweep, type SweepOptions } from './retention.js';

/** What the writer sends. */
export type ToLogThread = { type: 'write'; seq: number; records: StoredLog[] } | { type: 'sweep'; seq: number; options: SweepOptions } | { type: 'close' };

/** An error as it crosses the thread boundary (an Error's own properties such as `code` would not). */
export interface ThreadError {
  message: string;
  code?: number | string;
}

/** What this thread answers. */
export type FromLogThread =
  | { type: 'written'; seq: number; failed: number; error?: ThreadError }
  | { type: 'swept'; seq: number; removed: number; error?: ThreadError }
  | { type: 'log'; level: 'warn' | 'error'; msg: string; fields?: Record<string, unknown> }
  | { type: 'closed' };

export interface LogThreadData {
  /** The store's LMDB path (`Store.path`). */
  path: string;
  /** Records per index partition (log-parts.ts `partSizeFor`). */
  partSize: number;
}

/** The thread's nice value (0 is the process's, 19 the lowest). */
const THREAD_NICE = 10;

const port = parentPort;
if (port === null) throw new Error('log-thread.js runs as a worker thread');
const send = (message: FromLogThread): void => port.postMessage(message);

function asThreadError(err: unknown): ThreadError {
  const code = (err as { code?: unknown } | null)?.code;
  return { message: err instanceof Error ? err.message : String(err), ...(typeof code === 'number' || typeof code === 'string' ? { code } : {}) };
}

/** Lines go to the main thread's logger (this thread has no sink of its own). */
const log: Logger = {
  level: 'warn',
  debug() {},
  info() {},
  warn: (msg, fields) => send({ type: 'log', level: 'warn', msg, ...(fields ? { fields } : {}) }),
  error: (msg, fields) => send({ type: 'log', level: 'error', msg, ...(fields ? { fields } : {}) }),
  child: () => log,
};
// A full disk must not end this thread through lmdb-js's unreachable commit rejections either.
guardCommitFailures(log);

const { path, partSize } = workerData as LogThreadData;
// Below the event loop's priority (this thread only: Linux's nice is per thread). Where both share
// a core, a batch handed over no longer preempts the request that handed it over: the thread runs
// in the loop's idle time, and under saturation still gets about a tenth of the core, several
// times what it needs (measured: 0 records dropped at 4k req/s on one core).
try {
  os.setPriority(0, THREAD_NICE);
} catch {
  // A platform without per-thread priorities: the thread runs at the process's.
}
// The same options as the store's (core/store/store.ts); lmdb-js returns the process's open environment.
const root = open({ path, maxDbs: 128 });
const db = openLogDb(root);
const index = openLogIndex(root);

/** The latest batch's write, settled: a sweep waits for it, so it counts every record handed over before it. */
let lastWrite: Promise<unknown> = Promise.resolve();

/** One batch, one write transaction (see {@link writeLogs}); the writer hears what it cost. */
function write(seq: number, records: StoredLog[]): void {
  const written = writeLogs(db, index, records, partSize);
  lastWrite = written.then(
    () => undefined,
    () => undefined,
  );
  void written.then(({ failed, error }) => send({ type: 'written', seq, failed, ...(failed > 0 ? { error: asThreadError(error) } : {}) }));
}

/**
 * One slice of retention (retention.ts): here rather than on the event loop, which a slice of
 * 10,000 removals held for about 0.3 s before index partitions, and which a partition's clear
 * would hold for tens of milliseconds.
 */
function runSweep(seq: number, options: SweepOptions): void {
  lastWrite
    .then(() => {
      db.resetReadTxn(); // a snapshot that sees those writes
      return sweep(db, options, index);
    })
    .then(
      (removed) => send({ type: 'swept', seq, removed }),
      (err: unknown) => send({ type: 'swept', seq, removed: 0, error: asThreadError(err) }),
    );
}

port.on('message', (message: ToLogThread) => {
  if (message.type === 'write') {
    write(message.seq, message.records);
    return;
  }
  if (message.type === 'sweep') {
    runSweep(message.seq, message.options);
    return;
  }
  void root.flushed.then(async () => {
    await root.close();
    send({ type: 'closed' });
  });
});
