/**
 * The control plane under a real process: a kill -9 during a burst of admin writes loses no
 * acknowledged write, data survives a restart, and a key revoked by another process stops
 * working at the gateway at once.
 */
import t from 'tap';
import { join } from 'node:path';
import { request } from 'undici';
import { startCli } from './helpers/process.js';
import { tempDir, writeFile, ADMIN_KEY } from './helpers/gateway.js';
import { openStore } from '../core/store/store.js';
import { createLogger } from '../core/logger.js';
import { generateApiKey, hashApiKey, maskApiKey } from '../core/store/api-key-hash.js';
import { uuidv7, nowIso } from '../core/store/ids.js';
import { DEFAULT_WORKSPACE_SCOPES } from '../core/auth/scopes.js';

const body = JSON.stringify({ conditions: [{ key: 'workspace_id', value: 'x' }], group_by: [{ key: 'api_key' }], type: 'requests', unit: 'rpm', value: 10 });

t.test('kill -9 mid-burst: every acknowledged write is there after a restart', async (t) => {
  const dir = tempDir();
  const data = join(dir, 'data');
  const yaml = writeFile(dir, 'gw.yaml', `server: {host: 127.0.0.1, port: 0}\nstore: {path: ${data}}\npipeline: [auth, admin-policies]\n`);
  const env = { GATEWAY_ADMIN_KEY: ADMIN_KEY, GATEWAY_MASTER_KEY: 'm'.repeat(40), GATEWAY_LOG_LEVEL: 'warn' };
  const cli = await startCli(t, ['start', '--config', yaml], env);

  const acknowledged: string[] = [];
  let stop = false;
  const writer = async (): Promise<void> => {
    while (!stop) {
      try {
        const res = await request(`${cli.url}/v1/policies/rate-limits`, {
          method: 'POST',
          headers: { 'x-gateway-api-key': ADMIN_KEY, 'content-type': 'application/json' },
          body,
        });
        const json = (await res.body.json()) as { id?: string };
        if (res.statusCode === 200 && json.id) acknowledged.push(json.id);
      } catch {
        return; // the process is gone
      }
    }
  };
  const writers = Array.from({ length: 16 }, writer);
  // Killed mid-stream once enough writes were acknowledged (however loaded this machine is), writers still sending.
  for (let waited = 0; acknowledged.length < 60 && waited < 30_000; waited += 10) await new Promise((r) => setTimeout(r, 10));
  cli.child.kill('SIGKILL');
  await cli.exited;
  stop = true;
  await Promise.all(writers);
  t.ok(acknowledged.length > 50, `${acknowledged.length} writes acknowledged before the kill`);

  const store = openStore({ dir: data, log: createLogger({ level: 'silent' }), env });
  const missing = acknowledged.filter((id) => store.c.rateLimitPolicies.get(id) === undefined);
  t.same(missing, [], 'no acknowledged write is missing');
  const total = store.c.rateLimitPolicies.list().total;
  t.ok(total >= acknowledged.length && total <= acknowledged.length + 16, `stored ${total}: at most the in-flight ones extra`);
  await store.close();

  const again = await startCli(t, ['start', '--config', yaml], env);
  const res = await request(`${again.url}/v1/policies/rate-limits/${acknowledged.at(-1)}`, { headers: { 'x-gateway-api-key': ADMIN_KEY } });
  t.equal(res.statusCode, 200, 'served again after the restart');
  await res.body.text();
  again.child.kill('SIGTERM');
  t.equal(await again.exited, 0);
});

