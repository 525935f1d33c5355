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
import { loadConfigFile, formatProblem, resolveConfigPath } from '../core/config/load.js';
import { createGateway } from '../core/gateway.js';
import { ConfigError, resolvePlugins } from '../core/plugin-loader.js';
import { createLogger } from '../core/logger.js';
import { announceReady, isPrimary, superviseWorkers } from '../core/cluster.js';
import { standardPlugins } from '../plugins/index.js';
import { keysCommand, KEYS_USAGE } from './keys.js';
import { pricingCommand, PRICING_USAGE } from './pricing.js';
import type { ConfigProblem } from '../core/config/types.js';
import { runMockUpstream } from '../bench/mock-upstream.js';

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
  process.stdout.write(`${file}: OK (${config.pipeline.length} plugins)\n`);
  return 0;
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
  let gateway;
  try {
    gateway = await createGateway(config, { catalog: standardPlugins, locate, logger: log });
  } catch (err) {
    if (err instanceof ConfigError) printProblems(err.problems);
    else log.error('gateway failed to start', { err });
    process.exit(1);
  }
  const gw = gateway;
  if (gw.generatedAdminKey !== undefined) {
    // Printed once, here, and never again: only its hash is stored.
    const signIn = config.pipeline.some((p) => p.name === 'console') ? `Sign in to the console at ${gw.url}/console/ with it, or send` : 'Send';
    process.stdout.write(`\nCreated the first admin API key (shown once, store it now):\n\n  ${gw.generatedAdminKey}\n\n${signIn} it as x-gateway-api-key to the admin API.\n\n`);
  }
  log.info('listening', { url: gw.url, pid: process.pid, plugins: config.pipeline.map((p) => p.name) });
  if (worker) announceReady(gw.url);
  else {
    const consoleAt = config.pipeline.some((p) => p.name === 'console') ? `; console at ${gw.url}/console/` : '';
    process.stdout.write(`gateway listening on ${gw.url} (config ${file})${consoleAt}\n`);
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
