/** The multi-host helper itself: three real `gateway start` processes on one PostgreSQL and one Valkey answer on their own ports. */
import t from 'tap';
import { needServices } from './helpers/services.js';
import { distributedBackends, startHosts } from './helpers/hosts.js';
import { ADMIN_KEY } from './helpers/gateway.js';

t.test('three hosts start on shared backends and each answers with the bootstrap admin key', async (t) => {
  const svc = needServices(t, ['postgres', 'redis']);
  if (!svc) return;
  const backends = await distributedBackends(svc);
  const hosts = await startHosts(t, 3, { backends });
  t.equal(new Set(hosts.map((h) => h.url)).size, 3, 'three listeners');
  t.equal(new Set(hosts.map((h) => h.dataDir)).size, 3, 'three data dirs');
  for (const h of hosts) {
    const res = await fetch(`${h.url}/v1/api-keys`, { headers: { 'x-gateway-api-key': ADMIN_KEY } });
    t.equal(res.status, 200, `host ${h.url} answers`);
  }
  await hosts[1]!.kill();
  t.equal(hosts[1]!.cli.child.signalCode, 'SIGKILL');
});
