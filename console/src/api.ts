/**
 * The console's one way to the gateway: the public admin API, with the signed-in credential in
 * the `x-gateway-api-key` header (an API key or a JWT; the gateway tells them apart). The
 * credential lives in session storage only: never in a URL, a cookie or local storage, so it
 * leaves with the tab and never reaches an access log.
 */

const STORAGE_KEY = 'gateway.console.credential';

/** An error answer of the API (or the network), with the gateway's stable code. */
export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly code: string,
    readonly param?: string,
  ) {
    super(message);
  }
}

export function credential(): string | null {
  return sessionStorage.getItem(STORAGE_KEY);
}

export function setCredential(value: string | null): void {
  if (value === null) sessionStorage.removeItem(STORAGE_KEY);
  else sessionStorage.setItem(STORAGE_KEY, value);
}

/** Called when an answer says the credential no longer works (401), to send the user to sign-in. */
let onUnauthenticated: () => void = () => undefined;
export function whenUnauthenticated(fn: () => void): void {
  onUnauthenticated = fn;
}

export type Query = Record<string, string | number | boolean | undefined | null>;

export function withQuery(path: string, query?: Query): string {
  if (query === undefined) return path;
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== null && v !== '') params.set(k, String(v));
  const text = params.toString();
  return text === '' ? path : `${path}?${text}`;
}

async function errorOf(res: Response): Promise<ApiError> {
  let body: unknown;
  try {
    body = await res.json();
  } catch {
    return new ApiError(`${res.status} ${res.statusText}`, res.status, `http_${res.status}`);
  }
  const error = (body as { error?: { message?: unknown; code?: unknown; param?: unknown } }).error;
  const message = typeof error?.message === 'string' ? error.message : `${res.status} ${res.statusText}`;
  const code = typeof error?.code === 'string' ? error.code : `http_${res.status}`;
  return new ApiError(message, res.status, code, typeof error?.param === 'string' ? error.param : undefined);
}

/** One call; resolves with the parsed JSON answer, rejects with an {@link ApiError}. */
export async function request<T = unknown>(method: string, path: string, body?: unknown, init: { signal?: AbortSignal; token?: string } = {}): Promise<T> {
  const token = init.token ?? credential();
  const headers: Record<string, string> = { accept: 'application/json' };
  if (token !== null) headers['x-gateway-api-key'] = token;
  if (body !== undefined) headers['content-type'] = 'application/json';
  let res: Response;
  try {
    res = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), signal: init.signal, cache: 'no-store' });
  } catch (err) {
    if ((err as Error).name === 'AbortError') throw err;
    throw new ApiError(`The gateway did not answer: ${(err as Error).message}`, 0, 'network_error');
  }
  if (!res.ok) {
    const error = await errorOf(res);
    if (res.status === 401 && init.token === undefined) onUnauthenticated();
    throw error;
  }
  const text = await res.text();
  return (text === '' ? {} : JSON.parse(text)) as T;
}

export const api = {
  get: <T = unknown>(path: string, query?: Query, signal?: AbortSignal) => request<T>('GET', withQuery(path, query), undefined, { signal }),
  post: <T = unknown>(path: string, body?: unknown) => request<T>('POST', path, body ?? {}),
  put: <T = unknown>(path: string, body?: unknown) => request<T>('PUT', path, body ?? {}),
  del: <T = unknown>(path: string) => request<T>('DELETE', path),
};

/** A page of a list route: `{total, data}` (the admin API's list shape). */
export interface ListPage<T> {
  total: number;
  data: T[];
  object?: string;
  next_cursor?: string | null;
}

/** Raw text (exports, downloads), with the credential. */
export async function download(path: string): Promise<Blob> {
  const token = credential();
  const res = await fetch(path, { headers: token === null ? {} : { 'x-gateway-api-key': token }, cache: 'no-store' });
  if (!res.ok) throw await errorOf(res);
  return res.blob();
}
