/**
 * Which PostgreSQL failures mean "the server is away" (the writer keeps the batch and retries;
 * a read answers 503 `logs_unavailable`) rather than "this write is wrong" (the batch is dropped
 * and counted, since retrying it would fail forever and hold up every record behind it).
 */
import { LoggingErrors } from './errors.js';

const NETWORK = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN']);

export function isUnreachable(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === 'string') {
    if (NETWORK.has(code)) return true;
    // SQLSTATE classes: 08 connection exception, 53 insufficient resources, 57 operator
    // intervention (a server shutting down), 58 system error.
    if (/^(08|53|57|58)[0-9A-Z]{3}$/.test(code)) return true;
  }
  const message = err instanceof Error ? err.message : '';
  return /Connection terminated|connection timeout|timeout exceeded when trying to connect|Client has encountered a connection error|Client was closed/i.test(message);
}

/** Runs a read or an explicit write; an unreachable server becomes a 503 with a stable code. */
export async function pgCall<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    if (isUnreachable(err)) throw LoggingErrors.storeUnavailable(err);
    throw err;
  }
}
