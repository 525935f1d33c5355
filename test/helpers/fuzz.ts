/**
 * The fuzz suite's shared parts (test/fuzz-*.test.ts): run settings, the arbitraries that
 * generate hostile input, the one contract every answer must keep, and a guard that keeps the
 * gateway on loopback while strangers' input steers it.
 *
 *   FUZZ_SEED=… FUZZ_RUNS=… npx tap dist/test/fuzz-*.test.js
 *
 *   arbitrary ─► exchange (method, path, headers, body bytes) ─► real HTTP ─► checkAnswer
 *                                                                          └► GET /health after each property
 *
 * Every generated string value carries a canary (`CANARY_` + 8 hex digits). A gateway error that
 * contains `CANARY_` echoed request input. Keys are generated without canaries: a validation error
 * names the field at fault in `param` (bounded), which is by design.
 */
import net from 'node:net';
import fc from 'fast-check';
import { request } from 'undici';
import type { Test } from 'tap';
import { ADMIN_KEY, direct, startGateway, startMock, type MockUpstream, type StartedGateway } from './gateway.js';

// ───────────────────────────── settings ─────────────────────────────

function envInt(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isSafeInteger(n)) throw new Error(`${name} must be an integer, got ${JSON.stringify(raw)}`);
  return n;
}

/** The seed every property starts from: fixed, so a CI failure replays exactly with the same value. */
export const FUZZ_SEED = envInt('FUZZ_SEED', 11_2026);
/** Cases per property (a weight scales it per property). The default keeps the suite near 60 s on 2 cores. */
export const FUZZ_RUNS = envInt('FUZZ_RUNS', 50);
/** `FUZZ_SHRINK=0` reports the first failing case as found instead of shrinking it (faster, larger). */
export const FUZZ_SHRINK = process.env.FUZZ_SHRINK !== '0';
/**
 * `FUZZ_KEEP_GOING=1` runs every case and reports each distinct failure (by problem, method and
 * route) once, with its shortest reproducer, instead of stopping at the first: for triage.
 */
export const FUZZ_KEEP_GOING = process.env.FUZZ_KEEP_GOING === '1';

// ───────────────────────────── generated values ─────────────────────────────

export const CANARY_PREFIX = 'CANARY_';

/** A fresh canary token: `CANARY_` + 8 hex digits. */
export const canary: fc.Arbitrary<string> = fc
  .integer({ min: 0, max: 0xffffffff })
  .map((n) => `${CANARY_PREFIX}${n.toString(16).padStart(8, '0')}`);

/** JSON text spliced in as is: literals JSON.stringify cannot write (`1e999`) or nesting too deep to build as objects. */
export class RawJson {
  constructor(readonly text: string) {}
}

export type Fuzzed = null | boolean | number | string | RawJson | Fuzzed[] | { [key: string]: Fuzzed };

