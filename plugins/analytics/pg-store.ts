/**
 * The distributed driver of analytics (store.ts): rollups in PostgreSQL, added to by every host.
 *
 *   gateway_analytics   one row per [tier, workspace, minute, provider, model, status, cache,
 *                       api key, metadata]; tier 'm' (minutes) or 'h' (hours, keyed by the first minute)
 *
 * Each host folds its requests in memory (rollup.ts) and every flush_ms sends one additive upsert
 * for the whole flush: `INSERT … ON CONFLICT DO UPDATE SET requests = requests + excluded.requests, …`.
 * Counts add up whatever the order and however many hosts write; the sparse parts (the latency
 * histogram, retries, per-user counts, guardrail verdicts by check) are jsonb maps added key by
 * key (`gateway_jsonb_add`).
 * So a read through any host sums over all of them.
 *
 * While PostgreSQL is away a flush is kept (merged with the next ones, bounded) and sent when it
 * is back: the hot path never waits for it. A flush whose commit succeeded but whose answer was
 * lost would be added twice; that window is one round trip.
 */
import type pg from 'pg';
import { runMigrations, type Distributed, type Logger, type MigrationStep } from '../../core/index.js';
import { emptyBucket, emptyUsers, mergeBucket, mergeUsers, type Bucket, type BucketKey, type UserCounts } from './bucket.js';
import { guardrailsFromMap, guardrailsToMap } from './guardrail-counts.js';
import { countFeedback } from './feedback.js';
import { matcher, segments, type Query, type Scanner, type Series } from './query.js';
import { hourOf, type PendingBucket, type RollupWrite } from './rollup.js';
import { oldestMinute } from './retention.js';
import type { AnalyticsOptions } from './schema.js';
import type { AnalyticsStore } from './store.js';
import { AnalyticsErrors } from './errors.js';

const COMPONENT = 'analytics';
const TABLE = 'gateway_analytics';
/** The logging plugin's feedback table (its `logs` migrations create it; absent: no feedback). */
const FEEDBACK_TABLE = 'gateway_feedback';
/** Rows kept while PostgreSQL is away; past it the kept counts are dropped (and said so). */
const MAX_CARRY = 200_000;
const RETENTION_EVERY_MS = 60 * 60_000;
/** How soon counts kept through an outage are sent again when no flush comes first. */
const RETRY_MS = 1_000;

/** Append-only: never edit a shipped step. (Exported for the upgrade test, which stops at an older step.) */
export const MIGRATIONS: readonly MigrationStep[] = [
  // a + b key by key. Walks only b (a flush's few keys) and overwrites them in a: the stored map
  // is never unpacked, so the cost of an upsert does not grow with the row's history.
  `CREATE FUNCTION gateway_jsonb_add(a jsonb, b jsonb) RETURNS jsonb LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
     SELECT coalesce(a, '{}'::jsonb) || coalesce(
       (SELECT jsonb_object_agg(key, value::numeric + coalesce((a ->> key)::numeric, 0)) FROM jsonb_each_text(b)),
       '{}'::jsonb)
   $$;
   CREATE TABLE ${TABLE} (
     tier text NOT NULL,
     workspace_id text NOT NULL,
     minute integer NOT NULL,
     provider text NOT NULL,
     model text NOT NULL,
     status integer NOT NULL,
     cache text NOT NULL,
     api_key text NOT NULL,
     metadata text NOT NULL,
     requests double precision NOT NULL,
     errors double precision NOT NULL,
     cost double precision NOT NULL,
     prompt_tokens double precision NOT NULL,
     completion_tokens double precision NOT NULL,
     latency_ms double precision NOT NULL,
     fallback double precision NOT NULL,
     last_at double precision NOT NULL,
     hist jsonb NOT NULL,
     retried jsonb NOT NULL,
     user_requests jsonb NOT NULL,
     user_cost jsonb NOT NULL,
     users_over double precision NOT NULL,
     PRIMARY KEY (tier, workspace_id, minute, provider, model, status, cache, api_key, metadata)
   );
   CREATE INDEX gateway_analytics_time ON ${TABLE} (tier, minute);`,
  // Guardrail verdicts by check (guardrail-counts.ts), `{"<check id>:<phase>:<verdict>": n, "denied": n}`,
  // added key by key like the other maps. A constant default: no table rewrite (PostgreSQL ≥ 11),
  // and hosts not upgraded yet keep inserting and adding rows without naming the column.
  `ALTER TABLE ${TABLE} ADD COLUMN guardrails jsonb NOT NULL DEFAULT '{}'::jsonb;`,
];

