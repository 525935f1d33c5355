/**
 * The control plane under faults, with three real `gateway start` processes on one PostgreSQL and
 * one Valkey: a host killed with -9 while admin writes run loses no acknowledged write and the
 * others keep serving; PostgreSQL stopped mid-traffic leaves model calls and admin reads working,
 * admin writes answer 503 `control_plane_unavailable`, and once it is back writes succeed and
 * every host converges without a restart.
 */
import t from 'tap';
import { needServices } from './helpers/services.js';
import { distributedBackends, startHosts, type Host } from './helpers/hosts.js';
import { ADMIN_KEY, startMock } from './helpers/gateway.js';
import { call, chat, codeOf, sleep, toMock } from './helpers/control-plane.js';

// Several gateway processes on real PostgreSQL and Valkey: close to a minute alone, more on a busy machine.
t.setTimeout(240_000);

const PIPELINE = 'pipeline: [logging, auth, virtual-keys, config-strategy, admin-org, admin-api-keys, admin-resources, admin-catalog]\n';

t.test('kill -9 one host while admin writes run against all three: no acknowledged write is lost', async (t) => {
  const svc = needServices(t, ['postgres', 'redis']);
  if (!svc) return;
  const backends = await distributedBackends(svc);
  const mock = await startMock(t);
  const hosts = (await startHosts(t, 3, { backends, yaml: PIPELINE })) as [Host, Host, Host];
  const victim = hosts[1];
  const acknowledged: Array<{ id: string; slug: string }> = [];
  let n = 0;
  let stop = false;
  const writer = async (host: Host): Promise<void> => {
    while (!stop) {
      const slug = `w-${++n}`;
      const res = await call(host, 'POST', '/v1/admin/workspaces', { name: slug, slug }).catch(() => undefined);
      if (res?.status === 200) acknowledged.push({ id: res.body.id as string, slug });
      // A dead host refuses connections at once: do not spin.
      if (res === undefined) await sleep(20);
    }
  };
  const writers = hosts.flatMap((h) => [writer(h), writer(h)]);
  await sleep(400);
  await victim.kill();
  const killedAt = acknowledged.length;
  await sleep(600);
  stop = true;
  await Promise.all(writers);
  t.ok(killedAt > 0 && acknowledged.length > killedAt, `writes went on after the kill (${killedAt} before, ${acknowledged.length - killedAt} after)`);
  t.comment(`${acknowledged.length} acknowledged workspace creations`);

  for (const survivor of [hosts[0], hosts[2]]) {
    // Replicas converge within the feed's delay; the list is read until it has every write.
    let missing = acknowledged;
    for (let i = 0; i < 50 && missing.length > 0; i++) {
      const found = await Promise.all(missing.map((w) => call(survivor, 'GET', `/v1/admin/workspaces/${w.id}`)));
      missing = missing.filter((_, j) => found[j]!.status !== 200);
      if (missing.length > 0) await sleep(20);
    }
    t.same(missing.map((w) => w.slug), [], `every acknowledged write is on ${survivor.url}`);
    t.equal((await chat(survivor, ADMIN_KEY, toMock(mock.url))).status, 200, `${survivor.url} keeps serving`);
    const write = await call(survivor, 'POST', '/v1/admin/workspaces', { name: `after-${survivor.url}` });
    t.equal(write.status, 200, `${survivor.url} still takes writes`);
  }
});

t.test('PostgreSQL stopped mid-traffic: the hot path and admin reads go on, writes answer 503, and all recovers without a restart', async (t) => {
  const svc = needServices(t, ['postgres', 'redis']);
  if (!svc) return;
  const backends = await distributedBackends(svc);
  const pgServer = await svc.postgres();
  const mock = await startMock(t);
  const hosts = (await startHosts(t, 3, { backends, yaml: PIPELINE })) as [Host, Host, Host];

  let stop = false;
  const failures: string[] = [];
  let served = 0;
  const traffic = async (host: Host): Promise<void> => {
    while (!stop) {
      const res = await chat(host, ADMIN_KEY, toMock(mock.url));
      if (res.status === 200) served++;
      else failures.push(`${host.url}: ${res.status} ${String(codeOf(res))}`);
      await sleep(5);
    }
  };
  const load = hosts.map(traffic);
  await sleep(200);
  await pgServer.stop();

  for (const host of hosts) {
    const started = performance.now();
    const write = await call(host, 'POST', '/v1/admin/workspaces', { name: 'while down' });
    const ms = performance.now() - started;
    t.equal(write.status, 503, `${host.url}: an admin write answers 503`);
    t.equal(codeOf(write), 'control_plane_unavailable');
    t.comment(`503 control_plane_unavailable after ${ms.toFixed(0)} ms`);
    const read = await call(host, 'GET', '/v1/admin/workspaces');
    t.equal(read.status, 200, `${host.url}: admin reads answer from the replica`);
    t.notOk((read.body.data as Array<{ name: string }>).some((w) => w.name === 'while down'), 'the refused write left nothing behind');
  }
  await sleep(300);
  const servedWhileDown = served;
  await sleep(300);
  t.ok(served > servedWhileDown, 'chat completions keep passing while PostgreSQL is down');

  await pgServer.start();
  // The first write after the restart may meet the feed still reconnecting; it must succeed soon.
  let created: { id: string } | undefined;
  for (let i = 0; i < 100 && created === undefined; i++) {
    const res = await call(hosts[0], 'POST', '/v1/admin/workspaces', { name: 'after recovery', slug: 'after-recovery' });
    if (res.status === 200) created = { id: res.body.id as string };
    else await sleep(100);
  }
  t.ok(created, 'admin writes succeed once PostgreSQL is back');
  for (const host of hosts) {
    let seen = false;
    for (let i = 0; i < 100 && !seen; i++) {
      seen = (await call(host, 'GET', `/v1/admin/workspaces/${created!.id}`)).status === 200;
      if (!seen) await sleep(20);
    }
    t.ok(seen, `${host.url} converged`);
  }
  const onB = await call(hosts[1], 'POST', '/v1/admin/workspaces', { name: 'on b', slug: 'after-recovery' });
  t.equal(onB.status, 409, 'the unique slug holds across hosts after recovery');
  stop = true;
  await Promise.all(load);
  t.same(failures, [], 'no chat completion failed');
  t.ok(served > 0);
});
