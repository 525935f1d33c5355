/**
 * Starts the three targets as separate processes, each awaited by its ready line:
 *
 *   mock upstream   node dist/bench/mock-upstream.js --port 0      (load CPU)
 *   bare proxy      node dist/bench/bare-proxy.js --upstream MOCK   (proxy CPU)
 *   gateway         node dist/core/cli.js start --config TMP.yaml   (proxy CPU)
 *
 * The gateway gets an empty pipeline and a throwaway store directory, so the numbers are the
 * core data plane's and the run leaves nothing in the working tree.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Pinning, Role } from './pinning.js';
import { freePort } from './ports.js';
import { startService, type Service } from './processes.js';
import { createTarget, type Target } from './targets.js';
import { runTempDir } from './temp-dir.js';

const READY = /listening on (http:\/\/[^\s]+)/;

const MOCK_SCRIPT = fileURLToPath(new URL('../mock-upstream.js', import.meta.url));
const BARE_SCRIPT = fileURLToPath(new URL('../bare-proxy.js', import.meta.url));
const GATEWAY_CLI = fileURLToPath(new URL('../../core/cli.js', import.meta.url));

export interface StartedTargets {
  targets: Target[];
  /** Where the gateway writes its .cpuprofile on exit, when profiling. */
  profileDir: string | null;
  /** Stops the proxies first, then the mock, so nothing logs a spurious upstream error. */
  stop(): Promise<void>;
}

export interface StartOptions {
  pinning: Pinning;
  profile: boolean;
  log(line: string): void;
}

function nodeService(pinning: Pinning, role: Role, name: string, args: string[]): Promise<Service> {
  const { command, args: pinned } = pinning.wrap(role, process.execPath, args);
  return startService({ name, command, args: pinned, ready: READY });
}

export async function startTargets(options: StartOptions): Promise<StartedTargets> {
  const dir = runTempDir('gateway');
  const started: Service[] = [];
  try {
    const mock = await nodeService(options.pinning, 'load', 'mock upstream', [MOCK_SCRIPT, '--port', '0', '--host', '127.0.0.1']);
    started.push(mock);
    options.log(`mock upstream ready at ${mock.url} (pid ${mock.pid})`);
    const bare = await nodeService(options.pinning, 'proxy', 'bare proxy', [BARE_SCRIPT, '--upstream', mock.url, '--port', '0']);
    started.push(bare);
    options.log(`bare proxy ready at ${bare.url} (pid ${bare.pid})`);

    const port = await freePort();
    const config = join(dir, 'gateway.yaml');
    writeFileSync(config, `server: {host: 127.0.0.1, port: ${port}}\nstore: {path: ${JSON.stringify(join(dir, 'data'))}}\nsecurity: {custom_hosts: {allow: [127.0.0.1]}}\npipeline: []\n`);
    let profileDir: string | null = null;
    const flags: string[] = [];
    if (options.profile) {
      profileDir = runTempDir('profile');
      flags.push('--cpu-prof', `--cpu-prof-dir=${profileDir}`);
    }
    const gateway = await nodeService(options.pinning, 'proxy', 'gateway', [...flags, GATEWAY_CLI, 'start', '--config', config]);
    started.push(gateway);
    options.log(`gateway ready at ${gateway.url} (pid ${gateway.pid})${options.profile ? ', profiling' : ''}`);

    return {
      targets: [createTarget('direct', mock.url, mock.pid, mock.url), createTarget('bare', bare.url, bare.pid, mock.url), createTarget('gateway', gateway.url, gateway.pid, mock.url)],
      profileDir,
      async stop() {
        await Promise.all([bare.stop(), gateway.stop()]);
        await mock.stop();
      },
    };
  } catch (error) {
    await Promise.all(started.map((s) => s.stop(2000)));
    throw error;
  }
}
