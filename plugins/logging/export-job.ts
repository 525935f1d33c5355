/**
 * Running and reading an export: the matching records, oldest first, within the export's page
 * window (`filters.current_page`, `filters.page_size`), as counted by a background run and as
 * streamed by the download. Both read through the most selective index (log-query.ts) in slices
 * that yield to the event loop, so neither holds it for more than a few milliseconds.
 */
import type { Logger } from '../../core/index.js';
import type { StoredLog } from './log-db.js';
import type { ExportStore, FeedbackStore, LogStore } from './backend.js';
import { exportLine, exportSelection } from './export-filters.js';
import type { ExportRecord } from './export-store.js';
import { timeRange } from './scan.js';

export interface ExportSources {
  logs: LogStore;
  feedback: FeedbackStore;
  /** A workspace id from an id or slug (`filters.workspace_slug`). */
  resolveWorkspace(ref: string): string | undefined;
}

/** The export's records in chunks, oldest first. */
export async function* exportRecords(src: ExportSources, e: ExportRecord, signal?: AbortSignal): AsyncGenerator<StoredLog[]> {
  const sel = exportSelection(e.filters, e.workspace_id, src.resolveWorkspace);
  const feedback = sel.needsFeedback ? await src.feedback.weightedByTrace(e.workspace_id) : undefined;
  const range = timeRange(sel.fromMs, sel.toMs);
  const high = e.until !== null && (range.high === undefined || e.until < range.high) ? e.until : range.high;
  let seen = 0;
  let taken = 0;
  // Each record's match runs inside the walk's slices, so a wide export yields to chat traffic.
  const match = (r: StoredLog): boolean => sel.match(r, feedback);
  const walk = src.logs.walk({ terms: sel.terms, workspaceId: sel.workspaceId, low: range.low, high, newestFirst: false, match, signal });
  for await (const chunk of walk) {
    const out: StoredLog[] = [];
    for (const r of chunk) {
      if (seen++ < sel.offset) continue;
      out.push(r);
      if (++taken >= sel.limit) break;
    }
    if (out.length > 0) yield out;
    if (taken >= sel.limit) return;
  }
}

export async function countExport(src: ExportSources, e: ExportRecord, signal?: AbortSignal): Promise<number> {
  let n = 0;
  for await (const chunk of exportRecords(src, e, signal)) n += chunk.length;
  return n;
}

/** Lines batched to about this many characters per chunk handed to the response. */
const CHUNK_CHARS = 64 * 1024;

/** The export as JSON Lines, in chunks: one object per record, the requested fields in order. */
export async function* exportJsonl(src: ExportSources, e: ExportRecord, signal?: AbortSignal): AsyncGenerator<string> {
  let text = '';
  for await (const chunk of exportRecords(src, e, signal)) {
    for (const r of chunk) {
      text += exportLine(r, e.requested_data);
      if (text.length >= CHUNK_CHARS) {
        yield text;
        text = '';
      }
    }
  }
  if (text.length > 0) yield text;
}

export interface ExportRunner {
  /** Runs an export that was just moved to in_progress, in the background. */
  start(id: string): void;
  /** Stops a running export of this process (the record is already `stopped`). */
  cancel(id: string): void;
  /** Stops every run; their exports become `failed` (start them again after a restart). */
  close(): void;
}

export function createExportRunner(db: ExportStore, src: ExportSources & { flushLogs(): Promise<void> }, log: Logger): ExportRunner {
  const running = new Map<string, AbortController>();

  async function run(id: string, signal: AbortSignal): Promise<void> {
    // Records of requests that finished before the start may still sit in the write queue.
    await src.flushLogs();
    const e = await db.get(id);
    if (e === undefined || signal.aborted) return;
    const total = await countExport(src, e, signal);
    if (signal.aborted) return;
    await db.transition(id, { from: ['in_progress'], action: 'finished', change: () => ({ status: 'success', total }) });
  }

  return {
    start(id) {
      const controller = new AbortController();
      running.set(id, controller);
      run(id, controller.signal)
        .catch((err: unknown) => {
          if ((err as { code?: string }).code === 'export_state_conflict') return; // cancelled meanwhile
          log.error('log export failed', { export_id: id, err });
          db.transition(id, { from: ['in_progress'], action: 'failed', change: () => ({ status: 'failed' }) }).catch(() => {
            /* cancelled or gone meanwhile */
          });
        })
        .finally(() => {
          if (running.get(id) === controller) running.delete(id);
        });
    },
    cancel(id) {
      running.get(id)?.abort();
      running.delete(id);
    },
    close() {
      for (const [id, controller] of running) {
        controller.abort();
        db.transition(id, { from: ['in_progress'], action: 'failed', change: () => ({ status: 'failed' }) }).catch(() => {
          /* finished meanwhile */
        });
      }
      running.clear();
    },
  };
}