/** Serialises a generated value; RawJson goes in verbatim. */
export function toJsonText(value: Fuzzed): string {
  if (value instanceof RawJson) return value.text;
  if (Array.isArray(value)) return `[${value.map(toJsonText).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    return `{${Object.entries(value)
      .map(([k, v]) => `${JSON.stringify(k)}:${toJsonText(v)}`)
      .join(',')}}`;
  }
  // NaN and ±Infinity become `null`, as any JSON client would send them; 1e999 comes as RawJson.
  return JSON.stringify(value);
}

const ODD_PIECES = ['\u0000', '\u202e', '\ud800', '\udfff', '\uffff', '\u2028', '\r\n', '"\\', '%00', '%', '${HOME}', '{{x}}', '<script>', '../..', ' ', '\t'];

/** A string that always contains a canary, with unicode, control characters, NUL or sheer length around it. */
export function hostileString(maxLong = 1_000_000): fc.Arbitrary<string> {
  const lengths = [300, 5_000, 70_000, maxLong].filter((n) => n <= maxLong);
  return fc.oneof(
    { arbitrary: canary, weight: 3 },
    {
      arbitrary: fc
        .tuple(fc.string({ unit: 'binary', maxLength: 16 }), canary, fc.string({ unit: 'grapheme', maxLength: 16 }))
        .map(([a, c, b]) => `${a}${c}${b}`),
      weight: 4,
    },
    { arbitrary: fc.tuple(canary, fc.constantFrom(...ODD_PIECES)).map(([c, odd]) => `${odd}${c}${odd}`), weight: 3 },
    {
      arbitrary: fc
        .tuple(canary, fc.constantFrom(...lengths), fc.constantFrom('a', 'é', '😀', '\u0000', ' '))
        .map(([c, n, ch]) => `${c}${ch.repeat(n)}`),
      weight: 1,
    },
  );
}

const RAW_NUMBERS = ['1e999', '-1e999', '1e400', '-0', '123456789012345678901234567890', '1e-400', '1E+2', '0.1e1'];

/** Numbers a careless client sends: huge, negative, fractional, non-finite (as JSON literals), unsafe integers. */
export const hostileNumber: fc.Arbitrary<number | RawJson> = fc.oneof(
  fc.integer(),
  fc.double(),
  fc.constantFrom(0, -1, 1e308, -1e308, 2 ** 53 + 1, 4_294_967_296, 1e-320, 0.5, 1e15),
  fc.constantFrom(...RAW_NUMBERS).map((text) => new RawJson(text)),
);

/** Nesting deeper than any parser or schema walker should recurse into blindly. */
export const deepNesting: fc.Arbitrary<RawJson> = fc
  .tuple(fc.constantFrom(64, 1_000, 20_000), fc.boolean())
  .map(([depth, arrays]) => new RawJson(arrays ? `${'['.repeat(depth)}${']'.repeat(depth)}` : `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`));

const KNOWN_KEYS = [
  'model', 'messages', 'role', 'content', 'type', 'text', 'input', 'prompt', 'stream', 'tools', 'tool_choice', 'metadata',
  'n', 'max_tokens', 'temperature', 'strategy', 'mode', 'targets', 'provider', 'config', 'name', 'slug', 'id', '__proto__', 'constructor',
];

/** Object keys: plain words the gateway knows, and arbitrary short strings (no canary: keys may be named in `param`). */
export const fuzzKey: fc.Arbitrary<string> = fc.oneof(fc.constantFrom(...KNOWN_KEYS), fc.string({ maxLength: 12 }));

/** A leaf value: anything JSON can carry, hostile where it can be. */
export function leaf(maxLong = 1_000_000): fc.Arbitrary<Fuzzed> {
  return fc.oneof(
    fc.constant(null),
    fc.boolean(),
    hostileNumber,
    { arbitrary: hostileString(maxLong), weight: 3 },
    deepNesting,
  );
}

/** Any JSON value, a few levels deep, built from hostile leaves. */
export function jsonValue(maxLong = 1_000_000): fc.Arbitrary<Fuzzed> {
  const { value } = fc.letrec<{ value: Fuzzed }>((tie) => ({
    value: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      leaf(maxLong),
      fc.array(tie('value'), { maxLength: 5 }),
      fc.dictionary(fuzzKey, tie('value'), { maxKeys: 6 }),
    ),
  }));
  return value;
}

/** A JSON object (the shape every route expects), with hostile values. */
export function jsonObject(maxLong = 1_000_000): fc.Arbitrary<{ [key: string]: Fuzzed }> {
  return fc.dictionary(fuzzKey, jsonValue(maxLong), { maxKeys: 8 });
}

/** One change to a valid body: set the field at `path` to a hostile value, or remove it. */
export interface Mutation {
  path: ReadonlyArray<string | number>;
  value: Fuzzed | typeof REMOVE;
}
export const REMOVE = Symbol('remove');

/** 1–3 mutations of the given field paths (paths may point below fields that do not exist yet). */
export function mutations(
  paths: ReadonlyArray<ReadonlyArray<string | number>>,
  maxLong = 1_000_000,
  values: fc.Arbitrary<Fuzzed> = jsonValue(maxLong),
): fc.Arbitrary<Mutation[]> {
  const value: fc.Arbitrary<Fuzzed | typeof REMOVE> = fc.oneof(
    { arbitrary: values, weight: 6 },
    // null on its own: "present but null" is the case code most often forgets (`strategy: null`).
    { arbitrary: fc.constant(null), weight: 1 },
    { arbitrary: fc.constant(REMOVE), weight: 1 },
  );
  return fc.array(fc.record({ path: fc.constantFrom(...paths), value }), { minLength: 1, maxLength: 3 });
}

/** A deep copy of `base` with the mutations applied in order. */
export function applyMutations(base: Fuzzed, changes: ReadonlyArray<Mutation>): Fuzzed {
  const root = structuredClone(base) as Fuzzed;
  for (const { path, value } of changes) {
    let node: Fuzzed = root;
    for (let i = 0; i < path.length - 1; i++) {
      const key = path[i]!;
      if (node === null || typeof node !== 'object' || node instanceof RawJson) break;
      const container = node as Record<string | number, Fuzzed>;
      let next: Fuzzed | undefined = container[key];
      if (next === undefined || next === null || typeof next !== 'object' || next instanceof RawJson) {
        next = typeof path[i + 1] === 'number' ? [] : {};
        container[key] = next;
      }
      node = next;
    }
    if (node === null || typeof node !== 'object' || node instanceof RawJson) continue;
    const last = path[path.length - 1]!;
    const container = node as Record<string | number, Fuzzed>;
    if (value === REMOVE) delete container[last];
    else container[last] = value;
  }
  return root;
}

/** Bytes that are not valid JSON (or not valid UTF-8), each a way a broken client fails. */
export const invalidJsonBytes: fc.Arbitrary<Buffer> = fc.oneof(
  fc.uint8Array({ maxLength: 256 }).map((a) => Buffer.from(a)),
  fc.tuple(canary, fc.constantFrom('{', '{"model":', '{"a":1,}', '[1,2', '{"a":"\\x"}', '{"a":"', 'nul', 'tru', '{"a":01}', "{'a':1}", '{"a":NaN}', '{"a":Infinity}', '{"a":1}{"b":2}', '\u0000{}'))
    .map(([c, text]) => Buffer.from(`${text}${JSON.stringify(c)}`)),
  fc.tuple(canary, fc.constantFrom([0xff, 0xfe], [0xc0, 0x80], [0xed, 0xa0, 0x80], [0xf4, 0x90, 0x80, 0x80], [0xef, 0xbb, 0xbf])).map(([c, bytes]) =>
    Buffer.concat([Buffer.from(`{"model":"${c}`), Buffer.from(bytes), Buffer.from('"}')]),
  ),
  fc.constantFrom('', ' ', '\n', '""', '0', 'null', '[]').map((s) => Buffer.from(s)),
);

