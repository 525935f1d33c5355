/**
 * The control plane's PostgreSQL schema (migration component `control-plane`), and the names the
 * replica and the change feed share.
 *
 *   gw_records(collection, id, data json NULL, seq)   one row per record; data NULL = deleted
 *   gw_records_seq                                     every write takes a fresh seq
 *   gw_control_plane(cluster_id, horizon)              which database a replica was loaded from;
 *                                                      tombstones up to `horizon` were purged
 *
 * `data` is `json`, not `jsonb`: json keeps the text as written, and it accepts a `\u0000` in a
 * string (jsonb refuses it), so no record a host can store locally is refused by PostgreSQL.
 * Steps are append-only (see migrate.ts).
 */
import type { MigrationStep } from './migrate.js';

export const CONTROL_PLANE_COMPONENT = 'control-plane';

export const CONTROL_PLANE_STEPS: ReadonlyArray<MigrationStep> = [
  `CREATE SEQUENCE gw_records_seq AS bigint;
   CREATE TABLE gw_records (
     collection text NOT NULL,
     id text NOT NULL,
     data json,
     seq bigint NOT NULL,
     PRIMARY KEY (collection, id)
   );
   CREATE INDEX gw_records_by_seq ON gw_records (seq);
   CREATE TABLE gw_control_plane (one boolean PRIMARY KEY DEFAULT true CHECK (one), cluster_id text NOT NULL);
   INSERT INTO gw_control_plane (cluster_id) VALUES (gen_random_uuid()::text);`,
  // Tombstones are purged after a while (a deleted audit record would otherwise leave a row for
  // ever); a replica whose seq is below the horizon may have missed a purged delete and reloads.
  `ALTER TABLE gw_records ADD COLUMN changed_at timestamptz NOT NULL DEFAULT now();
   CREATE INDEX gw_records_tombstones ON gw_records (changed_at) WHERE data IS NULL;
   ALTER TABLE gw_control_plane ADD COLUMN horizon bigint NOT NULL DEFAULT 0;`,
];

/** LISTEN/NOTIFY channel of the change feed; the payload is the highest seq of the commit. */
export const CONTROL_PLANE_CHANNEL = 'gw_control_plane';

/** pg_advisory_xact_lock key that serializes every control-plane write of every host ("gwcp"). */
export const CONTROL_PLANE_WRITE_LOCK = 0x6777_6370;

/** Inserts or replaces records, each with the next seq, and returns the seqs taken. */
export const UPSERT_RECORDS = `
  INSERT INTO gw_records (collection, id, data, seq)
  SELECT u.c, u.i, u.d::json, nextval('gw_records_seq')
  FROM unnest($1::text[], $2::text[], $3::text[]) AS u(c, i, d)
  ON CONFLICT (collection, id) DO UPDATE SET data = EXCLUDED.data, seq = EXCLUDED.seq, changed_at = now()
  RETURNING seq`;

/** Purges tombstones older than $1 milliseconds and raises the horizon past them. */
export const PURGE_TOMBSTONES = `
  WITH gone AS (DELETE FROM gw_records WHERE data IS NULL AND changed_at < now() - make_interval(secs => $1::double precision / 1000) RETURNING seq)
  UPDATE gw_control_plane SET horizon = GREATEST(horizon, COALESCE((SELECT max(seq) FROM gone), 0))
  RETURNING horizon, (SELECT count(*) FROM gone) AS purged`;

/** One page of changes after a seq, in seq order. */
export const CHANGES_AFTER = 'SELECT collection, id, data, seq FROM gw_records WHERE seq > $1 ORDER BY seq LIMIT $2';
