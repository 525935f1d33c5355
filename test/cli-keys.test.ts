/**
 * `gateway keys create`, run as operators run it (the built CLI in a child process), against the
 * data dir of a gateway that is already serving: the printed key must authenticate on the running
 * gateway's next request, with no restart.
 */
import t from 'tap';
import { join } from 'node:path';
import { request } from 'undici';
import { runCli, startCli } from './helpers/process.js';
import { startMock, direct, tempDir, writeFile, type MockUpstream } from './helpers/gateway.js';

const chat = JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }] });

async function callModel(url: string, mock: MockUpstream, key: string): Promise<{ status: number; code: string | undefined }> {
  const res = await request(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { ...direct(mock), 'content-type': 'application/json', 'x-gateway-api-key': key },
    body: chat,
  });
  const body = (await res.body.json()) as { error?: { code: string } };
  return { status: res.statusCode, code: body.error?.code };
}

/** `id: …` and `key: …` lines, as the command prints them. */
function printed(stdout: string): { id: string; key: string } {
  const m = /^id: ([0-9a-f-]{36})\nkey: (gw-[A-Za-z0-9_-]{43})\n$/.exec(stdout);
  if (m === null) throw new Error(`unexpected output: ${JSON.stringify(stdout)}`);
  return { id: m[1]!, key: m[2]! };
}

t.test('keys created by the CLI authenticate on a gateway already running on the same data dir', async (t) => {
  const mock = await startMock(t);
  const dir = tempDir();
  const data = join(dir, 'data');
  const yaml = writeFile(dir, 'gw.yaml', `server: {host: 127.0.0.1, port: 0}\nstore: {path: ${JSON.stringify(data)}}\npipeline: [auth]\n`);
  const env = { GATEWAY_ADMIN_KEY: '', GATEWAY_DATA_DIR: '', GATEWAY_CONFIG: '' };
  const gw = await startCli(t, ['start', '--config', yaml], env);
  t.equal((await callModel(gw.url, mock, 'gw-not-a-key')).status, 401, 'auth is on');

  // Through --config: the YAML's store.path.
  const org = await runCli(['keys', 'create', '--type', 'organisation', '--name', 'ops', '--preset', 'admin', '--config', yaml], env);
  t.equal(org.code, 0, org.stderr);
  const orgKey = printed(org.stdout);
  t.match(org.stderr, /not shown again/);
  t.match(org.stderr, /created a organisation-service API key with \d+ scopes \(preset admin\): .*workspaces\.create/, 'it says what it granted');

  // Presets carry only their scopes: a completions key calls models and nothing else.
  const calls = await runCli(['keys', 'create', '--type', 'workspace-service', '--name', 'app', '--preset', 'completions', '--config', yaml], env);
  t.equal(calls.code, 0, calls.stderr);
  t.match(calls.stderr, /with 1 scope \(preset completions\): completions\.write\n/);
  const appKey = printed(calls.stdout).key;
  t.same(await callModel(gw.url, mock, appKey), { status: 200, code: undefined });
  const principal = await request(`${gw.url}/v1/principal`, { headers: { 'x-gateway-api-key': appKey } });
  t.same(((await principal.body.json()) as { scopes: string[] }).scopes, ['completions.write'], 'the key holds that one scope');
  const reader = await runCli(['keys', 'create', '--type', 'workspace-user', '--name', 'ro', '--preset', 'read-only', '--config', yaml], env);
  t.equal(reader.code, 0, reader.stderr);
  t.notMatch(reader.stderr, /\.(create|update|delete|write)\b/, 'read-only grants no write');
  t.match(reader.stderr, /configs\.read.*logs\.view/);
  t.same(await callModel(gw.url, mock, orgKey.key), { status: 200, code: undefined }, 'the running gateway accepts the new key at once');

  // Through GATEWAY_DATA_DIR (the repository's default config), a named workspace and scopes.
  const ws = await runCli(['keys', 'create', '--type', 'workspace-service', '--name', 'svc', '--workspace', 'default', '--scopes', 'completions.write,logs.write'], {
    ...env,
    GATEWAY_DATA_DIR: data,
  });
  t.equal(ws.code, 0, ws.stderr);
  t.equal((await callModel(gw.url, mock, printed(ws.stdout).key)).status, 200);

  // Scopes are the ones asked for: without completions.write the key authenticates but may not call models.
  const narrow = await runCli(['keys', 'create', '--type=workspace-user', '--name=reader', '--scopes=configs.read', '--config', yaml], env);
  t.equal(narrow.code, 0, narrow.stderr);
  t.same(await callModel(gw.url, mock, printed(narrow.stdout).key), { status: 403, code: 'insufficient_scope' });

  gw.child.kill('SIGTERM');
  t.equal(await gw.exited, 0);
});

t.test('on a fresh data dir the command also prints the bootstrap admin key, once', async (t) => {
  const data = join(tempDir(), 'data');
  const env = { GATEWAY_ADMIN_KEY: '', GATEWAY_DATA_DIR: data, GATEWAY_CONFIG: '' };
  const first = await runCli(['keys', 'create', '--type', 'workspace-service', '--name', 'first', '--preset', 'completions'], env);
  t.equal(first.code, 0, first.stderr);
  t.match(first.stdout, /^admin_key: gw-[A-Za-z0-9_-]{43}\nid: [0-9a-f-]{36}\nkey: gw-[A-Za-z0-9_-]{43}\n$/);
  const second = await runCli(['keys', 'create', '--type', 'workspace-service', '--name', 'second', '--preset', 'completions'], env);
  t.equal(second.code, 0, second.stderr);
  printed(second.stdout);
});
