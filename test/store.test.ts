/**
 * The LMDB store: transactions that roll back, unique indexes, persistence across a reopen,
 * sealed secrets, concurrent read-modify-write from two processes, and cache invalidation
 * across processes.
 */
import t, { type Test } from 'tap';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openStore } from '../core/store/store.js';
import { createLogger } from '../core/logger.js';
import { uuidv7, nowIso } from '../core/store/ids.js';
import type { RateLimitPolicy } from '../core/store/records.js';
import { tempDir, writeFile } from './helpers/gateway.js';

const log = createLogger({ level: 'silent' });
const storeModule = fileURLToPath(new URL('../core/store/store.js', import.meta.url));

function policy(overrides: Partial<RateLimitPolicy> = {}): RateLimitPolicy {
  const now = nowIso();
  return {
    id: uuidv7(),
    name: 'p',
    conditions: [],
    group_by: [],
    type: 'requests',
    unit: 'rpm',
    value: 0,
    status: 'active',
    workspace_id: 'ws-1',
    organisation_id: 'org-1',
    created_at: now,
    last_updated_at: now,
    ...overrides,
  };
}

t.test('a throwing update writes nothing; indexes follow the record', async (t) => {
  const store = openStore({ dir: tempDir(), log, env: {} });
  t.teardown(() => store.close());
  const p = store.c.rateLimitPolicies.insert(policy());
  t.throws(() =>
    store.c.rateLimitPolicies.update(p.id, (r) => {
      r.value = 999;
      throw new Error('changed my mind');
    }),
  );
  t.equal(store.c.rateLimitPolicies.get(p.id)?.value, 0, 'rolled back');
  store.c.rateLimitPolicies.update(p.id, (r) => ({ ...r, workspace_id: 'ws-2' }));
  t.equal(store.c.rateLimitPolicies.list({ index: 'workspace', value: 'ws-1' }).total, 0, 'old index entry removed');
  t.equal(store.c.rateLimitPolicies.list({ index: 'workspace', value: 'ws-2' }).total, 1);
});

t.test('a unique index refuses a second owner, atomically', async (t) => {
  const store = openStore({ dir: tempDir(), log, env: {} });
  t.teardown(() => store.close());
  const base = { name: 'W', description: null, organisation_id: 'o', defaults: { metadata: {} }, usage_limits: [], rate_limits: [], status: 'active' as const, created_at: nowIso(), last_updated_at: nowIso() };
  store.c.workspaces.insert({ ...base, id: uuidv7(), slug: 'same' });
  const second = uuidv7();
  t.throws(() => store.c.workspaces.insert({ ...base, id: second, slug: 'same' }), { code: 'conflict', status: 409 });
  t.equal(store.c.workspaces.get(second), undefined, 'no half-written record');
});

t.test('data and sealed secrets survive a reopen', async (t) => {
  const dir = tempDir();
  const env = { GATEWAY_MASTER_KEY: 'x'.repeat(40) };
  const first = openStore({ dir, log, env });
  const p = first.c.rateLimitPolicies.insert(policy({ value: 42 }));
  const sealed = first.secrets.encrypt('sk-provider-secret');
  t.notMatch(sealed, 'sk-provider-secret');
  await first.close();
  const second = openStore({ dir, log, env });
  t.teardown(() => second.close());
  t.equal(second.c.rateLimitPolicies.get(p.id)?.value, 42);
  t.equal(second.secrets.decrypt(sealed), 'sk-provider-secret');
  t.throws(() => openStore({ dir: tempDir(), log, env: { GATEWAY_MASTER_KEY: 'short' } }), /at least 32/);
});

t.test('without GATEWAY_MASTER_KEY a key file is generated with mode 0600 and reused', async (t) => {
  const dir = tempDir();
  const { statSync } = await import('node:fs');
  const a = openStore({ dir, log, env: {} });
  const sealed = a.secrets.encrypt('v');
  await a.close();
  t.equal(statSync(join(dir, 'master.key')).mode & 0o777, 0o600);
  const b = openStore({ dir, log, env: {} });
  t.teardown(() => b.close());
  t.equal(b.secrets.decrypt(sealed), 'v');
});

function runChild(script: string, args: string[]): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [script, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.on('exit', (code) => resolve({ code, out }));
  });
}

t.test('two processes updating one record concurrently lose no update', async (t) => {
  const dir = tempDir();
  const store = openStore({ dir, log, env: {} });
  t.teardown(() => store.close());
  const p = store.c.rateLimitPolicies.insert(policy());
  const script = writeFile(
    tempDir(),
    'incr.mjs',
    `import { openStore } from ${JSON.stringify(storeModule)};
const log = { debug() {}, info() {}, warn() {}, error() {}, child() { return log; }, level: 'silent' };
const [dir, id, n] = process.argv.slice(2);
const store = openStore({ dir, log, env: {} });
for (let i = 0; i < Number(n); i++) store.c.rateLimitPolicies.update(id, (r) => ({ ...r, value: r.value + 1 }));
await store.close();
`,
  );
  const results = await Promise.all([runChild(script, [dir, p.id, '300']), runChild(script, [dir, p.id, '300'])]);
  t.same(results.map((r) => r.code), [0, 0]);
  // Also from this (third) process while the children ran.
  t.equal(store.c.rateLimitPolicies.get(p.id)?.value, 600, 'every increment landed');
});

