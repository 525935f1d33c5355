/**
 * Companion records: a record that commits in the same transaction as the writes it describes.
 * The audit record of an admin write is one: after a kill -9, a change is never there without
 * its record, and an acknowledged change always has it.
 *
 *   admin route ─▶ withCompanion({db: audit, key, value}) ─▶ handler (sync or async)
 *                        every Collection insert/update/delete inside ─▶ transactionSync {
 *                            the change + its indexes + companion.putSync(key, value) }
 *
 * The scope covers the synchronous run of the handler, which is where admin handlers write (the
 * store's writes are synchronous transactions). A write a handler makes after an `await` does not
 * carry the record; the admin route then commits the record by itself before it answers, so the
 * acknowledgement never outruns it. Writing the same key again (a handler writing several records)
 * overwrites it in the same or a later transaction: one record a call.
 *
 * Why not AsyncLocalStorage, which would follow the awaits too: on Node 20, the first `run()` turns
 * on async hooks for the rest of the process, and every promise then pays for them (measured: a
 * promise-heavy loop 30-60 % slower, the governance pipeline's throughput with it).
 */
import type { Database } from 'lmdb';

export interface Companion {
  /** Where the companion is written, and under which key. */
  readonly db: Database<unknown, string>;
  readonly key: string;
  /** The record to write (built on the first write and kept). */
  value(): unknown;
  /** Called before each write of it (distributed mode journals the record, see collection.ts). */
  before?(): void;
}

interface Scope {
  companion: Companion;
  open: boolean;
}

/** The scope of the handler running synchronously right now, if any. */
let current: Scope | undefined;

/**
 * Runs `fn` with `companion` riding along every collection write its synchronous run makes; the
 * scope closes when `fn` returns (or throws), before any promise it returned settles.
 *
 * @example
 *   const result = await withCompanion({ db: auditDb, key: id, value: () => record }, () => handler(input));
 */
export function withCompanion<R>(companion: Companion, fn: () => R): R {
  const outer = current;
  const scope: Scope = { companion, open: true };
  current = scope;
  try {
    return fn();
  } finally {
    scope.open = false;
    current = outer;
  }
}

/**
 * Called by a collection inside its write transaction: puts the current scope's companion, if
 * any, in the same transaction. `self` is the collection's own database (never its own companion).
 */
export function putCompanion(self: Database<unknown, string>): void {
  const scope = current;
  if (scope === undefined || !scope.open || scope.companion.db === self) return;
  scope.companion.before?.();
  scope.companion.db.putSync(scope.companion.key, scope.companion.value());
}
