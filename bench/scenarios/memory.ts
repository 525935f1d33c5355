/**
 * Memory (§13 step 8): RSS of each process idle right after start, now (after the scenarios that
 * ran before this one), and its peak (VmHWM) over the whole run. Runs last so "after load" means
 * after every other scenario. The governance gateway is listed when it was started.
 */
import { readRss } from '../lib/rss.js';
import type { Scenario } from '../lib/scenario.js';
import { round } from '../lib/stats.js';
import { fmt } from '../lib/table.js';

export const memory: Scenario = {
  name: 'memory',
  isolates: 'resident memory of each process idle and after the load (peak included)',
  async run(ctx) {
    const rows: string[][] = [];
    const data: Record<string, { idleMb: number; afterMb: number; peakMb: number }> = {};
    for (const target of ctx.targets) {
      const now = readRss(target.pid);
      const idle = ctx.idleRss[target.name];
      const label = target.name === 'direct' ? 'mock (direct)' : target.name;
      data[target.name] = { idleMb: round(idle.rssMb, 1), afterMb: round(now.rssMb, 1), peakMb: round(now.peakMb, 1) };
      rows.push([label, fmt(idle.rssMb, 1), fmt(now.rssMb, 1), fmt(now.peakMb, 1)]);
    }
    // The governance gateway exists only when a governance scenario ran; its idle is before provisioning.
    if (ctx.governance !== null) {
      const now = readRss(ctx.governance.pid);
      const idle = ctx.governance.idleRss;
      data.governance = { idleMb: round(idle.rssMb, 1), afterMb: round(now.rssMb, 1), peakMb: round(now.peakMb, 1) };
      rows.push(['governance', fmt(idle.rssMb, 1), fmt(now.rssMb, 1), fmt(now.peakMb, 1)]);
    }
    return {
      name: this.name,
      isolates: this.isolates,
      table: { title: 'Memory (RSS from /proc/<pid>/status, MB)', columns: ['process', 'idle', 'after load', 'peak'], rows },
      notes: [],
      checks: [],
      headlines: ['bare', 'gateway', 'governance'].filter((n) => data[n] !== undefined).map((n) => [`RSS ${n}: idle → after load (peak)`, `${fmt(data[n]!.idleMb, 1)} → ${fmt(data[n]!.afterMb, 1)} (${fmt(data[n]!.peakMb, 1)}) MB`]),
      data,
    };
  },
};
