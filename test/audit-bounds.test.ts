/**
 * The audit trail cannot be used to fill the disk: admin routes have their own body limit (413
 * before the body is parsed or audited), an audit record keeps a bounded summary of the request
 * with secrets masked, and retention removes records past an age and a count.
 */
import t from 'tap';
import { Readable } from 'node:stream';
import { request } from 'undici';
import { startGateway, insertKey, ADMIN_KEY } from './helpers/gateway.js';
import { boundedJson, maskSecrets, TRUNCATED_KEY } from '../core/admin/audit.js';
import { sweepAudit } from '../core/admin/audit-retention.js';
import { uuidv7 } from '../core/store/ids.js';
import type { AuditRecord } from '../core/store/records.js';

const SUMMARY = 8192;
/** An audit record: two summaries, a uri cut at 2 KB, and small fixed fields. */
const RECORD_BOUND = 2 * SUMMARY + 4096;
const CANARY = 'sk-audit-canary-0123456789';

async function post(url: string, key: string, body: Buffer | string): Promise<{ status: number; code: string | undefined }> {
  const res = await request(url, { method: 'POST', headers: { 'x-gateway-api-key': key, 'content-type': 'application/json' }, body });
  const json = (await res.body.json().catch(() => ({}))) as { error?: { code?: string } };
  return { status: res.statusCode, code: json.error?.code };
}

t.test('a 9 MB POST /v1/configs from a key without admin scopes gets 413 and leaves no large audit record', async (t) => {
  const gw = await startGateway(t, { yaml: 'pipeline: [auth, admin-resources]\n', env: { GATEWAY_ADMIN_KEY: ADMIN_KEY } });
  const noScopes = insertKey(gw.store, { workspace_id: gw.store.meta.get('default_workspace_id') as string, scopes: [] });
  const huge = Buffer.from(JSON.stringify({ name: 'x', config: {}, junk: 'a'.repeat(9 * 1024 * 1024) }));
  for (let i = 0; i < 3; i++) {
    const res = await post(`${gw.url}/v1/configs`, noScopes, huge);
    t.equal(res.status, 413, 'over the admin body limit (1 MB by default, under the 10 MB server limit)');
    t.equal(res.code, 'body_too_large');
  }
  // Chunked (no content-length): refused while reading, the same way.
  const chunked = await request(`${gw.url}/v1/configs`, {
    method: 'POST',
    headers: { 'x-gateway-api-key': noScopes, 'content-type': 'application/json' },
    body: Readable.from(
      (function* () {
        for (let i = 0; i < 9; i++) yield Buffer.alloc(1024 * 1024, 0x61);
      })(),
    ),
  });
  t.equal(chunked.statusCode, 413);
  await chunked.body.text();
  await gw.store.flush();
  const records = gw.store.c.audit.list().items;
  t.same(records.filter((r) => JSON.stringify(r).length > RECORD_BOUND), [], 'no audit record over the bound');
  // The same key with a small body is refused for its scopes, and that refusal is audited.
  t.equal((await post(`${gw.url}/v1/configs`, noScopes, JSON.stringify({ name: 'x', config: {} }))).status, 403);
  await gw.store.flush();
  t.equal(gw.store.c.audit.list().items.filter((r) => r.response_status_code === 403).length, 1, 'the refusal is in the trail');
});

t.test('admin_body_limit is configurable and never above body_limit', async (t) => {
  const gw = await startGateway(t, { yaml: 'server: {host: 127.0.0.1, port: 0, body_limit: 64kb, admin_body_limit: 1mb}\npipeline: [auth, admin-resources]\n', env: { GATEWAY_ADMIN_KEY: ADMIN_KEY } });
  const body = JSON.stringify({ name: 'x', config: {}, junk: 'a'.repeat(100 * 1024) });
  t.equal((await post(`${gw.url}/v1/configs`, ADMIN_KEY, body)).status, 413, 'the server limit still bounds admin routes');
  const small = await startGateway(t, { yaml: 'server: {host: 127.0.0.1, port: 0, admin_body_limit: 2kb}\npipeline: [auth, admin-resources]\n', env: { GATEWAY_ADMIN_KEY: ADMIN_KEY } });
  t.equal((await post(`${small.url}/v1/configs`, ADMIN_KEY, JSON.stringify({ name: 'x', config: {}, junk: 'a'.repeat(4096) }))).code, 'body_too_large');
  const ok = await post(`${small.url}/v1/configs`, ADMIN_KEY, JSON.stringify({ name: 'small', config: { provider: 'openai' } }));
  t.equal(ok.status, 200, 'a body under the admin limit is served');
});

