/**
 * Summarises a V8 `.cpuprofile` (what `node --cpu-prof` writes) into the functions with the most
 * self time. Self time of a sample is the delta to the next sample, attributed to the node the
 * sample landed in; functions are merged across call sites by name and location.
 */
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

export interface HotFunction {
  name: string;
  /** file:line, relative to the working directory when it is a local file. */
  where: string;
  selfMs: number;
  /** Share of the non-idle time. */
  percent: number;
}

function location(url: string, line: number): string {
  if (url === '') return '';
  const path = url.startsWith('file://') ? relative(process.cwd(), fileURLToPath(url)) : url;
  return `${path}:${line + 1}`;
}

export function topSelfTime(file: string, limit = 15): { totalMs: number; idleMs: number; top: HotFunction[] } {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const selfUs = new Map<string, { name: string; where: string; us: number }>();
  let idleUs = 0;
  let totalUs = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    // timeDeltas[i + 1] is the time until the next sample: how long sample i's frame was on CPU.
    const us = profile.timeDeltas[i + 1] ?? 0;
    const node = byId.get(profile.samples[i]!);
    if (node === undefined) continue;
    totalUs += us;
    const name = node.callFrame.functionName || '(anonymous)';
    if (name === '(idle)') {
      idleUs += us;
      continue;
    }
    const where = location(node.callFrame.url, node.callFrame.lineNumber);
    const key = `${name}@${where}`;
    const entry = selfUs.get(key) ?? { name, where, us: 0 };
    entry.us += us;
    selfUs.set(key, entry);
  }
  const busyUs = totalUs - idleUs;
  const top = [...selfUs.values()]
    .sort((a, b) => b.us - a.us)
    .slice(0, limit)
    .map((e) => ({ name: e.name, where: e.where, selfMs: e.us / 1000, percent: busyUs > 0 ? (100 * e.us) / busyUs : 0 }));
  return { totalMs: totalUs / 1000, idleMs: idleUs / 1000, top };
}