t.test('kill -9 mid-burst: every acknowledged admin write has its audit record (same transaction)', async (t) => {
  const dir = tempDir();
  const data = join(dir, 'data');
  const yaml = writeFile(dir, 'gw.yaml', `server: {host: 127.0.0.1, port: 0}\nstore: {path: ${data}}\npipeline: [auth, admin-policies]\n`);
  const env = { GATEWAY_ADMIN_KEY: ADMIN_KEY, GATEWAY_MASTER_KEY: 'm'.repeat(40), GATEWAY_LOG_LEVEL: 'warn' };
  const cli = await startCli(t, ['start', '--config', yaml], env);

  // Each acknowledged write: the policy id and the request id its audit record carries.
  const acknowledged: Array<{ id: string; requestId: string }> = [];
  let stop = false;
  const writer = async (): Promise<void> => {
    while (!stop) {
      try {
        const res = await request(`${cli.url}/v1/policies/rate-limits`, {
          method: 'POST',
          headers: { 'x-gateway-api-key': ADMIN_KEY, 'content-type': 'application/json' },
          body,
        });
        const json = (await res.body.json()) as { id?: string };
        const requestId = res.headers['x-gateway-request-id'];
        if (res.statusCode === 200 && json.id && typeof requestId === 'string') acknowledged.push({ id: json.id, requestId });
      } catch {
        return; // the process is gone
      }
    }
  };
  const writers = Array.from({ length: 16 }, writer);
  // Killed mid-stream once enough writes were acknowledged (however fast this machine is), writers still sending.
  for (let waited = 0; acknowledged.length < 60 && waited < 30_000; waited += 10) await new Promise((r) => setTimeout(r, 10));
  cli.child.kill('SIGKILL');
  await cli.exited;
  stop = true;
  await Promise.all(writers);
  t.ok(acknowledged.length > 50, `${acknowledged.length} writes acknowledged before the kill`);

  const store = openStore({ dir: data, log: createLogger({ level: 'silent' }), env });
  t.teardown(() => store.close());
  const audited = new Map(store.c.audit.list().items.map((r) => [r.request_id, r]));
  const unaudited = acknowledged.filter((a) => audited.get(a.requestId)?.response_status_code !== 200);
  t.same(unaudited, [], 'every acknowledged write has its audit record with status 200');
  // The converse: a stored policy never lacks its record (the change and the record commit together).
  t.equal(store.c.audit.list().total, store.c.rateLimitPolicies.list().total, 'one audit record per stored policy');
});

t.test('a key revoked by another process is refused at once', async (t) => {
  const dir = tempDir();
  const data = join(dir, 'data');
  const yaml = writeFile(dir, 'gw.yaml', `server: {host: 127.0.0.1, port: 0}\nstore: {path: ${data}}\npipeline: [auth, admin-policies]\n`);
  const env = { GATEWAY_ADMIN_KEY: ADMIN_KEY, GATEWAY_MASTER_KEY: 'm'.repeat(40), GATEWAY_LOG_LEVEL: 'warn' };
  const cli = await startCli(t, ['start', '--config', yaml], env);
  const store = openStore({ dir: data, log: createLogger({ level: 'silent' }), env });
  t.teardown(() => store.close());

  const raw = generateApiKey();
  const now = nowIso();
  const id = uuidv7();
  store.c.apiKeys.insert({
    id, name: 'ws key', description: null, type: 'workspace-service', organisation_id: store.meta.get('organisation_id') as string,
    workspace_id: store.meta.get('default_workspace_id') as string, user_id: null, hash: hashApiKey(raw), previous_hash: null,
    previous_expires_at: null, masked_key: maskApiKey(raw), status: 'active', scopes: [...DEFAULT_WORKSPACE_SCOPES], defaults: null,
    rate_limits: null, usage_limits: null, alert_emails: [], expires_at: null, rotation_policy: null, creation_mode: 'api',
    last_reset_at: null, deleted_at: null, created_at: now, last_updated_at: now,
  });
  const list = async (): Promise<number> => {
    const res = await request(`${cli.url}/v1/policies/rate-limits`, { headers: { 'x-gateway-api-key': raw } });
    await res.body.text();
    return res.statusCode;
  };
  t.equal(await list(), 200, 'a key written by another process works at once');
  t.equal(await list(), 200, 'and is cached');
  store.c.apiKeys.update(id, (k) => ({ ...k, deleted_at: nowIso(), last_updated_at: nowIso() }));
  t.equal(await list(), 401, 'revoked in another process: refused on the next request');
  cli.child.kill('SIGTERM');
  t.equal(await cli.exited, 0);
});