/** A fresh store with one workspace under `slug`, closed at the end of the test. */
function storeWithWorkspace(t: Test, slug: string) {
  const dir = tempDir();
  const store = openStore({ dir, log, env: {} });
  t.teardown(() => store.close());
  const now = nowIso();
  const ws = store.c.workspaces.insert({ id: uuidv7(), slug, name: 'W', description: null, organisation_id: 'o', defaults: { metadata: {} }, usage_limits: [], rate_limits: [], status: 'active', created_at: now, last_updated_at: now });
  return { dir, store, ws };
}

/** The first lines of a child process script that opens the store: the import and a silent logger. */
const childPrelude = (): string => `import { openStore } from ${JSON.stringify(storeModule)};
const log = { debug() {}, info() {}, warn() {}, error() {}, child() { return log; }, level: 'silent' };`;

/**
 * A child process that writes to the store at `dir` and exits: `org <id>` inserts an organisation,
 * `rename <id> <slug>` renames a workspace, `outer <id> <slug>` does both in one outer transaction,
 * and `outer-die <id> <slug>` then exits at once, before the write signal's microtask can run.
 */
function storeWriter(): string {
  return writeFile(
    tempDir(),
    'write.mjs',
    `${childPrelude()}
const [dir, what, id, slug] = process.argv.slice(2);
const store = openStore({ dir, log, env: {} });
const now = new Date().toISOString();
const org = () => store.c.organisations.insert({ id: what === 'org' ? id : crypto.randomUUID(), name: 'other', created_at: now, last_updated_at: now });
const rename = () => store.c.workspaces.update(id, (w) => ({ ...w, slug }));
if (what === 'org') org();
else if (what === 'rename') rename();
else store.root.transactionSync(() => {
  org();
  rename();
});
if (what === 'outer-die') process.exit(0);
await store.close();
`,
  );
}

t.test('a memory cache sees another process\'s write at once', async (t) => {
  const { dir, store, ws } = storeWithWorkspace(t, 'before');
  t.equal(store.c.workspaces.cachedBy('slug', 'before')?.id, ws.id, 'cached');
  t.equal(store.c.workspaces.cached(ws.id)?.slug, 'before', 'cached by id too');
  t.equal(store.c.workspaces.cached('no-such-id'), undefined, 'a miss is cached as a miss');
  t.equal((await runChild(storeWriter(), [dir, 'rename', ws.id, 'after'])).code, 0);
  t.equal(store.c.workspaces.cachedBy('slug', 'before'), undefined, 'the stale entry is gone');
  t.equal(store.c.workspaces.cachedBy('slug', 'after')?.id, ws.id);
  t.equal(store.c.workspaces.cached(ws.id)?.slug, 'after', 'the by-id entry follows the write');
});

t.test('writes in an outer transaction elsewhere are seen at once, and so is a writer that died before signalling', async (t) => {
  // Other processes learn of a write from the `<env>-writes` signal, rewritten once the write's
  // outermost transaction has committed; without it they read LMDB at most once a second.
  const { dir, store, ws } = storeWithWorkspace(t, 'one');
  t.equal(store.c.workspaces.cachedBy('slug', 'one')?.id, ws.id);
  const writer = storeWriter();
  t.equal((await runChild(writer, [dir, 'outer', ws.id, 'two'])).code, 0);
  t.equal(store.c.workspaces.cachedBy('slug', 'one'), undefined, 'the outer transaction\'s write is seen on the next read');
  t.equal(store.c.workspaces.cachedBy('slug', 'two')?.id, ws.id);

  t.equal(store.c.workspaces.cached(ws.id)?.slug, 'two', 'cached by id');
  t.equal((await runChild(writer, [dir, 'outer-die', ws.id, 'three'])).code, 0);
  const started = performance.now();
  while (store.c.workspaces.cached(ws.id)?.slug === 'two' && performance.now() - started < 5000) await new Promise((r) => setTimeout(r, 20));
  const waited = performance.now() - started;
  t.equal(store.c.workspaces.cached(ws.id)?.slug, 'three', 'an unsignalled write is seen too');
  t.ok(waited < 2000, `within the signal's trust window (seen after ${Math.round(waited)} ms; bound 1000 ms, polled every 20 ms)`);
  t.equal(store.c.workspaces.cachedBy('slug', 'two'), undefined, 'and the stale entry is gone');
});

t.test("a write to another collection elsewhere does not hide the next write to this one", async (t) => {
  // Collections skip reading their own counter while the store-wide one stands still: a write to
  // `organisations` moves it with `workspaces` unchanged, and the later rename must still be seen.
  const { dir, store, ws } = storeWithWorkspace(t, 'first');
  t.equal(store.c.workspaces.cachedBy('slug', 'first')?.id, ws.id);
  const writer = storeWriter();
  t.equal((await runChild(writer, [dir, 'org', uuidv7()])).code, 0);
  t.equal(store.c.workspaces.cachedBy('slug', 'first')?.id, ws.id, 'an unrelated write leaves the record as it was');
  t.equal((await runChild(writer, [dir, 'rename', ws.id, 'second'])).code, 0);
  t.equal(store.c.workspaces.cachedBy('slug', 'first'), undefined, 'the rename after it is seen');
  t.equal(store.c.workspaces.cachedBy('slug', 'second')?.id, ws.id);
  // And a write in this process is seen at once by the collection that made it.
  store.c.workspaces.update(ws.id, (w) => ({ ...w, slug: 'third' }));
  t.equal(store.c.workspaces.cachedBy('slug', 'third')?.id, ws.id);
  t.equal(store.c.workspaces.cachedBy('slug', 'second'), undefined);
});
