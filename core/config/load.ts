/**
 * Loads `config/gateway.yaml`:
 *
 *   text ─▶ yaml Document ─▶ ${ENV} interpolation ─▶ JS value ─▶ ajv (schema + defaults)
 *        ─▶ units (sizes → bytes, durations → ms) ─▶ env overrides ─▶ GatewayConfig
 *
 * Every user error becomes a `ConfigProblem` with the file, line and column of the offending
 * node, so `gateway validate` can list them all at once; nothing here throws for bad input.
 * Positions come from the Document (not the JS value), which is why interpolation works on nodes.
 */

import { readFile } from 'node:fs/promises';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ValidateFunction } from 'ajv';
import { LineCounter, isMap, parseDocument } from 'yaml';
import { interpolateDocument } from './interpolate.js';
import { NOWHERE, createPositions, formatPath, type Segments } from './positions.js';
import { describe, problemFromAjv } from './ajv-problems.js';
import { fingerprint, precompiled, type ValidatorSource } from '../validation/precompiled.js';
import { newAjv } from '../validation/ajv.js';

export { formatPath } from './positions.js';
import type {
  ConfigProblem,
  FaultMode,
  GatewayConfig,
  Locator,
  PipelineEntry,
  SecurityConfig,
  TlsConfig,
} from './types.js';

export interface LoadResult {
  /** The config, or null when there is at least one problem. */
  config: GatewayConfig | null;
  problems: ConfigProblem[];
  /** Line and column of a key path in the loaded file (plugin option errors use it). */
  locate: Locator;
}

type Size = number | string;
type Duration = number | string;

/** The shape the schema guarantees after validation with defaults, before units are resolved. */
interface RawConfig {
  server: {
    host: string;
    port: number;
    body_limit: Size;
    admin_body_limit: Size;
    workers: number;
    tls?: TlsConfig;
    keep_alive_timeout: Duration;
    headers_timeout: Duration;
    request_timeout: Duration;
    max_header_size: Size;
    shutdown_grace: Duration;
    stream_ping_interval: Duration;
  };
  store: {
    path: string;
    map_size: Size;
    postgres?: { url?: string; pool: number; log_queue: number };
    redis?: { url?: string; key_prefix: string; command_timeout: Duration; rate_limits: FaultMode; budgets: FaultMode };
  };
  audit: { summary_bytes: Size; retention_days: number; max_records: number };
  security: SecurityConfig;
  upstream: { connections: number; keep_alive_timeout: Duration; connect_timeout: Duration; request_timeout: Duration; stream_idle_timeout: Duration };
  pipeline: Array<string | Record<string, Record<string, unknown> | null>>;
}

const INLINE = '<inline>';
const ENV_FILE = 'env';

// ── schema ────────────────────────────────────────────────────────────────────────────────────

let validator: { validate: ValidateFunction<RawConfig>; source: ValidatorSource } | undefined;

/**
 * The schema lives in `config/` at the package root, outside `core/`, because editors read it
 * too. Walking up finds it both from `core/config/` (sources) and `dist/core/config/` (build).
 */
function findSchemaFile(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const candidate = path.join(dir, 'config', 'gateway.schema.json');
    if (existsSync(candidate)) return candidate;
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error('config/gateway.schema.json not found above ' + fileURLToPath(import.meta.url));
    dir = parent;
  }
}

/**
 * The config schema's ajv options, generated (cli/build-validators.ts) or compiled. No
 * meta-schema check: the gateway's own schema, checked by its tests (about 60 ms a start).
 */
export const CONFIG_AJV_OPTIONS = {
  allErrors: true, // report every problem in one run of `gateway validate`
  verbose: true, // errors carry parentSchema, where the friendlier messages live
  useDefaults: true, // the schema's `default`s are the single source of defaults
  allowUnionTypes: true, // sizes and durations are integer | string
  validateSchema: false,
} as const;