t.test('a large admin body within the limit yields an audit record within the summary bound, secrets masked', async (t) => {
  const gw = await startGateway(t, { yaml: 'pipeline: [auth, admin-resources]\n', env: { GATEWAY_ADMIN_KEY: ADMIN_KEY } });
  const body = {
    name: 'big',
    config: {
      provider: 'openai',
      api_key: CANARY,
      override_params: { prompt: 'p'.repeat(600_000), list: Array.from({ length: 5000 }, (_, i) => i) },
    },
  };
  const created = await post(`${gw.url}/v1/configs?x=${'q'.repeat(3000)}`, ADMIN_KEY, JSON.stringify(body));
  t.equal(created.status, 200, 'the write itself is served');
  const record = gw.store.c.audit.list().items.find((r) => r.resource_type === 'config' && r.action === 'create');
  t.ok(record, 'the write is audited (committed with the change)');
  t.ok(Buffer.byteLength(record!.request_body) <= SUMMARY, `request_body ${Buffer.byteLength(record!.request_body)} bytes`);
  t.ok(Buffer.byteLength(record!.query_params) <= SUMMARY, 'query within the bound');
  t.ok(JSON.stringify(record).length <= RECORD_BOUND, 'the whole record within the bound');
  const summary = JSON.parse(record!.request_body) as Record<string, unknown>;
  t.ok(typeof summary[TRUNCATED_KEY] === 'number' && (summary[TRUNCATED_KEY] as number) > 600_000, 'marked as cut, with the full size');
  t.equal(summary.name, 'big', 'short fields are kept whole');
  t.notOk(JSON.stringify(gw.store.c.audit.list().items).includes(CANARY), 'the secret is in no audit record');
});

t.test('boundedJson: valid JSON within the bound, cut with markers, small values untouched', async (t) => {
  t.equal(boundedJson({ a: 1, b: 'x' }, 8192), '{"a":1,"b":"x"}');
  const masked = maskSecrets({ api_key: CANARY, nested: { client_secret: CANARY }, text: 'é'.repeat(50_000), keys: Object.fromEntries(Array.from({ length: 500 }, (_, i) => [`k${i}`.repeat(200), i])) });
  for (const bound of [256, 1000, 8192, 65536]) {
    const out = boundedJson(masked, bound);
    t.ok(Buffer.byteLength(out) <= bound, `≤ ${bound} bytes (${Buffer.byteLength(out)})`);
    t.doesNotThrow(() => JSON.parse(out), 'valid JSON');
    t.notOk(out.includes(CANARY), 'secrets stay masked');
  }
  const cut = JSON.parse(boundedJson(masked, 8192)) as Record<string, unknown>;
  t.match(cut.text, /…\[\+\d+ chars\]$/, 'a long string ends with how much was cut');
  t.equal(cut.api_key, '[masked]');
  t.match(cut['[more]'] ?? (cut.keys as Record<string, unknown>)['[more]'], /^\[\+\d+ keys\]$/, 'a long object says how many keys were left out');
  t.ok(Buffer.byteLength(boundedJson('x'.repeat(100_000), 10)) <= 256, 'the bound never goes under its minimum');
});

t.test('audit retention removes records past the age and the count bounds, in slices', async (t) => {
  const gw = await startGateway(t, { yaml: 'pipeline: []\n' });
  const audit = gw.store.c.audit;
  const day = 86_400_000;
  const now = Date.now();
  const record = (id: string): AuditRecord => ({
    id, timestamp: new Date().toISOString(), method: 'POST', uri: '/v1/x', request_id: id, request_body: '{}', query_params: '{}',
    user_id: null, api_key_id: null, user_type: 'api_key', organisation_id: 'o', workspace_id: null, response_status_code: 200,
    resource_type: 'x', action: 'create', client_ip: '127.0.0.1',
  });
  // uuidv7() is monotonic within a process: an id of another time gets that time's prefix.
  const idAt = (ms: number): string => {
    const h = ms.toString(16).padStart(12, '0');
    return `${h.slice(0, 8)}-${h.slice(8, 12)}${uuidv7().slice(13)}`;
  };
  const old = Array.from({ length: 30 }, (_, i) => idAt(now - 100 * day + i));
  const recent = Array.from({ length: 20 }, (_, i) => idAt(now - day + i));
  for (const id of [...old, ...recent]) audit.appendSync(record(id));
  t.equal(audit.count(), 50);

  let removed = await sweepAudit(gw.store, { retention_days: 90, max_records: 1_000_000, summary_bytes: SUMMARY, now, limit: 10 });
  t.equal(removed, 10, 'one slice at most');
  while (removed > 0) removed = await sweepAudit(gw.store, { retention_days: 90, max_records: 1_000_000, summary_bytes: SUMMARY, now, limit: 10 });
  t.same(audit.list().items.map((r) => r.id).sort(), [...recent].sort(), 'records older than 90 days are gone, recent ones kept');

  await sweepAudit(gw.store, { retention_days: 90, max_records: 5, summary_bytes: SUMMARY, now });
  t.same(audit.list().items.map((r) => r.id).sort(), recent.slice(-5).sort(), 'past max_records the oldest go');
});
