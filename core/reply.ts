/**
 * A reply a hook or route handler returns to answer the request itself (short-circuit).
 *
 * Statuses are return values: a hook returns nothing to go on, or a `Reply` to stop. There is no
 * `next()` and no "send and also return" protocol.
 */

const kReply = Symbol.for('gateway.reply');

export interface Reply {
  readonly [kReply]: true;
  status: number;
  headers: Record<string, string>;
  /**
   * A JSON value (serialized once), a string, raw bytes, or an async iterable of chunks (a
   * Readable, an async generator: streamed with backpressure). `undefined` sends no body.
   */
  body: unknown;
}

/**
 * Builds a reply.
 *
 * @example
 *   onRequest(ctx) { if (!ctx.headers['x-team']) return reply(400, { error: { message: 'x-team required' } }); }
 */
export function reply(status: number, body?: unknown, headers: Record<string, string> = {}): Reply {
  return { [kReply]: true, status, headers, body };
}

export function isReply(value: unknown): value is Reply {
  return typeof value === 'object' && value !== null && (value as { [kReply]?: unknown })[kReply] === true;
}
