/**
 * Starting hosts on a shared control plane: hosts starting at once bootstrap ONE organisation,
 * ONE default workspace and ONE admin key (from GATEWAY_ADMIN_KEY, or one generated key across
 * all hosts); `gateway keys create` writes through PostgreSQL; a start without GATEWAY_MASTER_KEY
 * or on a data dir holding embedded-mode data is refused with the reason.
 */
import t from 'tap';
import pg from 'pg';
import { join } from 'node:path';
import { needServices } from './helpers/services.js';
import { distributedBackends, startHost, MASTER_KEY, type Host } from './helpers/hosts.js';
import { ADMIN_KEY, startMock, tempDir, writeFile } from './helpers/gateway.js';
import { runCli } from './helpers/process.js';
import { call, chat, toMock } from './helpers/control-plane.js';

// Several gateway processes on real PostgreSQL and Valkey: close to a minute alone, more on a busy machine.
t.setTimeout(240_000);

const PIPELINE = 'pipeline: [logging, auth, admin-org, admin-api-keys]\n';
/** The least a host needs to show its keys: three hosts boot at once, so each boots light. */
const LIGHT = 'pipeline: [auth, admin-api-keys]\n';

interface KeyView {
  id: string;
  name: string;
}

async function keysOn(host: Host, key = ADMIN_KEY): Promise<KeyView[]> {
  const res = await call(host, 'GET', '/v1/api-keys?page_size=100', undefined, key);
  return res.body.data as KeyView[];
}

t.test('three hosts starting at once with the same GATEWAY_ADMIN_KEY end with one key, one organisation, one default workspace', async (t) => {
  const svc = needServices(t, ['postgres', 'redis']);
  if (!svc) return;
  const backends = await distributedBackends(svc);
  const hosts = await Promise.all([0, 1, 2].map(() => startHost(t, { backends, yaml: LIGHT })));
  const seen = await Promise.all(hosts.map((h) => keysOn(h)));
  for (const keys of seen) t.equal(keys.filter((k) => k.name === 'Bootstrap admin key').length, 1, 'one bootstrap key record');
  t.same(new Set(seen.map((keys) => keys.map((k) => k.id).sort().join())).size, 1, 'every host lists the same keys');
  // The authority itself: one record of each in PostgreSQL.
  const sql = new pg.Client({ connectionString: backends.postgresUrl });
  await sql.connect();
  t.teardown(() => sql.end());
  const { rows } = await sql.query<{ collection: string; n: string }>(
    "SELECT collection, count(*) AS n FROM gw_records WHERE data IS NOT NULL AND collection IN ('organisations', 'workspaces', 'api_keys') GROUP BY collection ORDER BY collection",
  );
  t.same(rows.map((r) => [r.collection, Number(r.n)]), [['api_keys', 1], ['organisations', 1], ['workspaces', 1]], 'one key, one organisation, one default workspace');
});

t.test('a first start with no admin key generates exactly one, across all hosts, and it works everywhere', async (t) => {
  const svc = needServices(t, ['postgres', 'redis']);
  if (!svc) return;
  const backends = await distributedBackends(svc);
  const hosts = await Promise.all([0, 1, 2].map(() => startHost(t, { backends, yaml: LIGHT, env: { GATEWAY_ADMIN_KEY: '' } })));
  const printed = hosts.map((h) => /Created the first admin API key[^\n]*\n\n\s+(\S+)/.exec(h.cli.stdout())?.[1]).filter((k) => k !== undefined);
  t.equal(printed.length, 1, 'one host generated and printed a key');
  for (const h of hosts) t.equal((await keysOn(h, printed[0])).length, 1, `the generated key works on ${h.url}, and is the only key`);
});

t.test('gateway keys create writes through PostgreSQL: the key works on a running host at once', async (t) => {
  const svc = needServices(t, ['postgres', 'redis']);
  if (!svc) return;
  const backends = await distributedBackends(svc);
  const mock = await startMock(t);
  const host = await startHost(t, { backends, yaml: PIPELINE });
  const dir = tempDir();
  const yaml = writeFile(dir, 'gateway.yaml', PIPELINE);
  const env = {
    GATEWAY_DATA_DIR: join(dir, 'data'),
    GATEWAY_MASTER_KEY: MASTER_KEY,
    GATEWAY_ADMIN_KEY: ADMIN_KEY,
    GATEWAY_POSTGRES_URL: backends.postgresUrl,
    GATEWAY_REDIS_URL: backends.redisUrl,
    GATEWAY_LOG_LEVEL: 'warn',
  };
  const res = await runCli(['keys', 'create', '--type', 'organisation', '--name', 'from-cli', '--preset', 'admin', '--config', yaml], env);
  t.equal(res.code, 0, res.stderr);
  t.notMatch(res.stdout, /admin_key:/, 'the bootstrap was already done by the host');
  const key = /^key: (\S+)$/m.exec(res.stdout)![1]!;
  t.equal((await chat(host, key, toMock(mock.url))).status, 200, 'the CLI key calls models through the running host');
  t.equal((await keysOn(host, key)).some((k) => k.name === 'from-cli'), true, 'the CLI key authenticates on the running host');
});

t.test('distributed mode refuses to start without GATEWAY_MASTER_KEY, or on a data dir holding embedded-mode data', async (t) => {
  const svc = needServices(t, ['postgres', 'redis']);
  if (!svc) return;
  const backends = await distributedBackends(svc);
  const dir = tempDir();
  const yaml = writeFile(dir, 'gateway.yaml', `server: {host: 127.0.0.1, port: 0}\n${PIPELINE}`);
  const shared = { GATEWAY_POSTGRES_URL: backends.postgresUrl, GATEWAY_REDIS_URL: backends.redisUrl, GATEWAY_ADMIN_KEY: ADMIN_KEY };

  const noMaster = await runCli(['start', '--config', yaml], { ...shared, GATEWAY_DATA_DIR: join(dir, 'a'), GATEWAY_MASTER_KEY: '' });
  t.equal(noMaster.code, 1);
  t.match(noMaster.stdout + noMaster.stderr, /distributed mode needs GATEWAY_MASTER_KEY/);

  // A data dir used in embedded mode first (the CLI bootstraps it without the backends).
  const embedded = join(dir, 'embedded');
  const made = await runCli(['keys', 'create', '--type', 'organisation', '--name', 'local', '--preset', 'admin', '--config', yaml], { GATEWAY_DATA_DIR: embedded, GATEWAY_MASTER_KEY: MASTER_KEY, GATEWAY_ADMIN_KEY: ADMIN_KEY });
  t.equal(made.code, 0, made.stderr);
  const refused = await runCli(['start', '--config', yaml], { ...shared, GATEWAY_DATA_DIR: embedded, GATEWAY_MASTER_KEY: MASTER_KEY });
  t.equal(refused.code, 1);
  t.match(refused.stdout + refused.stderr, /holds embedded-mode data, which is not in PostgreSQL/);
});
