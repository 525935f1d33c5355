/**
 * wrk runner. POST needs a Lua script; it also prints exact percentiles (µs) from `done()` as one
 * JSON line, and the `--latency` text distribution is parsed as a fallback if that line is absent.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { LatencyMs, LoadResult, LoadSpec, LoadTool } from './load-tool.js';
import type { Pinning } from './pinning.js';
import { runCommand } from './processes.js';
import { runTempDir } from './temp-dir.js';

const JSON_MARK = 'WRK_JSON ';

/** Lua long-bracket string: no escaping needed unless the text contains the closing bracket. */
function luaString(text: string): string {
  if (text.includes(']==]')) throw new Error('value contains the Lua closing bracket ]==]');
  return `[==[${text}]==]`;
}

/**
 * wrk builds its request once, with `wrk.format()`, which writes the headers in `pairs()` order:
 * a different order in every wrk process (Lua's string hashes are seeded per process). A real
 * client sends its headers in one order, and a server's optimised code is specialised to the
 * header object's shape, which follows that order: every run in a new order deoptimised the
 * gateway's header reads again, and after four orders left them megamorphic. This `wrk.format`
 * writes Host, the headers in the order given, then Content-Length, the same in every run.
 */
const ORDERED_FORMAT = [
  'function wrk.format(method, path, headers, body)',
  '  method = method or wrk.method; path = path or wrk.path; headers = headers or wrk.headers; body = body or wrk.body',
  '  local s = { string.format("%s %s HTTP/1.1", method, path), "Host: " .. (headers["Host"] or wrk.host) }',
  '  for _, name in ipairs(order) do s[#s + 1] = name .. ": " .. headers[name] end',
  '  if body then s[#s + 1] = "Content-Length: " .. string.len(body) end',
  '  s[#s + 1] = ""',
  '  s[#s + 1] = body or ""',
  '  return table.concat(s, "\\r\\n")',
  'end',
];

/** The script: method, body and headers in a fixed order, plus a `done` hook that prints exact percentiles. */
export function wrkScript(spec: LoadSpec): string {
  const lines = ['wrk.method = "POST"', `wrk.body = ${luaString(spec.request.body)}`, 'local order = {}'];
  for (const [name, value] of Object.entries(spec.request.headers)) {
    if (/^(host|content-length)$/i.test(name)) throw new Error(`wrk sets the ${name} header itself`);
    lines.push(`order[#order + 1] = ${luaString(name)}`, `wrk.headers[ ${luaString(name)} ] = ${luaString(value)}`); // spaces: `[[` would open a long string
  }
  lines.push(...ORDERED_FORMAT);
  lines.push(
    'done = function(summary, latency, requests)',
    '  local e = summary.errors',
    `  io.write(string.format('${JSON_MARK}{"requests":%d,"duration_us":%d,"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d,"p50":%d,"p90":%d,"p99":%d,"p999":%d,"max":%d}\\n',`,
    '    summary.requests, summary.duration, e.connect, e.read, e.write, e.status, e.timeout,',
    '    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency:percentile(99.9), latency.max))',
    'end',
  );
  return `${lines.join('\n')}\n`;
}

interface WrkJson {
  requests: number;
  duration_us: number;
  connect: number;
  read: number;
  write: number;
  status: number;
  timeout: number;
  p50: number;
  p90: number;
  p99: number;
  p999: number;
  max: number;
}

const UNIT_MS: Record<string, number> = { us: 0.001, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** "1.23ms" → 1.23, "850.00us" → 0.85 */
function durationMs(text: string): number {
  const match = /^([\d.]+)(us|ms|s|m|h)$/.exec(text.trim());
  if (match === null) return Number.NaN;
  return Number.parseFloat(match[1]!) * UNIT_MS[match[2]!]!;
}

/** Parses wrk's human output (`--latency`); used when the Lua JSON line is missing. */
export function parseWrkText(out: string): LoadResult {
  const dist = new Map<string, number>();
  for (const match of out.matchAll(/^\s+(50|75|90|99)%\s+(\S+)\s*$/gm)) dist.set(match[1]!, durationMs(match[2]!));
  const requests = Number.parseInt(/(\d+) requests in/.exec(out)?.[1] ?? 'NaN', 10);
  const rps = Number.parseFloat(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? 'NaN');
  const non2xx = Number.parseInt(/Non-2xx or 3xx responses:\s+(\d+)/.exec(out)?.[1] ?? '0', 10);
  const socket = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out);
  const socketErrors = socket === null ? 0 : socket.slice(1).reduce((sum, n) => sum + Number.parseInt(n, 10), 0);
  const max = durationMs(/Latency\s+\S+\s+\S+\s+(\S+)/.exec(out)?.[1] ?? '');
  const latencyMs: LatencyMs = { p50: dist.get('50') ?? Number.NaN, p90: dist.get('90') ?? Number.NaN, p99: dist.get('99') ?? Number.NaN, p999: undefined, max };
  return { requests, rps, errors: non2xx + socketErrors, latencyMs };
}

function fromJson(json: WrkJson): LoadResult {
  return {
    requests: json.requests,
    rps: json.requests / (json.duration_us / 1e6),
    // summary.errors.read counts connections the server closed: a real error for keep-alive load.
    errors: json.connect + json.read + json.write + json.status + json.timeout,
    latencyMs: { p50: json.p50 / 1000, p90: json.p90 / 1000, p99: json.p99 / 1000, p999: json.p999 / 1000, max: json.max / 1000 },
  };
}

/**
 * Prefers the Lua JSON line. Without it, a Lua error on stderr means wrk silently sent plain GETs
 * (it still exits 0), so that is an error; otherwise the text distribution is parsed.
 */
export function parseWrkOutput(out: string, err = ''): LoadResult {
  const line = out.split('\n').find((l) => l.startsWith(JSON_MARK));
  if (line !== undefined) return fromJson(JSON.parse(line.slice(JSON_MARK.length)) as WrkJson);
  if (err.trim() !== '') throw new Error(`wrk script failed: ${err.trim()}`);
  return parseWrkText(out);
}

/** wrk with one thread (the load CPU is shared with the mock), pinned to the load CPU. */
export function createWrk(version: string, pinning: Pinning): LoadTool {
  const dir = runTempDir('wrk');
  let scripts = 0;
  return {
    name: 'wrk',
    version,
    resolution: 'µs (wrk HdrHistogram, read via Lua done())',
    async run(spec) {
      const script = join(dir, `post-${++scripts}.lua`);
      writeFileSync(script, wrkScript(spec));
      const args = ['-t1', `-c${spec.connections}`, `-d${spec.durationSec}s`, '--latency', '-s', script, `${spec.origin}${spec.request.path}`];
      const { command, args: pinned } = pinning.wrap('load', 'wrk', args);
      const result = await runCommand(command, pinned, (spec.durationSec + 30) * 1000);
      if (result.code !== 0) throw new Error(`wrk failed (code ${result.code}): ${result.stderr || result.stdout}`);
      return parseWrkOutput(result.stdout, result.stderr);
    },
  };
}