/** Annotations that editors (vscode-json-languageservice) show; declared so strict mode accepts them. */
export const CONFIG_VOCABULARY = ['patternErrorMessage', 'errorMessage'];

/** The config schema's text, as shipped in config/gateway.schema.json. */
export function configSchemaText(): string {
  return readFileSync(findSchemaFile(), 'utf8');
}

/**
 * The config schema's validator: the code generated at build time when it matches the schema file
 * (see core/validation/precompiled.ts), otherwise compiled. Made on first use and kept; with
 * `precompiled: false`, compiled anew each call (the tests compare the two).
 */
export function configValidator(options: { precompiled?: boolean } = {}): { validate: ValidateFunction<RawConfig>; source: ValidatorSource } {
  if (options.precompiled !== false && validator !== undefined) return validator;
  const text = configSchemaText();
  const generated = options.precompiled === false ? undefined : precompiled<ValidateFunction<RawConfig>>('config', fingerprint(CONFIG_AJV_OPTIONS, text));
  let made: { validate: ValidateFunction<RawConfig>; source: ValidatorSource };
  if (generated !== undefined) made = { validate: generated, source: 'generated' };
  else {
    const ajv = newAjv(CONFIG_AJV_OPTIONS);
    ajv.addVocabulary(CONFIG_VOCABULARY);
    made = { validate: ajv.compile<RawConfig>(JSON.parse(text) as object), source: 'compiled' };
  }
  if (options.precompiled !== false) validator = made;
  return made;
}

// ── units ─────────────────────────────────────────────────────────────────────────────────────

