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
import { Ajv } from 'ajv';
import type { ErrorObject, ValidateFunction } from 'ajv';
import { LineCounter, isMap, isPair, isScalar, isSeq, parseDocument } from 'yaml';
import type { Document } from 'yaml';
import { interpolateDocument } from './interpolate.js';
import type {
  ConfigProblem,
  GatewayConfig,
  Locator,
  PipelineEntry,
  SecurityConfig,
  StoreConfig,
  TlsConfig,
} from './types.js';

export interface LoadResult {
  /** The config, or null when there is at least one problem. */
  config: GatewayConfig | null;
  problems: ConfigProblem[];
  /** Line and column of a key path in the loaded file (plugin option errors use it). */
  locate: Locator;
}

type Segments = ReadonlyArray<string | number>;
type Size = number | string;
type Duration = number | string;

/** The shape the schema guarantees after validation with defaults, before units are resolved. */
interface RawConfig {
  server: {
    host: string;
    port: number;
    body_limit: Size;
    workers: number;
    tls?: TlsConfig;
    keep_alive_timeout: Duration;
    headers_timeout: Duration;
    request_timeout: Duration;
    max_header_size: Size;
    shutdown_grace: Duration;
    stream_ping_interval: Duration;
  };
  store: StoreConfig;
  security: SecurityConfig;
  upstream: { connections: number; keep_alive_timeout: Duration; connect_timeout: Duration; request_timeout: Duration };
  pipeline: Array<string | Record<string, Record<string, unknown> | null>>;
}

const INLINE = '<inline>';
const ENV_FILE = 'env';
const NOWHERE = { line: 0, column: 0 };

// ── schema ────────────────────────────────────────────────────────────────────────────────────

let validator: ValidateFunction<RawConfig> | undefined;

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

/** Compiled on first use and kept: compiling costs milliseconds, validating microseconds. */
function getValidator(): ValidateFunction<RawConfig> {
  if (validator) return validator;
  const schema: unknown = JSON.parse(readFileSync(findSchemaFile(), 'utf8'));
  const ajv = new Ajv({
    allErrors: true, // report every problem in one run of `gateway validate`
    verbose: true, // errors carry parentSchema, where the friendlier messages live
    useDefaults: true, // the schema's `default`s are the single source of defaults
    allowUnionTypes: true, // sizes and durations are integer | string
  });
  // Annotations that editors (vscode-json-languageservice) show; declared so strict mode accepts them.
  ajv.addVocabulary(['patternErrorMessage', 'errorMessage']);
  validator = ajv.compile<RawConfig>(schema as object);
  return validator;
}

// ── positions ─────────────────────────────────────────────────────────────────────────────────

interface Found {
  /** Offset of the deepest node found on the path (the value, or its key when the value is empty). */
  offset: number | null;
  /** Offset of the last segment's key, when the whole path exists and ends at a mapping key. */
  keyOffset: number | null;
}

function nodeOffset(node: unknown): number | null {
  if (node === null || typeof node !== 'object' || !('range' in node)) return null;
  const range = (node as { range?: [number, number, number] | null }).range;
  // `key:` with nothing after it yields an empty null scalar placed after the line; the key is a better spot.
  if (!range || (isScalar(node) && range[0] === range[1])) return null;
  return range[0];
}

function findOffset(doc: Document, segments: Segments): Found {
  let current: unknown = doc.contents;
  let offset = nodeOffset(current);
  let keyOffset: number | null = null;
  for (const segment of segments) {
    keyOffset = null;
    if (isMap(current)) {
      const pair = current.items.find(function matches(p) {
        return isPair(p) && isScalar(p.key) && String(p.key.value) === String(segment);
      });
      if (!pair) break;
      keyOffset = nodeOffset(pair.key);
      current = pair.value;
      offset = nodeOffset(current) ?? keyOffset ?? offset;
    } else if (isSeq(current) && /^\d+$/.test(String(segment))) {
      const item: unknown = current.items[Number(segment)];
      if (item === undefined) break;
      current = item;
      offset = nodeOffset(current) ?? offset;
    } else {
      break;
    }
  }
  return { offset, keyOffset };
}

interface Positions {
  locate: Locator;
  /** The position of the last segment's key itself (for unknown keys), else as `locate`. */
  locateKey: Locator;
  at(offset: number): { line: number; column: number };
}

function createPositions(doc: Document, lineCounter: LineCounter): Positions {
  function at(offset: number): { line: number; column: number } {
    const { line, col } = lineCounter.linePos(offset);
    return { line, column: col };
  }
  return {
    at,
    locate: function locate(segments, options) {
      const { offset, keyOffset } = findOffset(doc, segments);
      const best = options?.key === true ? (keyOffset ?? offset) : offset;
      return best === null ? NOWHERE : at(best);
    },
    locateKey: function locateKey(segments) {
      const { offset, keyOffset } = findOffset(doc, segments);
      const best = keyOffset ?? offset;
      return best === null ? NOWHERE : at(best);
    },
  };
}

/** `pipeline[2].cache.max_entries`; keys that are not plain words are quoted: `pipeline[7]["./x.js"]`. */
export function formatPath(segments: Segments): string {
  let out = '';
  for (const segment of segments) {
    if (typeof segment === 'number') out += `[${segment}]`;
    else if (/^[A-Za-z_][A-Za-z0-9_-]*$/.test(segment)) out += out === '' ? segment : `.${segment}`;
    else out += `[${JSON.stringify(segment)}]`;
  }
  return out;
}

