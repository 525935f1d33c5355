/**
 * Reads `perf sched timehist` of a run at one connection (bench/sched-delay.sh) and reports how
 * long a process's main thread waited for its CPU each time it became runnable (the "sch delay"
 * column: from its wake-up, or from being preempted, to running), and which tasks ran on that CPU
 * while it waited. That wait adds to a request's latency one for one, and it is invisible to a CPU
 * profile, which sees only the time the main thread runs.
 *
 *   node dist/bench/lib/sched-report.js TIMEHIST PID CPU [threshold ms] [labels file]
 *
 * The labels file has one `tid label` line per thread (the log thread, say); other threads of the
 * process read as `thread <tid>`, tasks of other processes by their command name.
 */
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { percentile } from './stats.js';

/** One line of `perf sched timehist`: a task's run on a CPU, which ended at `end` (s). */
export interface Run {
  end: number;
  cpu: number;
  /** `comm[tid]` or `comm[tid/pid]`, as perf prints it. */
  task: string;
  tid: number;
  pid: number;
  /** Runnable before this run, waiting for the CPU (ms). */
  delayMs: number;
  runMs: number;
}

const LINE = /^\s*(\d+\.\d+)\s+\[(\d+)\]\s+(.+?)\s+(\d+\.\d+)\s+(\d+\.\d+)\s+(\d+\.\d+)\s*$/;
const TASK = /\[(\d+)(?:\/(\d+))?\]$/;

/** The runs of a timehist text; header lines and lines of another shape are skipped. */
export function parseTimehist(text: string): Run[] {
  const runs: Run[] = [];
  for (const line of text.split('\n')) {
    const m = LINE.exec(line);
    if (m === null) continue;
    const task = m[3]!;
    const ids = TASK.exec(task);
    const tid = ids === null ? -1 : Number(ids[1]);
    runs.push({
      end: Number(m[1]),
      cpu: Number(m[2]),
      task,
      tid,
      pid: ids === null ? -1 : ids[2] === undefined ? tid : Number(ids[2]),
      delayMs: Number(m[5]),
      runMs: Number(m[6]),
    });
  }
  return runs;
}

export interface DelayReport {
  /** Runs of the main thread. */
  runs: number;
  p50: number;
  p99: number;
  p999: number;
  max: number;
  /** Runs that waited at least the threshold, and how long they waited in all (ms). */
  over: number;
  overMs: number;
  /** Of those waits, the time each task ran on the CPU meanwhile (ms), largest first. */
  blame: Array<[string, number]>;
}

/** The bench's nearest-rank percentile (stats.ts), and 0 for a thread that never ran. */
const waitPercentile = (delays: number[], p: number): number => (delays.length === 0 ? 0 : percentile(delays, p));

/**
 * The main thread (tid = pid) of `pid` on `cpu`: its waits, and for each wait of at least
 * `thresholdMs` the tasks that ran on that CPU between its becoming runnable and running. Those are
 * the runs before it on the CPU that ended inside the wait, each counted for its part inside it.
 */
export function delayReport(runs: readonly Run[], pid: number, cpu: number, thresholdMs: number, label: (r: Run) => string = defaultLabel(pid)): DelayReport {
  const onCpu = runs.filter((r) => r.cpu === cpu).sort((a, b) => a.end - b.end);
  const delays: number[] = [];
  const blame = new Map<string, number>();
  let over = 0;
  let overMs = 0;
  onCpu.forEach((r, i) => {
    if (r.tid !== pid) return;
    delays.push(r.delayMs);
    if (r.delayMs < thresholdMs) return;
    over++;
    overMs += r.delayMs;
    const start = r.end - r.runMs / 1e3;
    const runnable = start - r.delayMs / 1e3;
    for (let j = i - 1; j >= 0 && onCpu[j]!.end > runnable; j--) {
      const other = onCpu[j]!;
      const from = Math.max(other.end - other.runMs / 1e3, runnable);
      const to = Math.min(other.end, start);
      if (to <= from) continue;
      const name = label(other);
      blame.set(name, (blame.get(name) ?? 0) + (to - from) * 1e3);
    }
  });
  return {
    runs: delays.length,
    p50: waitPercentile(delays, 50),
    p99: waitPercentile(delays, 99),
    p999: waitPercentile(delays, 99.9),
    max: delays.reduce((m, d) => (d > m ? d : m), 0),
    over,
    overMs,
    blame: [...blame].sort((a, b) => b[1] - a[1]),
  };
}

/** The process's own threads by tid (`main` for the main thread), other tasks by command name. */
export function defaultLabel(pid: number, labels: ReadonlyMap<number, string> = new Map()): (r: Run) => string {
  return (r) => {
    if (r.pid === pid) return r.tid === pid ? 'main' : (labels.get(r.tid) ?? `thread ${r.tid}`);
    if (r.task.startsWith('<idle>')) return 'idle';
    return r.task.replace(TASK, '').trim();
  };
}

export function formatReport(r: DelayReport, thresholdMs: number, rows = 12): string {
  const ms = (v: number): string => v.toFixed(3);
  const lines = [
    `main thread: ${r.runs} runs; wait for the CPU p50 ${ms(r.p50)} / p99 ${ms(r.p99)} / p99.9 ${ms(r.p999)} / max ${ms(r.max)} ms`,
    `waits of ${thresholdMs} ms or more: ${r.over} (${((100 * r.over) / Math.max(1, r.runs)).toFixed(2)} % of runs), ${r.overMs.toFixed(1)} ms in all; what ran meanwhile:`,
  ];
  for (const [name, v] of r.blame.slice(0, rows)) lines.push(`  ${name.padEnd(28)} ${v.toFixed(1).padStart(8)} ms  ${((100 * v) / Math.max(r.overMs, 1e-9)).toFixed(1).padStart(5)} %`);
  return lines.join('\n');
}

function parseLabels(text: string): Map<number, string> {
  const labels = new Map<number, string>();
  for (const line of text.split('\n')) {
    const m = /^(\d+)\s+(.+)$/.exec(line.trim());
    if (m !== null) labels.set(Number(m[1]), m[2]!);
  }
  return labels;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const [file, pidArg, cpuArg, thresholdArg, labelsFile] = process.argv.slice(2);
  if (file === undefined || pidArg === undefined || cpuArg === undefined) {
    process.stderr.write('usage: sched-report.js TIMEHIST PID CPU [threshold ms] [labels file]\n');
    process.exit(2);
  }
  const pid = Number(pidArg);
  const threshold = thresholdArg === undefined ? 0.5 : Number(thresholdArg);
  const labels = labelsFile === undefined ? new Map<number, string>() : parseLabels(readFileSync(labelsFile, 'utf8'));
  const report = delayReport(parseTimehist(readFileSync(file, 'utf8')), pid, Number(cpuArg), threshold, defaultLabel(pid, labels));
  process.stdout.write(`${formatReport(report, threshold)}\n`);
}
