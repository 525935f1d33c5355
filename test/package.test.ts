/**
 * The npm package on its own: `npm pack` of this build, installed into an empty folder, runs
 * `gateway validate`, `gateway mock-upstream` and `gateway start` on its shipped default config
 * (data in the folder it runs in), and serves a plugin that imports the plugin API from the
 * package name, in JavaScript and type-checked TypeScript. Nothing here runs from the source tree:
 * the repository's lock file only lets npm resolve the package's dependencies from its cache
 * (`npm ci --offline`), as a test must not need the network.
 */
import t from 'tap';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'undici';
import { REPO } from './helpers/process.js';
import { ADMIN_KEY, tempDir, type Teardown } from './helpers/gateway.js';

// Packing and an offline install take a while on a busy machine.
t.setTimeout(240_000);

type Json = Record<string, unknown>;

function run(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = {}): { code: number; stdout: string; stderr: string } {
  const res = spawnSync(command, args, { cwd, env: { ...process.env, ...env }, encoding: 'utf8', timeout: 180_000 });
  return { code: res.status ?? -1, stdout: res.stdout, stderr: res.stderr };
}

/** A lock file for `app` that pins the tarball and the package's dependency tree (the repo's, minus dev). */
function writeAppLock(app: string, tarball: string): void {
  const repoLock = JSON.parse(readFileSync(join(REPO, 'package-lock.json'), 'utf8')) as { packages: Record<string, Json> };
  const pkg = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as Json;
  const spec = `file:${tarball}`;
  const integrity = `sha512-${createHash('sha512').update(readFileSync(tarball)).digest('base64')}`;
  const packages: Record<string, Json> = {
    '': { name: 'app', dependencies: { 'model-gateway': spec } },
    'node_modules/model-gateway': { version: pkg.version, resolved: spec, integrity, dependencies: pkg.dependencies, bin: pkg.bin, engines: pkg.engines },
  };
  for (const [path, entry] of Object.entries(repoLock.packages)) {
    if (path.startsWith('node_modules/') && entry.dev !== true && entry.link !== true) packages[path] = entry;
  }
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'app', private: true, type: 'module', dependencies: { 'model-gateway': spec } }));
  writeFileSync(join(app, 'package-lock.json'), JSON.stringify({ name: 'app', lockfileVersion: 3, requires: true, packages }));
}

/** Starts a long-running `gateway …` from the app's node_modules/.bin and resolves with the URL its first line matching `pattern` names. */
function serve(t: Teardown, app: string, args: string[], pattern: RegExp, env: NodeJS.ProcessEnv = {}): Promise<{ child: ChildProcess; url: string; out: () => string }> {
  // The installed bin itself (a `#!/usr/bin/env node` script), so that signals reach the gateway, not an npx wrapper.
  const child = spawn(join(app, 'node_modules', '.bin', 'gateway'), args, { cwd: app, env: { ...process.env, GATEWAY_CONFIG: '', GATEWAY_DATA_DIR: '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr.on('data', (c: Buffer) => (out += c.toString()));
  t.teardown(() => {
    if (child.exitCode === null) child.kill('SIGKILL');
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`not ready: ${out}`)), 60_000);
    child.stdout.on('data', () => {
      const m = pattern.exec(out);
      if (m !== null) {
        clearTimeout(timer);
        resolve({ child, url: m[1]!, out: () => out });
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`exited ${code}: ${out}`));
    });
  });
}

const exited = (child: ChildProcess): Promise<number | null> => new Promise((resolve) => (child.exitCode !== null ? resolve(child.exitCode) : child.once('exit', (code) => resolve(code))));

