/**
 * Reads what bench/perf-ab.sh recorded (`perf script` of two gateways profiled at once) and prints
 * CPU samples per 1,000 requests, A and B side by side and B − A:
 *
 *   - each side's main thread, its busiest other thread (the log thread where logging is on) and
 *     the rest (V8's compiler and GC helpers, libuv's pool);
 *   - the main thread by owner: the gateway's core, its plugins, undici, Node's HTTP and streams,
 *     the rest of Node, each library, and native code (V8, the kernel) reached from no JS frame;
 *   - each plugin inclusively (every sample with one of its frames on the stack);
 *   - the main thread by function (the innermost JS frame), largest difference first.
 *
 * A sample is 1/F s of one thread's CPU (perf's -F), so a row's difference reads directly as the
 * time B spends per request beyond A, at perf's own overhead (which about doubles every cost here).
 *
 *   node dist/bench/lib/perf-report.js SCRIPT PID_A REQUESTS_A PID_B REQUESTS_B [rows]
 */
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

export interface Side {
  pid: string;
  requests: number;
  /** Samples by row key: `thread:*`, `owner:*`, `plugin:*`, `fn:*`. */
  rows: Map<string, number>;
}

/** A build's directory (dist/, or dist-base/ for the build before a change) reads as the same code. */
const BUILD = /\/dist[^/]*\/(.*)$/;
const JS_FRAME = /JS:[*~^]?(\S*)\s+(\S+)/;
const PLUGIN = /\/dist[^/]*\/plugins\/([\w-]+)\//;

/** Who a JS frame's code belongs to. */
export function ownerOf(location: string): string {
  const dep = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(location);
  if (dep !== null) return dep[1] === 'undici' ? 'undici' : `lib:${dep[1]}`;
  const built = BUILD.exec(location);
  if (built !== null) return built[1]!.split('/')[0]!;
  const node = /node:([\w/]+)/.exec(location);
  if (node !== null) return /http|stream|net/.test(node[1]!) ? 'node-http' : 'node-other';
  return 'other-js';
}

