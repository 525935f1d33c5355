/**
 * Real PostgreSQL and Valkey/Redis servers for the distributed-mode tests, started by the test on
 * free loopback ports in temporary directories and stopped with it.
 *
 *   const svc = await needServices(t, ['postgres', 'redis']);
 *   if (!svc) return;                 // said plainly why, unless GATEWAY_REQUIRE_SERVICES=1 (then it fails)
 *   const pg = await svc.postgres();  // one cluster per test file; pg.database() gives a fresh database
 *   const redis = await svc.redis();  // redis.stop() / redis.start() for fault tests, same port and data
 *
 * The servers come from Debian's packages (`apt-get install -y redis-server postgresql`); `.ci/run`
 * installs them. PostgreSQL refuses to run as root, so as root it runs as the `postgres` user.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import type { Teardown } from './gateway.js';

export type ServiceName = 'postgres' | 'redis';

export interface RunningService {
  readonly url: string;
  readonly port: number;
  /** Stops the server (fast shutdown: clients are cut). Resolves once it has exited. */
  stop(): Promise<void>;
  /** Starts it again on the same port with the same data. */
  start(): Promise<void>;
  /** SIGKILL, as a crash. */
  kill(): Promise<void>;
}

export interface RunningPostgres extends RunningService {
  /** Creates a fresh, empty database and returns its URL. */
  database(name?: string): Promise<string>;
}

export interface Services {
  postgres(): Promise<RunningPostgres>;
  redis(): Promise<RunningService>;
}

/** A free TCP port on 127.0.0.1 (bound and released; the race with another binder is negligible here). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** The directory of PostgreSQL's server binaries (Debian puts them under /usr/lib/postgresql/<major>/bin), or null. */
export function postgresBinDir(): string | null {
  const root = '/usr/lib/postgresql';
  if (existsSync(root)) {
    const majors = readdirSync(root)
      .filter((d) => /^\d+$/.test(d) && existsSync(join(root, d, 'bin', 'postgres')))
      .sort((a, b) => Number(b) - Number(a));
    if (majors[0]) return join(root, majors[0], 'bin');
  }
  const which = spawnSync('sh', ['-c', 'command -v initdb'], { encoding: 'utf8' });
  const path = which.stdout.trim();
  return which.status === 0 && path ? path.slice(0, path.lastIndexOf('/')) : null;
}

export function redisBinary(): string | null {
  for (const name of ['valkey-server', 'redis-server']) {
    const which = spawnSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' });
    if (which.status === 0 && which.stdout.trim()) return which.stdout.trim();
  }
  return null;
}

const INSTALL: Record<ServiceName, string> = {
  postgres: 'PostgreSQL server binaries (initdb, postgres): apt-get install -y postgresql',
  redis: 'a Valkey or Redis server (valkey-server or redis-server): apt-get install -y redis-server',
};

function missing(names: ServiceName[]): ServiceName[] {
  return names.filter((n) => (n === 'postgres' ? postgresBinDir() === null : redisBinary() === null));
}

interface TapLike extends Teardown {
  comment(...args: unknown[]): void;
  fail(message: string): void;
}

/**
 * The servers a suite needs, or null when one is not installed: then the suite says which and how
 * to install it, and ends. With GATEWAY_REQUIRE_SERVICES=1 (CI) a missing server fails the run.
 */
export function needServices(t: TapLike, names: ServiceName[]): Services | null {
  const absent = missing(names);
  if (absent.length > 0) {
    const message = `this suite needs ${absent.map((n) => INSTALL[n]).join(' and ')}`;
    if (process.env.GATEWAY_REQUIRE_SERVICES === '1') t.fail(`${message} (GATEWAY_REQUIRE_SERVICES=1)`);
    else t.comment(`NOT RUN: ${message}`);
    return null;
  }
  let postgres: Promise<RunningPostgres> | undefined;
  let redis: Promise<RunningService> | undefined;
  return {
    postgres: () => (postgres ??= startPostgres(t)),
    redis: () => (redis ??= startRedis(t)),
  };
}

// ── processes ─────────────────────────────────────────────────────────────────────────────────

interface Proc {
  child: ChildProcess;
  exited: Promise<void>;
  output(): string;
}

/** Servers still running: killed if this process exits without its teardown (a test file timed out). */
const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

function run(cmd: string, args: string[], options: { uid?: number; gid?: number; cwd?: string } = {}): Proc {
  const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], ...options });
  running.add(child);
  child.once('exit', () => running.delete(child));
  let out = '';
  child.stdout.on('data', (c: Buffer) => (out = (out + c.toString()).slice(-8000)));
  child.stderr.on('data', (c: Buffer) => (out = (out + c.toString()).slice(-8000)));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return { child, exited, output: () => out };
}

