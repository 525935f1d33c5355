/**
 * Several gateway hosts on one machine, as distributed mode runs them: each a real `gateway start`
 * process with its own port and its own data dir (nothing shared on disk), all on one PostgreSQL
 * and one Valkey.
 *
 *   const svc = needServices(t, ['postgres', 'redis']); if (!svc) return;
 *   const backends = await distributedBackends(svc);
 *   const [a, b, c] = await startHosts(t, 3, { backends, yaml: 'pipeline: [logging, auth, rate-limit]' });
 *   await fetch(`${a.url}/v1/chat/completions`, …);
 *   await b.kill();                                  // kill -9, mid-traffic
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ADMIN_KEY, tempDir, type Teardown } from './gateway.js';
import { startCli, type RunningCli } from './process.js';
import type { Services } from './services.js';

/** The pipeline of the shipped config/gateway.yaml. */
export const DEFAULT_PIPELINE = [
  'logging', 'analytics', 'metrics', 'otel', 'auth', 'virtual-keys', 'config-strategy', 'rate-limit', 'usage-limits', 'cache',
  'admin-org', 'admin-api-keys', 'admin-resources', 'admin-policies', 'admin-catalog',
];

/** Every host of a test uses the same master key (sealed secrets open on any host). */
export const MASTER_KEY = 'a'.repeat(64);

export interface Backends {
  postgresUrl: string;
  redisUrl: string;
}

/** A fresh database on the suite's PostgreSQL, and its Valkey (flushed between suites by being per file). */
export async function distributedBackends(svc: Services): Promise<Backends> {
  const [pg, redis] = await Promise.all([svc.postgres(), svc.redis()]);
  return { postgresUrl: await pg.database(), redisUrl: redis.url };
}

export interface Host {
  readonly url: string;
  readonly dataDir: string;
  readonly cli: RunningCli;
  /** SIGKILL: a host that dies without draining. */
  kill(): Promise<void>;
  /** SIGTERM: a host that drains and stops. */
  stop(): Promise<void>;
}

export interface HostOptions {
  backends: Backends;
  /** The YAML of every host (a `server` section on port 0 is added; without `pipeline`, the shipped default pipeline). */
  yaml?: string;
  env?: NodeJS.ProcessEnv;
  /**
   * All hosts on ONE data dir. Only for suites written before the control plane was replicated
   * through PostgreSQL; the real multi-host shape is separate data dirs (the default).
   */
  sharedDataDir?: boolean;
}

/** Starts `n` hosts one after another (the first migrates the schema; the others find it done). */
export async function startHosts(t: Teardown, n: number, options: HostOptions): Promise<Host[]> {
  const shared = options.sharedDataDir ? tempDir('gw-host-') : undefined;
  const hosts: Host[] = [];
  for (let i = 0; i < n; i++) hosts.push(await startHost(t, options, shared));
  return hosts;
}

export async function startHost(t: Teardown, options: HostOptions, dataDir?: string): Promise<Host> {
  const dir = tempDir('gw-host-');
  const data = dataDir ?? join(dir, 'data');
  let yaml = options.yaml ?? '';
  if (!/^pipeline:/m.test(yaml)) yaml += `\npipeline: [${DEFAULT_PIPELINE.join(', ')}]\n`;
  const text = /^server:/m.test(yaml) ? yaml : `server: {host: 127.0.0.1, port: 0}\n${yaml}`;
  const file = join(dir, 'gateway.yaml');
  writeFileSync(file, text);
  const cli = await startCli(t, ['start', '--config', file], {
    GATEWAY_DATA_DIR: data,
    GATEWAY_ADMIN_KEY: ADMIN_KEY,
    GATEWAY_MASTER_KEY: MASTER_KEY,
    GATEWAY_POSTGRES_URL: options.backends.postgresUrl,
    GATEWAY_REDIS_URL: options.backends.redisUrl,
    GATEWAY_LOG_LEVEL: 'warn',
    ...options.env,
  });
  const end = async (signal: NodeJS.Signals): Promise<void> => {
    if (cli.child.exitCode !== null || cli.child.signalCode !== null) return;
    cli.child.kill(signal);
    await cli.exited;
  };
  return { url: cli.url, dataDir: data, cli, kill: () => end('SIGKILL'), stop: () => end('SIGTERM') };
}