// ── ajv errors ────────────────────────────────────────────────────────────────────────────────

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** JSON pointer → segments, with array indexes as numbers (they print as `[i]`). */
function pointerToSegments(pointer: string, data: unknown): Array<string | number> {
  const segments: Array<string | number> = [];
  let current = data;
  for (const raw of pointer.split('/').slice(1)) {
    const segment = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (Array.isArray(current)) {
      segments.push(Number(segment));
      current = current[Number(segment)];
    } else {
      segments.push(segment);
      current = isRecord(current) ? current[segment] : undefined;
    }
  }
  return segments;
}

/** Optimal string alignment distance: Levenshtein plus adjacent swaps, the usual typo (`prot`). */
function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i]);
  for (let j = 1; j <= b.length; j++) d[0]![j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, d[i - 2]![j - 2]! + 1);
      d[i]![j] = best;
    }
  }
  return d[a.length]![b.length]!;
}

function suggest(key: string, known: string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const candidate of known) {
    const distance = editDistance(key.toLowerCase(), candidate.toLowerCase());
    if (distance < bestDistance) [best, bestDistance] = [candidate, distance];
  }
  // A third of the word is the most a typo plausibly changes; beyond it the hint misleads.
  return bestDistance <= Math.max(1, Math.floor(Math.max(key.length, best?.length ?? 0) / 3)) ? best : undefined;
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a mapping';
  if (typeof value === 'string') return `"${value.length > 40 ? value.slice(0, 40) + '…' : value}"`;
  return String(value);
}

/** JSON Schema type names in the words a YAML author uses. */
const TYPE_NAMES: Record<string, string> = {
  object: 'a mapping',
  array: 'a list',
  string: 'a string',
  integer: 'an integer',
  number: 'a number',
  boolean: 'true or false',
  null: 'null',
};

function schemaString(schema: unknown, key: string): string | undefined {
  return isRecord(schema) && typeof schema[key] === 'string' ? schema[key] : undefined;
}

/** Turns one ajv error into a problem at the offending node, or null for ajv's summary errors. */
function problemFromAjv(error: ErrorObject, data: unknown, file: string, positions: Positions): ConfigProblem | null {
  // `if` ("must match else schema") and the `propertyNames` wrapper only repeat a precise error.
  if (error.keyword === 'if' || error.keyword === 'propertyNames') return null;
  const segments = pointerToSegments(error.instancePath, data);
  let where = positions.locate(segments);
  let message = error.message ?? 'is invalid';
  const params: Record<string, unknown> = error.params;

  if (error.propertyName !== undefined) {
    segments.push(error.propertyName);
    where = positions.locateKey(segments);
    message = `${schemaString(error.parentSchema, 'patternErrorMessage') ?? message}, got "${error.propertyName}"`;
  } else if (error.keyword === 'additionalProperties' && typeof params.additionalProperty === 'string') {
    const key = params.additionalProperty;
    segments.push(key);
    where = positions.locateKey(segments);
    const properties = isRecord(error.parentSchema) && isRecord(error.parentSchema.properties) ? error.parentSchema.properties : {};
    const hint = suggest(key, Object.keys(properties));
    message = `unknown key "${key}"` + (hint ? ` (did you mean "${hint}"?)` : '');
  } else if (error.keyword === 'required' && typeof params.missingProperty === 'string') {
    // The missing key has no node: point at the mapping that should hold it.
    segments.push(params.missingProperty);
    message = `missing required key "${params.missingProperty}"`;
  } else if (error.keyword === 'type') {
    const custom = schemaString(error.parentSchema, 'errorMessage');
    const types: unknown[] = Array.isArray(params.type) ? params.type : [params.type];
    const expected = types.map((type) => TYPE_NAMES[String(type)] ?? String(type)).join(' or ');
    message = `${custom ?? `must be ${expected}`}, got ${describe(error.data)}`;
  } else if (error.keyword === 'pattern') {
    message = `${schemaString(error.parentSchema, 'patternErrorMessage') ?? message}, got ${describe(error.data)}`;
  } else if (error.keyword === 'minProperties' || error.keyword === 'maxProperties') {
    message = schemaString(error.parentSchema, 'errorMessage') ?? message;
  }
  return { file, ...where, path: formatPath(segments), message };
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
}

/** Empty variables count as unset: `GATEWAY_PORT= npm start` should not fail. */
function readEnvOverrides(env: NodeJS.ProcessEnv, problems: ConfigProblem[]): EnvOverrides {
  const overrides: EnvOverrides = {};
  if (env.GATEWAY_HOST) overrides.host = env.GATEWAY_HOST;
  if (env.GATEWAY_DATA_DIR) overrides.dataDir = env.GATEWAY_DATA_DIR;
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
  const bytes = (value: Size, key: string): number => convert(value, ['server', key], SIZE_UNITS);
  const ms = (value: Duration, section: string, key: string): number => convert(value, [section, key], DURATION_UNITS);
  return {
    server: {
      host: server.host,
      port: server.port,
      body_limit: bytes(server.body_limit, 'body_limit'),
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
    store: { path: raw.store.path },
    security: { custom_hosts: { allow: [...raw.security.custom_hosts.allow], allow_loopback: raw.security.custom_hosts.allow_loopback } },
    upstream: {
      connections: upstream.connections,
      keep_alive_timeout: ms(upstream.keep_alive_timeout, 'upstream', 'keep_alive_timeout'),
      connect_timeout: ms(upstream.connect_timeout, 'upstream', 'connect_timeout'),
      request_timeout: ms(upstream.request_timeout, 'upstream', 'request_timeout'),
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

  const validate = getValidator();
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
  return finish(config, problems, locate);
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
  return path.resolve(explicit || env.GATEWAY_CONFIG || path.join('config', 'gateway.yaml'));
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
