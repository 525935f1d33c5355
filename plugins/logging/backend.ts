/**
 * Where the logging plugin keeps its records: one interface, two drivers, chosen once at setup.
 *
 *   embedded (no PostgreSQL) ─▶ lmdb-backend.ts   the gateway's LMDB env, as always
 *   distributed mode         ─▶ pg-backend.ts     PostgreSQL, shared by every host
 *
 * The routes (logs, exports, feedback) and the export runner see only these interfaces, so they
 * answer the same shapes and the same error codes whichever driver serves them.
 */
import type { Records } from '../../core/index.js';
import type { StoredLog } from './log-db.js';
import type { LogListQuery } from './log-filters.js';
import type { LogPage } from './log-list.js';
import type { LogQuery } from './log-query.js';
import type { LogWriter } from './log-writer.js';
import type { ExportRecord, ExportStatus } from './export-store.js';
import type { FeedbackRecord } from './feedback.js';

/** The request log records. */
export interface LogStore {
  get(id: string): Promise<StoredLog | undefined>;
  /** One page of GET /v1/logs (log-list.ts describes the envelope). */
  list(query: LogListQuery, workspace: Records.Workspace | null): Promise<LogPage>;
  /** The records of a query in chunks, in its direction (exports read through this). */
  walk(q: LogQuery): AsyncGenerator<StoredLog[]>;
  /** Writes records now and resolves once they are durable (custom logs: the answer waits). */
  insert(records: StoredLog[]): Promise<void>;
}

export interface ExportTransition {
  from: ReadonlyArray<ExportStatus>;
  action: string;
  change(current: ExportRecord): Partial<ExportRecord>;
}

/** Log export jobs. */
export interface ExportStore {
  get(id: string): Promise<ExportRecord | undefined>;
  put(e: ExportRecord): Promise<void>;
  /** Newest first; `workspaceId` null: every workspace. */
  list(workspaceId: string | null, offset: number, limit: number): Promise<{ total: number; data: ExportRecord[] }>;
  /** Atomic read-check-write (export-store.ts): another state is a 409, a missing export a 404. */
  transition(id: string, t: ExportTransition): Promise<ExportRecord>;
}

/** Feedback on traces. */
export interface FeedbackStore {
  get(id: string): Promise<FeedbackRecord | undefined>;
  put(record: FeedbackRecord): Promise<void>;
  /** The mean weighted score (value × weight) of each trace, in one workspace or all. */
  weightedByTrace(workspaceId: string | null): Promise<Map<string, number>>;
}

/** One driver: its stores, its write path for request records, and what it runs in the background. */
export interface LogBackend<P> {
  logs: LogStore;
  exports: ExportStore;
  feedback: FeedbackStore;
  writer: LogWriter<P>;
  /** Stops the background work (retention, backfill) and writes what is queued. */
  close(): Promise<void>;
}
