/**
 * Request logs in distributed mode: three real hosts (own ports, own data dirs) on one PostgreSQL
 * and one Valkey. A record written through any host is read through every host (get, list and its
 * filters), an export through one host holds the records of all of them, and retention drops
 * whole daily partitions.
 */
import t from 'tap';
import pg from 'pg';
import { needServices } from './helpers/services.js';
import { distributedBackends, startHost, startHosts, type Host } from './helpers/hosts.js';
import { startMock } from './helpers/gateway.js';
import { admin, chat, pipelineYaml, until, type Json } from './helpers/distributed-logs.js';

t.test('a log written through one host is read through every host; an export holds them all', async (t) => {
  const svc = needServices(t, ['postgres', 'redis']);
  if (!svc) return;
  const backends = await distributedBackends(svc);
  const mock = await startMock(t);
  const hosts = await startHosts(t, 3, { backends, yaml: pipelineYaml() });
  const names = ['a', 'b', 'c'];
  const sent = new Map<string, string[]>(); // host name → its request ids
  for (const [i, host] of hosts.entries()) {
    const name = names[i]!;
    const ids: string[] = [];
    for (let n = 0; n < 2; n++) {
      const r = await chat(host, mock, { 'x-gateway-metadata': JSON.stringify({ run: 'dist-logs', host: name }), 'x-gateway-trace-id': `trace-${name}` });
      t.equal(r.status, 200, `a call through ${name}`);
      ids.push(r.id);
    }
    sent.set(name, ids);
  }
  const all = [...sent.values()].flat();
  const byRun = '/v1/logs?metadata=' + encodeURIComponent('{"run":"dist-logs"}');

  for (const [i, host] of hosts.entries()) {
    const list = await until(() => admin(host, 'GET', byRun), (r) => r.body?.total === 6);
    t.equal(list.status, 200);
    t.equal(list.body.total, 6, `host ${names[i]} lists the records of all three hosts`);
    t.equal(list.body.total_exact, true);
    t.same(new Set(list.body.data.map((r: { id: string }) => r.id)), new Set(all), 'the very records sent');
    const ids = list.body.data.map((r: { id: string }) => r.id);
    t.same(ids, [...ids].sort().reverse(), 'newest first');
    for (const [name, mine] of sent) {
      const one = await admin(host, 'GET', `/v1/logs/${mine[0]}`);
      t.equal(one.status, 200, `host ${names[i]} gets a record written through ${name}`);
      t.equal(one.body.id, mine[0]);
      t.equal(one.body.metadata.host, name);
      t.equal(one.body.status, 200);
      const traced = await admin(host, 'GET', `/v1/logs?trace_id=trace-${name}`);
      t.same(new Set(traced.body.data.map((r: { id: string }) => r.id)), new Set(mine), `trace_id filter: ${name}'s records`);
      const meta = await admin(host, 'GET', '/v1/logs?metadata=' + encodeURIComponent(JSON.stringify({ run: 'dist-logs', host: name })));
      t.same(new Set(meta.body.data.map((r: { id: string }) => r.id)), new Set(mine), `metadata filter: ${name}'s records`);
    }
  }
  // Filters and pages, the same answers as embedded mode.
  const b = hosts[1]!;
  t.equal((await admin(b, 'GET', `${byRun}&status=200&model=gpt-4o`)).body.total, 6, 'status and model filters');
  t.equal((await admin(b, 'GET', `${byRun}&status=500`)).body.total, 0);
  t.equal((await admin(b, 'GET', `${byRun}&model=gpt-4o-mini`)).body.total, 0);
  const page1 = await admin(b, 'GET', `${byRun}&page_size=4`);
  t.equal(page1.body.data.length, 4);
  t.equal(page1.body.has_more, true);
  const page2 = await admin(b, 'GET', `${byRun}&page_size=4&cursor=${page1.body.next_cursor}`);
  t.equal(page2.body.data.length, 2, 'the cursor continues after the first page');
  t.equal(page2.body.has_more, false);
  t.same(new Set([...page1.body.data, ...page2.body.data].map((r: { id: string }) => r.id)), new Set(all));
  const missing = await admin(b, 'GET', '/v1/logs/0190f3a1-7c2e-7000-8000-000000000000');
  t.equal(missing.status, 404, 'an unknown id is a 404, as in embedded mode');
  t.equal(missing.body.error.code, 'not_found');
  const bad = await admin(b, 'GET', '/v1/logs?metadata=nope');
  t.equal(bad.status, 400, 'a bad filter is the same 400');

  // An export through C: every host's records, by any host's jobs table.
  const c = hosts[2]!;
  const created = await admin(c, 'POST', '/v1/logs/exports', { filters: { metadata: { run: 'dist-logs' } }, requested_data: ['id', 'trace_id', 'metadata'] });
  t.equal(created.status, 200);
  t.equal(created.body.total, 6, 'the draft counts all six');
  t.equal((await admin(c, 'POST', `/v1/logs/exports/${created.body.id}/start`)).status, 200);
  const done = await until(() => admin(hosts[0]!, 'GET', `/v1/logs/exports/${created.body.id}`), (r) => r.body?.status === 'success');
  t.equal(done.body.status, 'success', 'the job is seen through A too');
  const file = await admin(c, 'GET', `/v1/logs/exports/${created.body.id}/download`);
  t.equal(file.status, 200);
  const lines = file.text.trim().split('\n').map((l) => JSON.parse(l) as { id: string; metadata: { host: string } });
  t.equal(lines.length, 6);
  t.same(new Set(lines.map((l) => l.id)), new Set(all), 'the export holds the records of all hosts');
  t.same(new Set(lines.map((l) => l.metadata.host)), new Set(names));
  const listed = await admin(b, 'GET', '/v1/logs/exports');
  t.ok(listed.body.data.some((e: { id: string }) => e.id === created.body.id), 'B lists the export C made');
});

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

