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

/** Headers a dialect adds to its reply (e.g. Bedrock's `x-amzn-requestid`, `x-amzn-errortype`). */
export type ReplyHeaders = Readonly<Record<string, string>>;

export interface JsonReply {
  readonly kind: 'json';
  readonly status: number;
  readonly body: unknown;
  readonly headers?: ReplyHeaders;
}

/** Bytes sent as they are, e.g. file content. */
export interface RawReply {
  readonly kind: 'raw';
  readonly status: number;
  readonly contentType: string;
  readonly body: Buffer | string;
  readonly headers?: ReplyHeaders;
}

/**
 * A stream of framed events, fully built up front so faults can cut it anywhere: server-sent
 * events by default, or binary messages under their own content type (Bedrock's
 * `application/vnd.amazon.eventstream`). One frame is one event and one socket write.
 */
export interface SseReply {
  readonly kind: 'sse';
  /**
   * Complete frames in order: SSE text (`event: …\ndata: …\n\n`, including a terminator like
   * `[DONE]`) or whole binary messages.
   */
  readonly frames: readonly (string | Buffer)[];
  /** Index of the first frame that carries content; `error_event` counts content from here. */
  readonly firstContent: number;
  /** The dialect's in-stream error frame, given the index it will be inserted at. */
  readonly errorFrame: (index: number) => string | Buffer;
  /** Defaults to `text/event-stream`. */
  readonly contentType?: string;
  readonly headers?: ReplyHeaders;
}

export type MockReply = JsonReply | RawReply | SseReply;

/** What a handler sees of one request, after the `/mock/<directives>` prefix was removed. */
export interface MockRequest {
  readonly method: string;
  /**
   * The request target exactly as received, directive prefix included: what the client signed
   * when it signs requests (AWS SigV4), since the prefix is part of the URL it called.
   */
  readonly url: string;
  /** Path and query as received, without the directive prefix. */
  readonly path: string;
  readonly pathname: string;
  /** The raw query string without `?`, or `''`. */
  readonly query: string;
  readonly headers: IncomingHttpHeaders;
  /** Node's flat `[name, value, …]` list: repeated headers kept apart, as signers see them. */
  readonly rawHeaders: readonly string[];
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
  /**
   * Checks credentials before anything else looks at the request (the `status` directive and
   * the JSON parse included), as a real provider authenticates first: a reply refuses it,
   * undefined lets it through. Routes without it accept any caller.
   */
  readonly authorize?: (request: MockRequest) => MockReply | undefined;
  /** Parse the body as a JSON object before calling `handle`, answering `invalidJson()` if it is not. */
  readonly json: boolean;
  readonly handle: (request: MockRequest) => MockReply;
}

/** A JSON reply with status 200, the shape almost every handler returns. */
export function ok(body: unknown): JsonReply {
  return { kind: 'json', status: 200, body };
}
