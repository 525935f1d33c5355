/**
 * A start loads no module it does not use (README, Benchmarks: "Startup"): not the MCP SDK and
 * zod (loaded on the first MCP request), nor the distributed mode's clients, the AWS signer, jose,
 * fast-json-stringify (the first admin route compiled), diff, the mock upstream, ajv's schema
 * compiler (the gateway's own schemas are generated at build time; ajv loads with the first admin
 * call), or undici's index (all of undici: fetch, WebSocket, cookies, mocks). A module-resolution hook in the real CLI process reports each of them it resolves, and a
 * watch on CommonJS loads each one loaded through `require` (which ESM hooks do not see).
 */
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parse } from 'yaml';
import { ADMIN_KEY, tempDir, writeFile } from './helpers/gateway.js';
import { REPO, startCli } from './helpers/process.js';

/**
 * Modules a start must not load (each has its own lazy load in the code). ajv's runtime helpers
 * (`ajv/dist/runtime/`) are what the generated validators use; of undici, a start loads the agent
 * and the connector from their own files (core/upstream/undici.ts), not its index.
 */
const LAZY = /node_modules\/(@modelcontextprotocol\/sdk|zod|pg|ioredis|@smithy|jose|fast-json-stringify|diff)\/|node_modules\/ajv\/dist\/(ajv|core|compile)\b|node_modules\/undici\/index\.js|dist\/bench\//;

/** An ESM resolve hook (node:module register) that reports each such module on stderr. */
const RESOLVE = `const lazy = new RegExp(${JSON.stringify(LAZY.source)}); export async function resolve(s, c, next) { const r = await next(s, c); if (lazy.test(r.url)) console.error('lazy module resolved: ' + r.url); return r; }`;
/** The same for CommonJS: every `require` (createRequire's included) goes through Module._load. */
const WATCH = `const lazy = new RegExp(${JSON.stringify(LAZY.source)}); const load = Module._load; Module._load = function (request, parent, isMain) { let file = request; try { file = Module._resolveFilename(request, parent, isMain); } catch {} if (lazy.test(file)) console.error('lazy module required: ' + file); return load.apply(this, arguments); };`;
const HOOK = [
  "import Module, { register } from 'node:module';",
  `register('data:text/javascript,' + encodeURIComponent(${JSON.stringify(RESOLVE)}));`,
  WATCH,
].join('\n');

t.test('a gateway on the shipped pipeline starts without the modules it does not use, and loads the MCP SDK for its first MCP request', async (t) => {
  const dir = tempDir();
  const hook = writeFile(dir, 'hook.mjs', HOOK);
  const pipeline = (parse(readFileSync(join(REPO, 'config/gateway.yaml'), 'utf8')) as { pipeline: unknown[] }).pipeline;
  t.ok(pipeline.includes('mcp-gateway'), 'the shipped pipeline has the MCP gateway');
  const yaml = writeFile(dir, 'gw.yaml', `server: {host: 127.0.0.1, port: 0}\nstore: {path: ${JSON.stringify(join(dir, 'data'))}}\npipeline: ${JSON.stringify(pipeline)}\n`);
  const gw = await startCli(t, ['start', '--config', yaml], { GATEWAY_ADMIN_KEY: ADMIN_KEY, NODE_OPTIONS: `--import=${pathToFileURL(hook).href}` });
  t.notMatch(gw.stderr(), /lazy module (resolved|required)/, 'started without loading any of them');

  // A workspace key that may call MCP tools, made through the admin API (which needs no SDK either).
  const made = await fetch(`${gw.url}/v1/api-keys/workspace/service`, {
    method: 'POST',
    headers: { 'x-gateway-api-key': ADMIN_KEY, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'agent', scopes: ['mcp.invoke'], workspace_id: 'default' }),
  });
  t.equal(made.status, 200);
  const { key } = (await made.json()) as { key: string };
  t.notMatch(gw.stderr(), /lazy module resolved: .*@modelcontextprotocol/, 'an admin call loads no SDK either');
  t.match(gw.stderr(), /lazy module required: .*node_modules\/ajv\/dist\/ajv\.js/, 'the first admin call loaded ajv to compile its route (the watch sees CommonJS loads)');
  t.match(gw.stderr(), /lazy module required: .*node_modules\/fast-json-stringify\//, 'and fast-json-stringify for its answer');

  const initialize = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'lazy-test', version: '1' } } };
  const res = await fetch(`${gw.url}/v1/mcp`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify(initialize),
  });
  const text = await res.text();
  t.equal(res.status, 200, text.slice(0, 300));
  t.match(text, /"serverInfo"/, 'the first request is answered by the SDK server, loaded for it');
  t.ok(res.headers.get('mcp-session-id'), 'a session was opened');
  t.match(gw.stderr(), /lazy module resolved: .*@modelcontextprotocol\/sdk\/.*\/types\.js/, 'the SDK was loaded for that request');

  gw.child.kill('SIGTERM');
  t.equal(await gw.exited, 0, 'stops cleanly with a session open');
});

t.test('the agent a start makes without undici\'s index keeps the Dispatcher API plugins call', async (t) => {
  // A fresh process: the tests' own imports of undici would have installed the API anyway.
  const script = [
    "import { createRequire } from 'node:module';",
    `const { Agent } = await import(${JSON.stringify(pathToFileURL(join(REPO, 'dist/core/upstream/undici.js')).href)});`,
    'const agent = new Agent();',
    "const index = Object.keys(createRequire(import.meta.url).cache).some((f) => /node_modules\\/undici\\/index\\.js$/.test(f));",
    "process.stdout.write(JSON.stringify({ index, api: ['request', 'stream', 'pipeline', 'upgrade', 'connect', 'dispatch'].filter((m) => typeof agent[m] === 'function') }));",
    'await agent.close();',
  ].join('\n');
  const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
  t.equal(run.status, 0, run.stderr);
  t.same(JSON.parse(run.stdout), { index: false, api: ['request', 'stream', 'pipeline', 'upgrade', 'connect', 'dispatch'] }, 'undici\'s index not loaded, the API there');
});