interface Row {
  tier: 'm' | 'h';
  key: BucketKey;
  bucket: Bucket;
  users: UserCounts;
}

const rowId = (tier: string, key: BucketKey): string => `${tier}${JSON.stringify(key)}`;

/** Adds a flush's buckets to `rows`, each to its minute row and its hour row (fresh copies). */
function addRows(rows: Map<string, Row>, batch: ReadonlyArray<PendingBucket | Row>): void {
  for (const entry of batch) {
    const tiers: Array<['m' | 'h', BucketKey]> =
      'tier' in entry ? [[entry.tier, entry.key]] : [['m', entry.key], ['h', [entry.key[0], hourOf(entry.key[1]), ...entry.key.slice(2)] as BucketKey]];
    for (const [tier, key] of tiers) {
      const id = rowId(tier, key);
      let row = rows.get(id);
      if (row === undefined) rows.set(id, (row = { tier, key, bucket: emptyBucket(), users: emptyUsers() }));
      mergeBucket(row.bucket, entry.bucket);
      mergeUsers(row.users, entry.users);
    }
  }
}

/** `[bin, count, …]` ⇄ `{"bin": count}` */
function pairsToMap(pairs: number[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (let i = 0; i < pairs.length; i += 2) out[String(pairs[i])] = (out[String(pairs[i])] ?? 0) + pairs[i + 1]!;
  return out;
}
function mapToPairs(map: Record<string, number | string>): number[] {
  const out: number[] = [];
  for (const [k, v] of Object.entries(map)) out.push(Number(k), Number(v));
  return out;
}

const COLUMNS = 'tier, workspace_id, minute, provider, model, status, cache, api_key, metadata, requests, errors, cost, prompt_tokens, completion_tokens, latency_ms, fallback, last_at, hist, retried, user_requests, user_cost, users_over, guardrails';
const TYPES = ['text', 'text', 'int', 'text', 'text', 'int', 'text', 'text', 'text', 'float8', 'float8', 'float8', 'float8', 'float8', 'float8', 'float8', 'float8', 'jsonb', 'jsonb', 'jsonb', 'jsonb', 'float8', 'jsonb'];
const ADDITIVE = ['requests', 'errors', 'cost', 'prompt_tokens', 'completion_tokens', 'latency_ms', 'fallback', 'users_over'];
const MAPS = ['hist', 'retried', 'user_requests', 'user_cost', 'guardrails'];

const UPSERT = `INSERT INTO ${TABLE} AS t (${COLUMNS})
  SELECT * FROM unnest(${TYPES.map((type, i) => `$${i + 1}::${type}[]`).join(', ')})
  ON CONFLICT (tier, workspace_id, minute, provider, model, status, cache, api_key, metadata) DO UPDATE SET
  ${[
    ...ADDITIVE.map((c) => `${c} = t.${c} + excluded.${c}`),
    'last_at = GREATEST(t.last_at, excluded.last_at)',
    ...MAPS.map((c) => `${c} = gateway_jsonb_add(t.${c}, excluded.${c})`),
  ].join(', ')}`;

async function upsert(pool: pg.Pool, rows: Row[]): Promise<void> {
  // Every host sends its rows in key order: concurrent upserts lock rows in the same order.
  rows.sort((a, b) => (rowId(a.tier, a.key) < rowId(b.tier, b.key) ? -1 : 1));
  const cols: unknown[][] = TYPES.map(() => []);
  for (const { tier, key, bucket: b, users: u } of rows) {
    const userRequests: Record<string, number> = {};
    const userCost: Record<string, number> = {};
    u.names.forEach((name, i) => {
      userRequests[name] = u.requests[i]!;
      userCost[name] = u.cost[i]!;
    });
    const values: unknown[] = [
      tier, ...key,
      b.requests, b.errors, b.cost, b.prompt_tokens, b.completion_tokens, b.latency_ms, b.fallback, b.last_at,
      JSON.stringify(pairsToMap(b.hist)), JSON.stringify(pairsToMap(b.retried)), JSON.stringify(userRequests), JSON.stringify(userCost), u.over,
      JSON.stringify(guardrailsToMap(b.guardrails)),
    ];
    values.forEach((v, i) => cols[i]!.push(v));
  }
  await pool.query(UPSERT, cols);
}

/** Failures worth keeping the counts for: the server away, or a lock conflict with another host. */
function isRetryable(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && (/^(08|53|57|58)/.test(code) || code === '40P01' || code === '40001' || code.startsWith('E'))) return true;
  return /Connection terminated|connection timeout|timeout exceeded when trying to connect|Client has encountered a connection error/i.test(err instanceof Error ? err.message : '');
}

