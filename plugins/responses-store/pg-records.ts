/**
 * Kept responses in PostgreSQL (distributed mode), one table every host reads and writes:
 *
 *   gateway_responses   id (primary key), workspace_id, expires_at (indexed for sweeps), record jsonb
 *
 * A conversation started on one host continues on any other. A write is not awaited on the hot
 * path; until it commits the record is also held in memory, so this host finds it at once (another
 * host finds it once the INSERT committed, a few milliseconds after the answer). Sweeps delete in
 * batches; hosts sweeping at once just find less to do.
 */
import type pg from 'pg';
import { runMigrations, type Logger, type MigrationStep } from '../../core/index.js';
import { ResponsesStoreErrors } from './errors.js';
import { SWEEP_BATCH, type KeptResponse, type KeptResponses } from './records.js';

const TABLE = 'gateway_responses';

/** Append-only: never edit a shipped step. */
const MIGRATIONS: MigrationStep[] = [
  `CREATE TABLE ${TABLE} (
     id text COLLATE "C" PRIMARY KEY,
     workspace_id text NOT NULL,
     expires_at timestamptz NOT NULL,
     record jsonb NOT NULL
   );
   CREATE INDEX gateway_responses_expiry ON ${TABLE} (expires_at);`,
];

export async function openPgResponses(pool: pg.Pool, log: Logger): Promise<KeptResponses> {
  await runMigrations(pool, 'responses', MIGRATIONS, log);
  const pending = new Map<string, KeptResponse>();

  /** PostgreSQL unreachable: a 503 the caller can retry, never a half-read conversation. */
  async function query<T extends pg.QueryResultRow>(sql: string, params: unknown[]): Promise<pg.QueryResult<T>> {
    try {
      return await pool.query<T>(sql, params);
    } catch (err) {
      throw ResponsesStoreErrors.unavailable(undefined, { cause: err });
    }
  }

  return {
    async find(id) {
      if (id.length === 0 || id.length > 256) return undefined;
      const held = pending.get(id);
      if (held !== undefined) return held.expires_at > Date.now() ? held : undefined;
      const { rows } = await query<{ record: KeptResponse }>(`SELECT record FROM ${TABLE} WHERE id = $1 AND expires_at > now()`, [id]);
      return rows[0]?.record;
    },
    put(record) {
      pending.set(record.id, record);
      pool
        .query(
          `INSERT INTO ${TABLE} (id, workspace_id, expires_at, record) VALUES ($1, $2, $3, $4)
           ON CONFLICT (id) DO UPDATE SET workspace_id = excluded.workspace_id, expires_at = excluded.expires_at, record = excluded.record`,
          [record.id, record.workspace_id, new Date(record.expires_at), record],
        )
        .catch((err: unknown) => log.warn('response not kept: PostgreSQL write failed', { response_id: record.id, err }))
        .finally(() => {
          if (pending.get(record.id) === record) pending.delete(record.id);
        });
    },
    async delete(record) {
      pending.delete(record.id);
      await query(`DELETE FROM ${TABLE} WHERE id = $1`, [record.id]);
    },
    async sweep() {
      const { rowCount } = await pool.query(`DELETE FROM ${TABLE} WHERE id IN (SELECT id FROM ${TABLE} WHERE expires_at <= now() LIMIT $1)`, [SWEEP_BATCH]);
      return rowCount ?? 0;
    },
  };
}