export const ODD_CONTENT_TYPES = [
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/json; charset=latin1',
  'application/json; charset=utf-16',
  'application/jsonx',
  'APPLICATION/JSON',
  'application/vnd.api+json',
  'application/json;;;',
  ';',
  'application/octet-stream',
  '*/*',
] as const;

/**
 * Percent-encodes every byte of the UTF-8 form outside RFC 3986's unreserved set. Unlike
 * encodeURIComponent it never throws: a lone surrogate goes out as U+FFFD's bytes.
 */
export function percentEncode(text: string): string {
  let out = '';
  for (const byte of Buffer.from(text, 'utf8')) {
    const ch = String.fromCharCode(byte);
    out += /[A-Za-z0-9\-._~]/.test(ch) ? ch : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/** A header value a client can put on the wire: printable ASCII and latin-1 bytes (Node refuses the rest). */
export function headerSafe(text: string): string {
  // UTF-8 bytes read as latin-1 are what the gateway receives for non-ASCII header text.
  return Buffer.from(text, 'utf8').toString('latin1').replace(/[^\t\x20-\x7e\x80-\xff]/g, '');
}

// ───────────────────────────── the wire ─────────────────────────────

export interface Exchange {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE' | 'PATCH';
  path: string;
  headers: Record<string, string | string[]>;
  body?: string | Buffer;
}

export interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

export async function send(baseUrl: string, exchange: Exchange): Promise<Answer> {
  const res = await request(`${baseUrl}${exchange.path}`, {
    method: exchange.method,
    headers: exchange.headers,
    body: exchange.body,
    headersTimeout: 30_000,
    bodyTimeout: 30_000,
  });
  const text = await res.body.text();
  return { status: res.statusCode, headers: res.headers, text };
}

/** What else happened while one exchange ran, which decides whether an upstream status may pass. */
export interface Facts {
  /** Requests the mock upstream received during the exchange. */
  upstreamCalls: number;
  /** The request set a per-attempt timeout, so an attempt may be cut before the mock records it. */
  timeoutGiven: boolean;
  /** An Anthropic Messages route: its gateway errors add Anthropic's top-level `"type":"error"` (README). */
  anthropic?: boolean;
}

/** Gateway-made statuses that report an upstream failure; they are legitimate only after an attempt. */
const UPSTREAM_FAILURE_CODES = new Set(['upstream_unreachable', 'upstream_invalid_response', 'upstream_stream_error', 'upstream_timeout']);

function header(answer: Answer, name: string): string | undefined {
  const v = answer.headers[name];
  return Array.isArray(v) ? v.join(', ') : v;
}

/**
 * The contract, one answer at a time. Returns what broke, or undefined.
 * - No 5xx, except an upstream's own 5xx passed through, or a gateway 502/504 that reports an
 *   upstream failure, and then only when an upstream call was made (a 504 also when the request set
 *   a timeout that may cut the attempt before the mock sees it). A gateway 500 is always a failure.
 * - Every error (4xx/5xx) says who made it in `x-gateway-error-source`; "upstream" only after a call.
 * - A gateway error has exactly `{"error":{"message":string,"type":string,"param":string|null,"code":string}}`
 *   (on the Anthropic Messages routes plus Anthropic's top-level `"type":"error"`, as the README documents).
 * - A gateway error never contains a canary, i.e. never echoes request input.
 */
export function checkAnswer(answer: Answer, facts: Facts): string | undefined {
  const source = header(answer, 'x-gateway-error-source');
  if (answer.status < 400 && source !== 'gateway') return undefined;
  if (source !== 'gateway' && source !== 'upstream') return `error status ${answer.status} without x-gateway-error-source gateway|upstream (got ${String(source)})`;
  if (source === 'upstream') {
    if (facts.upstreamCalls === 0) return `error labelled upstream (status ${answer.status}) but the upstream received no request`;
    return undefined;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(answer.text);
  } catch {
    return `gateway error body is not JSON`;
  }
  const shapeProblem = errorShapeProblem(parsed, facts.anthropic === true);
  if (shapeProblem !== undefined) return `gateway error shape: ${shapeProblem}`;
  const code = (parsed as { error: { code: string } }).error.code;
  if (answer.text.includes(CANARY_PREFIX)) return `gateway error (${answer.status} ${code}) echoes request input (a canary)`;
  if (answer.status >= 500) {
    if (!UPSTREAM_FAILURE_CODES.has(code)) return `gateway-made ${answer.status} ${code}`;
    const attempted = facts.upstreamCalls > 0 || (code === 'upstream_timeout' && facts.timeoutGiven);
    if (!attempted) return `gateway ${answer.status} ${code} although no upstream call was made`;
  }
  return undefined;
}

function errorShapeProblem(body: unknown, anthropic: boolean): string | undefined {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return 'not an object';
  const keys = Object.keys(body).sort().join(',');
  const envelope = anthropic && (body as { type?: unknown }).type === 'error' ? 'error,type' : 'error';
  if (keys !== envelope) return `top-level keys ${JSON.stringify(Object.keys(body))}`;
  const error = (body as { error: unknown }).error;
  if (error === null || typeof error !== 'object' || Array.isArray(error)) return 'error is not an object';
  const e = error as Record<string, unknown>;
  const ekeys = Object.keys(e).sort();
  if (ekeys.join(',') !== 'code,message,param,type') return `error keys ${JSON.stringify(ekeys)}`;
  if (typeof e.message !== 'string') return 'message is not a string';
  if (typeof e.type !== 'string') return 'type is not a string';
  if (typeof e.code !== 'string') return 'code is not a string';
  if (e.param !== null && typeof e.param !== 'string') return 'param is neither a string nor null';
  return undefined;
}

/** Bounded, escaped text for a failure report. */
export function excerpt(value: unknown, max = 400): string {
  const text = typeof value === 'string' ? value : Buffer.isBuffer(value) ? value.toString('latin1') : JSON.stringify(value) ?? String(value);
  const shown = text.length > max ? `${text.slice(0, max)}… (${text.length} chars)` : text;
  return JSON.stringify(shown);
}

/** A reproducer for the failure report: everything needed to send the request again by hand. */
export function reproducer(exchange: Exchange, answer: Answer | undefined): string {
  const headers = Object.fromEntries(Object.entries(exchange.headers).map(([k, v]) => [k, JSON.parse(excerpt(v, 200)) as string]));
  const lines = [
    `  request: ${exchange.method} ${excerpt(exchange.path, 300)}`,
    `  headers: ${JSON.stringify(headers)}`,
    `  body (${exchange.body === undefined ? 0 : Buffer.byteLength(exchange.body)} bytes): ${exchange.body === undefined ? '-' : excerpt(exchange.body, 600)}`,
  ];
  if (answer !== undefined) lines.push(`  answer: ${answer.status} source=${String(answer.headers['x-gateway-error-source'])} ${excerpt(answer.text, 600)}`);
  return lines.join('\n');
}

/**
 * Sends one exchange and checks it; throws (for fast-check) with a reproducer when the contract
 * breaks or the connection fails.
 */
export async function exchangeAndCheck(target: { url: string; mock: MockUpstream }, exchange: Exchange, timeoutGiven = false): Promise<void> {
  const before = target.mock.requests.length;
  let answer: Answer;
  try {
    answer = await send(target.url, exchange);
  } catch (err) {
    throw new Error(`connection failed: ${err instanceof Error ? `${(err as { code?: string }).code ?? ''} ${err.message}` : String(err)}\n${reproducer(exchange, undefined)}`, { cause: err });
  }
  const anthropic = /^\/v1\/messages(\/count_tokens)?(\?|$)/.test(exchange.path);
  const problem = checkAnswer(answer, { upstreamCalls: target.mock.requests.length - before, timeoutGiven, anthropic });
  if (problem !== undefined) throw new Error(`${problem}\n${reproducer(exchange, answer)}`);
}

// ───────────────────────────── running properties ─────────────────────────────

/** GET /health answers 200 `{"status":"ok"}`: the gateway is alive and serving. */
export async function assertHealthy(t: Test, baseUrl: string): Promise<void> {
  const res = await request(`${baseUrl}/health`);
  const body = await res.body.text();
  t.equal(res.statusCode, 200, 'GET /health is 200 after the property');
  t.same(JSON.parse(body), { status: 'ok' }, 'the health body says ok');
}

/**
 * Runs one property as a tap subtest: `runs` generated cases (FUZZ_RUNS × weight) from FUZZ_SEED,
 * then checks the gateway is still healthy. A failure names the seed and the shrunk reproducer.
 */
export function property<T>(
  t: Test,
  name: string,
  setup: { target: FuzzTarget; weight?: number },
  arbitrary: fc.Arbitrary<T>,
  check: (input: T) => Promise<void>,
): Promise<unknown> {
  return t.test(name, async (t) => {
    const numRuns = Math.max(1, Math.round(FUZZ_RUNS * (setup.weight ?? 1)));
    const seen = new Map<string, string>();
    const run = FUZZ_KEEP_GOING ? (input: T) => check(input).catch((err: unknown) => void remember(seen, err)) : check;
    const details = await fc.check(fc.asyncProperty(arbitrary, run), { seed: FUZZ_SEED, numRuns, endOnFailure: !FUZZ_SHRINK });
    if (details.failed) {
      const error = details.errorInstance;
      const message = error instanceof Error ? error.message : String(error);
      t.fail(
        `${name}: property failed (FUZZ_SEED=${details.seed}, case ${details.numRuns} of ${numRuns}, ${details.numShrinks} shrinks)\n${message}`,
      );
    } else if (seen.size > 0) {
      for (const message of seen.values()) t.fail(`${name} (FUZZ_SEED=${FUZZ_SEED}, FUZZ_KEEP_GOING)\n${message}`);
    } else {
      t.equal(details.numRuns, numRuns, `${numRuns} generated cases held the contract`);
    }
    await assertHealthy(t, setup.target.url);
    t.same(setup.target.refused, [], 'no connection left loopback (the generators keep every target on the mock)');
  });
}

/** Keeps the shortest reproducer per kind of failure: the problem, the method and the route with ids blanked. */
function remember(seen: Map<string, string>, err: unknown): void {
  const message = err instanceof Error ? err.message : String(err);
  const problem = message.split('\n')[0] ?? '';
  const request = /request: (\S+) "([^"?]*)/.exec(message) ?? [];
  const route = (request[2] ?? '').split('/').map((seg) => (seg.length > 24 || /CANARY|%/.test(seg) ? ':id' : seg)).join('/');
  const key = `${problem.replace(/CANARY_[0-9a-f]{8}/g, 'CANARY')} ${request[1] ?? ''} ${route}`;
  const before = seen.get(key);
  if (before === undefined || message.length < before.length) seen.set(key, message);
}

