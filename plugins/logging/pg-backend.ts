/**
 * The distributed driver of the logging plugin's storage (backend.ts): request logs, custom logs,
 * export jobs and feedback in PostgreSQL, shared by every host, so a record written through one
 * host is read through any other.
 *
 *   setup ─▶ runMigrations('logs') ─▶ partitions for yesterday … in two days ─▶ retention
 *   every hour: the partitions ahead are created, those past retention_days dropped whole
 *
 * Reads answer the LMDB driver's shapes: the list is newest first by id with an id cursor, its
 * `total` counted up to TOTAL_BOUND past the page (exact below it, a lower bound at it), its filters the same
 * (log-filters.ts) done in SQL; exports walk the same terms in id order and run the same
 * predicate on each record. `max_records` is an LMDB bound: here retention is by age only.
 */
import type pg from 'pg';
import { AdminErrors, runMigrations, type Distributed, type Records } from '../../core/index.js';
import type { ExportStore, FeedbackStore, LogBackend, LogStore } from './backend.js';
import type { BackendOptions } from './lmdb-backend.js';
import type { StoredLog } from './log-db.js';
import { logFilter, metadataPairs, type LogListQuery } from './log-filters.js';
import { INDEXED } from './log-index.js';
import { TOTAL_BOUND, type LogPage } from './log-list.js';
import type { LogQuery, Term } from './log-query.js';
import { LoggingErrors } from './errors.js';
import type { ExportRecord } from './export-store.js';
import type { FeedbackRecord } from './feedback.js';
import { pgCall } from './pg-errors.js';
import { COMPONENT, DAY_MS, dayOf, dropPartitionsBefore, EXPORTS_TABLE, FEEDBACK_TABLE, LOG_MIGRATIONS, LOGS_TABLE } from './pg-schema.js';
import { createPgLogWriter, insertLogs, MAX_VALUE, PartitionCache } from './pg-writer.js';
import { ID_SLACK_MS } from './scan.js';

/** How often partitions ahead are created and old ones dropped. */
const MAINTAIN_EVERY_MS = 60 * 60_000;
/** Partitions kept ready before and after today. */
const DAYS_BEHIND = 1;
const DAYS_AHEAD = 2;
/** Rows per read of an export walk. */
const WALK_CHUNK = 1_000;

const COLUMN: Record<string, string> = {
  [INDEXED.workspace]: 'workspace_id',
  [INDEXED.status]: 'status',
  [INDEXED.model]: 'model',
  [INDEXED.provider]: 'provider',
  [INDEXED.api_key_id]: 'api_key_id',
  [INDEXED.trace_id]: 'trace_id',
};

/** A WHERE clause built up with numbered parameters. */
class Where {
  readonly params: unknown[] = [];
  private readonly parts: string[] = [];
  add(sql: (p: string) => string, value: unknown): void {
    this.params.push(value);
    this.parts.push(sql(`$${this.params.length}`));
  }
  term(t: Term): void {
    const column = COLUMN[t.field]!;
    if (column === 'status') this.add((p) => `status = ANY(${p}::int[])`, t.values.map(Number));
    else this.add((p) => `${column} = ANY(${p}::text[])`, t.values.map((v) => v.slice(0, MAX_VALUE)));
  }
  get sql(): string {
    return this.parts.length === 0 ? '' : `WHERE ${this.parts.join(' AND ')}`;
  }
}

/** The creation time (ms) a UUIDv7 carries, or undefined for anything else. */
function idTime(id: string): number | undefined {
  const m = /^([0-9a-f]{8})-([0-9a-f]{4})-7/i.exec(id);
  return m === null ? undefined : parseInt(m[1]! + m[2]!, 16);
}

