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
  const org = await runCli(['keys', 'create', '--type', 'organisation', '--name', 'ops', '--config', yaml], env);
  t.equal(org.code, 0, org.stderr);
  const orgKey = printed(org.stdout);
  t.match(org.stderr, /not shown again/);
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

  // Mistakes: stderr, exit 1, nothing on stdout.
  const mistakes: Array<[string[], RegExp]> = [
    [['--type', 'workspace-service', '--name', 'x', '--workspace', 'nope'], /workspace "nope" does not exist/],
    [['--type', 'robot', '--name', 'x'], /unknown key type "robot"/],
    [['--type', 'organisation'], /--name is required/],
    [['--name', 'x'], /--type is required/],
    [['--type', 'organisation', '--name', 'x', '--workspace', 'default'], /--workspace applies only to workspace keys/],
    [['--type', 'organisation', '--name', 'x', '--scopes', 'logs.write'], /cannot be given to organisation-service keys/],
    [['--type', 'organisation', '--name', 'x', '--scopes', 'configs.fly'], /unknown scope "configs.fly"/],
    [['--type', 'organisation', '--name', 'x', '--colour', 'red'], /unknown argument "--colour"/],
  ];
  for (const [args, message] of mistakes) {
    const res = await runCli(['keys', 'create', ...args, '--config', yaml], env);
    t.equal(res.code, 1, args.join(' '));
    t.match(res.stderr, message);
    t.equal(res.stdout, '');
  }
  t.equal((await runCli(['keys', 'list', '--config', yaml], env)).code, 1, 'an unknown subcommand is an error');

  gw.child.kill('SIGTERM');
  t.equal(await gw.exited, 0);
});

t.test('on a fresh data dir the command also prints the bootstrap admin key, once', async (t) => {
  const data = join(tempDir(), 'data');
  const env = { GATEWAY_ADMIN_KEY: '', GATEWAY_DATA_DIR: data, GATEWAY_CONFIG: '' };
  const first = await runCli(['keys', 'create', '--type', 'workspace-service', '--name', 'first'], env);
  t.equal(first.code, 0, first.stderr);
  t.match(first.stdout, /^admin_key: gw-[A-Za-z0-9_-]{43}\nid: [0-9a-f-]{36}\nkey: gw-[A-Za-z0-9_-]{43}\n$/);
  const second = await runCli(['keys', 'create', '--type', 'workspace-service', '--name', 'second'], env);
  t.equal(second.code, 0, second.stderr);
  printed(second.stdout);
});
