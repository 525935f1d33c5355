/**
 * The process lifecycle, through the real CLI: start on the shipped config, drain on SIGTERM,
 * reload on SIGHUP (valid and invalid), and `gateway validate`.
 */
import t from 'tap';
import net from 'node:net';
import { join } from 'node:path';
import { request } from 'undici';
import { startCli, runCli } from './helpers/process.js';
import { startGateway, startMock, direct, tempDir, writeFile } from './helpers/gateway.js';
import { loadConfigText } from '../core/config/load.js';
import { definePlugin, type PluginDefinition } from '../core/plugin.js';

// Real gateway processes started, reloaded and stopped: 30–37 s in CI, half of tap's 60 s default.
t.setTimeout(180_000);

const streamBody = JSON.stringify({ model: 'm', stream: true, messages: [{ role: 'user', content: 'drain me' }] });

function refused(url: string): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const s = net.connect(Number(port), hostname);
    s.once('connect', () => {
      s.destroy();
      resolve(false);
    });
    s.once('error', () => resolve(true));
  });
}

t.test('npm start: the shipped config runs and stops cleanly', async (t) => {
  const cli = await startCli(t, ['start'], { GATEWAY_PORT: '0', GATEWAY_DATA_DIR: join(tempDir(), 'data') });
  const health = await request(`${cli.url}/health`);
  t.same(await health.body.json(), { status: 'ok' });
  cli.child.kill('SIGINT');
  t.equal(await cli.exited, 0);
});

t.test('SIGTERM drains: in-flight streams finish, new connections are refused, exit 0', async (t) => {
  const mock = await startMock(t);
  const dir = tempDir();
  const yaml = writeFile(dir, 'gw.yaml', 'server: {host: 127.0.0.1, port: 0, shutdown_grace: 5s}\n');
  const cli = await startCli(t, ['start', '--config', yaml]);
  const res = await fetch(`${cli.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { ...direct(mock, 'chunks=8;chunk_delay=100'), 'content-type': 'application/json' },
    body: streamBody,
  });
  const reader = res.body!.getReader();
  let text = new TextDecoder().decode((await reader.read()).value);
  cli.child.kill('SIGTERM');
  await new Promise((r) => setTimeout(r, 150));
  t.ok(await refused(cli.url), 'no new connections once draining');
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    text += new TextDecoder().decode(value);
  }
  t.match(text, /data: \[DONE\]\n\n$/, 'the in-flight stream finished normally');
  t.equal(await cli.exited, 0);
});

t.test('SIGTERM: the grace period bounds the wait', async (t) => {
  const mock = await startMock(t);
  const yaml = writeFile(tempDir(), 'gw.yaml', 'server: {host: 127.0.0.1, port: 0, shutdown_grace: 300ms}\n');
  const cli = await startCli(t, ['start', '--config', yaml]);
  const res = await fetch(`${cli.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { ...direct(mock, 'chunks=100;chunk_delay=100'), 'content-type': 'application/json' },
    body: streamBody,
  });
  const reader = res.body!.getReader();
  await reader.read();
  const started = Date.now();
  cli.child.kill('SIGTERM');
  t.equal(await cli.exited, 0);
  t.ok(Date.now() - started < 3000, `stopped ${Date.now() - started} ms after SIGTERM`);
  const rest = await reader.read().then(
    async (r) => {
      let s = r.value ? new TextDecoder().decode(r.value) : '';
      for (;;) {
        const n = await reader.read();
        if (n.done) return s;
        s += new TextDecoder().decode(n.value);
      }
    },
    () => 'cut',
  );
  t.notMatch(rest, /\[DONE\]/, 'the long stream was cut, not completed');
});

t.test('SIGHUP reloads a valid config and refuses an invalid one', async (t) => {
  const mock = await startMock(t);
  const dir = tempDir();
  writeFile(
    dir,
    'stamp.mjs',
    "export default { name: 'stamp', setup(app, o) { return { onResponseHeaders(ctx, head) { head.headers['x-stamp'] = o.value; } }; } };\n",
  );
  const yaml = writeFile(dir, 'gw.yaml', 'server: {host: 127.0.0.1, port: 0}\npipeline: []\n');
  const cli = await startCli(t, ['start', '--config', yaml]);
  const stamp = async (): Promise<string | undefined> => {
    const res = await request(`${cli.url}/v1/models`, { headers: direct(mock) });
    await res.body.text();
    return res.headers['x-stamp'] as string | undefined;
  };
  t.equal(await stamp(), undefined);

  writeFile(dir, 'gw.yaml', 'server: {host: 127.0.0.1, port: 0}\npipeline:\n  - ./stamp.mjs: {value: v2}\n');
  cli.child.kill('SIGHUP');
  for (let i = 0; i < 100 && !cli.stderr().includes('config reloaded'); i++) await new Promise((r) => setTimeout(r, 20));
  t.equal(await stamp(), 'v2', 'the new pipeline serves new requests');

  writeFile(dir, 'gw.yaml', 'server: {host: 127.0.0.1, port: 0}\npipeline:\n  - ./stamp.mjs: {value: v3}\n  - nonexistent-plugin\n');
  cli.child.kill('SIGHUP');
  for (let i = 0; i < 100 && !cli.stderr().includes('reload refused'); i++) await new Promise((r) => setTimeout(r, 20));
  t.match(cli.stderr(), /reload refused.*gw\.yaml:4:5 pipeline\[1\]: unknown plugin \\"nonexistent-plugin\\"/);
  t.equal(await stamp(), 'v2', 'the old config keeps serving');

  writeFile(dir, 'gw.yaml', 'server:\n  port: [not, a, port]\n');
  cli.child.kill('SIGHUP');
  for (let i = 0; i < 100 && cli.stderr().split('reload refused').length < 3; i++) await new Promise((r) => setTimeout(r, 20));
  t.match(cli.stderr(), /gw\.yaml:2:9 server\.port/);
  t.equal(await stamp(), 'v2');
  cli.child.kill('SIGTERM');
  t.equal(await cli.exited, 0);
});

