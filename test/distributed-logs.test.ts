/**
 * Request logs in distributed mode: three real hosts (own ports, own data dirs) on one PostgreSQL
 * and one Valkey. A record written through any host is read through every host (get, list and its
 * filters), and an export through one host holds the records of all of them. Retention, feedback
 * and custom logs: distributed-logs-retention.test.ts, distributed-logs-feedback.test.ts.
 */
import t from 'tap';
import { needServices } from './helpers/services.js';
import { distributedBackends, startHosts } from './helpers/hosts.js';
import { startMock } from './helpers/gateway.js';
import { admin, chat, pipelineYaml, until } from './helpers/distributed-logs.js';

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
  // Unindexed filters (read from the record in SQL; log-filters-console.test.ts covers them fully).
  t.equal((await admin(b, 'GET', `${byRun}&route=chat.completions`)).body.total, 6, 'route filter');
  t.equal((await admin(b, 'GET', `${byRun}&route=plugin`)).body.total, 0);
  t.equal((await admin(b, 'GET', `${byRun}&virtual_key=none`)).body.total, 0, 'virtual_key filter');
  t.equal((await admin(b, 'GET', `${byRun}&config=none`)).body.total, 0, 'config filter');
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