// ───────────────────────────── keeping the fuzz on loopback ─────────────────────────────

const LOOPBACK = /^(127\.\d{1,3}\.\d{1,3}\.\d{1,3}|::1|localhost|::ffff:127\.\d{1,3}\.\d{1,3}\.\d{1,3})$/i;

/**
 * Refuses, inside this test process, every outbound TCP connection that is not to loopback, and
 * records it. Generated input steers the gateway's upstream choice; a generator slip (a target
 * without a custom host) must not reach the internet. A refused connection looks like ECONNREFUSED
 * to the gateway, and the property then fails with the gateway's 502 (no mock call was made).
 */
export function loopbackOnly(t: Test): string[] {
  const refused: string[] = [];
  const original = net.Socket.prototype.connect;
  const guarded = function connect(this: net.Socket, ...args: unknown[]): net.Socket {
    // net.connect passes normalised args as a one-element array of [options, callback].
    const first = Array.isArray(args[0]) ? (args[0] as unknown[])[0] : args[0];
    const options = typeof first === 'object' && first !== null ? (first as { host?: string; path?: string }) : { host: typeof args[1] === 'string' ? args[1] : 'localhost' };
    if (options.path === undefined) {
      const host = (options.host ?? 'localhost').replace(/^\[|\]$/g, '');
      if (!LOOPBACK.test(host)) {
        refused.push(host);
        process.nextTick(() => this.destroy(Object.assign(new Error(`fuzz guard: connection to ${host} refused`), { code: 'ECONNREFUSED' })));
        return this;
      }
    }
    return (original as (...a: unknown[]) => net.Socket).apply(this, args);
  };
  net.Socket.prototype.connect = guarded as typeof net.Socket.prototype.connect;
  t.teardown(() => {
    net.Socket.prototype.connect = original;
  });
  return refused;
}