export function pgLogStore(pool: pg.Pool, partitions: PartitionCache): LogStore {
  return {
    get: (id) =>
      pgCall(async () => {
        const at = idTime(id);
        // The id's time bounds the partitions read (one, or two around midnight).
        const { rows } =
          at === undefined
            ? await pool.query<{ record: StoredLog }>(`SELECT record FROM ${LOGS_TABLE} WHERE id = $1`, [id])
            : await pool.query<{ record: StoredLog }>(`SELECT record FROM ${LOGS_TABLE} WHERE id = $1 AND created_at BETWEEN $2 AND $3`, [
                id,
                new Date(at - ID_SLACK_MS).toISOString(),
                new Date(at + ID_SLACK_MS).toISOString(),
              ]);
        return rows[0]?.record;
      }),

    list: (query: LogListQuery, workspace: Records.Workspace | null): Promise<LogPage> => {
      // Validates like the LMDB driver (a bad time range or metadata is the same 400).
      const filter = logFilter(query, workspace);
      const pairs = query.metadata === undefined ? [] : metadataPairs(query.metadata, 'metadata');
      const w = new Where();
      for (const t of filter.terms) w.term(t);
      if (filter.fromMs !== undefined) w.add((p) => `created_at >= ${p}`, new Date(filter.fromMs).toISOString());
      if (filter.toMs !== undefined) w.add((p) => `created_at <= ${p}`, new Date(filter.toMs).toISOString());
      if (pairs.length > 0) w.add((p) => `metadata @> ${p}::jsonb`, JSON.stringify(Object.fromEntries(pairs)));
      // No columns of their own: read from the record, within what the indexed columns select.
      if (filter.virtualKey !== undefined) w.add((p) => `record->>'virtual_key' = ${p}`, filter.virtualKey);
      if (filter.configs !== undefined) w.add((p) => `record->>'config' = ANY(${p}::text[])`, filter.configs);
      if (filter.routes !== undefined) w.add((p) => `record->>'route' = ANY(${p}::text[])`, filter.routes);
      if (filter.mcpServer !== undefined) w.add((p) => `record->'mcp'->>'server' = ${p}`, filter.mcpServer);
      if (filter.mcpTool !== undefined) w.add((p) => `record->'mcp'->>'tool' = ${p}`, filter.mcpTool);
      if (filter.promptSlug !== undefined) w.add((p) => `record->>'prompt_slug' = ${p}`, filter.promptSlug);
      if (query.cursor !== undefined) w.add((p) => `id < ${p}`, query.cursor);
      const offset = query.current_page * query.page_size;
      const pageEnd = offset + query.page_size;
      // As the LMDB walk does: counted up to TOTAL_BOUND past the page, exact below that.
      const bound = pageEnd + TOTAL_BOUND;
      return pgCall(async () => {
        const n = w.params.length;
        // One statement, so the page and the count see the same snapshot (a batch committed
        // between two queries would make them disagree).
        const { rows } = await pool.query<{ total: number; data: StoredLog[] }>(
          `WITH page AS (SELECT id, record FROM ${LOGS_TABLE} ${w.sql} ORDER BY id DESC LIMIT $${n + 1} OFFSET $${n + 2}),
                counted AS (SELECT count(*)::int AS n FROM (SELECT 1 FROM ${LOGS_TABLE} ${w.sql} LIMIT $${n + 3}) s)
           SELECT (SELECT n FROM counted) AS total, coalesce((SELECT jsonb_agg(record ORDER BY id DESC) FROM page), '[]'::jsonb) AS data`,
          [...w.params, query.page_size, offset, bound],
        );
        const data = rows[0]?.data ?? [];
        const total = rows[0]?.total ?? 0;
        const hasMore = total > pageEnd;
        const last = data[data.length - 1];
        return {
          object: 'list',
          total,
          total_exact: total < bound,
          has_more: hasMore,
          next_cursor: hasMore && last !== undefined ? last.id : null,
          data,
        };
      });
    },

    async *walk(q: LogQuery): AsyncGenerator<StoredLog[]> {
      let cursor: string | undefined;
      for (;;) {
        if (q.signal?.aborted) return;
        const w = new Where();
        for (const t of q.terms) w.term(t);
        if (q.workspaceId !== undefined) w.add((p) => `workspace_id = ${p}`, q.workspaceId);
        if (q.low !== undefined) w.add((p) => `id > ${p}`, q.low);
        if (q.high !== undefined) w.add((p) => `id < ${p}`, q.high);
        if (cursor !== undefined) w.add((p) => (q.newestFirst ? `id < ${p}` : `id > ${p}`), cursor);
        const { rows } = await pgCall(() =>
          pool.query<{ record: StoredLog }>(`SELECT record FROM ${LOGS_TABLE} ${w.sql} ORDER BY id ${q.newestFirst ? 'DESC' : 'ASC'} LIMIT ${WALK_CHUNK}`, w.params),
        );
        const out: StoredLog[] = [];
        for (const { record } of rows) {
          cursor = record.id;
          if (q.match(record)) out.push(record);
        }
        if (out.length > 0) yield out;
        if (rows.length < WALK_CHUNK) return;
      }
    },

    insert: (records) => pgCall(() => insertLogs(pool, partitions, records)),
  };
}

