#!/usr/bin/env node
/**
 * `gateway start [--config FILE]` runs the gateway; `gateway validate [--config FILE]` checks a
 * config (YAML, schema, plugin modules and their options) and prints every problem as
 * `file:line:column path: message`, exiting non-zero when there is one.
 *
 * Signals: SIGTERM/SIGINT drain and exit 0 (a second one exits at once, 1); SIGHUP reloads the
 * config file: a valid one takes over for new requests, an invalid one is refused and logged while
 * the old one keeps serving.
 */
// First: V8's settings, before any gateway code is compiled (cli/v8-tuning.ts).
import './v8-tuning.js';
import { loadConfigFile, formatProblem, resolveConfigPath } from '../core/config/load.js';
import { createGateway } from '../core/gateway.js';
import { ConfigError, resolvePlugins } from '../core/plugin-loader.js';
import { createLogger } from '../core/logger.js';
import { announceReady, isPrimary, superviseWorkers } from '../core/cluster.js';
import { standardPlugins } from '../plugins/index.js';
import { keysCommand, KEYS_USAGE } from './keys.js';
import { pricingCommand, PRICING_USAGE } from './pricing.js';
import type { ConfigProblem, GatewayConfig, Locator } from '../core/config/types.js';
import { access, constants } from 'node:fs/promises';
import { dirname, resolve as resolvePath } from 'node:path';

const USAGE = `Usage:
  gateway start    [--config FILE]   run the gateway (default config: $GATEWAY_CONFIG or config/gateway.yaml)
  gateway validate [--config FILE]   check a config and print every problem with file:line:column
  gateway mock-upstream [--port 9000] [--host 127.0.0.1]
                                     a mock provider (OpenAI, Anthropic, Gemini, Bedrock wire formats) to try the gateway on
${KEYS_USAGE}${PRICING_USAGE}`;

function parseArgs(argv: string[]): { command: string | undefined; config: string | undefined } {
  let config: string | undefined;
  let command: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--config' || arg === '-c') config = argv[++i];
    else if (arg.startsWith('--config=')) config = arg.slice('--config='.length);
    else if (command === undefined) command = arg;
  }
  return { command, config };
}

/** The way back in when the admin key is lost (or was never seen). */
const LOST_KEY = 'Lost the admin key? Make a new one on this machine: gateway keys create --type organisation --name admin --preset admin\n';

function allInterfaces(bound: string): boolean {
  return bound.startsWith('0.0.0.0:') || bound.startsWith('[::]:');
}

/**
 * What an operator must hear at start: a pipeline that checks no key, and an admin key that is an
 * example value (the README's, docker-compose's) on a listener every interface can reach.
 */
function startWarnings(plugins: ReadonlyArray<string>, bound: string, env: NodeJS.ProcessEnv): string[] {
  const warnings: string[] = [];
  if (!plugins.includes('auth')) {
    warnings.push(`the pipeline has no auth plugin: anyone who can reach ${bound} can use this gateway and the provider keys it holds.`);
  }
  const admin = env.GATEWAY_ADMIN_KEY ?? '';
  if (plugins.includes('auth') && allInterfaces(bound) && /change-me/i.test(admin)) {
    warnings.push(`GATEWAY_ADMIN_KEY is an example value and ${bound} listens on every interface: anyone on the network can use the admin API. Set a secret key.`);
  }
  return warnings;
}

function printProblems(problems: ConfigProblem[]): void {
  for (const p of problems) process.stderr.write(`${formatProblem(p)}\n`);
}

async function validate(file: string): Promise<number> {
  const { config, problems, locate } = await loadConfigFile(file);
  if (config === null || problems.length > 0) {
    printProblems(problems);
    return 1;
  }
  try {
    await resolvePlugins(config, locate, standardPlugins);
  } catch (err) {
    if (err instanceof ConfigError) {
      printProblems(err.problems);
      return 1;
    }
    throw err;
  }
  const startProblems = await checkStartNeeds(config, locate);
  if (startProblems.length > 0) {
    printProblems(startProblems);
    return 1;
  }
  process.stdout.write(`${file}: OK (${config.pipeline.length} plugins)\n`);
  return 0;
}

/**
 * What `start` needs beyond a valid config: TLS files it can read, and a data dir it can write
 * (or create). Checked without changing anything.
 */
async function checkStartNeeds(config: GatewayConfig, locate: Locator): Promise<ConfigProblem[]> {
  const problems: ConfigProblem[] = [];
  const at = (segments: string[], message: string): ConfigProblem => ({ file: config.file, ...locate(segments), path: segments.join('.'), message });
  for (const which of ['cert', 'key'] as const) {
    const file = config.server.tls?.[which];
    if (file === undefined) continue;
    try {
      await access(file, constants.R_OK);
    } catch (err) {
      problems.push(at(['server', 'tls', which], `cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? 'error'})`));
    }
  }
  // The data dir, or the nearest folder above it that exists (start creates the rest).
  let dir = resolvePath(config.store.path);
  for (;;) {
    try {
      await access(dir, constants.W_OK);
      break;
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      const parent = dirname(dir);
      if (code === 'ENOENT' && parent !== dir) {
        dir = parent;
        continue;
      }
      const where = process.env.GATEWAY_DATA_DIR ? ' (from GATEWAY_DATA_DIR)' : '';
      problems.push(at(['store', 'path'], `the data dir ${resolvePath(config.store.path)}${where} is not writable: ${dir} (${code ?? 'error'})`));
      break;
    }
  }
  return problems;
}

