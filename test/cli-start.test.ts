/**
 * `gateway start` as operators meet it: the first admin key is printed as soon as it exists (so a
 * start that fails afterwards does not lose it), the banner names the address actually bound,
 * and the warnings an exposed gateway deserves.
 */
import t from 'tap';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { request } from 'undici';
import { runCli, startCli } from './helpers/process.js';
import { tempDir, writeFile } from './helpers/gateway.js';

const KEY_BANNER = /Created the first admin API key \(shown once, store it now\):\n\n {2}(gw-[A-Za-z0-9_-]{43})\n/;

function config(dir: string, pipeline: string, host = '127.0.0.1'): string {
  return writeFile(dir, `gw-${pipeline.length}-${host}.yaml`, `server: {host: ${host}, port: 8787}\nstore: {path: ${JSON.stringify(join(dir, 'data'))}}\npipeline: ${pipeline}\n`);
}

t.test('a first start that fails after making the admin key has printed it, and names the way back in', async (t) => {
  const taken = createServer();
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
  t.teardown(() => taken.close());
  const port = (taken.address() as { port: number }).port;
  const dir = tempDir();
  const yaml = config(dir, '[auth]');
  const env = { GATEWAY_ADMIN_KEY: '', GATEWAY_DATA_DIR: '', GATEWAY_CONFIG: '', GATEWAY_PORT: String(port) };

  const failed = await runCli(['start', '--config', yaml], env);
  t.equal(failed.code, 1, 'the start fails: the port is in use');
  const key = KEY_BANNER.exec(failed.stdout)?.[1];
  t.ok(key, 'the key was printed before the failure');
  t.match(failed.stderr, /gateway failed to start: .*EADDRINUSE/);
  t.match(failed.stderr, /gateway keys create --type organisation --name admin --preset admin/);

  // The printed key is the stored one: the next start (on a free port) accepts it, and makes no other.
  const gw = await startCli(t, ['start', '--config', yaml], { ...env, GATEWAY_PORT: '0' });
  t.notMatch(gw.stdout(), /Created the first admin API key/, 'no second key');
  const res = await request(`${gw.url}/v1/principal`, { headers: { 'x-gateway-api-key': key! } });
  t.equal(res.statusCode, 200);
  t.match(await res.body.json(), { kind: 'api_key', type: 'organisation', name: 'Bootstrap admin key' });
  gw.child.kill('SIGTERM');
  t.equal(await gw.exited, 0);
});

t.test('the banner names the bound address; an example admin key on all interfaces is a warning', async (t) => {
  const dir = tempDir();
  const yaml = config(dir, '[auth]', '0.0.0.0');
  const env = { GATEWAY_ADMIN_KEY: 'gw-admin-change-me', GATEWAY_DATA_DIR: '', GATEWAY_CONFIG: '', GATEWAY_PORT: '0' };
  const gw = await startCli(t, ['start', '--config', yaml], env);
  const port = new URL(gw.url).port;
  t.match(gw.stdout(), new RegExp(`gateway listening on http://127\\.0\\.0\\.1:${port} \\(bound to 0\\.0\\.0\\.0:${port}, all interfaces; config `));
  t.match(gw.stdout(), /WARNING: GATEWAY_ADMIN_KEY is an example value and 0\.0\.0\.0:\d+ listens on every interface/);
  t.notMatch(gw.stdout(), /Created the first admin API key/, 'GATEWAY_ADMIN_KEY set: nothing generated');
  gw.child.kill('SIGTERM');
  t.equal(await gw.exited, 0);

  // On loopback, or with a real secret, no warning.
  const local = await startCli(t, ['start', '--config', config(dir, '[auth]')], env);
  t.match(local.stdout(), /\(bound to 127\.0\.0\.1:\d+; config /);
  t.notMatch(local.stdout(), /WARNING/);
  local.child.kill('SIGTERM');
  t.equal(await local.exited, 0);
});

t.test('a pipeline without auth says that anyone can use it, and makes no admin key it would not check', async (t) => {
  const dir = tempDir();
  const env = { GATEWAY_ADMIN_KEY: '', GATEWAY_DATA_DIR: '', GATEWAY_CONFIG: '', GATEWAY_PORT: '0' };
  const open = await startCli(t, ['start', '--config', config(dir, '[]')], env);
  t.match(open.stdout(), /WARNING: the pipeline has no auth plugin: anyone who can reach 127\.0\.0\.1:\d+ can use this gateway/);
  t.notMatch(open.stdout(), /admin API key/);
  open.child.kill('SIGTERM');
  t.equal(await open.exited, 0);

  // Adding auth later: that start makes (and prints) the first admin key.
  const guarded = await startCli(t, ['start', '--config', config(dir, '[auth]')], env);
  t.match(guarded.stdout(), KEY_BANNER);
  t.notMatch(guarded.stdout(), /WARNING/);
  guarded.child.kill('SIGTERM');
  t.equal(await guarded.exited, 0);
});

t.test('gateway validate checks what start needs: readable TLS files and a writable data dir', async (t) => {
  const dir = tempDir();
  const notADir = writeFile(dir, 'plain-file', 'x');
  const yaml = writeFile(
    dir,
    'needs.yaml',
    `server:\n  tls: {cert: ./missing-cert.pem, key: ./missing-key.pem}\nstore: {path: ${JSON.stringify(join(notADir, 'data'))}}\npipeline: [auth]\n`,
  );
  const res = await runCli(['validate', '--config', yaml], { GATEWAY_DATA_DIR: '', GATEWAY_CONFIG: '' });
  t.equal(res.code, 1);
  t.match(res.stderr, /needs\.yaml:2:\d+ server\.tls\.cert: cannot read .*missing-cert\.pem \(ENOENT\)/);
  t.match(res.stderr, /needs\.yaml:2:\d+ server\.tls\.key: cannot read .*missing-key\.pem \(ENOENT\)/);
  t.match(res.stderr, /needs\.yaml:3:\d+ store\.path: the data dir .*plain-file\/data is not writable: .*plain-file\/data \(ENOTDIR\)/);
  t.equal(res.stdout, '');

  // A data dir that does not exist yet is fine when its parent is writable (start creates it).
  const fine = writeFile(dir, 'fine.yaml', `store: {path: ${JSON.stringify(join(dir, 'new', 'deeper', 'data'))}}\npipeline: [auth]\n`);
  const ok = await runCli(['validate', '--config', fine], { GATEWAY_DATA_DIR: '', GATEWAY_CONFIG: '' });
  t.equal(ok.code, 0, ok.stderr);
  t.match(ok.stdout, /fine\.yaml: OK \(1 plugins\)/);
});
