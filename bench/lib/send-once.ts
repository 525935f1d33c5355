/**
 * One request with fetch, to check what an endpoint answers (status, headers) before it is
 * measured: a load generator counts responses but cannot say that a cache hit was a hit.
 */
import type { BenchRequest } from './targets.js';

export interface OnceAnswer {
  status: number;
  headers: Headers;
  text: string;
}

export async function sendOnce(origin: string, request: BenchRequest): Promise<OnceAnswer> {
  const res = await fetch(`${origin}${request.path}`, { method: 'POST', headers: request.headers, body: request.body });
  return { status: res.status, headers: res.headers, text: await res.text() };
}
