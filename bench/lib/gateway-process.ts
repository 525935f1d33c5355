/**
 * Starts one gateway process (`dist/cli/main.js start`) on the proxy CPU, with a YAML config and a
 * store of its own in `dir`. The plain gateway (empty pipeline) and the governance gateway are the
 * same binary with different pipelines, so both come from here.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Pinning } from './pinning.js';
import { freePort } from './ports.js';
import { startService, type Service } from './processes.js';

const GATEWAY_CLI = fileURLToPath(new URL('../../cli/main.js', import.meta.url));
const READY = /listening on (https?:\/\/[^\s]+)/;

export interface GatewayProcessOptions {
  pinning: Pinning;
  /** Shown in progress lines and errors. */
  name: string;
  /** This gateway's own temp dir: the YAML and the LMDB store (`data/`) go there. */
  dir: string;
  /** The YAML `pipeline:` value, e.g. `[]` or `[auth, cache]`. */
  pipeline: string;
  /** Added to this process's environment (GATEWAY_ADMIN_KEY, …). */
  env?: Record<string, string>;
  /** Node flags before the script (`--cpu-prof`, …). */
  nodeFlags?: string[];
  /** More `server:` keys as YAML flow text, e.g. `tls: {cert: …, key: …}`. */
  server?: string;
}

export async function startGatewayProcess(options: GatewayProcessOptions): Promise<Service> {
  // The config schema requires port >= 1, so the port is picked here rather than 0.
  const port = await freePort();
  const config = join(options.dir, 'gateway.yaml');
  writeFileSync(
    config,
    `server: {host: 127.0.0.1, port: ${port}${options.server ? `, ${options.server}` : ''}}\nstore: {path: ${JSON.stringify(join(options.dir, 'data'))}}\nsecurity: {custom_hosts: {allow: [127.0.0.1]}}\npipeline: ${options.pipeline}\n`,
  );
  const { command, args } = options.pinning.wrap('proxy', process.execPath, [...(options.nodeFlags ?? []), GATEWAY_CLI, 'start', '--config', config]);
  return startService({ name: options.name, command, args, ready: READY, env: { ...process.env, ...options.env } });
}