const SIZE_UNITS: Record<string, number> = { '': 1, b: 1, kb: 1024, mb: 1024 ** 2, gb: 1024 ** 3 };
const DURATION_UNITS: Record<string, number> = { '': 1, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** `10mb` → 10485760, `30s` → 30000; a bare number is already bytes or ms. A string on failure. */
function parseUnits(value: number | string, units: Record<string, number>): number | string {
  if (typeof value === 'number') return Number.isSafeInteger(value) && value >= 0 ? value : 'must be a whole number >= 0';
  const match = /^\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*$/i.exec(value);
  const factor = match ? units[match[2]!.toLowerCase()] : undefined;
  if (!match || factor === undefined) return `unknown unit (use ${Object.keys(units).filter(Boolean).join(', ')})`;
  const result = Math.round(Number(match[1]) * factor);
  // Beyond 2^53 the number silently loses precision; no real limit needs that much.
  return Number.isSafeInteger(result) ? result : 'is too large';
}

// ── environment ───────────────────────────────────────────────────────────────────────────────

interface EnvOverrides {
  host?: string;
  port?: number;
  dataDir?: string;
  postgresUrl?: string;
  redisUrl?: string;
}

/** Empty variables count as unset: `GATEWAY_PORT= npm start` should not fail. */
function readEnvOverrides(env: NodeJS.ProcessEnv, problems: ConfigProblem[]): EnvOverrides {
  const overrides: EnvOverrides = {};
  if (env.GATEWAY_HOST) overrides.host = env.GATEWAY_HOST;
  if (env.GATEWAY_DATA_DIR) overrides.dataDir = env.GATEWAY_DATA_DIR;
  if (env.GATEWAY_POSTGRES_URL) overrides.postgresUrl = env.GATEWAY_POSTGRES_URL;
  if (env.GATEWAY_REDIS_URL) overrides.redisUrl = env.GATEWAY_REDIS_URL;
  const port = env.GATEWAY_PORT?.trim();
  if (port) {
    // 0 (any free port) is allowed here, not in the YAML: tests start gateways on port 0.
    if (/^\d+$/.test(port) && Number(port) <= 65535) overrides.port = Number(port);
    else {
      problems.push({
        file: ENV_FILE,
        ...NOWHERE,
        path: 'GATEWAY_PORT',
        message: `must be an integer from 0 to 65535, got ${describe(env.GATEWAY_PORT)}`,
      });
    }
  }
  return overrides;
}

// ── building the config ───────────────────────────────────────────────────────────────────────

function normalisePipeline(raw: RawConfig['pipeline']): PipelineEntry[] {
  return raw.map(function toEntry(entry, index): PipelineEntry {
    const where = `pipeline[${index}]`;
    if (typeof entry === 'string') return { name: entry, options: {}, path: where };
    // The schema guarantees exactly one key whose value is a mapping or null.
    const [name, options] = Object.entries(entry)[0]!;
    return { name, options: options ?? {}, path: where };
  });
}

type Convert = (value: Size | Duration, segments: Segments, units: Record<string, number>) => number;

function buildConfig(raw: RawConfig, file: string, baseDir: string, convert: Convert): GatewayConfig {
  const { server, upstream } = raw;
  const bytes = (value: Size, key: string, section = 'server'): number => convert(value, [section, key], SIZE_UNITS);
  const ms = (value: Duration, section: string, key: string): number => convert(value, [section, key], DURATION_UNITS);
  return {
    server: {
      host: server.host,
      port: server.port,
      body_limit: bytes(server.body_limit, 'body_limit'),
      admin_body_limit: bytes(server.admin_body_limit, 'admin_body_limit'),
      workers: server.workers,
      // Resolved here, where the file's directory is known, so the listener never depends on cwd.
      ...(server.tls ? { tls: { cert: path.resolve(baseDir, server.tls.cert), key: path.resolve(baseDir, server.tls.key) } } : {}),
      keep_alive_timeout: ms(server.keep_alive_timeout, 'server', 'keep_alive_timeout'),
      headers_timeout: ms(server.headers_timeout, 'server', 'headers_timeout'),
      request_timeout: ms(server.request_timeout, 'server', 'request_timeout'),
      max_header_size: bytes(server.max_header_size, 'max_header_size'),
      shutdown_grace: ms(server.shutdown_grace, 'server', 'shutdown_grace'),
      stream_ping_interval: ms(server.stream_ping_interval, 'server', 'stream_ping_interval'),
    },
    store: {
      path: raw.store.path,
      map_size: bytes(raw.store.map_size, 'map_size', 'store'),
      // Completed by applyDistributedMode (the environment overrides the urls); null = not set.
      postgres: { url: raw.store.postgres?.url ?? '', pool: raw.store.postgres?.pool ?? 10, log_queue: raw.store.postgres?.log_queue ?? 100_000 },
      redis: {
        url: raw.store.redis?.url ?? '',
        key_prefix: raw.store.redis?.key_prefix ?? 'gw:',
        command_timeout: raw.store.redis ? convert(raw.store.redis.command_timeout, ['store', 'redis', 'command_timeout'], DURATION_UNITS) : 1000,
        rate_limits: raw.store.redis?.rate_limits ?? 'fail_open',
        budgets: raw.store.redis?.budgets ?? 'fail_closed',
      },
    },
    audit: {
      summary_bytes: bytes(raw.audit.summary_bytes, 'summary_bytes', 'audit'),
      retention_days: raw.audit.retention_days,
      max_records: raw.audit.max_records,
    },
    security: { custom_hosts: { allow: [...raw.security.custom_hosts.allow], allow_loopback: raw.security.custom_hosts.allow_loopback } },
    upstream: {
      connections: upstream.connections,
      keep_alive_timeout: ms(upstream.keep_alive_timeout, 'upstream', 'keep_alive_timeout'),
      connect_timeout: ms(upstream.connect_timeout, 'upstream', 'connect_timeout'),
      request_timeout: ms(upstream.request_timeout, 'upstream', 'request_timeout'),
      stream_idle_timeout: ms(upstream.stream_idle_timeout, 'upstream', 'stream_idle_timeout'),
    },
    pipeline: normalisePipeline(raw.pipeline),
    file,
    baseDir,
  };
}

function byPosition(a: ConfigProblem, b: ConfigProblem): number {
  // Environment problems (line 0, file `env`) go last, after the file's own, which read top to bottom.
  return Number(a.file === ENV_FILE) - Number(b.file === ENV_FILE) || a.line - b.line || a.column - b.column;
}

function finish(config: GatewayConfig | null, problems: ConfigProblem[], locate: Locator): LoadResult {
  problems.sort(byPosition);
  return { config: problems.length === 0 ? config : null, problems, locate };
}

/**
 * Loads a config from text. `file` names it in problems and anchors relative paths (`<inline>`
 * anchors them at the working directory).
 *
 * @example
 * const { config, problems } = loadConfigText('server: {port: 9000}', '<inline>', {});
 * // config.server.port === 9000, every other key at its default
 */
export function loadConfigText(text: string, file: string, env: NodeJS.ProcessEnv = process.env): LoadResult {
  const absolute = file === INLINE ? INLINE : path.resolve(file);
  const baseDir = file === INLINE ? process.cwd() : path.dirname(absolute);
  const problems: ConfigProblem[] = [];
  const overrides = readEnvOverrides(env, problems);

  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false });
  const positions = createPositions(doc, lineCounter);
  const { locate } = positions;

  if (doc.errors.length > 0) {
    for (const error of doc.errors) problems.push({ file: absolute, ...positions.at(error.pos[0]), path: '', message: error.message });
    return finish(null, problems, locate);
  }
  if (doc.contents === null) {
    problems.push({ file: absolute, ...NOWHERE, path: '', message: 'the file is empty: expected a mapping with server, store, security, upstream, pipeline' });
    return finish(null, problems, locate);
  }
  if (!isMap(doc.contents)) {
    problems.push({ file: absolute, ...locate([]), path: '', message: 'the top level must be a mapping (server, store, security, upstream, pipeline)' });
    return finish(null, problems, locate);
  }

  for (const problem of interpolateDocument(doc, env)) {
    problems.push({ file: absolute, ...positions.at(problem.offset), path: formatPath(problem.segments), message: problem.message });
  }
  if (problems.some((p) => p.file !== ENV_FILE)) return finish(null, problems, locate);

  let data: unknown;
  try {
    // The alias cap stops a "billion laughs" document from expanding without bound.
    data = doc.toJS({ maxAliasCount: 100 });
  } catch (error) {
    problems.push({ file: absolute, ...NOWHERE, path: '', message: error instanceof Error ? error.message : String(error) });
    return finish(null, problems, locate);
  }

  const { validate } = configValidator();
  if (!validate(data)) {
    const errors = validate.errors ?? [];
    // A pipeline entry with the wrong shape (usually mis-indented options) says so once; the
    // errors about its values would only describe the accident.
    const misshapen = errors
      .filter((e) => e.keyword === 'minProperties' || e.keyword === 'maxProperties')
      .map((e) => e.instancePath + '/');
    for (const error of errors) {
      if (misshapen.some((prefix) => error.instancePath.startsWith(prefix))) continue;
      const problem = problemFromAjv(error, data, absolute, positions);
      if (problem) problems.push(problem);
    }
    return finish(null, problems, locate);
  }

  const convert: Convert = function convertUnits(value, segments, units) {
    const result = parseUnits(value, units);
    if (typeof result === 'number') return result;
    const kind = units === SIZE_UNITS ? 'size' : 'duration';
    problems.push({ file: absolute, ...locate(segments), path: formatPath(segments), message: `${kind} ${describe(value)}: ${result}` });
    return 0;
  };
  const config = buildConfig(data, absolute, baseDir, convert);
  if (overrides.host !== undefined) config.server.host = overrides.host;
  if (overrides.port !== undefined) config.server.port = overrides.port;
  if (overrides.dataDir !== undefined) config.store.path = overrides.dataDir;
  applyDistributedMode(config, data.store, overrides, problems, absolute, locate);
  return finish(config, problems, locate);
}

