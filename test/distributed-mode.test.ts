/**
 * Distributed mode's switch: both backends or neither, from YAML or the environment, with the
 * servers really reached at start (test/helpers/services.ts starts them).
 */
import t from 'tap';
import { Redis } from 'ioredis';
import pg from 'pg';
import { createLogger } from '../core/logger.js';
import { runMigrations } from '../core/store/distributed/migrate.js';
import { loadConfigText } from '../core/config/load.js';
import { startGateway } from './helpers/gateway.js';
import { needServices } from './helpers/services.js';
import { MASTER_KEY } from './helpers/hosts.js';

t.test('one backend alone is refused with the reason; both, or neither, load', async (t) => {
  const onlyPg = loadConfigText('store: {postgres: {url: "postgres://h/db"}}', '<inline>', {});
  t.equal(onlyPg.config, null);
  t.match(onlyPg.problems[0]!.message, /distributed mode needs both backends: PostgreSQL .* is set but Valkey\/Redis .* is not/);
  t.equal(onlyPg.problems[0]!.path, 'store');

  const onlyRedisEnv = loadConfigText('server: {port: 8787}', '<inline>', { GATEWAY_REDIS_URL: 'redis://127.0.0.1:1' });
  t.equal(onlyRedisEnv.config, null);
  t.equal(onlyRedisEnv.problems[0]!.file, 'env');
  t.match(onlyRedisEnv.problems[0]!.message, /Valkey\/Redis .* is set but PostgreSQL .* is not/);

  const none = loadConfigText('server: {port: 8787}', '<inline>', {});
  t.equal(none.config!.store.postgres, null);
  t.equal(none.config!.store.redis, null);

  const mixed = loadConfigText('store: {redis: {budgets: fail_open, command_timeout: 250ms}}', '<inline>', {
    GATEWAY_POSTGRES_URL: 'postgres://u:secret@db:5432/gw',
    GATEWAY_REDIS_URL: 'redis://cache:6379',
  });
  t.same(mixed.problems, []);
  t.same(mixed.config!.store.redis, { url: 'redis://cache:6379', key_prefix: 'gw:', command_timeout: 250, rate_limits: 'fail_open', budgets: 'fail_open' });
  t.same(mixed.config!.store.postgres, { url: 'postgres://u:secret@db:5432/gw', pool: 10, log_queue: 100000 });
});

t.test('a gateway in distributed mode reaches both servers at start, and names the one it cannot reach', async (t) => {
  const svc = needServices(t, ['postgres', 'redis']);
  if (!svc) return;
  const [pg, redis] = await Promise.all([svc.postgres(), svc.redis()]);
  const db = await pg.database();
  const gw = await startGateway(t, { env: { GATEWAY_POSTGRES_URL: db, GATEWAY_REDIS_URL: redis.url, GATEWAY_MASTER_KEY: MASTER_KEY } });
  t.ok(gw.store.distributed, 'the store carries the shared backends');
  const { rows } = await gw.store.distributed!.pg.query<{ n: number }>('SELECT 1 AS n');
  t.equal(rows[0]!.n, 1);
  t.equal(await gw.store.distributed!.redis.ping(), 'PONG');

  const probe = new Redis(redis.url);
  t.teardown(() => probe.disconnect());
  t.equal(await probe.ping(), 'PONG');

  await t.rejects(
    startGateway(t, { env: { GATEWAY_POSTGRES_URL: db, GATEWAY_REDIS_URL: 'redis://127.0.0.1:1', GATEWAY_MASTER_KEY: MASTER_KEY } }),
    /cannot reach Valkey\/Redis at 127\.0\.0\.1:1/,
  );
  const failed = await startGateway(t, { env: { GATEWAY_POSTGRES_URL: 'postgres://postgres:hunter2@127.0.0.1:1/x', GATEWAY_REDIS_URL: redis.url, GATEWAY_MASTER_KEY: MASTER_KEY } }).then(
    () => null,
    (err: Error) => err.message,
  );
  t.match(failed, /cannot reach PostgreSQL at 127\.0\.0\.1:1/);
  t.notMatch(failed, /hunter2/, 'the password never appears');
});

t.test('migrations run once, under a lock, when several hosts start together', async (t) => {
  const svc = needServices(t, ['postgres']);
  if (!svc) return;
  const pgServer = await svc.postgres();
  const url = await pgServer.database();
  const pools = [0, 1, 2].map(() => new pg.Pool({ connectionString: url, max: 2 }));
  t.teardown(() => Promise.all(pools.map((p) => p.end())));
  const log = createLogger({ level: 'error' });
  let ran = 0;
  const steps = [
    'CREATE TABLE t_one (id int PRIMARY KEY)',
    async (client: pg.PoolClient) => {
      ran++;
      await client.query('INSERT INTO t_one VALUES (1)');
    },
  ];
  await Promise.all(pools.map((p) => runMigrations(p, 'test', steps, log)));
  t.equal(ran, 1, 'the step ran on one host only');
  const { rows } = await pools[0]!.query<{ version: number }>("SELECT version FROM gateway_migrations WHERE component = 'test' ORDER BY version");
  t.same(rows.map((r) => r.version), [1, 2]);

  // A failing step leaves nothing of itself behind, and the next start retries it.
  const failing = [...steps, 'CREATE TABLE t_two (id int); SELECT 1/0'];
  await t.rejects(runMigrations(pools[1]!, 'test', failing, log), /division by zero/);
  const two = await pools[1]!.query("SELECT to_regclass('t_two') AS t");
  t.equal(two.rows[0].t, null, 'the failed step rolled back');
  await t.rejects(runMigrations(pools[2]!, 'test', steps.slice(0, 1), log), /newer than this gateway/);
});
