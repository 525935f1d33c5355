/**
 * Companion records: a record that commits in the same transaction as the writes it describes.
 * The audit record of an admin write is one: after a kill -9, a change is never there without
 * its record, and an acknowledged change always has it.
 *
 *   admin route ─▶ withCompanion({db: audit, key, value}) ─▶ handler (sync or async)
 *                        every Collection insert/update/delete inside ─▶ transactionSync {
 *                            the change + its indexes + companion.putSync(key, value) }
 *
 * The scope follows the handler through its awaits (AsyncLocalStorage), so no handler passes it
 * along, and it closes when the handler is done: work the handler left running (a background job)
 * does not write records for a request already answered. Writing the same key again (a handler
 * writing several records) overwrites it in the same or a later transaction: one record a call.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { Database } from 'lmdb';

export interface Companion {
  /** Where the companion is written, and under which key. */
  readonly db: Database<unknown, string>;
  readonly key: string;
  /** The record to write (built on the first write and kept). */
  value(): unknown;
}

interface Scope {
  companion: Companion;
  open: boolean;
}

const scopes = new AsyncLocalStorage<Scope>();

/**
 * Runs `fn` with `companion` riding along every collection write it makes; closes the scope
 * when `fn` (or the promise it returns) is done.
 *
 * @example
 *   const result = await withCompanion({ db: auditDb, key: id, value: () => record }, () => handler(input));
 */
export async function withCompanion<R>(companion: Companion, fn: () => R | Promise<R>): Promise<R> {
  const scope: Scope = { companion, open: true };
  try {
    return await scopes.run(scope, fn);
  } finally {
    scope.open = false;
  }
}

/**
 * Called by a collection inside its write transaction: puts the current scope's companion, if
 * any, in the same transaction. `self` is the collection's own database (never its own companion).
 */
export function putCompanion(self: Database<unknown, string>): void {
  const scope = scopes.getStore();
  if (scope === undefined || !scope.open || scope.companion.db === self) return;
  scope.companion.db.putSync(scope.companion.key, scope.companion.value());
}
