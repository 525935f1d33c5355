/**
 * The `logs` database: one record per request, keyed by its id (a UUIDv7, so key order is time
 * order), in the gateway's LMDB environment. Its indexes are in log-parts.ts.
 */
import type { Database, DatabaseOptions, Key, RootDatabase } from 'lmdb';
import type { LogRecord } from '../../core/index.js';

/** A request log as stored: the core's record plus the bodies, when bodies are kept. */
export type StoredLog = LogRecord & {
  /** The request body, cut and redacted; null when bodies are not kept. */
  request_body: string | null;
  response_body: string | null;
};

export type LogDb = Database<StoredLog, string>;

export const LOGS_DB = 'logs';

/**
 * Records are encoded with shared msgpack structures: every record has the same field names, so
 * they are stored once instead of in every record. That halves the encoding time on the write
 * path and makes a stored record about a third of its size.
 * - Only the gateway's own shapes are shared (the record, its latency and usage objects): a
 *   client's `metadata` keys are unbounded, so their shapes stay inline, as all shapes were before.
 * - The shapes live in a database of their own (`logs#shapes`), not under a key of `logs`, where
 *   a range scan or the entry count would meet them.
 * - Records written before this decode unchanged (an inline shape is self-describing).
 * - Processes sharing the data dir agree on the shapes: a new shape is saved with a compare in a
 *   write transaction, and a process that lost the race reloads them and encodes again.
 */
const SHARED_SHAPES = new Set(['trace_id', 'total_ms', 'prompt_tokens', 'passed', 'before_request_hooks', 'duration_ms', 'argument_bytes']);
const SHAPES_KEY = 'shapes';

type Shapes = unknown[];

/** msgpackr's shared-structure hooks (passed through by lmdb, absent from its types). */
interface SharedShapeOptions {
  getStructures(): Shapes | undefined;
  saveStructures(structures: Shapes, isCompatible: ((existing: Shapes | undefined) => boolean) | number): boolean | undefined;
  shouldShareStructure(keys: string[]): boolean;
  copyBuffers: boolean;
}

/** One handle per environment in a process, so one encoder owns the shared shapes here. */
const opened = new WeakMap<RootDatabase, LogDb>();

export function openLogDb(root: RootDatabase): LogDb {
  const existing = opened.get(root);
  if (existing !== undefined) return existing;
  const shapes = root.openDB<Shapes, string>({ name: `${LOGS_DB}#shapes` });
  const options: DatabaseOptions & SharedShapeOptions & { name: string } = {
    name: LOGS_DB,
    getStructures: () => shapes.get(SHAPES_KEY),
    saveStructures: (structures, isCompatible) =>
      shapes.transactionSync(() => {
        const stored = shapes.get(SHAPES_KEY);
        const compatible = typeof isCompatible === 'function' ? isCompatible(stored) : stored === undefined || stored.length === isCompatible;
        // false: another process saved shapes first; msgpackr reloads them and encodes again.
        if (!compatible) return false;
        void shapes.put(SHAPES_KEY, structures);
        return undefined;
      }),
    // An empty object (no metadata, the usual case) is one more of the gateway's own shapes.
    shouldShareStructure: (keys) => keys.length === 0 || keys.some((k) => SHARED_SHAPES.has(k)),
    // The encoder writes into lmdb's reused buffers: embedded buffers must be copied.
    copyBuffers: true,
  };
  const db = root.openDB<StoredLog, string>(options);
  opened.set(root, db);
  return db;
}

export function countRecords(db: Database<unknown, string>): number {
  return (db.getStats() as { entryCount?: number }).entryCount ?? 0;
}

/** The first (or last) key of a database, without reading further. */
export function edgeKey(db: LogDb, reverse: boolean): string | undefined {
  for (const key of db.getKeys({ reverse, limit: 1 })) return key;
  return undefined;
}

/** Keys in [start, end), counted up to `cap` (lmdb's getKeysCount ignores `limit`: it counts the whole range). */
export function countKeys<K extends Key>(db: { getKeys(o: { start?: K; end?: K; limit?: number }): Iterable<K> }, start: K | undefined, end: K | undefined, cap: number): number {
  let n = 0;
  for (const key of db.getKeys({ start, end, limit: cap })) if (key !== undefined) n++;
  return n;
}
