/**
 * The contract between the mock's server and its dialects.
 *
 * A route handler is a pure function from a request to a reply value; it never touches the
 * socket. Everything that makes a reply misbehave (delays, resets, error events) is applied in
 * one place, `reply.ts`, so every dialect gets every fault for free.
 */

import type { IncomingHttpHeaders } from 'node:http';
import type { Directives } from './directives.js';

export type JsonObject = Record<string, unknown>;

export interface JsonReply {
  readonly kind: 'json';
  readonly status: number;
  readonly body: unknown;
}

/** Bytes sent as they are, e.g. file content. */
export interface RawReply {
  readonly kind: 'raw';
  readonly status: number;
  readonly contentType: string;
  readonly body: Buffer | string;
}

/** A server-sent event stream, fully built up front so faults can cut it anywhere. */
export interface SseReply {
  readonly kind: 'sse';
  /** Complete frames (`event: …\ndata: …\n\n`) in order, including a terminator like `[DONE]`. */
  readonly frames: readonly string[];
  /** Index of the first frame that carries content; `error_event` counts content from here. */
  readonly firstContent: number;
  /** The dialect's in-stream error frame, given the index it will be inserted at. */
  readonly errorFrame: (index: number) => string;
}

export type MockReply = JsonReply | RawReply | SseReply;

/** What a handler sees of one request, after the `/mock/<directives>` prefix was removed. */
export interface MockRequest {
  readonly method: string;
  /** Path and query as received, without the directive prefix. */
  readonly path: string;
  readonly pathname: string;
  /** The raw query string without `?`, or `''`. */
  readonly query: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer;
  /** The parsed body on JSON routes; an empty object elsewhere. */
  readonly json: JsonObject;
  readonly directives: Directives;
}

/** How one provider family phrases its errors. */
export interface Dialect {
  readonly name: string;
  /** The provider's error reply for an HTTP status; `model` personalises messages when known. */
  errorReply(status: number, model: string | undefined): JsonReply;
  /** The provider's answer to a body that is not a JSON object. */
  invalidJson(): JsonReply;
}

export interface Route {
  readonly dialect: Dialect;
  /** Parse the body as a JSON object before calling `handle`, answering `invalidJson()` if it is not. */
  readonly json: boolean;
  readonly handle: (request: MockRequest) => MockReply;
}

/** A JSON reply with status 200, the shape almost every handler returns. */
export function ok(body: unknown): JsonReply {
  return { kind: 'json', status: 200, body };
}