async function waitFor(ready: () => Promise<boolean>, proc: Proc, what: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let gone = false;
  void proc.exited.then(() => (gone = true));
  while (Date.now() < deadline) {
    if (gone) throw new Error(`${what} exited while starting:\n${proc.output()}`);
    if (await ready()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  proc.child.kill('SIGKILL');
  throw new Error(`${what} did not start within ${timeoutMs} ms:\n${proc.output()}`);
}

async function stopProc(proc: Proc | undefined, signal: NodeJS.Signals): Promise<void> {
  if (!proc || proc.child.exitCode !== null || proc.child.signalCode !== null) return;
  proc.child.kill(signal);
  await proc.exited;
}

// ── Redis / Valkey ────────────────────────────────────────────────────────────────────────────

export async function startRedis(t: Teardown): Promise<RunningService> {
  const bin = redisBinary();
  if (!bin) throw new Error(INSTALL.redis);
  const dir = mkdtempSync(join(tmpdir(), 'gw-redis-'));
  const port = await freePort();
  let proc: Proc | undefined;
  const ping = (): Promise<boolean> =>
    new Promise((resolve) => {
      const r = spawnSync(bin.replace(/-server$/, '-cli'), ['-p', String(port), 'ping'], { encoding: 'utf8', timeout: 2000 });
      resolve(r.status === 0 && r.stdout.trim() === 'PONG');
    });
  const start = async (): Promise<void> => {
    proc = run(bin, ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'no', '--daemonize', 'no', '--protected-mode', 'no']);
    await waitFor(ping, proc, `redis-server on port ${port}`);
  };
  await start();
  t.teardown(async () => {
    await stopProc(proc, 'SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    stop: () => stopProc(proc, 'SIGTERM'),
    kill: () => stopProc(proc, 'SIGKILL'),
    start,
  };
}

// ── PostgreSQL ────────────────────────────────────────────────────────────────────────────────

function postgresUser(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const id = spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' });
  const gid = spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' });
  if (id.status !== 0) throw new Error('running as root, and there is no `postgres` user to run PostgreSQL as (apt-get install -y postgresql creates it)');
  return { uid: Number(id.stdout.trim()), gid: Number(gid.stdout.trim()) };
}

export async function startPostgres(t: Teardown): Promise<RunningPostgres> {
  const bin = postgresBinDir();
  if (!bin) throw new Error(INSTALL.postgres);
  const user = postgresUser();
  const dir = mkdtempSync(join(tmpdir(), 'gw-pg-'));
  chmodSync(dir, 0o700);
  if (user) chownSync(dir, user.uid, user.gid);
  const data = join(dir, 'data');
  const init = spawnSync(join(bin, 'initdb'), ['-D', data, '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8', '--locale=C'], {
    encoding: 'utf8',
    cwd: dir,
    ...(user ?? {}),
  });
  if (init.status !== 0) throw new Error(`initdb failed:\n${init.stdout}${init.stderr}`);
  const port = await freePort();
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  let proc: Proc | undefined;
  const ready = async (): Promise<boolean> => {
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1000 });
    try {
      await client.connect();
      await client.query('SELECT 1');
      return true;
    } catch {
      return false;
    } finally {
      await client.end().catch(() => undefined);
    }
  };
  const start = async (): Promise<void> => {
    proc = run(
      join(bin, 'postgres'),
      ['-D', data, '-p', String(port), '-c', 'listen_addresses=127.0.0.1', '-c', `unix_socket_directories=${dir}`, '-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off', '-c', 'max_connections=200'],
      { cwd: dir, ...(user ?? {}) },
    );
    await waitFor(ready, proc, `postgres on port ${port}`);
  };
  await start();
  t.teardown(async () => {
    await stopProc(proc, 'SIGQUIT');
    rmSync(dir, { recursive: true, force: true });
  });
  let n = 0;
  return {
    url,
    port,
    // SIGINT is PostgreSQL's fast shutdown (SIGTERM waits for every client to leave).
    stop: () => stopProc(proc, 'SIGINT'),
    kill: () => stopProc(proc, 'SIGKILL'),
    start,
    async database(name) {
      const db = name ?? `gw_${process.pid}_${++n}`;
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        await client.query(`CREATE DATABASE ${db}`);
      } finally {
        await client.end();
      }
      return `postgres://postgres@127.0.0.1:${port}/${db}`;
    },
  };
}
