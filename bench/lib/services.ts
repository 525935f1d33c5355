/**
 * Starts the three targets as separate processes, each awaited by its ready line:
 *
 *   mock upstream   node dist/bench/mock-upstream.js --port 0      (load CPU)
 *   bare proxy      node dist/bench/bare-proxy.js --upstream MOCK   (proxy CPU)
 *   gateway         node dist/cli/main.js start --config TMP.yaml   (proxy CPU)
 *   governance      a second gateway, full governance pipeline      (proxy CPU, only when asked)
 *
 * The gateway gets an empty pipeline and a throwaway store directory, so the numbers are the
 * core data plane's and the run leaves nothing in the working tree. The governance gateway
 * (governance-gateway.ts) is started only when a selected scenario needs it.
 */
import { fileURLToPath } from 'node:url';
import { startGatewayProcess } from './gateway-process.js';
import { startGovernanceGateway, type GovernanceGateway } from './governance-gateway.js';
import type { Pinning, Role } from './pinning.js';
import { startService, type Service } from './processes.js';
import { createTarget, type Target } from './targets.js';
import { runTempDir } from './temp-dir.js';

const READY = /listening on (http:\/\/[^\s]+)/;

const MOCK_SCRIPT = fileURLToPath(new URL('../mock-upstream.js', import.meta.url));
const BARE_SCRIPT = fileURLToPath(new URL('../bare-proxy.js', import.meta.url));

export interface StartedTargets {
  targets: Target[];
  /** The second gateway with the governance pipeline, provisioned; null when no scenario needs it. */
  governance: GovernanceGateway | null;
  /** Where the gateway writes its .cpuprofile on exit, when profiling. */
  profileDir: string | null;
  /** Stops the proxies first, then the mock, so nothing logs a spurious upstream error. */
  stop(): Promise<void>;
}

export interface StartOptions {
  pinning: Pinning;
  profile: boolean;
  /** Also start and provision the governance gateway. */
  governance: boolean;
  log(line: string): void;
}

function nodeService(pinning: Pinning, role: Role, name: string, args: string[]): Promise<Service> {
  const { command, args: pinned } = pinning.wrap(role, process.execPath, args);
  return startService({ name, command, args: pinned, ready: READY });
}

/**
 * A bare proxy process (on the proxy CPU) in front of `upstream` (an origin): the floor of one
 * more Node hop, for scenarios whose upstream is not the mock (the MCP server).
 */
export function startBareProxyProcess(pinning: Pinning, upstream: string, name = 'bare proxy'): Promise<Service> {
  return nodeService(pinning, 'proxy', name, [BARE_SCRIPT, '--upstream', upstream, '--port', '0']);
}

export async function startTargets(options: StartOptions): Promise<StartedTargets> {
  const started: Array<Pick<Service, 'stop'>> = [];
  try {
    const mock = await nodeService(options.pinning, 'load', 'mock upstream', [MOCK_SCRIPT, '--port', '0', '--host', '127.0.0.1']);
    started.push(mock);
    options.log(`mock upstream ready at ${mock.url} (pid ${mock.pid})`);
    const bare = await startBareProxyProcess(options.pinning, mock.url);
    started.push(bare);
    options.log(`bare proxy ready at ${bare.url} (pid ${bare.pid})`);

    let profileDir: string | null = null;
    const nodeFlags: string[] = [];
    if (options.profile) {
      profileDir = runTempDir('profile');
      nodeFlags.push('--cpu-prof', `--cpu-prof-dir=${profileDir}`);
    }
    const gateway = await startGatewayProcess({ pinning: options.pinning, name: 'gateway', dir: runTempDir('gateway'), pipeline: '[]', nodeFlags });
    started.push(gateway);
    options.log(`gateway ready at ${gateway.url} (pid ${gateway.pid})${options.profile ? ', profiling' : ''}`);

    let governance: GovernanceGateway | null = null;
    if (options.governance) {
      governance = await startGovernanceGateway({ pinning: options.pinning, mockOrigin: mock.url, log: options.log });
      started.push(governance);
    }

    return {
      targets: [createTarget('direct', mock.url, mock.pid, mock.url), createTarget('bare', bare.url, bare.pid, mock.url), createTarget('gateway', gateway.url, gateway.pid, mock.url)],
      governance,
      profileDir,
      async stop() {
        await Promise.all([bare.stop(), gateway.stop(), governance?.stop()]);
        await mock.stop();
      },
    };
  } catch (error) {
    await Promise.all(started.map((s) => s.stop(2000)));
    throw error;
  }
}
