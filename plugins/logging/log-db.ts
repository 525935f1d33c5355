/**
 * The `logs` database: one record per request, keyed by its id (a UUIDv7, so key order is time
 * order), in the gateway's LMDB environment. Other plugins (analytics) read it by this name.
 */
import type { Database } from 'lmdb';
import type { LogRecord, Store } from '../../core/index.js';

/** A request log as stored: the core's record plus the bodies, when bodies are kept. */
export type StoredLog = LogRecord & {
  /** The request body, cut and redacted; null when bodies are not kept. */
  request_body: string | null;
  response_body: string | null;
};

export type LogDb = Database<StoredLog, string>;

export const LOGS_DB = 'logs';

export function openLogDb(store: Store): LogDb {
  return store.root.openDB<StoredLog, string>({ name: LOGS_DB });
}

/** The number of records, from LMDB's page statistics (no scan). */
export function countRecords(db: Database<unknown, string>): number {
  return (db.getStats() as { entryCount?: number }).entryCount ?? 0;
}