/**
 * Distributed mode needs both backends: PostgreSQL alone would share keys but multiply every limit
 * by the number of hosts; Valkey alone would share limits but leave each host with its own keys.
 * Either url may come from the environment, with the rest of the section (or its defaults) from YAML.
 */
function applyDistributedMode(
  config: GatewayConfig,
  raw: RawConfig['store'],
  overrides: EnvOverrides,
  problems: ConfigProblem[],
  file: string,
  locate: Locator,
): void {
  const pg = overrides.postgresUrl ?? raw.postgres?.url;
  const redis = overrides.redisUrl ?? raw.redis?.url;
  config.store.postgres = pg ? { ...config.store.postgres!, url: pg } : null;
  config.store.redis = redis ? { ...config.store.redis!, url: redis } : null;
  if (Boolean(pg) === Boolean(redis)) return;
  const [set, missing] = pg
    ? ['PostgreSQL (store.postgres.url or GATEWAY_POSTGRES_URL)', 'Valkey/Redis (store.redis.url or GATEWAY_REDIS_URL)']
    : ['Valkey/Redis (store.redis.url or GATEWAY_REDIS_URL)', 'PostgreSQL (store.postgres.url or GATEWAY_POSTGRES_URL)'];
  problems.push({
    file: overrides.postgresUrl || overrides.redisUrl ? ENV_FILE : file,
    ...(overrides.postgresUrl || overrides.redisUrl ? NOWHERE : locate(['store'])),
    path: 'store',
    message:
      `distributed mode needs both backends: ${set} is set but ${missing} is not. PostgreSQL holds the shared ` +
      'control plane and Valkey the shared counters; with one alone, hosts would disagree on keys or multiply every limit ' +
      'by the number of hosts. Set both, or neither for the embedded default.',
  });
}

