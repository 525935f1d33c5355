/**
 * The replica's mechanics, with two gateways in this process on one PostgreSQL (each its own data
 * dir): a record committed to PostgreSQL with no change notice is found by a miss at once (the
 * coalesced catch-up), and a flood of unknown keys does not become a flood of queries; a hot-path
 * write outside any admin scope reaches the other host through the outbox; PostgreSQL failing in
 * the middle of a write scope leaves the change on neither side and answers 503.
 */
import t from 'tap';
import pg from 'pg';
import { needServices } from './helpers/services.js';
import { MASTER_KEY } from './helpers/hosts.js';
import { ADMIN_KEY, startGateway, startMock, type StartedGateway } from './helpers/gateway.js';
import { newApiKey } from '../core/store/api-key-record.js';
import { DEFAULT_ORGANISATION_SCOPES } from '../core/auth/scopes.js';
import { Scopes } from '../core/index.js';
import { isGatewayError } from '../core/errors.js';
import { dirname } from 'node:path';
import { createLogger } from '../core/logger.js';
import { openStore } from '../core/store/store.js';
import { openDistributed } from '../core/store/distributed/connections.js';

const YAML = 'pipeline: [auth, admin-org, admin-api-keys]\n';

async function chatStatus(gw: StartedGateway, key: string, mockUrl: string): Promise<number> {
  const res = await fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'x-gateway-api-key': key, 'content-type': 'application/json', 'x-gateway-provider': 'openai', 'x-gateway-custom-host': `${mockUrl}/v1`, authorization: 'Bearer sk-x' },
    body: JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] }),
  });
  await res.arrayBuffer();
  return res.status;
}