function pgWrite(pool: pg.Pool, log: Logger): RollupWrite {
  let carry = new Map<string, Row>();
  let chain: Promise<void> = Promise.resolve();
  let away = false;
  async function send(batch: PendingBucket[]): Promise<void> {
    const rows = carry;
    carry = new Map();
    addRows(rows, batch);
    if (rows.size === 0) return;
    try {
      await upsert(pool, [...rows.values()]);
      if (away) log.info('postgres is back: analytics counts kept meanwhile are written', { rows: rows.size });
      away = false;
    } catch (err) {
      if (!isRetryable(err)) throw err;
      if (rows.size > MAX_CARRY) {
        log.error('postgres unreachable too long: analytics counts kept meanwhile are lost', { rows: rows.size });
        return;
      }
      if (!away) log.warn('postgres unreachable: analytics counts are kept in memory', { rows: rows.size, error: (err as Error).message });
      away = true;
      carry = rows;
      // Sent with the next flush, or by this retry when no traffic brings one.
      if (retry === undefined) {
        retry = setTimeout(() => {
          retry = undefined;
          write([]).catch((err: unknown) => log.error('analytics flush failed; these counts are lost', { err }));
        }, RETRY_MS);
        retry.unref();
      }
    }
  }
  let retry: NodeJS.Timeout | undefined;
  const write: RollupWrite = (batch) => {
    // One upsert at a time, so the counts kept through an outage merge with the next flush.
    const run = chain.then(() => send(batch));
    chain = run.catch(() => undefined);
    return run;
  };
  return write;
}

/** A read; an unreachable server is a 503 with a stable code. */
async function read<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    if (isRetryable(err) && (err as { code?: string }).code !== '40P01') throw AnalyticsErrors.unavailable(undefined, { cause: err });
    throw err;
  }
}

type RowOf<T> = T & { workspace_id: string; minute: number; provider: string; model: string; status: number; cache: string; api_key: string; metadata: string };
const keyOf = (r: RowOf<object>): BucketKey => [r.workspace_id, r.minute, r.provider, r.model, r.status, r.cache, r.api_key, r.metadata];

type BucketRow = RowOf<{ requests: number; errors: number; cost: number; prompt_tokens: number; completion_tokens: number; latency_ms: number; fallback: number; last_at: number; hist: Record<string, number>; retried: Record<string, number>; guardrails: Record<string, number> }>;
type UserRow = RowOf<{ user_requests: Record<string, number>; user_cost: Record<string, number>; users_over: number }>;