t.test('feedback and custom logs written through one host are read through the others', async (t) => {
  const svc = needServices(t, ['postgres', 'redis']);
  if (!svc) return;
  const backends = await distributedBackends(svc);
  const mock = await startMock(t);
  const hosts = await startHosts(t, 3, { backends, yaml: `${pipelineYaml()}  - admin-api-keys\n` });
  const [a, b, c] = hosts as [Host, Host, Host];
  // A workspace key of A's default workspace (feedback and custom logs are written with one).
  const made = await admin(a, 'POST', '/v1/api-keys/workspace/service', { name: 'team', scopes: ['feedback.write', 'logs.write', 'logs.view', 'logs.list'] });
  t.equal(made.status, 200, made.text);
  const as = async (method: string, path: string, body: unknown): Promise<{ status: number; body: Json }> => {
    const res = await fetch(`${a.url}${path}`, { method, headers: { 'x-gateway-api-key': made.body.key, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    return { status: res.status, body: await res.json() };
  };

  const traced = await chat(a, mock, { 'x-gateway-trace-id': 'trace-rated', 'x-gateway-metadata': '{"run":"feedback"}' });
  await chat(b, mock, { 'x-gateway-trace-id': 'trace-unrated', 'x-gateway-metadata': '{"run":"feedback"}' });
  const start = Date.now();
  const fb = await as('POST', '/v1/feedback', { trace_id: 'trace-rated', value: 8, weight: 0.5 });
  t.equal(fb.status, 200);
  const updated = await as('PUT', `/v1/feedback/${fb.body.feedback_ids[0]}`, { value: 9 });
  t.equal(updated.status, 200, 'updated through A (read back from PostgreSQL)');
  const custom = await as('POST', '/v1/logs', { request: { url: 'https://example.test/v1/x', body: { q: 1 } }, response: { status: 201, body: { ok: true } }, metadata: { run: 'feedback' } });
  t.equal(custom.status, 200);
  const customId = custom.body.log_ids[0] as string;

  // The custom log, through B.
  const got = await admin(b, 'GET', `/v1/logs/${customId}`);
  t.equal(got.status, 200, 'a custom log written through A is read through B');
  t.equal(got.body.status, 201);
  t.equal(got.body.source, 'plugin');

  // The feedback graph through C counts it; an export through C filters on it.
  const range = new URLSearchParams({ time_of_generation_min: new Date(start - 60_000).toISOString(), time_of_generation_max: new Date(Date.now() + 60_000).toISOString() });
  const graph = await admin(c, 'GET', `/v1/analytics/graphs/feedbacks?${range}`);
  t.equal(graph.status, 200);
  t.equal(graph.body.summary.total, 1, 'feedback given through A is counted through C');
  await until(() => admin(c, 'GET', '/v1/logs?metadata=' + encodeURIComponent('{"run":"feedback"}')), (r) => r.body?.total === 3);
  const created = await admin(c, 'POST', '/v1/logs/exports', { filters: { weighted_feedback_min: 4 }, requested_data: ['id', 'trace_id'] });
  t.equal(created.status, 200);
  t.equal(created.body.total, 1, 'only the rated trace (9 × 0.5 = 4.5)');
  await admin(c, 'POST', `/v1/logs/exports/${created.body.id}/start`);
  await until(() => admin(b, 'GET', `/v1/logs/exports/${created.body.id}`), (r) => r.body?.status === 'success');
  const file = await admin(b, 'GET', `/v1/logs/exports/${created.body.id}/download`);
  t.same(file.text.trim().split('\n').map((l) => JSON.parse(l)), [{ id: traced.id, trace_id: 'trace-rated' }], 'downloaded through B');
  // A finished export cannot be cancelled, whichever host is asked: the same 409.
  const cancel = await admin(a, 'POST', `/v1/logs/exports/${created.body.id}/cancel`);
  t.equal(cancel.status, 409);
  t.equal(cancel.body.error.code, 'export_state_conflict');
});