async function start(file: string): Promise<void> {
  const log = createLogger();
  const { config, problems, locate } = await loadConfigFile(file);
  if (config === null || problems.length > 0) {
    printProblems(problems);
    process.exit(1);
  }
  if (config.server.workers > 1 && isPrimary()) {
    superviseWorkers(config.server.workers, log, (url) => {
      process.stdout.write(`gateway listening on ${url} (config ${file}, ${config.server.workers} workers)\n`);
    });
    return;
  }
  const worker = !isPrimary();
  const hasConsole = config.pipeline.some((p) => p.name === 'console');
  let gateway;
  try {
    gateway = await createGateway(config, {
      catalog: standardPlugins,
      locate,
      logger: log,
      // Printed the moment it exists, before the listener starts: a start that fails after this
      // (a port in use) does not lose it. Only its hash is stored; it is never shown again.
      onAdminKey(key) {
        const signIn = hasConsole ? 'Sign in to the console with it, or send' : 'Send';
        process.stdout.write(`\nCreated the first admin API key (shown once, store it now):\n\n  ${key}\n\n${signIn} it as x-gateway-api-key to the admin API.\n\n`);
      },
    });
  } catch (err) {
    if (err instanceof ConfigError) printProblems(err.problems);
    else {
      log.error('gateway failed to start', { err });
      process.stderr.write(`gateway failed to start: ${(err as Error).message}\n${LOST_KEY}`);
    }
    process.exit(1);
  }
  const gw = gateway;
  log.info('listening', { url: gw.url, bound: gw.bound, pid: process.pid, plugins: config.pipeline.map((p) => p.name) });
  if (worker) announceReady(gw.url);
  else {
    const consoleAt = hasConsole ? `; console at ${gw.url}/console/` : '';
    // Warnings first: whoever waits for the listening line has read them.
    for (const warning of startWarnings(config.pipeline.map((p) => p.name), gw.bound, process.env)) process.stdout.write(`WARNING: ${warning}\n`);
    process.stdout.write(`gateway listening on ${gw.url} (bound to ${gw.bound}${allInterfaces(gw.bound) ? ', all interfaces' : ''}; config ${file})${consoleAt}\n`);
  }

  let stopping = false;
  const stop = (signal: string): void => {
    if (stopping) {
      // A worker hears both the terminal's SIGINT and the primary's SIGTERM: only the primary
      // decides to cut a drain short (it sends SIGKILL).
      if (worker) return;
      log.warn('second signal: exiting now', { signal });
      process.exit(1);
    }
    stopping = true;
    log.info('draining', { signal, grace_ms: gw.config.server.shutdown_grace });
    gw.close().then(
      () => {
        log.info('stopped');
        process.exit(0);
      },
      (err: unknown) => {
        log.error('shutdown failed', { err });
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));

  let reloading = Promise.resolve();
  process.on('SIGHUP', () => {
    // Reloads are serialized: a burst of SIGHUPs applies the file's latest state, in order.
    reloading = reloading.then(async () => {
      const next = await loadConfigFile(file);
      if (next.config === null || next.problems.length > 0) {
        log.error('reload refused: the new config is invalid; the old one keeps serving', { problems: next.problems.map(formatProblem) });
        return;
      }
      try {
        await gw.reload(next.config, next.locate);
      } catch (err) {
        const problems = err instanceof ConfigError ? err.problems.map(formatProblem) : [(err as Error).message];
        log.error('reload refused: the new config cannot run; the old one keeps serving', { problems });
      }
    });
  });
}

async function main(): Promise<void> {
  const { command, config } = parseArgs(process.argv.slice(2));
  const file = resolveConfigPath(config);
  switch (command) {
    case 'start':
    case undefined:
      return start(file);
    case 'validate':
      process.exitCode = await validate(file);
      return;
    case 'keys':
      process.exitCode = await keysCommand(process.argv.slice(2), file);
      return;
    case 'mock-upstream':
      try {
        // Loaded for this command only: the mock's twenty modules are no part of a gateway's start.
        const { runMockUpstream } = await import('../bench/mock-upstream.js');
        await runMockUpstream(process.argv.slice(process.argv.indexOf('mock-upstream') + 1));
      } catch (err) {
        process.stderr.write(`gateway mock-upstream: ${(err as Error).message}\n`);
        process.exitCode = 1;
      }
      return;
    case 'pricing':
      process.exitCode = await pricingCommand(process.argv.slice(2), file);
      return;
    case 'help':
    case '--help':
    case '-h':
      process.stdout.write(USAGE);
      return;
    default:
      process.stderr.write(`unknown command "${command}"\n${USAGE}`);
      process.exitCode = 2;
  }
}

void main();