/** The rows of a query's segments (minutes, hours) in its workspaces, as [value, key] pairs. */
async function load<R extends RowOf<object>, V>(pool: pg.Pool, q: Query, oldest: number, columns: string, extra: string, toValue: (row: R) => V): Promise<Scanner<V>> {
  const out: Array<[V, BucketKey]> = [];
  for (const s of segments(q.from, q.to, q.step, oldest)) {
    const params: unknown[] = [s.db === 'minutes' ? 'm' : 'h', s.from, s.to];
    // MCP call rows (provider `mcp:<server>`) only for /groups/mcp, never for the others (the matcher checks it too).
    const mcp = q.filters.mcp === true ? "AND provider LIKE 'mcp:%'" : "AND provider NOT LIKE 'mcp:%'";
    let sql = `SELECT workspace_id, minute, provider, model, status, cache, api_key, metadata, ${columns} FROM ${TABLE} WHERE tier = $1 AND minute >= $2 AND minute < $3 ${mcp} ${extra}`;
    if (q.workspaces !== null) {
      params.push(q.workspaces);
      sql += ' AND workspace_id = ANY($4::text[])';
    }
    const { rows } = await read(() => pool.query<R>(sql, params));
    for (const row of rows) out.push([toValue(row), keyOf(row)]);
  }
  const matches = matcher(q.filters);
  return (visit) => {
    for (const [value, key] of out) if (matches(key)) visit(value, key);
  };
}

export async function openPgStore(distributed: Distributed, options: AnalyticsOptions, oldestMinuteNow: () => number, log: Logger): Promise<AnalyticsStore> {
  const pool = distributed.pg;
  await runMigrations(pool, COMPONENT, MIGRATIONS, log);
  return {
    write: pgWrite(pool, log),
    buckets: (q) =>
      load<BucketRow, Bucket>(pool, q, oldestMinuteNow(), 'requests, errors, cost, prompt_tokens, completion_tokens, latency_ms, fallback, last_at, hist, retried, guardrails', '', (r) => {
        const bucket: Bucket = {
          requests: r.requests,
          errors: r.errors,
          cost: r.cost,
          prompt_tokens: r.prompt_tokens,
          completion_tokens: r.completion_tokens,
          latency_ms: r.latency_ms,
          hist: mapToPairs(r.hist),
          retried: mapToPairs(r.retried),
          fallback: r.fallback,
          last_at: r.last_at,
        };
        // As in LMDB: no field for a row none of whose requests had guardrails.
        const guardrails = guardrailsFromMap(r.guardrails);
        if (guardrails !== undefined) bucket.guardrails = guardrails;
        return bucket;
      }),
    users: (q) =>
      load<UserRow, UserCounts>(pool, q, oldestMinuteNow(), 'user_requests, user_cost, users_over', "AND (user_requests <> '{}'::jsonb OR users_over > 0)", (r) => {
        const names = Object.keys(r.user_requests);
        return { names, requests: names.map((n) => Number(r.user_requests[n])), cost: names.map((n) => Number(r.user_cost[n] ?? 0)), over: r.users_over };
      }),
    async feedback(q): Promise<Series<{ total: number }>> {
      const params: unknown[] = [new Date(q.from * 60_000).toISOString(), new Date(q.to * 60_000).toISOString()];
      let sql = `SELECT workspace_id, created_at FROM ${FEEDBACK_TABLE} WHERE created_at >= $1 AND created_at < $2`;
      if (q.workspaces !== null) {
        params.push(q.workspaces);
        sql += ' AND workspace_id = ANY($3::text[])';
      }
      try {
        const { rows } = await read(() => pool.query<{ workspace_id: string; created_at: Date }>(sql, params));
        return countFeedback(rows.map((r) => ({ workspace_id: r.workspace_id, created_at: r.created_at.toISOString() })), q);
      } catch (err) {
        // No logging plugin, so no feedback table: no feedback, as with an absent LMDB database.
        if ((err as { code?: string }).code === '42P01') return countFeedback([], q);
        throw err;
      }
    },
    startRetention() {
      const run = (): void => {
        pool
          .query(`DELETE FROM ${TABLE} WHERE (tier = 'm' AND minute < $1) OR (tier = 'h' AND minute < $2)`, [
            oldestMinute(options.minute_retention_days),
            oldestMinute(options.hour_retention_days),
          ])
          .catch((err: unknown) => log.warn('analytics retention failed; retrying later', { error: (err as Error).message }));
      };
      const timer = setInterval(run, RETENTION_EVERY_MS);
      timer.unref();
      return () => clearInterval(timer);
    },
  };
}
