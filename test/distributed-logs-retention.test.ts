/**
 * Log retention in distributed mode: the log table is partitioned by day, and retention drops
 * whole partitions past `retention_days` (never row by row), keeping the recent ones.
 */
import t from 'tap';
import pg from 'pg';
import { needServices } from './helpers/services.js';
import { distributedBackends, startHost, startHosts } from './helpers/hosts.js';
import { startMock } from './helpers/gateway.js';
import { admin, chat, pipelineYaml, until } from './helpers/distributed-logs.js';

t.test('retention drops whole partitions past retention_days and keeps recent ones', async (t) => {
  const svc = needServices(t, ['postgres', 'redis']);
  if (!svc) return;
  const backends = await distributedBackends(svc);
  const mock = await startMock(t);
  const yaml = pipelineYaml().replace('logging: {flush_ms: 50}', 'logging: {flush_ms: 50, retention_days: 30}');
  const [a] = await startHosts(t, 1, { backends, yaml });
  const fresh = await chat(a!, mock, { 'x-gateway-metadata': '{"run":"retention"}' });
  await until(() => admin(a!, 'GET', `/v1/logs/${fresh.id}`), (r) => r.status === 200);

  const client = new pg.Client({ connectionString: backends.postgresUrl });
  await client.connect();
  t.teardown(() => client.end());
  const DAY = 86_400_000;
  const today = Math.floor(Date.now() / DAY);
  const name = (day: number): string => `gateway_logs_p${new Date(day * DAY).toISOString().slice(0, 10).replaceAll('-', '')}`;
  // Partitions 40 and 31 days old (past 30 days) and 10 days old (within), each with a record.
  for (const age of [40, 31, 10]) {
    const day = today - age;
    await client.query(`CREATE TABLE ${name(day)} PARTITION OF gateway_logs FOR VALUES FROM ('${new Date(day * DAY).toISOString()}') TO ('${new Date((day + 1) * DAY).toISOString()}')`);
    const at = new Date(day * DAY + 3_600_000).toISOString();
    await client.query(`INSERT INTO gateway_logs (id, created_at, status, trace_id, record) VALUES ($1, $2, 200, 't', '{}'::jsonb)`, [`old-${age}`, at]);
  }
  const partitions = async (): Promise<string[]> =>
    (await client.query<{ n: string }>(`SELECT c.relname AS n FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid JOIN pg_class p ON p.oid = i.inhparent WHERE p.relname = 'gateway_logs' ORDER BY 1`)).rows.map((r) => r.n);
  t.ok((await partitions()).includes(name(today - 40)), 'the old partitions exist');

  // A host starting (and every hour after) runs the retention: whole partitions go.
  await startHost(t, { backends, yaml });
  const after = await partitions();
  t.notOk(after.includes(name(today - 40)), '40 days old: dropped');
  t.notOk(after.includes(name(today - 31)), '31 days old: dropped');
  t.ok(after.includes(name(today - 10)), '10 days old: kept');
  t.ok(after.includes(name(today)), "today's partition: kept");
  t.ok(after.includes(name(today + 1)) && after.includes(name(today + 2)), 'the next days are created ahead');
  const rows = (await client.query<{ id: string }>(`SELECT id FROM gateway_logs WHERE id LIKE 'old-%'`)).rows.map((r) => r.id);
  t.same(rows, ['old-10'], 'the rows of dropped partitions are gone with them');
  t.equal((await admin(a!, 'GET', `/v1/logs/${fresh.id}`)).status, 200, 'recent records are kept');
});