t.test('replica mechanics', async (t) => {
  const svc = needServices(t, ['postgres', 'redis']);
  if (!svc) return;
  const [pgServer, redis] = await Promise.all([svc.postgres(), svc.redis()]);
  const db = await pgServer.database();
  const env = { GATEWAY_POSTGRES_URL: db, GATEWAY_REDIS_URL: redis.url, GATEWAY_MASTER_KEY: MASTER_KEY, GATEWAY_ADMIN_KEY: ADMIN_KEY };
  const a = await startGateway(t, { env, yaml: YAML });
  const b = await startGateway(t, { env, yaml: YAML });
  const mock = await startMock(t);
  const sql = new pg.Client({ connectionString: db });
  await sql.connect();
  // The last subtest stops the server under this connection.
  sql.on('error', () => undefined);
  t.teardown(() => sql.end().catch(() => undefined));

  await t.test('a key committed to PostgreSQL with no notice is found by the first request (a miss catches up)', async (t) => {
    const orgId = a.store.meta.get('organisation_id') as string;
    const silentKey = async (): Promise<string> => {
      const { record, raw } = newApiKey({ type: 'organisation-service', name: 'silent', organisation_id: orgId, workspace_id: null, scopes: [...DEFAULT_ORGANISATION_SCOPES] });
      // Written behind the gateways' backs: no NOTIFY, so only the 500 ms poll or a miss's catch-up finds it.
      await sql.query("INSERT INTO gw_records (collection, id, data, seq) VALUES ('api_keys', $1, $2::json, nextval('gw_records_seq'))", [record.id, JSON.stringify(record)]);
      return raw;
    };
    t.equal(await chatStatus(b, await silentKey(), mock.url), 200, 'the key works at once');

    // A flood of unknown keys: misses share catch-ups, at most one per 50 ms.
    const before = await sql.query<{ n: string }>('SELECT xact_commit AS n FROM pg_stat_database WHERE datname = current_database()');
    const started = performance.now();
    const statuses = await Promise.all(Array.from({ length: 300 }, (_, i) => chatStatus(b, `gw-bogus-key-${i}`, mock.url)));
    const elapsed = performance.now() - started;
    // Statistics are flushed by backends lazily; wait for them.
    await new Promise((r) => setTimeout(r, 1200));
    const after = await sql.query<{ n: string }>('SELECT xact_commit AS n FROM pg_stat_database WHERE datname = current_database()');
    t.same(new Set(statuses), new Set([401]), 'every unknown key is refused');
    const queries = Number(after.rows[0]!.n) - Number(before.rows[0]!.n);
    // Polls of both gateways (2/s each), the misses' catch-ups (20/s), the stats queries, and slack.
    const bound = Math.ceil(((elapsed + 1200) / 1000) * (2 * 2 + 20)) + 10;
    t.ok(queries <= bound, `${queries} transactions for 300 unknown keys in ${elapsed.toFixed(0)} ms (bound ${bound})`);
    t.equal(await chatStatus(b, await silentKey(), mock.url), 200, 'after the flood, a new key still works at once');
  });

  await t.test('a hot-path write outside any admin scope reaches the other host through the outbox', async (t) => {
    const created = await fetch(`${a.url}/v1/api-keys/organisation/service`, {
      method: 'POST',
      headers: { 'x-gateway-api-key': ADMIN_KEY, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'to-exhaust', scopes: [...Scopes.DEFAULT_ORGANISATION_SCOPES] }),
    });
    const { id } = (await created.json()) as { id: string };
    // What usage-limits does when a budget runs out: a plain collection write on the hot path.
    a.store.c.apiKeys.update(id, (k) => ({ ...k, status: 'exhausted', last_updated_at: new Date().toISOString() }));
    let status: string | undefined;
    const start = performance.now();
    while (performance.now() - start < 3000) {
      status = b.store.c.apiKeys.get(id)?.status;
      if (status === 'exhausted') break;
      await new Promise((r) => setTimeout(r, 10));
    }
    t.equal(status, 'exhausted', `B sees it (${(performance.now() - start).toFixed(0)} ms)`);
    t.equal(a.store.replica!.status().outbox, 0, 'the outbox is empty again');
  });

  await t.test('a replica away longer than deletes are kept reloads at start', async (t) => {
    const ws = await fetch(`${a.url}/v1/admin/workspaces`, {
      method: 'POST',
      headers: { 'x-gateway-api-key': ADMIN_KEY, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'short-lived', slug: 'short-lived' }),
    });
    const { id } = (await ws.json()) as { id: string };
    for (let i = 0; i < 100 && b.store.c.workspaces.get(id) === undefined; i++) await new Promise((r) => setTimeout(r, 10));
    t.ok(b.store.c.workspaces.get(id), 'B has the workspace');
    const dir = dirname(b.store.path);
    const { postgres, redis } = b.config.store;
    await b.close();
    await a.store.replica!.writeScope(() => a.store.c.workspaces.delete(id));
    await sql.query("UPDATE gw_records SET changed_at = now() - interval '8 days' WHERE data IS NULL");
    t.ok((await a.store.replica!.purgeTombstones()) >= 1, 'the tombstone is purged');
    const log = createLogger({ level: 'silent' });
    const store = openStore({ dir, log, env, distributed: await openDistributed(postgres!, redis!, log) });
    t.teardown(() => store.close());
    await store.replica!.start({ feed: false });
    t.equal(store.c.workspaces.get(id), undefined, 'the delete it never saw is applied: the replica was reloaded');
    t.equal(store.c.workspaces.getBy('slug', 'short-lived'), undefined, 'its slug index too');
    t.ok(store.c.apiKeys.list().total > 0, 'and the rest is there');
    await store.close();
  });

  await t.test('PostgreSQL failing inside a write scope: nothing on either side, 503', async (t) => {
    const failed = await a.store.replica!.writeScope(async () => {
      a.store.c.workspaces.insert({
        id: '01930000-0000-7000-8000-00000000d00d',
        slug: 'doomed',
        name: 'doomed',
        description: null,
        organisation_id: a.store.meta.get('organisation_id') as string,
        defaults: { metadata: {}, is_default: 0 },
        usage_limits: [],
        rate_limits: [],
        status: 'active',
        created_at: new Date().toISOString(),
        last_updated_at: new Date().toISOString(),
      });
      t.ok(a.store.c.workspaces.getBy('slug', 'doomed'), 'written locally inside the scope');
      await pgServer.stop();
    }).then(
      () => undefined,
      (e: unknown) => e,
    );
    t.ok(isGatewayError(failed) && failed.code === 'control_plane_unavailable' && failed.status === 503, '503 control_plane_unavailable');
    t.equal(a.store.c.workspaces.getBy('slug', 'doomed'), undefined, 'the local write was undone, its slug index too');
    await pgServer.start();
    const check = new pg.Client({ connectionString: db });
    await check.connect();
    const { rows } = await check.query("SELECT 1 FROM gw_records WHERE collection = 'workspaces' AND id = '01930000-0000-7000-8000-00000000d00d'");
    await check.end();
    t.equal(rows.length, 0, 'and PostgreSQL has nothing of it');
  });
});
