/**
 * Log exports as stored in the `log_exports` database, and their lifecycle:
 *
 *   draft ──start──▶ in_progress ──▶ success ──start──▶ in_progress (a re-run)
 *     │                  │      └──▶ failed  ──start──▶ in_progress
 *     └──cancel──┐       └─cancel─┐
 *                ▼                ▼
 *             stopped ──start──▶ in_progress
 *
 * A start freezes the selection at that moment (`until`): records logged later never join it,
 * so the count of the run and every download of it agree. Transitions are read-check-write in
 * one synchronous transaction, so a cancel and a finishing run cannot both win.
 */
import type { Database } from 'lmdb';
import { AdminErrors, type Store } from '../../core/index.js';
import { LoggingErrors } from './errors.js';
import type { ExportFilters, RequestedField } from './export-filters.js';

export type ExportStatus = 'draft' | 'in_progress' | 'success' | 'failed' | 'stopped';

export interface ExportRecord {
  id: string;
  organisation_id: string;
  /** null: an organisation key's export over every workspace. */
  workspace_id: string | null;
  filters: ExportFilters;
  requested_data: RequestedField[];
  status: ExportStatus;
  description: string | null;
  created_at: string;
  last_updated_at: string;
  /** The user, or the API key, that created it. */
  created_by: string | null;
  /** Matching records: counted at creation, then by each run. */
  total: number;
  /** Exclusive upper key bound of the records, set when a run starts; null for a draft. */
  until: string | null;
}

export type ExportDb = Database<ExportRecord, string>;

export const EXPORTS_DB = 'log_exports';

export function openExportDb(store: Store): ExportDb {
  return store.root.openDB<ExportRecord, string>({ name: EXPORTS_DB });
}

/**
 * Moves an export from one of `from` to what `change` returns, atomically.
 * Another state is a 409 naming it; a missing export a 404.
 */
export function transition(db: ExportDb, id: string, options: { from: ReadonlyArray<ExportStatus>; action: string; change(current: ExportRecord): Partial<ExportRecord> }): ExportRecord {
  return db.transactionSync(() => {
    const current = db.get(id);
    if (current === undefined) throw AdminErrors.notFound('The export does not exist.');
    if (!options.from.includes(current.status)) throw LoggingErrors.exportState(current.status, options.action);
    const next: ExportRecord = { ...current, ...options.change(current), id, last_updated_at: new Date().toISOString() };
    db.putSync(id, next);
    return next;
  });
}
