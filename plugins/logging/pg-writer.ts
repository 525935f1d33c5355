/**
 * The write path of distributed mode: records leave `onDone` through a bounded in-memory queue
 * and reach PostgreSQL in batches, one multi-row INSERT each, never awaited by a request.
 *
 *   onDone ─push─▶ [ queue ≤ store.postgres.log_queue ] ─every flush_ms─▶ INSERT … SELECT unnest(…)
 *                   full? dropped, counted (queue_full)       │ ON CONFLICT DO NOTHING
 *                                                              ├ ok: next batch
 *                                                              ├ PostgreSQL unreachable: the batch is kept,
 *                                                              │   retried first next time (order kept)
 *                                                              └ refused (a bad row): dropped, counted
 *
 * While PostgreSQL is away the queue fills up to its bound and what overflows is dropped and
 * counted; when it is back the writer drains the queue in order, with no restart. A batch whose
 * commit succeeded but whose answer was lost is sent again: `ON CONFLICT DO NOTHING` on the
 * primary key writes none of it twice.
 */
import type pg from 'pg';
import type { Logger } from '../../core/index.js';
import type { StoredLog } from './log-db.js';
import type { LogWriter } from './log-writer.js';
import { isUnreachable } from './pg-errors.js';
import { dayOf, ensurePartitions, LOGS_TABLE } from './pg-schema.js';
import { countDropped } from './stats.js';

/** Records per INSERT (one statement of ten array parameters, whatever the count). */
const BATCH = 500;
/** How long `close()` keeps trying to write what is queued before counting it dropped. */
const CLOSE_MS = 5_000;
/** Index values are cut to this many characters, as the LMDB index does (log-index.ts). */
export const MAX_VALUE = 256;

export interface PgWriterOptions<P> {
  /** The bound of the queue (store.postgres.log_queue). */
  queueMax: number;
  flushMs: number;
  finish(entry: P): StoredLog;
  log: Logger;
}

const cut = (v: string | null): string | null => (v === null ? null : v.slice(0, MAX_VALUE));

/** Partitions this process knows to exist; a write for another day creates it first. */
export class PartitionCache {
  private readonly known = new Set<number>();
  constructor(private readonly pool: pg.Pool) {}

  async ensure(days: Iterable<number>): Promise<void> {
    const missing = [...new Set(days)].filter((d) => !this.known.has(d));
    if (missing.length === 0) return;
    await ensurePartitions(this.pool, missing);
    for (const d of missing) this.known.add(d);
  }

  /** Forgets them all (retention dropped some; a write re-creates what it needs). */
  reset(): void {
    this.known.clear();
  }
}

/** Writes records in one statement; a record already there (same id) is skipped. */
export async function insertLogs(pool: pg.Pool, partitions: PartitionCache, records: ReadonlyArray<StoredLog>): Promise<void> {
  if (records.length === 0) return;
  await partitions.ensure(records.map((r) => dayOf(Date.parse(r.created_at))));
  const cols: unknown[][] = [[], [], [], [], [], [], [], [], [], []];
  for (const r of records) {
    cols[0]!.push(r.id);
    cols[1]!.push(r.created_at);
    cols[2]!.push(r.workspace_id);
    cols[3]!.push(r.status);
    cols[4]!.push(cut(r.model));
    cols[5]!.push(cut(r.provider));
    cols[6]!.push(cut(r.api_key_id));
    cols[7]!.push(cut(r.trace_id));
    cols[8]!.push(JSON.stringify(r.metadata ?? {}));
    cols[9]!.push(JSON.stringify(r));
  }
  await pool.query(
    `INSERT INTO ${LOGS_TABLE} (id, created_at, workspace_id, status, model, provider, api_key_id, trace_id, metadata, record)
     SELECT * FROM unnest($1::text[], $2::timestamptz[], $3::text[], $4::int[], $5::text[], $6::text[], $7::text[], $8::text[], $9::jsonb[], $10::jsonb[])
     ON CONFLICT DO NOTHING`,
    cols,
  );
}

export function createPgLogWriter<P>(pool: pg.Pool, partitions: PartitionCache, options: PgWriterOptions<P>): LogWriter<P> {
  let queue: P[] = [];
  /** A built batch that could not be written because PostgreSQL was away: it goes first. */
  let retry: StoredLog[] = [];
  /** The batch being sent: still held in memory, so it counts against the bound. */
  let inflight = 0;
  let closed = false;
  let away = false;
  let draining: Promise<void> | undefined;
  const timer = setInterval(() => {
    if (draining === undefined) flush().catch((err: unknown) => options.log.error('log writer failed', { err }));
  }, options.flushMs);
  timer.unref();

  function build(entries: P[]): StoredLog[] {
    const out: StoredLog[] = [];
    for (const entry of entries) {
      try {
        out.push(options.finish(entry));
      } catch (err) {
        countDropped('build_failed');
        options.log.error('log record could not be built', { err });
      }
    }
    return out;
  }

  /** Writes batches until the queue is empty or PostgreSQL stops answering. */
  async function drain(): Promise<void> {
    while (retry.length > 0 || queue.length > 0) {
      const batch = retry.length > 0 ? retry : build(queue.splice(0, BATCH));
      retry = [];
      inflight = batch.length;
      try {
        await insertLogs(pool, partitions, batch);
        inflight = 0;
        if (away) options.log.info('postgres is back: queued log records are written', { queued: queue.length });
        away = false;
      } catch (err) {
        inflight = 0;
        if (isUnreachable(err)) {
          retry = batch;
          // One line when it starts (the queue and the drops are in the metrics).
          if (!away) options.log.warn('postgres unreachable: log records are queued in memory', { queued: queue.length + retry.length, error: (err as Error).message });
          away = true;
          return;
        }
        // A partition dropped meanwhile, a value PostgreSQL refuses: retrying would fail forever.
        partitions.reset();
        countDropped('write_failed', batch.length);
        options.log.error('log batch write failed', { records: batch.length, err });
      }
    }
  }

  function flush(): Promise<void> {
    // One drain at a time: batches go out in order. A flush during one waits for it, then drains the rest.
    const run = (draining ?? Promise.resolve()).catch(() => undefined).then(drain);
    const settled = run.finally(() => {
      if (draining === settled) draining = undefined;
    });
    draining = settled;
    return settled;
  }

  return {
    push(entry) {
      if (closed || queue.length + retry.length + inflight >= options.queueMax) {
        countDropped(closed ? 'closed' : 'queue_full');
        return false;
      }
      queue.push(entry);
      return true;
    },
    get queued() {
      return queue.length + retry.length + inflight;
    },
    flush,
    async close() {
      closed = true;
      clearInterval(timer);
      const deadline = Date.now() + CLOSE_MS;
      await flush();
      while ((retry.length > 0 || queue.length > 0) && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        await flush();
      }
      const lost = retry.length + queue.length;
      if (lost > 0) {
        countDropped('closed', lost);
        options.log.warn('postgres unreachable at shutdown: queued log records are lost', { records: lost });
      }
      queue = [];
      retry = [];
    },
  };
}
