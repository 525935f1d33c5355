/**
 * The logging plugin's PostgreSQL schema (component `logs`), and the daily partitions of the
 * request log table.
 *
 *   gateway_logs            PARTITION BY RANGE (created_at), one partition per UTC day:
 *     gateway_logs_p20261125  FOR VALUES FROM ('2026-11-25') TO ('2026-11-26')
 *   gateway_feedback        feedback on traces (the analytics plugin counts it too)
 *   gateway_log_exports     export jobs
 *
 * The columns beside `record` (the whole record, jsonb) are the ones GET /v1/logs filters on, each
 * with an index that ends in `id`: a filtered page walks one index in id (= time) order. Ids are
 * UUIDv7 compared bytewise (COLLATE "C"), so a cursor is an id, exactly as in the LMDB driver.
 *
 * Partitions are created ahead of time (today and the next days) and on demand for a batch that
 * holds another day; retention drops whole partitions, never rows. Both take an advisory lock, so
 * hosts doing the same at once do not collide.
 */
import type pg from 'pg';
import type { MigrationStep } from '../../core/index.js';

export const COMPONENT = 'logs';
export const LOGS_TABLE = 'gateway_logs';
export const FEEDBACK_TABLE = 'gateway_feedback';
export const EXPORTS_TABLE = 'gateway_log_exports';

/** Append-only: never edit a shipped step (migrate.ts). */
export const LOG_MIGRATIONS: MigrationStep[] = [
  `CREATE TABLE ${LOGS_TABLE} (
     id text COLLATE "C" NOT NULL,
     created_at timestamptz NOT NULL,
     workspace_id text,
     status integer NOT NULL,
     model text,
     provider text,
     api_key_id text,
     trace_id text NOT NULL,
     metadata jsonb NOT NULL DEFAULT '{}'::jsonb,
     record jsonb NOT NULL,
     PRIMARY KEY (id, created_at)
   ) PARTITION BY RANGE (created_at);
   CREATE INDEX gateway_logs_workspace ON ${LOGS_TABLE} (workspace_id, id);
   CREATE INDEX gateway_logs_status ON ${LOGS_TABLE} (status, id);
   CREATE INDEX gateway_logs_model ON ${LOGS_TABLE} (model, id);
   CREATE INDEX gateway_logs_provider ON ${LOGS_TABLE} (provider, id);
   CREATE INDEX gateway_logs_api_key ON ${LOGS_TABLE} (api_key_id, id);
   CREATE INDEX gateway_logs_trace ON ${LOGS_TABLE} (trace_id, id);
   CREATE INDEX gateway_logs_metadata ON ${LOGS_TABLE} USING gin (metadata jsonb_path_ops);
   CREATE TABLE ${FEEDBACK_TABLE} (
     id text COLLATE "C" PRIMARY KEY,
     trace_id text NOT NULL,
     workspace_id text NOT NULL,
     value double precision NOT NULL,
     weight double precision NOT NULL,
     created_at timestamptz NOT NULL,
     record jsonb NOT NULL
   );
   CREATE INDEX gateway_feedback_trace ON ${FEEDBACK_TABLE} (workspace_id, trace_id);
   CREATE INDEX gateway_feedback_time ON ${FEEDBACK_TABLE} (created_at);
   CREATE TABLE ${EXPORTS_TABLE} (
     id text COLLATE "C" PRIMARY KEY,
     workspace_id text,
     record jsonb NOT NULL
   );`,
];

/** Serialises partition creation and retention across hosts (any constant unlikely to clash). */
const PARTITION_LOCK = 0x6777_6c70; // "gwlp"

export const DAY_MS = 86_400_000;

/** Days since the epoch (UTC) of a time in ms. */
export const dayOf = (ms: number): number => Math.floor(ms / DAY_MS);

/** `gateway_logs_p20261125` */
export function partitionName(day: number): string {
  return `${LOGS_TABLE}_p${new Date(day * DAY_MS).toISOString().slice(0, 10).replaceAll('-', '')}`;
}

/** The day of a partition name, or undefined for a table that is not one of ours. */
export function partitionDay(name: string): number | undefined {
  const m = /_p(\d{4})(\d{2})(\d{2})$/.exec(name);
  if (m === null || !name.startsWith(`${LOGS_TABLE}_p`)) return undefined;
  return dayOf(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])));
}

/** Creates the partitions of `days` that do not exist yet, in one transaction. */
export async function ensurePartitions(pool: pg.Pool, days: Iterable<number>): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    try {
      await client.query('SELECT pg_advisory_xact_lock($1)', [PARTITION_LOCK]);
      for (const day of new Set(days)) {
        const from = new Date(day * DAY_MS).toISOString();
        const to = new Date((day + 1) * DAY_MS).toISOString();
        await client.query(`CREATE TABLE IF NOT EXISTS ${partitionName(day)} PARTITION OF ${LOGS_TABLE} FOR VALUES FROM ('${from}') TO ('${to}')`);
      }
      await client.query('COMMIT');
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw err;
    }
  } finally {
    client.release();
  }
}

/** The days of the existing partitions. */
export async function partitionDays(pool: pg.Pool | pg.PoolClient): Promise<number[]> {
  const { rows } = await pool.query<{ name: string }>(
    `SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid JOIN pg_class p ON p.oid = i.inhparent WHERE p.relname = $1`,
    [LOGS_TABLE],
  );
  return rows.map((r) => partitionDay(r.name)).filter((d): d is number => d !== undefined).sort((a, b) => a - b);
}

/**
 * Drops every partition whose whole day ended before `cutoffMs`; returns the days dropped. A
 * record is kept at least `retention_days` and at most a day longer (its partition goes whole).
 */
export async function dropPartitionsBefore(pool: pg.Pool, cutoffMs: number): Promise<number[]> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    try {
      await client.query('SELECT pg_advisory_xact_lock($1)', [PARTITION_LOCK]);
      const dropped: number[] = [];
      for (const day of await partitionDays(client)) {
        if ((day + 1) * DAY_MS > cutoffMs) continue;
        await client.query(`DROP TABLE IF EXISTS ${partitionName(day)}`);
        dropped.push(day);
      }
      await client.query('COMMIT');
      return dropped;
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw err;
    }
  } finally {
    client.release();
  }
}
