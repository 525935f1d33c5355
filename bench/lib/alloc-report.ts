/**
 * Reads the two windows bench/alloc.sh recorded (alloc-sampler.ts) and prints bytes allocated per
 * request, A and B side by side: by the gateway's directory that allocated (the innermost frame
 * in the gateway's own code, or "outside" for Node and libraries called from nowhere in it), then
 * by function, largest difference first.
 *
 *   node dist/bench/lib/alloc-report.js A.json B.json [rows]
 */
import { readFileSync } from 'node:fs';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}

interface ProfileNode {
  callFrame: CallFrame;
  selfSize: number;
  children: ProfileNode[];
}

interface Window {
  requests: number;
  ms: number;
  profile: { head: ProfileNode };
}

interface Totals {
  perRequest: number;
  byFunction: Map<string, number>;
  byDir: Map<string, number>;
}

/**
 * A build's directory (dist/, or dist-base/ for the build before a change): the part of a script's
 * URL under it, so the same function in two builds reads the same.
 */
const BUILD = /\/dist[^/]*\/(.*)$/;

/** The part of a script's URL under the build (or node_modules/), else the URL as is. */
function shortUrl(url: string): string {
  const lib = /\/node_modules\/(.*)$/.exec(url);
  if (lib !== null) return `node_modules/${lib[1]!}`;
  return BUILD.exec(url)?.[1] ?? url;
}

/** The gateway directory of a script of its own (core/usage, plugins/metrics…). */
function ownDir(url: string): string | undefined {
  if (url.includes('/node_modules/')) return undefined;
  const path = BUILD.exec(url)?.[1];
  const slash = path?.lastIndexOf('/') ?? -1;
  return path === undefined || slash === -1 ? undefined : path.slice(0, slash);
}

function totals(file: string): Totals {
  const w = JSON.parse(readFileSync(file, 'utf8')) as Window;
  if (w.requests === 0) throw new Error(`${file}: no requests in the window`);
  const byFunction = new Map<string, number>();
  const byDir = new Map<string, number>();
  let bytes = 0;
  // Iterative: a deep stack must not overflow this script's.
  const stack: Array<{ node: ProfileNode; dir: string }> = [{ node: w.profile.head, dir: 'outside' }];
  while (stack.length > 0) {
    const { node, dir: outer } = stack.pop()!;
    const f = node.callFrame;
    const dir = ownDir(f.url) ?? outer;
    if (node.selfSize > 0) {
      const name = `${f.functionName || '(anonymous)'} ${shortUrl(f.url)}:${f.lineNumber + 1}`;
      byFunction.set(name, (byFunction.get(name) ?? 0) + node.selfSize);
      byDir.set(dir, (byDir.get(dir) ?? 0) + node.selfSize);
      bytes += node.selfSize;
    }
    for (const child of node.children) stack.push({ node: child, dir });
  }
  const per = (m: Map<string, number>): Map<string, number> => new Map([...m].map(([k, v]) => [k, v / w.requests]));
  return { perRequest: bytes / w.requests, byFunction: per(byFunction), byDir: per(byDir) };
}

function table(title: string, a: Map<string, number>, b: Map<string, number>, rows: number): void {
  const keys = [...new Set([...a.keys(), ...b.keys()])];
  const diff = (k: string): number => (b.get(k) ?? 0) - (a.get(k) ?? 0);
  keys.sort((x, y) => Math.abs(diff(y)) - Math.abs(diff(x)));
  console.log(`\n${title}\n${'A'.padStart(8)} ${'B'.padStart(8)} ${'B−A'.padStart(8)}`);
  for (const k of keys.slice(0, rows)) {
    const fmt = (n: number): string => Math.round(n).toString().padStart(8);
    console.log(`${fmt(a.get(k) ?? 0)} ${fmt(b.get(k) ?? 0)} ${fmt(diff(k))}  ${k}`);
  }
}

const [fileA, fileB, rowsArg] = process.argv.slice(2);
if (fileA === undefined || fileB === undefined) {
  console.error('usage: node dist/bench/lib/alloc-report.js A.json B.json [rows]');
  process.exit(2);
}
const a = totals(fileA);
const b = totals(fileB);
console.log(`bytes allocated per request (main thread): A ${Math.round(a.perRequest)}, B ${Math.round(b.perRequest)}`);
table('by the gateway directory that allocated (innermost own frame), bytes per request', a.byDir, b.byDir, 20);
table('by function, bytes per request', a.byFunction, b.byFunction, Number(rowsArg ?? 30));
