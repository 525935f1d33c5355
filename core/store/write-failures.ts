/**
 * When the disk (or the store's size limit) is full, writes fail; the gateway must not.
 *
 *   synchronous write (transactionSync, putSync) ─▶ throws: `code` 28 ENOSPC, … ─▶ StoreErrors.full (503)
 *   asynchronous write (put, remove, transaction) ─▶ its promise rejects with "Commit failed" whose
 *       `commitError` is a second rejected promise ─▶ {@link quietWrite} settles both
 *   lmdb-js 3.5 also rejects one internal promise per failed asynchronous commit that no caller
 *       can reach ─▶ {@link guardCommitFailures} absorbs exactly those, so an unhandled rejection
 *       does not end the process (seen on a full tmpfs: without it the first failed log batch
 *       killed the gateway)
 */
import type { Logger } from '../logger.js';

/** errno values (lmdb-js puts them in `code` as numbers) and LMDB's own code that mean "no room". */
const NO_ROOM = new Set<number | string>([
  28, // ENOSPC: the disk is full
  122, // EDQUOT: the disk quota is used up
  27, // EFBIG: the file size limit
  -30792, // MDB_MAP_FULL
  // After a commit failed on a full disk, lmdb-js reports EIO for the commits that follow (seen
  // on a full tmpfs) until space is back: to a client it is the same condition.
  5,
  'ENOSPC',
  'EDQUOT',
  'EFBIG',
  'EIO',
]);

/** True for an error of a store write that failed for lack of space (see {@link NO_ROOM}). */
export function isNoRoom(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false;
  const code = (err as { code?: unknown }).code;
  if ((typeof code === 'number' || typeof code === 'string') && NO_ROOM.has(code)) return true;
  return /No space left on device|MDB_MAP_FULL/.test(String((err as { message?: unknown }).message));
}

/** An lmdb-js asynchronous commit failure: "Commit failed" with the real error as a promise in `commitError`. */
function isCommitFailure(err: unknown): err is Error & { commitError: Promise<unknown> } {
  return err instanceof Error && typeof (err as { commitError?: { then?: unknown } }).commitError?.then === 'function';
}

/**
 * Settles an asynchronous store write: resolves true when committed, false when it failed (after
 * calling `onError`); never rejects, and handles the commit error lmdb-js attaches.
 *
 * @example
 *   void quietWrite(db.put(id, record), (err) => log.warn('write failed', { err }));
 */
export function quietWrite(write: Promise<boolean>, onError?: (err: unknown) => void): Promise<boolean> {
  return write.then(
    (ok) => ok,
    (err: unknown) => {
      if (isCommitFailure(err)) err.commitError.catch(() => undefined);
      onError?.(err);
      return false;
    },
  );
}

let guarded = false;
let absorbed = 0;

/** Failed asynchronous commits absorbed by the guard since the process started. */
export function absorbedCommitFailures(): number {
  return absorbed;
}

/**
 * Installs (once per process) the listener that absorbs lmdb-js's unreachable commit-failure
 * rejections. Any other unhandled rejection keeps Node's default: when no one else listens, it is
 * rethrown as an uncaught exception and ends the process as before.
 */
export function guardCommitFailures(log: Logger): void {
  if (guarded) return;
  guarded = true;
  process.on('unhandledRejection', function absorbCommitFailure(reason) {
    if (isCommitFailure(reason)) {
      reason.commitError.catch(() => undefined);
      if (absorbed++ % 1000 === 0) log.warn('a store write could not be committed (disk or store full?)', { failures: absorbed });
      return;
    }
    if (process.listenerCount('unhandledRejection') === 1) throw reason;
  });
}