t.test('gateway validate prints file:line:column for every problem', async (t) => {
  const dir = tempDir();
  const bad = writeFile(dir, 'bad.yaml', 'server:\n  port: 99999\n  prot: 1\npipeline:\n  - ./missing-plugin.js\n');
  const res = await runCli(['validate', '--config', bad]);
  t.equal(res.code, 1);
  const lines = res.stderr.trim().split('\n');
  t.match(lines[0], /bad\.yaml:2:9 server\.port: must be <= 65535/);
  t.match(lines[1], /bad\.yaml:3:3 server\.prot: unknown key "prot" \(did you mean "port"\?\)/);

  const plugin = writeFile(dir, 'bad-plugin.yaml', 'pipeline:\n  - ./missing-plugin.js\n');
  const res2 = await runCli(['validate', '--config', plugin]);
  t.equal(res2.code, 1);
  t.match(res2.stderr, /bad-plugin\.yaml:2:5 pipeline\[0\]: cannot load plugin "\.\/missing-plugin\.js"/);

  const good = await runCli(['validate'], { GATEWAY_CONFIG: 'config/gateway.yaml' });
  t.equal(good.code, 0, good.stderr);
  t.match(good.stdout, /OK/);
});

t.test('reload in process: in-flight requests finish on the old pipeline, which closes after them', async (t) => {
  const mock = await startMock(t);
  const events: string[] = [];
  const gen = (n: string): PluginDefinition<never> =>
    definePlugin({
      name: 'gen',
      setup: () => ({
        onResponseHeaders(_ctx, head) {
          head.headers['x-gen'] = n;
        },
        onResponseEnd: () => void events.push(`end:${n}`),
        close: () => void events.push(`close:${n}`),
      }),
    }) as PluginDefinition<never>;
  const gw = await startGateway(t, { yaml: 'pipeline: [gen1]\n', plugins: { gen1: gen('1'), gen2: gen('2') } });
  const slow = request(`${gw.url}/v1/models`, { headers: direct(mock, 'delay=400') }).then(async (r) => {
    await r.body.text();
    return r.headers['x-gen'];
  });
  await new Promise((r) => setTimeout(r, 100));
  const { config, locate } = loadConfigText('server: {host: 127.0.0.1, port: 0}\npipeline: [gen2]\n', '/tmp/x.yaml', {});
  await gw.reload(config!, locate);
  const fresh = await request(`${gw.url}/v1/models`, { headers: direct(mock) });
  await fresh.body.text();
  t.equal(fresh.headers['x-gen'], '2', 'new requests use the new pipeline at once');
  t.equal(await slow, '1', 'the in-flight request finished on the old one');
  for (let i = 0; i < 250 && !events.includes('close:1'); i++) await new Promise((r) => setTimeout(r, 20));
  // The gateway's side of the order: the client reads the answer on a later turn of this same
  // process's loop than the one that finished the request, so its read is not ordered against the close.
  t.same(
    events.filter((e) => e.endsWith(':1')),
    ['end:1', 'close:1'],
    'the old pipeline closed after its last request',
  );
  t.notOk(events.includes('close:2'), 'the new pipeline stays open');
});

t.test('server.workers: 2 forks two workers on one port; SIGTERM to the primary drains both', async (t) => {
  const mock = await startMock(t);
  const yaml = writeFile(tempDir(), 'gw.yaml', 'server: {host: 127.0.0.1, port: 0, workers: 2}\n');
  const cli = await startCli(t, ['start', '--config', yaml]);
  t.match(cli.stdout(), /2 workers/);
  const pids = new Set([...cli.stderr().matchAll(/"msg":"listening".*?"pid":(\d+)/g)].map((m) => m[1]));
  t.equal(pids.size, 2, 'two worker processes are listening');
  t.notOk(pids.has(String(cli.child.pid)), 'the primary does not serve');
  const answers = await Promise.all(
    Array.from({ length: 20 }, () =>
      request(`${cli.url}/v1/models`, { headers: direct(mock) }).then(async (r) => {
        await r.body.text();
        return r.statusCode;
      }),
    ),
  );
  t.same(new Set(answers), new Set([200]));
  cli.child.kill('SIGTERM');
  t.equal(await cli.exited, 0);
  t.equal(cli.stderr().match(/"msg":"stopped"/g)?.length, 2, 'both workers drained and stopped');
});
