/**
 * bench/lib/sched-report.ts: the main thread's waits for its CPU in `perf sched timehist`, and
 * which tasks ran on that CPU while it waited.
 */
import t from 'tap';
import { defaultLabel, delayReport, formatReport, parseTimehist } from '../bench/lib/sched-report.js';

// Columns: time (end of the run), [cpu], task, wait time, sch delay, run time (ms).
const row = (end: number, cpu: number, task: string, delay: number, run: number): string =>
  `${end.toFixed(6).padStart(15)} [${String(cpu).padStart(4, '0')}]  ${task.padEnd(30)} ${'0.000'.padStart(9)}  ${delay.toFixed(3).padStart(9)}  ${run.toFixed(3).padStart(9)}`;

const text = [
  '           time    cpu  task name                       wait time  sch delay   run time',
  '                        [tid/pid]                          (msec)     (msec)     (msec)',
  '--------------- ------  ------------------------------  ---------  ---------  ---------',
  row(10.0, 1, 'node[100]', 0, 0.2),
  // A helper (tid 104) runs 10.001–10.004; the main thread becomes runnable at 10.002 and runs at 10.004.
  row(10.004, 1, 'node[104/100]', 0, 3.0),
  row(10.0045, 1, 'node[100]', 2.0, 0.5),
  // The log thread (tid 110) and a kworker share a 1 ms wait: 10.010–10.0106 and 10.0106–10.011.
  row(10.0106, 1, 'node[110/100]', 0, 1.0),
  row(10.011, 1, 'kworker/1:1H-kb[44]', 0, 0.4),
  row(10.0112, 1, 'node[100]', 1.0, 0.2),
  // A short wait, under the threshold, and a run on the other CPU (neither counts as blame).
  row(10.02, 0, 'wrk[200]', 0, 5.0),
  row(10.0203, 1, 'node[100]', 0.1, 0.2),
  row(10.03, 1, '<idle>', 0, 9.0),
  'not a timehist line',
].join('\n');

t.test('timehist lines parse into runs; headers and other lines are skipped', async (t) => {
  const runs = parseTimehist(text);
  t.equal(runs.length, 9);
  t.match(runs[1], { end: 10.004, cpu: 1, tid: 104, pid: 100, delayMs: 0, runMs: 3 });
  t.match(runs[0], { tid: 100, pid: 100 });
  t.match(runs[4], { task: 'kworker/1:1H-kb[44]', tid: 44, pid: 44 });
  t.match(runs[8], { task: '<idle>', tid: -1 });
});

t.test('waits over the threshold are blamed on what ran on the CPU meanwhile, for its part inside the wait', async (t) => {
  const labels = new Map([[110, 'log thread']]);
  const r = delayReport(parseTimehist(text), 100, 1, 0.5, defaultLabel(100, labels));
  t.equal(r.runs, 4, 'the main thread ran four times on CPU 1');
  t.equal(r.over, 2);
  t.equal(r.overMs, 3);
  t.equal(r.max, 2);
  const blame = new Map(r.blame);
  t.ok(Math.abs(blame.get('thread 104')! - 2) < 1e-6, 'only the 2 ms of the helper’s 3 ms run inside the wait');
  t.ok(Math.abs(blame.get('log thread')! - 0.6) < 1e-6);
  t.ok(Math.abs(blame.get('kworker/1:1H-kb')! - 0.4) < 1e-6);
  t.notOk(blame.has('main'));
  t.notOk(blame.has('wrk'), 'a run on the other CPU is not blamed');
  t.equal(r.blame[0]![0], 'thread 104', 'largest first');

  const none = delayReport(parseTimehist(text), 100, 1, 5);
  t.equal(none.over, 0);
  t.same(none.blame, []);
  t.equal(delayReport(parseTimehist(text), 999, 1, 0.5).runs, 0, 'another pid has no runs');
});

t.test('the report names the waits and the blamed tasks with their share', async (t) => {
  const out = formatReport(delayReport(parseTimehist(text), 100, 1, 0.5), 0.5);
  t.match(out, /main thread: 4 runs; wait for the CPU p50 0\.100 \/ p99 2\.000 \/ p99\.9 2\.000 \/ max 2\.000 ms/);
  t.match(out, /waits of 0\.5 ms or more: 2 \(50\.00 % of runs\), 3\.0 ms in all/);
  t.match(out, /thread 104 +2\.0 ms +66\.7 %/);
});