/** The function of a JS frame: `name file` with the build directory and line numbers left out. */
function functionOf(name: string, location: string): string {
  const built = BUILD.exec(location);
  const file = (built !== null ? built[1]! : location.replace(/^file:\/\//, '')).replace(/:\d+:\d+$/, '');
  return `${name || '(anonymous)'} ${file.split('/').slice(-2).join('/')}`;
}

function add(rows: Map<string, number>, key: string): void {
  rows.set(key, (rows.get(key) ?? 0) + 1);
}

/** One sample: its header (`comm pid/tid`) and its frames, innermost first. */
function count(sides: Map<string, Side>, header: string, frames: string[]): void {
  const ids = /\s(\d+)\/(\d+)/.exec(header);
  if (ids === null) return;
  const side = sides.get(ids[1]!);
  if (side === undefined) return;
  if (ids[1] !== ids[2]) {
    add(side.rows, `thread:${ids[2]}`);
    return;
  }
  add(side.rows, 'thread:main');
  const plugin = frames.map((f) => PLUGIN.exec(f)?.[1]).find((p) => p !== undefined);
  if (plugin !== undefined) add(side.rows, `plugin:${plugin}`);
  for (const frame of frames) {
    const js = JS_FRAME.exec(frame);
    if (js === null) continue;
    const owner = ownerOf(js[2]!);
    add(side.rows, `owner:${owner}`);
    add(side.rows, `fn:${owner} ${functionOf(js[1]!, js[2]!)}`);
    return;
  }
  add(side.rows, 'owner:native');
  add(side.rows, `fn:native ${(frames[0] ?? '?').replace(/\(.*$/, '').slice(0, 80)}`);
}

/** Parses `perf script -F comm,pid,tid,ip,sym` output into per-side sample counts. */
export function parsePerfScript(text: string, sides: ReadonlyArray<Omit<Side, 'rows'>>): Side[] {
  const byPid = new Map(sides.map((s) => [s.pid, { ...s, rows: new Map<string, number>() }]));
  let header: string | undefined;
  let frames: string[] = [];
  for (const line of text.split('\n')) {
    if (line.trim() === '') {
      if (header !== undefined) count(byPid, header, frames);
      header = undefined;
      frames = [];
    } else if (header === undefined) {
      header = line;
    } else {
      // "\t    7f12ab symbol (dso)": the symbol is everything after the address.
      frames.push(line.trim().replace(/^[0-9a-f]+\s+/, ''));
    }
  }
  if (header !== undefined) count(byPid, header, frames);
  return [...byPid.values()];
}

/** The report's lines: per 1,000 requests, A, B and B − A. */
export function report(a: Side, b: Side, rows: number): string[] {
  const per = (s: Side, key: string): number => ((s.rows.get(key) ?? 0) * 1000) / s.requests;
  const fmt = (n: number): string => n.toFixed(1).padStart(8);
  const row = (x: number, y: number, label: string): string => `${fmt(x)}${fmt(y)}${`${y - x >= 0 ? '+' : ''}${(y - x).toFixed(1)}`.padStart(8)}  ${label}`;
  const line = (key: string, label = key): string => row(per(a, key), per(b, key), label);
  const keys = (prefix: string): string[] => [...new Set([...a.rows.keys(), ...b.rows.keys()])].filter((k) => k.startsWith(prefix));
  const byDiff = (list: string[]): string[] => list.sort((x, y) => Math.abs(per(b, y) - per(a, y)) - Math.abs(per(b, x) - per(a, x)));
  const threads = (s: Side): { busiest: number; rest: number } => {
    const others = keys('thread:').filter((k) => k !== 'thread:main' && s.rows.has(k)).map((k) => per(s, k));
    const busiest = Math.max(0, ...others);
    return { busiest, rest: others.reduce((x, y) => x + y, 0) - busiest };
  };
  const ta = threads(a);
  const tb = threads(b);
  const total = (s: Side, t: { busiest: number; rest: number }): number => per(s, 'thread:main') + t.busiest + t.rest;
  return [
    `samples per 1,000 requests       A       B     B−A   (A: pid ${a.pid}, ${a.requests} requests; B: pid ${b.pid}, ${b.requests})`,
    row(total(a, ta), total(b, tb), `all threads (B/A ${(total(b, tb) / total(a, ta)).toFixed(3)})`),
    line('thread:main', 'main thread'),
    row(ta.busiest, tb.busiest, 'busiest other thread (the log thread, with logging)'),
    row(ta.rest, tb.rest, "other threads (V8's compiler and GC helpers, libuv)"),
    '— main thread by owner (innermost JS frame; native: V8 or the kernel reached from no JS frame)',
    ...byDiff(keys('owner:')).map((k) => line(k, k.slice('owner:'.length))),
    '— plugins, inclusive (any of their frames on the stack)',
    ...byDiff(keys('plugin:')).map((k) => line(k, k.slice('plugin:'.length))),
    `— main thread by function (innermost JS frame), ${rows} largest differences`,
    ...byDiff(keys('fn:')).slice(0, rows).map((k) => line(k, k.slice('fn:'.length))),
  ];
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const [script, pidA, reqA, pidB, reqB, rows] = process.argv.slice(2);
  if (script === undefined || pidA === undefined || reqA === undefined || pidB === undefined || reqB === undefined) {
    process.stderr.write('usage: perf-report.js SCRIPT PID_A REQUESTS_A PID_B REQUESTS_B [rows]\n');
    process.exit(2);
  }
  const [a, b] = parsePerfScript(readFileSync(script, 'utf8'), [
    { pid: pidA, requests: Number(reqA) },
    { pid: pidB, requests: Number(reqB) },
  ]);
  process.stdout.write(report(a!, b!, Number(rows ?? 40)).join('\n') + '\n');
}
