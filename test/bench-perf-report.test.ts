/**
 * bench/lib/perf-report.ts: `perf script` samples of two gateways, counted per side, thread, owner,
 * plugin and function, per 1,000 requests.
 */
import t from 'tap';
import { ownerOf, parsePerfScript, report } from '../bench/lib/perf-report.js';

const sample = (pid: number, tid: number, ...frames: string[]): string =>
  `node ${pid}/${tid}\n${frames.map((f, i) => `\t    ${(0x1000 + i).toString(16)} ${f}`).join('\n')}\n\n`;

const script = [
  // A (pid 10): two core samples, one native, one on another thread.
  sample(10, 10, 'JS:*buildCall file:///w/dist/core/upstream/build.js:18:26', 'JS:*serve file:///w/dist/core/request-handler.js:1:1'),
  sample(10, 10, 'Builtins_JsonParse', 'JS:^readRequestBody file:///w/dist/core/request-handler.js:192:31'),
  sample(10, 10, 'v8::internal::Heap::Scavenge', 'node::Start'),
  sample(10, 11, 'v8::internal::compiler::Pipeline'),
  // B (pid 20, from dist-base): a plugin calling into the core, undici, Node's HTTP, and two threads.
  sample(20, 20, 'JS:*makeLogRecord file:///w/dist-base/core/observability/log-record.js:1:1', 'JS:*onDone file:///w/dist-base/plugins/analytics/index.js:4:2'),
  sample(20, 20, 'JS:*buildCall file:///w/dist-base/core/upstream/build.js:18:26'),
  sample(20, 20, 'JS:*_resume file:///w/node_modules/undici/lib/dispatcher/client.js:589:18'),
  sample(20, 20, 'JS:~clearBuffer node:internal/streams/writable:744:21'),
  sample(20, 21, 'JS:*writeInstructions file:///w/node_modules/lmdb/write.js:1:1'),
  sample(20, 21, 'JS:*writeInstructions file:///w/node_modules/lmdb/write.js:1:1'),
  sample(20, 22, 'v8::internal::Scavenger'),
  sample(99, 99, 'JS:*elsewhere file:///w/dist/core/x.js:1:1'),
].join('');

t.test('owners', async (t) => {
  t.equal(ownerOf('file:///w/dist/core/upstream/build.js:1:1'), 'core');
  t.equal(ownerOf('file:///w/dist-base/plugins/auth/index.js:1:1'), 'plugins');
  t.equal(ownerOf('file:///w/node_modules/undici/lib/core/util.js:1:1'), 'undici');
  t.equal(ownerOf('file:///w/node_modules/@smithy/x/dist/index.js:1:1'), 'lib:@smithy/x');
  t.equal(ownerOf('node:_http_outgoing:410:22'), 'node-http');
  t.equal(ownerOf('node:internal/timers:438:28'), 'node-other');
});

t.test('samples are counted per side, thread, owner, plugin and function', async (t) => {
  const [a, b] = parsePerfScript(script, [
    { pid: '10', requests: 2 },
    { pid: '20', requests: 4 },
  ]);
  t.equal(a!.rows.get('thread:main'), 3);
  t.equal(a!.rows.get('thread:11'), 1);
  t.equal(a!.rows.get('owner:core'), 2);
  t.equal(a!.rows.get('owner:native'), 1, 'a sample without a JS frame is native');
  t.equal(a!.rows.get('fn:core buildCall upstream/build.js'), 1, 'the innermost JS frame, lines left out');
  t.equal(a!.rows.get('fn:core readRequestBody core/request-handler.js'), 1, 'a builtin under it counts for it');
  t.equal(b!.rows.get('fn:core buildCall upstream/build.js'), 1, 'dist-base/ reads as dist/');
  t.equal(b!.rows.get('plugin:analytics'), 1, 'a plugin inclusively, whatever it called');
  t.equal(b!.rows.get('owner:core'), 2, 'makeLogRecord is the core, called by the plugin');
  t.equal(b!.rows.get('owner:undici'), 1);
  t.equal(b!.rows.get('owner:node-http'), 1);
  t.equal(b!.rows.get('thread:21'), 2);
  t.notOk([a!, b!].some((s) => [...s.rows.keys()].some((k) => k.includes('elsewhere'))), "a third process's samples are ignored");

  const lines = report(a!, b!, 10);
  // Per 1,000 requests: A 4 samples / 2 requests, B 7 / 4.
  t.match(lines[1], /^\s+2000\.0\s+1750\.0\s+-250\.0\s+all threads \(B\/A 0\.875\)$/);
  t.match(lines[3], /^\s+500\.0\s+500\.0\s+\+0\.0\s+busiest other thread/, 'the busiest other thread of each');
  t.match(lines[4], /^\s+0\.0\s+250\.0\s+\+250\.0\s+other threads/);
  t.ok(lines.some((l) => /^\s+0\.0\s+250\.0\s+\+250\.0\s+analytics$/.test(l)), 'the plugin row');
  const fnRows = lines.slice(lines.findIndex((l) => l.startsWith('— main thread by function')) + 1);
  const diffs = fnRows.map((l) => Math.abs(Number(/([-+]\d+\.\d)\s\s/.exec(l)?.[1])));
  t.same(diffs, [...diffs].sort((x, y) => y - x), 'largest difference first');
  t.equal(diffs[0], 500);
  t.match(fnRows.find((l) => l.endsWith('buildCall upstream/build.js')), /500\.0\s+250\.0\s+-250\.0/, 'the same function of two builds in one row');
});