/**
 * Reads, interpolates, applies env overrides, validates, fills defaults. Never throws for user
 * errors (a missing file included): they are problems.
 */
export async function loadConfigFile(file: string, env: NodeJS.ProcessEnv = process.env): Promise<LoadResult> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    const reason = error instanceof Error && 'code' in error ? String(error.code) : String(error);
    const problem = { file: path.resolve(file), ...NOWHERE, path: '', message: `cannot read the config file (${reason})` };
    return { config: null, problems: [problem], locate: () => NOWHERE };
  }
  return loadConfigText(text, file, env);
}

/** Resolves which file to load: explicit argument, else GATEWAY_CONFIG, else <cwd>/config/gateway.yaml. */
export function resolveConfigPath(explicit: string | undefined, env: NodeJS.ProcessEnv = process.env): string {
  const chosen = explicit || env.GATEWAY_CONFIG;
  if (chosen) return path.resolve(chosen);
  const local = path.resolve('config', 'gateway.yaml');
  // Installed as a package (`npx gateway start` in a folder without a config/): the shipped default.
  // Its relative paths (store.path: ./data) still resolve against the working directory.
  return existsSync(local) ? local : fileURLToPath(new URL('../../../config/gateway.yaml', import.meta.url));
}

/**
 * One line per problem, paths shown relative to the working directory when below it.
 *
 * @example
 * formatProblem(p) // "config/gateway.yaml:12:5 server.port: must be <= 65535"
 */
export function formatProblem(p: ConfigProblem): string {
  let file = p.file;
  if (path.isAbsolute(file)) {
    const relative = path.relative(process.cwd(), file);
    if (relative !== '' && !relative.startsWith('..') && !path.isAbsolute(relative)) file = relative;
  }
  const where = p.line > 0 ? `${file}:${p.line}:${p.column}` : file;
  return p.path ? `${where} ${p.path}: ${p.message}` : `${where}: ${p.message}`;
}
