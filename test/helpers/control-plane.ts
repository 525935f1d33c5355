/**
 * Calls for the control-plane suites (test/distributed-control-plane*.test.ts): an admin or model
 * call against one host of {@link startHosts}, answered as status + parsed body.
 */
import { ADMIN_KEY } from './gateway.js';
import type { Host } from './hosts.js';

export interface Answer {
  status: number;
  body: Record<string, unknown>;
  headers: Headers;
}

export type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';

export async function call(host: Pick<Host, 'url'>, method: Method, path: string, body?: unknown, key = ADMIN_KEY, headers: Record<string, string> = {}): Promise<Answer> {
  const res = await fetch(`${host.url}${path}`, {
    method,
    headers: { 'x-gateway-api-key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  let parsed: Record<string, unknown> = {};
  try {
    parsed = JSON.parse(text) as Record<string, unknown>;
  } catch {
    /* compared by status only */
  }
  return { status: res.status, body: parsed, headers: res.headers };
}

/** An error answer's code. */
export const codeOf = (a: Answer): unknown => (a.body.error as { code?: unknown } | undefined)?.code;

export const CHAT = { model: 'gpt-4o', messages: [{ role: 'user', content: 'hello' }] };

/** A chat completion through `host` with `key` and extra headers (a virtual key, a config…). */
export function chat(host: Host, key: string, headers: Record<string, string>): Promise<Answer> {
  return call(host, 'POST', '/v1/chat/completions', CHAT, key, headers);
}

/** Direct-mode headers to the mock upstream. */
export function toMock(mockUrl: string): Record<string, string> {
  return { 'x-gateway-provider': 'openai', 'x-gateway-custom-host': `${mockUrl}/v1`, authorization: 'Bearer sk-test-provider-key' };
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