// ───────────────────────────── the target ─────────────────────────────

/** The standard pipeline of config/gateway.yaml (auth on), with loopback custom hosts allowed for the mock. */
export const STANDARD_YAML = `security:
  custom_hosts:
    allow: [localhost, 127.0.0.1, "::1"]
upstream:
  connect_timeout: 2000
pipeline: [logging, analytics, metrics, otel, auth, virtual-keys, config-strategy, rate-limit, usage-limits, cache,
  admin-org, admin-api-keys, admin-resources, admin-policies, admin-catalog]
`;

export interface FuzzTarget {
  gw: StartedGateway;
  mock: MockUpstream;
  /** The gateway's origin, `http://127.0.0.1:PORT`. */
  url: string;
  /** Headers that authenticate with the admin key and point direct mode at the mock. */
  headers: Record<string, string>;
  /** Hosts the loopback guard refused (must stay empty). */
  refused: string[];
}

/** One real gateway (standard pipeline, auth on) and one mock upstream for a whole fuzz file. */
export async function startFuzzTarget(t: Test): Promise<FuzzTarget> {
  const refused = loopbackOnly(t);
  const mock = await startMock(t);
  const gw = await startGateway(t, { yaml: STANDARD_YAML, env: { GATEWAY_ADMIN_KEY: ADMIN_KEY } });
  return { gw, mock, url: gw.url, headers: { 'x-gateway-api-key': ADMIN_KEY, ...direct(mock) }, refused };
}