t.test('the packed tarball installs into an empty folder and runs there', async (t) => {
  const dir = tempDir('gw-pack-');
  const pack = run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', dir], REPO);
  t.equal(pack.code, 0, pack.stderr);
  const [packed] = JSON.parse(pack.stdout) as Array<{ filename: string; files: Array<{ path: string }> }>;
  const files = packed!.files.map((f) => f.path);
  t.ok(files.includes('LICENSE') && files.includes('dist/cli/main.js') && files.includes('dist/core/index.d.ts') && files.includes('config/gateway.yaml'), 'CLI, types, default config and LICENSE are in it');
  t.ok(files.some((f) => f.startsWith('dist/console/assets/')), 'the built console is in it');
  t.ok(['request', 'config', 'meta', 'plugin-auth'].every((name) => files.includes(`dist/core/validation/generated/${name}.cjs`)), 'the validators generated at build time are in it');
  t.notOk(files.some((f) => f.startsWith('dist/test/') || f.endsWith('.ts') && !f.endsWith('.d.ts') || f.endsWith('.map')), 'no tests, sources or source maps');

  const app = join(dir, 'app');
  mkdirSync(app);
  writeAppLock(app, join(dir, packed!.filename));
  const install = run('npm', ['ci', '--offline', '--ignore-scripts', '--no-audit', '--no-fund'], app);
  t.equal(install.code, 0, install.stderr);

  // validate, on the shipped default config (the folder has no config/).
  const valid = run('npx', ['--no-install', 'gateway', 'validate'], app, { GATEWAY_CONFIG: '' });
  t.equal(valid.code, 0, valid.stderr);
  t.match(valid.stdout, /node_modules\/model-gateway\/config\/gateway\.yaml: OK \(\d+ plugins\)/);
  // The installed package loads them (their requires of ajv resolve from the app's node_modules).
  const sources = run('node', ['--input-type=module', '-e', "const v = await import('./node_modules/model-gateway/dist/core/validation/index.js'); process.stdout.write(v.createRequestValidator().source)"], app);
  t.equal(sources.stdout, 'generated', sources.stderr);

  const mock = await serve(t, app, ['mock-upstream', '--port', '0'], /mock upstream listening on (\S+)/);

  // A plugin that imports the API from the package name, listed by a path relative to its YAML.
  mkdirSync(join(app, 'plugins'));
  writeFileSync(
    join(app, 'plugins', 'stamp.mjs'),
    `import { definePlugin } from 'model-gateway';
export default definePlugin({
  name: 'stamp',
  configSchema: { type: 'object', properties: { value: { type: 'string' } }, required: ['value'], additionalProperties: false },
  setup(app, options) {
    return { onResponseHeaders(ctx, head) { head.headers['x-stamp'] = options.value + ':' + (ctx.route.kind === 'model' ? ctx.route.name : ctx.route.kind); } };
  },
});
`,
  );
  writeFileSync(join(app, 'gateway.yaml'), 'server: {host: 127.0.0.1, port: 8787}\nstore: {path: ./data}\npipeline:\n  - auth\n  - ./plugins/stamp.mjs: {value: packed}\n');
  const own = run('npx', ['--no-install', 'gateway', 'validate', '--config', 'gateway.yaml'], app);
  t.equal(own.code, 0, own.stderr);

  const gw = await serve(t, app, ['start', '--config', 'gateway.yaml'], /gateway listening on (\S+)/, { GATEWAY_PORT: '0', GATEWAY_ADMIN_KEY: ADMIN_KEY });
  t.ok(existsSync(join(app, 'data')), 'data lives in the folder it runs in');
  const health = await request(`${gw.url}/health`);
  t.equal(health.statusCode, 200);
  await health.body.dump();
  const chat = await request(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-gateway-api-key': ADMIN_KEY,
      'x-gateway-provider': 'openai',
      'x-gateway-custom-host': `${mock.url}/v1`,
      authorization: 'Bearer sk-test',
    },
    body: JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] }),
  });
  t.equal(chat.statusCode, 200);
  t.equal(chat.headers['x-stamp'], 'packed:chat.completions', 'the plugin from the package name ran');
  t.match((await chat.body.json()) as Json, { object: 'chat.completion' });

  gw.child.kill('SIGTERM');
  t.equal(await exited(gw.child), 0, 'SIGTERM drains and exits 0');
  mock.child.kill('SIGTERM');
  await exited(mock.child);

  // The default config itself starts too (npx gateway start, nothing else).
  const plain = await serve(t, app, ['start'], /gateway listening on (\S+)/, { GATEWAY_PORT: '0', GATEWAY_HOST: '127.0.0.1', GATEWAY_ADMIN_KEY: ADMIN_KEY });
  const console = await request(`${plain.url}/console/`);
  t.equal(console.statusCode, 200, 'the console is served from the package');
  await console.body.dump();
  plain.child.kill('SIGTERM');
  t.equal(await exited(plain.child), 0);

  // Plugin authors get the types from the package name: the README's plugin guide example (as
  // shipped in the package) type-checks against them, compiles, and loads.
  const readme = readFileSync(join(app, 'node_modules', 'model-gateway', 'README.md'), 'utf8');
  const example = /```ts\n(import \{ definePlugin[^\n]*from 'model-gateway';[\s\S]*?)```/.exec(readme);
  t.ok(example, "the README's plugin example imports from the package name");
  writeFileSync(join(app, 'redact.ts'), example![1]!);
  writeFileSync(
    join(app, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, outDir: 'built', skipLibCheck: true, types: ['node'], typeRoots: [join(REPO, 'node_modules/@types')] },
      files: ['redact.ts'],
    }),
  );
  const tsc = run(process.execPath, [join(REPO, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.json'], app);
  t.equal(tsc.code, 0, `${tsc.stdout}${tsc.stderr}`);
  writeFileSync(join(app, 'readme.yaml'), 'store: {path: ./data}\npipeline:\n  - auth\n  - ./built/redact.js: {patterns: ["\\\\d{16}"], max: 2}\n');
  const loads = run('npx', ['--no-install', 'gateway', 'validate', '--config', 'readme.yaml'], app);
  t.equal(loads.code, 0, loads.stderr);
  t.match(loads.stdout, /readme\.yaml: OK \(2 plugins\)/);
});
