/**
 * Helpers of the distributed logs and analytics suites: chat calls through a host (direct mode,
 * against the mock upstream), admin reads, polling, and a /metrics sample.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { ADMIN_KEY, direct } from './gateway.js';
import type { MockUpstream } from '../../bench/mock-upstream.js';
import type { Host } from './hosts.js';

/** The pipeline of these suites: logging and analytics first, short flush intervals. */
export const pipelineYaml = (extra = ''): string =>
  `${extra}pipeline:\n  - logging: {flush_ms: 50}\n  - analytics: {flush_ms: 50}\n  - metrics\n  - auth\n  - admin-catalog\n`;

export const CHAT = { model: 'gpt-4o', messages: [{ role: 'user', content: 'log me across hosts' }] };

/** One chat call through `host`; resolves with its status and request id. */
export async function chat(host: Host, mock: MockUpstream, headers: Record<string, string> = {}, body: unknown = CHAT): Promise<{ status: number; id: string }> {
  const res = await fetch(`${host.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { ...direct(mock), 'x-gateway-api-key': ADMIN_KEY, 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  await res.arrayBuffer();
  return { status: res.status, id: res.headers.get('x-gateway-request-id') ?? '' };
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- test JSON
export type Json = any;

export async function admin(host: Host, method: string, path: string, body?: unknown): Promise<{ status: number; body: Json; text: string }> {
  const res = await fetch(`${host.url}${path}`, {
    method,
    headers: { 'x-gateway-api-key': ADMIN_KEY, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  let parsed: Json;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  return { status: res.status, body: parsed, text };
}

/** Polls `read` until `done` holds or `ms` pass; returns the last value. */
export async function until<T>(read: () => Promise<T>, done: (v: T) => boolean, ms = 20_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await read();
    if (done(v) || Date.now() > deadline) return v;
    await sleep(50);
  }
}

/** The sum of a metric's samples on `host` whose labels include `labels`. */
export async function metric(host: Host, name: string, labels: Record<string, string> = {}): Promise<number> {
  const res = await fetch(`${host.url}/metrics`);
  const text = await res.text();
  let sum = 0;
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{([^}]*)\})? (\S+)$/.exec(line);
    if (m === null || m[1] !== name) continue;
    const got: Record<string, string> = {};
    for (const pair of (m[3] ?? '').matchAll(/(\w+)="([^"]*)"/g)) got[pair[1]!] = pair[2]!;
    if (Object.entries(labels).every(([k, v]) => got[k] === v)) sum += Number(m[4]);
  }
  return sum;
}
