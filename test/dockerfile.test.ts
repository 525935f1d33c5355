/**
 * The Dockerfile, run without Docker (CI has no image registry): its instructions are read from the
 * file and carried out in order on this machine, so that the image's steps are the tested ones.
 *
 *   FROM … [AS name]   a new stage: an empty root folder (`/app` becomes <root>/app)
 *   WORKDIR, ENV       the stage's working folder and environment (absolute paths mapped into the root)
 *   COPY [--from=s]    from the repository (the build context), or from an earlier stage's root
 *   RUN                bash in the working folder; npm works offline from its cache
 *   USER node          the runtime user: `nobody` here (this machine has no `node` user)
 *   HEALTHCHECK, CMD   the image's own commands: the gateway starts as that user with the image's
 *                      environment, answers the health check, writes to the volume, and drains on SIGTERM
 *
 * Only the base image's system packages (apt-get) are this machine's own.
 */
import t from 'tap';
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, cpSync, mkdirSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { request } from 'undici';
import { REPO } from './helpers/process.js';
import { tempDir } from './helpers/gateway.js';

// A clean `npm ci` builds the project: minutes on a busy machine.
t.setTimeout(900_000);

const NOBODY = 65534;

interface Instruction {
  op: string;
  args: string;
}

/** Instructions with their continuation lines joined and comments dropped. */
function parse(text: string): Instruction[] {
  const joined = text.replace(/\\\n/g, ' ');
  return joined
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'))
    .map((line) => {
      const space = line.indexOf(' ');
      return { op: line.slice(0, space).toUpperCase(), args: line.slice(space + 1).trim() };
    });
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

t.test('the Dockerfile builds and runs (outside Docker)', async (t) => {
  const instructions = parse(readFileSync(join(REPO, 'Dockerfile'), 'utf8'));
  const known = new Set(['FROM', 'WORKDIR', 'COPY', 'RUN', 'ENV', 'USER', 'VOLUME', 'EXPOSE', 'HEALTHCHECK', 'CMD']);
  t.same(instructions.filter((i) => !known.has(i.op)).map((i) => i.op), [], 'only instructions this test can carry out');

  const base = tempDir('gw-docker-');
  chmodSync(base, 0o755); // the runtime user must reach the stage's files
  const stages = new Map<string, string>();
  let root = '';
  let workdir = '';
  let env: Record<string, string> = {};
  let user: string | undefined;
  let healthcheck: string[] | undefined;
  let cmd: string[] | undefined;
  let volume: string | undefined;
  const host = (path: string): string => (path.startsWith('/') ? join(root, path) : join(workdir, path));
  // Absolute container paths in a value or command, e.g. /data, /app: into the stage's root.
  const mapPaths = (text: string): string => text.replace(/(^|[\s=:])(\/(?:app|data|tmp)\b)/g, (_m, pre: string, path: string) => pre + join(root, path));

  for (const { op, args } of instructions) {
    switch (op) {
      case 'FROM': {
        root = join(base, `stage-${stages.size}`);
        mkdirSync(root, { recursive: true, mode: 0o755 });
        const alias = /\bAS\s+(\S+)/i.exec(args)?.[1];
        stages.set(alias ?? `#${stages.size}`, root);
        workdir = root;
        env = {};
        user = undefined;
        t.match(args, /^node:\d+-\S*slim\b/, 'an official Node LTS slim image');
        break;
      }
      case 'WORKDIR':
        workdir = host(args);
        mkdirSync(workdir, { recursive: true, mode: 0o755 });
        break;
      case 'ENV':
        for (const [, k, v] of args.matchAll(/(\w+)=(\S+)/g)) env[k!] = mapPaths(v!);
        break;
      case 'COPY': {
        const from = /^--from=(\S+)\s+/.exec(args);
        const parts = (from ? args.slice(from[0].length) : args).split(/\s+/);
        const dest = parts.pop()!;
        const source = from ? stages.get(from[1]!) : REPO;
        t.ok(source, `COPY --from names an earlier stage (${args})`);
        for (const src of parts) {
          const abs = from ? join(source!, src) : join(source!, src);
          const target = dest.endsWith('/') ? join(host(dest), src.split('/').pop()!) : host(dest);
          cpSync(abs, target, { recursive: true, filter: (p) => !/\/(node_modules|dist|data)(\/|$)/.test(p.slice(abs.length)) || from !== null });
        }
        break;
      }
      case 'RUN': {
        if (/\bapt-get\b/.test(args)) continue; // the base image's system packages: this machine's own
        const command = mapPaths(args).replace(/\bchown node:node\b/g, `chown ${NOBODY}:${NOBODY}`);
        const res = spawnSync('bash', ['-c', command], {
          cwd: workdir,
          env: { ...process.env, ...env, npm_config_offline: 'true', npm_config_update_notifier: 'false' },
          encoding: 'utf8',
          timeout: 800_000,
        });
        t.equal(res.status, 0, `RUN ${args}\n${res.stdout.slice(-2000)}${res.stderr.slice(-2000)}`);
        if (res.status !== 0) return;
        break;
      }
      case 'USER':
        user = args;
        break;
      case 'VOLUME':
        volume = (JSON.parse(args) as string[])[0];
        break;
      case 'EXPOSE':
        t.equal(args, '8787', 'the default port');
        break;
      case 'HEALTHCHECK':
        healthcheck = JSON.parse(args.slice(args.indexOf('CMD') + 3).trim()) as string[];
        break;
      case 'CMD':
        cmd = JSON.parse(args) as string[];
        break;
    }
  }
  t.equal(user, 'node', 'the image runs as a non-root user');
  t.ok(cmd && healthcheck && volume, 'CMD, HEALTHCHECK and VOLUME are set');
  t.equal(env.GATEWAY_DATA_DIR, host(volume!), 'the data dir is the volume');
  t.equal(statSync(host(volume!)).uid, NOBODY, 'the volume belongs to the runtime user');
  t.notOk(readdirSync(join(workdir, 'node_modules')).includes('typescript'), 'no dev packages in the runtime stage');

  // The runtime stage's command, as the image runs it (GATEWAY_HOST=0.0.0.0 from ENV; a free port
  // for the one 8787 maps to).
  const port = await freePort();
  const runEnv = { PATH: process.env.PATH!, HOME: workdir, ...env, GATEWAY_PORT: String(port), GATEWAY_CONFIG: '' };
  const child = spawn(cmd![0]!, cmd!.slice(1), { cwd: workdir, env: runEnv, uid: NOBODY, gid: NOBODY, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr.on('data', (c: Buffer) => (out += c.toString()));
  t.teardown(() => {
    if (child.exitCode === null) child.kill('SIGKILL');
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no start: ${out}`)), 60_000);
    child.stdout.on('data', () => {
      if (/gateway listening on/.test(out)) {
        clearTimeout(timer);
        resolve();
      }
    });
    void exited.then((code) => reject(new Error(`exited ${code}: ${out}`)));
  });
  t.match(out, new RegExp(`bound to 0\\.0\\.0\\.0:${port}, all interfaces`), 'listening on every interface, as a container must');
  t.match(out, /Created the first admin API key/, 'the first start shows its admin key in the logs');

  const health = spawnSync(healthcheck![0]!, healthcheck!.slice(1), { env: runEnv, uid: NOBODY, gid: NOBODY, encoding: 'utf8', timeout: 10_000 });
  t.equal(health.status, 0, `HEALTHCHECK passes ${health.stderr}`);
  const res = await request(`http://127.0.0.1:${port}/health`);
  t.equal(res.statusCode, 200);
  await res.body.dump();
  t.ok(readdirSync(host(volume!)).some((f) => f.startsWith('gateway.mdb')), 'the store is in the volume');
  t.equal(statSync(join(host(volume!), 'gateway.mdb')).uid, NOBODY, 'written by the runtime user');

  child.kill('SIGTERM');
  t.equal(await exited, 0, 'SIGTERM drains and exits 0');
  t.match(out, /"msg":"draining"/);
});
