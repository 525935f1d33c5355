/**
 * Versioned PostgreSQL migrations, run at start under an advisory lock so that one host migrates
 * while the others wait and then find the work done.
 *
 *   gateway_migrations(component, version, applied_at)   one row per applied step
 *
 * Each component (the control plane, the logs, the analytics…) keeps its own ordered list of
 * steps; step n (1-based) is applied once, in a transaction with its row, so a host killed mid-way
 * leaves either the whole step or none of it. Steps are append-only: never edit a shipped one.
 */
import type pg from 'pg';
import type { Logger } from '../../logger.js';

/** One migration step: SQL text, or a function given the transaction's client. */
export type MigrationStep = string | ((client: pg.PoolClient) => Promise<void>);

/** pg_advisory_lock key shared by every component's migrations (any constant unlikely to clash). */
const MIGRATION_LOCK = 0x6777_6d67; // "gwmg"

/**
 * Applies the steps of `component` that the database does not have yet. Refuses to run against
 * a database that is ahead of this gateway (a newer gateway migrated it).
 */
export async function runMigrations(pool: pg.Pool, component: string, steps: ReadonlyArray<MigrationStep>, log: Logger): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
    try {
      await client.query(
        'CREATE TABLE IF NOT EXISTS gateway_migrations (component text NOT NULL, version integer NOT NULL, applied_at timestamptz NOT NULL DEFAULT now(), PRIMARY KEY (component, version))',
      );
      const { rows } = await client.query<{ v: number | null }>('SELECT max(version) AS v FROM gateway_migrations WHERE component = $1', [component]);
      const current = rows[0]?.v ?? 0;
      if (current > steps.length) {
        throw new Error(`the PostgreSQL schema of ${component} is at version ${current}, newer than this gateway (${steps.length}); upgrade the gateway`);
      }
      for (let v = current; v < steps.length; v++) {
        const step = steps[v]!;
        await client.query('BEGIN');
        try {
          if (typeof step === 'string') await client.query(step);
          else await step(client);
          await client.query('INSERT INTO gateway_migrations (component, version) VALUES ($1, $2)', [component, v + 1]);
          await client.query('COMMIT');
        } catch (err) {
          await client.query('ROLLBACK').catch(() => undefined);
          throw err;
        }
      }
      if (current < steps.length) log.info('postgres migrated', { component, from: current, to: steps.length });
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]).catch(() => undefined);
    }
  } finally {
    client.release();
  }
}
