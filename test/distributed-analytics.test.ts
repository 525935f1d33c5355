/**
 * Analytics in distributed mode: three real hosts each fold their own requests and add them to
 * PostgreSQL; the analytics API read through any host answers the sums over all three
 * (requests, tokens, cost), and those sums agree with the request logs; a read right after a
 * request counts it (its host folds in the buckets it has not flushed yet).
 */
import t from 'tap';
import { needServices } from './helpers/services.js';
import { distributedBackends, startHosts } from './helpers/hosts.js';
import { startMock } from './helpers/gateway.js';
import { admin, chat, pipelineYaml, until } from './helpers/distributed-logs.js';

t.test('analytics totals through any host are the sums over all hosts', async (t) => {
  const svc = needServices(t, ['postgres', 'redis']);
  if (!svc) return;
  const backends = await distributedBackends(svc);
  const mock = await startMock(t);
  const hosts = await startHosts(t, 3, { backends, yaml: pipelineYaml() });
  const start = Date.now();
  // A different number of calls through each host (2, 3, 4), so a host reading only its own counts cannot pass.
  const perHost = [2, 3, 4];
  for (const [i, host] of hosts.entries()) {
    for (let n = 0; n < perHost[i]!; n++) {
      const r = await chat(host, mock, { 'x-gateway-metadata': JSON.stringify({ run: 'dist-analytics', _user: `user-${i}` }) });
      t.equal(r.status, 200);
    }
  }
  const requests = perHost.reduce((a, b) => a + b, 0);
  // The truth, from the request logs (themselves shared): tokens and cost of every call.
  const logs = await until(
    () => admin(hosts[0]!, 'GET', '/v1/logs?page_size=100&metadata=' + encodeURIComponent('{"run":"dist-analytics"}')),
    (r) => r.body?.total === requests && r.body.data.length === requests,
  );
  t.equal(logs.body.total, requests);
  type Log = { usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number } | null; cost_cents: number };
  const tokens = logs.body.data.reduce((n: number, r: Log) => n + (r.usage?.total_tokens ?? 0), 0);
  const cost = logs.body.data.reduce((n: number, r: Log) => n + r.cost_cents, 0);
  t.ok(tokens > 0, 'the calls were metered');

  const range = new URLSearchParams({
    time_of_generation_min: new Date(start - 120_000).toISOString(),
    time_of_generation_max: new Date(Date.now() + 120_000).toISOString(),
    metadata: '{"run":"dist-analytics"}',
  });
  const graph = (hostIndex: number, path: string) => admin(hosts[hostIndex]!, 'GET', `/v1/analytics/graphs/${path}?${range}`);
  for (const i of [0, 1, 2]) {
    const req = await until(() => graph(i, 'requests'), (r) => r.body?.summary?.total === requests);
    t.equal(req.status, 200);
    t.equal(req.body.summary.total, requests, `host ${i}: requests summed over the three hosts`);
    t.equal(req.body.data_points.reduce((n: number, p: { total: number }) => n + p.total, 0), requests, 'the points add up to the summary');
    const tk = await graph(i, 'tokens');
    t.equal(tk.body.summary.total, tokens, `host ${i}: tokens summed over the three hosts`);
    const c = await graph(i, 'cost');
    t.ok(Math.abs(c.body.summary.total - cost) < 1e-6, `host ${i}: cost ${c.body.summary.total} = ${cost} cents`);
    const users = await graph(i, 'users');
    t.equal(users.body.summary.total, 3, 'one user per host, counted once each');
    const models = await admin(hosts[i]!, 'GET', `/v1/analytics/groups/ai-models?${range}`);
    t.same(models.body.data.map((m: { ai_model: string; requests: string }) => [m.ai_model, m.requests]), [['gpt-4o', String(requests)]]);
  }

  // More traffic later: the additive upserts keep adding, through every host.
  for (const host of hosts) await chat(host, mock, { 'x-gateway-metadata': JSON.stringify({ run: 'dist-analytics', _user: 'late' }) });
  const later = await until(() => graph(1, 'requests'), (r) => r.body?.summary?.total === requests + 3);
  t.equal(later.body.summary.total, requests + 3, 'a second flush from each host adds to the stored rows');
  const usersGroup = await admin(hosts[2]!, 'GET', `/v1/analytics/groups/users?${range}`);
  t.same(
    Object.fromEntries(usersGroup.body.data.map((u: { user: string; requests: string }) => [u.user, u.requests])),
    { 'user-0': '2', 'user-1': '3', 'user-2': '4', late: '3' },
    'per-user counts merge across hosts',
  );
});

t.test('a graph read right after a request counts it (flush_ms 60 s), on minute and hour data points', async (t) => {
  const svc = needServices(t, ['postgres', 'redis']);
  if (!svc) return;
  const backends = await distributedBackends(svc);
  const mock = await startMock(t);
  const [host] = await startHosts(t, 1, { backends, yaml: 'pipeline:\n  - analytics: {flush_ms: 60000}\n  - auth\n  - admin-catalog\n' });
  const run = `live-${Date.now()}`;
  const start = Date.now();
  const range = (hours: number): URLSearchParams =>
    new URLSearchParams({
      time_of_generation_min: new Date(start - hours * 3_600_000 - 60_000).toISOString(),
      time_of_generation_max: new Date(Date.now() + hours * 3_600_000 + 60_000).toISOString(),
      metadata: JSON.stringify({ run }),
    });
  for (let n = 1; n <= 2; n++) {
    t.equal((await chat(host!, mock, { 'x-gateway-metadata': JSON.stringify({ run, _user: 'zoe' }) })).status, 200);
    const minutes = await admin(host!, 'GET', `/v1/analytics/graphs/requests?${range(0)}`);
    t.equal(minutes.status, 200);
    t.equal(minutes.body.summary.total, n, `request ${n}: counted at once`);
    t.equal((await admin(host!, 'GET', `/v1/analytics/graphs/requests?${range(12)}`)).body.summary.total, n, 'on hour data points too');
    const users = await admin(host!, 'GET', `/v1/analytics/groups/users?${range(0)}`);
    t.same(users.body.data.map((u: { user: string; requests: string }) => [u.user, u.requests]), [['zoe', String(n)]]);
  }
});