export function pgExportStore(pool: pg.Pool): ExportStore {
  const put = (client: pg.Pool | pg.PoolClient, e: ExportRecord): Promise<unknown> =>
    client.query(`INSERT INTO ${EXPORTS_TABLE} (id, workspace_id, record) VALUES ($1, $2, $3) ON CONFLICT (id) DO UPDATE SET workspace_id = excluded.workspace_id, record = excluded.record`, [
      e.id,
      e.workspace_id,
      JSON.stringify(e),
    ]);
  return {
    get: (id) =>
      pgCall(async () => (await pool.query<{ record: ExportRecord }>(`SELECT record FROM ${EXPORTS_TABLE} WHERE id = $1`, [id])).rows[0]?.record),
    put: (e) => pgCall(async () => void (await put(pool, e))),
    list: (workspaceId, offset, limit) =>
      pgCall(async () => {
        const where = workspaceId === null ? '' : 'WHERE workspace_id = $3';
        const params = workspaceId === null ? [limit, offset] : [limit, offset, workspaceId];
        const [page, count] = await Promise.all([
          pool.query<{ record: ExportRecord }>(`SELECT record FROM ${EXPORTS_TABLE} ${where} ORDER BY id DESC LIMIT $1 OFFSET $2`, params),
          pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${EXPORTS_TABLE} ${workspaceId === null ? '' : 'WHERE workspace_id = $1'}`, workspaceId === null ? [] : [workspaceId]),
        ]);
        return { total: count.rows[0]?.n ?? 0, data: page.rows.map((r) => r.record) };
      }),
    transition: (id, t) =>
      pgCall(async () => {
        // Read-check-write under the row's lock: a cancel and a finishing run cannot both win.
        const client = await pool.connect();
        try {
          await client.query('BEGIN');
          try {
            const current = (await client.query<{ record: ExportRecord }>(`SELECT record FROM ${EXPORTS_TABLE} WHERE id = $1 FOR UPDATE`, [id])).rows[0]?.record;
            if (current === undefined) throw AdminErrors.notFound('The export does not exist.');
            if (!t.from.includes(current.status)) throw LoggingErrors.exportState(current.status, t.action);
            const next: ExportRecord = { ...current, ...t.change(current), id, last_updated_at: new Date().toISOString() };
            await put(client, next);
            await client.query('COMMIT');
            return next;
          } catch (err) {
            await client.query('ROLLBACK').catch(() => undefined);
            throw err;
          }
        } finally {
          client.release();
        }
      }),
  };
}

export function pgFeedbackStore(pool: pg.Pool): FeedbackStore {
  return {
    get: (id) =>
      pgCall(async () => (await pool.query<{ record: FeedbackRecord }>(`SELECT record FROM ${FEEDBACK_TABLE} WHERE id = $1`, [id])).rows[0]?.record),
    put: (r) =>
      pgCall(async () => {
        await pool.query(
          `INSERT INTO ${FEEDBACK_TABLE} (id, trace_id, workspace_id, value, weight, created_at, record) VALUES ($1, $2, $3, $4, $5, $6, $7)
           ON CONFLICT (id) DO UPDATE SET trace_id = excluded.trace_id, value = excluded.value, weight = excluded.weight, record = excluded.record`,
          [r.id, r.trace_id, r.workspace_id, r.value, r.weight, r.created_at, JSON.stringify(r)],
        );
      }),
    weightedByTrace: (workspaceId) =>
      pgCall(async () => {
        const { rows } = await pool.query<{ trace_id: string; score: number }>(
          `SELECT trace_id, avg(value * weight) AS score FROM ${FEEDBACK_TABLE} WHERE $1::text IS NULL OR workspace_id = $1 GROUP BY trace_id`,
          [workspaceId],
        );
        return new Map(rows.map((r) => [r.trace_id, Number(r.score)]));
      }),
  };
}

/** Creates the partitions ahead and drops those past retention; logs what it did. */
async function maintain(pool: pg.Pool, partitions: PartitionCache, retentionDays: number, options: BackendOptions<unknown>): Promise<void> {
  const today = dayOf(Date.now());
  const days: number[] = [];
  for (let d = today - DAYS_BEHIND; d <= today + DAYS_AHEAD; d++) days.push(d);
  await partitions.ensure(days);
  const dropped = await dropPartitionsBefore(pool, Date.now() - retentionDays * DAY_MS);
  if (dropped.length > 0) {
    partitions.reset();
    options.log.info('log retention dropped partitions', { days: dropped.length, oldest: new Date(dropped[0]! * DAY_MS).toISOString().slice(0, 10) });
  }
}

export async function openPgBackend<P>(distributed: Distributed, options: BackendOptions<P>): Promise<LogBackend<P>> {
  const pool = distributed.pg;
  await runMigrations(pool, COMPONENT, LOG_MIGRATIONS, options.log);
  const partitions = new PartitionCache(pool);
  const opts = options as unknown as BackendOptions<unknown>;
  await maintain(pool, partitions, options.retentionDays, opts);
  let maintaining: Promise<void> = Promise.resolve();
  const timer = setInterval(() => {
    maintaining = maintain(pool, partitions, options.retentionDays, opts).catch((err: unknown) =>
      options.log.warn('log partition maintenance failed; retrying later', { error: (err as Error).message }),
    );
  }, MAINTAIN_EVERY_MS);
  timer.unref();
  const writer = createPgLogWriter<P>(pool, partitions, {
    queueMax: distributed.postgresConfig.log_queue,
    flushMs: options.flushMs,
    finish: options.finish,
    log: options.log,
  });
  return {
    logs: pgLogStore(pool, partitions),
    exports: pgExportStore(pool),
    feedback: pgFeedbackStore(pool),
    writer,
    async close() {
      clearInterval(timer);
      await maintaining;
      await writer.close();
    },
  };
}
