/**
 * Request logs while PostgreSQL is away: requests keep succeeding on every host, records wait in
 * each host's bounded queue, and when PostgreSQL is back they are written (every one, none twice)
 * without a restart. Past `store.postgres.log_queue` records are dropped and counted in
 * `gateway_log_dropped_total{reason="queue_full"}`.
 */
import t from 'tap';
import { setTimeout as sleep } from 'node:timers/promises';
import { needServices } from './helpers/services.js';
import { distributedBackends, startHosts } from './helpers/hosts.js';
import { startMock } from './helpers/gateway.js';
import { admin, chat, metric, pipelineYaml, until } from './helpers/distributed-logs.js';

const runFilter = (run: string): string => '/v1/logs?page_size=100&metadata=' + encodeURIComponent(JSON.stringify({ run }));

t.test('PostgreSQL stopped mid-traffic: requests succeed, records queue, then are written once each', async (t) => {
  const svc = needServices(t, ['postgres', 'redis']);
  if (!svc) return;
  const postgres = await svc.postgres();
  const backends = await distributedBackends(svc);
  const mock = await startMock(t);
  const hosts = await startHosts(t, 3, { backends, yaml: pipelineYaml() });
  const headers = { 'x-gateway-metadata': '{"run":"outage"}' };

  const before: string[] = [];
  for (const host of hosts) before.push((await chat(host, mock, headers)).id);
  await until(() => admin(hosts[0]!, 'GET', runFilter('outage')), (r) => r.body?.total === 3);

  await postgres.stop();
  const during: string[] = [];
  for (let i = 0; i < 30; i++) {
    const r = await chat(hosts[i % 3]!, mock, headers);
    t.equal(r.status, 200, `call ${i} succeeds while PostgreSQL is down`);
    during.push(r.id);
  }
  await sleep(300); // a few flush intervals: every writer tried and kept its batch
  let queued = 0;
  for (const host of hosts) queued += await metric(host, 'gateway_log_queued');
  // Every request is logged, admin reads and scrapes too: the 30 calls, and maybe the last poll before the stop.
  t.ok(queued >= 30 && queued <= 31, `the records wait in the hosts’ queues (${queued})`);
  const down = await admin(hosts[1]!, 'GET', runFilter('outage'));
  t.equal(down.status, 503, 'reading the logs while PostgreSQL is away is a 503');
  t.equal(down.body.error.code, 'logs_unavailable');

  const range = new URLSearchParams({
    time_of_generation_min: new Date(Date.now() - 600_000).toISOString(),
    time_of_generation_max: new Date(Date.now() + 600_000).toISOString(),
    metadata: '{"run":"outage"}',
  });
  const analyticsDown = await admin(hosts[0]!, 'GET', `/v1/analytics/graphs/requests?${range}`);
  t.equal(analyticsDown.status, 503, 'analytics reads while PostgreSQL is away: 503');
  t.equal(analyticsDown.body.error.code, 'analytics_unavailable');

  await postgres.start();
  const after = await until(() => admin(hosts[2]!, 'GET', runFilter('outage')), (r) => r.body?.total === 33, 20_000);
  t.equal(after.body.total, 33, 'every queued record is written, with no restart');
  const ids = after.body.data.map((r: { id: string }) => r.id);
  t.equal(new Set(ids).size, ids.length, 'none twice');
  t.same(new Set(ids), new Set([...before, ...during]), 'exactly the records sent');
  await sleep(300);
  t.equal((await admin(hosts[0]!, 'GET', runFilter('outage'))).body.total, 33, 'and no more later');
  // The rollups of the outage were kept by each host and added when PostgreSQL came back.
  const counted = await until(() => admin(hosts[1]!, 'GET', `/v1/analytics/graphs/requests?${range}`), (r) => r.body?.summary?.total === 33);
  t.equal(counted.body.summary.total, 33, 'analytics counts the calls made during the outage, once each');
  for (const host of hosts) {
    t.equal(await until(() => metric(host, 'gateway_log_queued'), (n) => n === 0), 0, 'the queues drain');
    t.equal(await metric(host, 'gateway_log_dropped_total'), 0, 'nothing was dropped');
  }
});

t.test('past store.postgres.log_queue, records are dropped and counted with a reason', async (t) => {
  const svc = needServices(t, ['postgres', 'redis']);
  if (!svc) return;
  const postgres = await svc.postgres();
  const backends = await distributedBackends(svc);
  const mock = await startMock(t);
  const [host] = await startHosts(t, 1, { backends, yaml: pipelineYaml('store:\n  postgres: {log_queue: 5}\n') });
  const headers = { 'x-gateway-metadata': '{"run":"overflow"}' };

  await postgres.stop();
  for (let i = 0; i < 20; i++) t.equal((await chat(host!, mock, headers)).status, 200);
  await sleep(200);
  // The first scrape (its own record comes after its answer): exactly the 15 calls past the bound.
  t.equal(await metric(host!, 'gateway_log_dropped_total', { reason: 'queue_full' }), 15, 'the overflow is dropped and counted');
  t.equal(await metric(host!, 'gateway_log_queued'), 5, 'the queue holds its bound');

  await postgres.start();
  const after = await until(() => admin(host!, 'GET', runFilter('overflow')), (r) => r.body?.total === 5, 20_000);
  t.equal(after.body.total, 5, 'what the queue held is written');
  t.equal(new Set(after.body.data.map((r: { id: string }) => r.id)).size, 5, 'once each');
  // Later scrapes and polls were logged too while the queue was full: the count only grows.
  t.ok((await metric(host!, 'gateway_log_dropped_total', { reason: 'queue_full' })) >= 15, 'the count stays');
});
