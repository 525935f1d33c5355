/**
 * The output: scenario tables, a summary of the ratios, pass/fail against the targets on stdout,
 * and the same plus machine facts in a JSON file.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { HotFunction } from './cpu-profile.js';
import { describeCpuIdle } from './cpu-idle.js';
import type { MachineFacts } from './machine.js';
import type { BenchOptions } from './options.js';
import type { Check, ScenarioResult } from './scenario.js';
import { fmt, renderTable } from './table.js';

export interface RunReport {
  date: string;
  machine: MachineFacts;
  pinning: string;
  tools: Record<string, string>;
  notes: string[];
  options: BenchOptions;
  scenarios: ScenarioResult[];
  checks: Check[];
  profile?: { totalMs: number; idleMs: number; top: HotFunction[] };
}

export function renderReport(report: RunReport): string {
  const m = report.machine;
  const out: string[] = [
    `Gateway benchmark ${report.date}`,
    `machine: ${m.cpuModel}, ${m.cores} cores, kernel ${m.kernel}, governor ${m.governor}, ${describeCpuIdle(m.cpuIdle)}, node ${m.node}, commit ${m.commit.slice(0, 12)}${m.dirty ? ' (dirty)' : ''}`,
    `pinning: ${report.pinning}`,
    `tools: ${Object.entries(report.tools).map(([k, v]) => `${k}=${v}`).join('; ')}`,
    ...report.notes.map((n) => `note: ${n}`),
    '',
  ];
  for (const s of report.scenarios) {
    if (s.skipped !== undefined) {
      out.push(`${s.name}: skipped (${s.skipped})`, '');
      continue;
    }
    if (s.table) out.push(renderTable(s.table));
    for (const note of s.notes) out.push(`  note: ${note}`);
    out.push('');
  }
  const headlines = report.scenarios.flatMap((s) => s.headlines ?? []);
  if (headlines.length > 0) out.push(renderTable({ title: 'Summary', columns: ['measure', 'value'], rows: headlines }), '');
  if (report.checks.length > 0) {
    const rows = report.checks.map((c) => [c.name, `${fmt(c.value, 3)} ${c.unit}`, c.target, c.pass ? 'PASS' : 'FAIL']);
    out.push(renderTable({ title: 'Targets', columns: ['check', 'measured', 'target', 'result'], rows }), '');
  }
  if (report.profile) {
    const p = report.profile;
    const rows = p.top.map((f) => [f.name, f.where, fmt(f.selfMs, 1), fmt(f.percent, 1)]);
    out.push(renderTable({ title: `Gateway CPU profile: top self time (busy ${fmt(p.totalMs - p.idleMs, 0)} ms of ${fmt(p.totalMs, 0)} ms)`, columns: ['function', 'where', 'self ms', '% busy'], rows }), '');
  }
  return out.join('\n');
}

export function writeReport(file: string, report: RunReport): void {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
}
