/**
 * Request and response bodies, kept only when `bodies.enabled` and only for model calls and
 * pass-through: admin routes carry secrets in their bodies (a new API key, an integration's
 * provider key), so their bodies are never captured. Headers are never kept at all.
 *
 * The request's own credentials (its auth headers, the target's provider key) are scrubbed from
 * kept bodies whatever the redact patterns say: an upstream that echoes headers, or a prompt
 * that pastes a key, must not put a secret into a log.
 *
 * On the request path the capture only copies a bounded slice (a slice, not a view, so the full
 * body is not pinned in memory until the next write). Decoding, redaction and the final cut
 * happen in the batch write, off the request's path.
 */
import type { GatewayContext, SseEvent } from '../../core/index.js';
import type { BodyOptions } from './schema.js';

/**
 * Extra bytes captured past `max_bytes`, so a secret that crosses the cut is still matched whole
 * by a redact pattern before the cut is made.
 */
const REDACT_MARGIN = 1024;

/** A captured body: bytes, or the data of stream events in order. */
export type Captured = Buffer | string[];

export interface CapturedBodies {
  request: Captured | undefined;
  response: Captured | undefined;
  /** Credential values of this request, replaced by `[redacted]` wherever they appear. */
  secrets: string[];
}

/** Request headers that carry credentials (the ones core/upstream/headers.ts never forwards). */
const CREDENTIAL_HEADERS = [
  'authorization',
  'proxy-authorization',
  'x-api-key',
  'api-key',
  'x-goog-api-key',
  'x-gateway-api-key',
  'x-gateway-aws-secret-access-key',
  'x-gateway-aws-session-token',
  'x-amz-security-token',
];
/** Provider fields that are secrets (AWS signing keys): scrubbed like API keys. */
const SECRET_FIELDS = ['aws_secret_access_key', 'aws_session_token'];

/** Shorter values are not scrubbed: replacing every "a" of a body helps nobody. */
const MIN_SECRET = 8;

/** The credential values in a set of headers (lower-case names), plus `apiKey` and secret provider fields, longest first. */
export function credentialValues(headers: Readonly<Record<string, unknown>>, apiKey?: string, fields?: Readonly<Record<string, unknown>>): string[] {
  const out: string[] = [];
  const add = (v: unknown): void => {
    if (typeof v !== 'string') return;
    const value = v.trim();
    if (value.length >= MIN_SECRET) out.push(value);
    // `Bearer <token>`: the token alone is the secret an echo or a paste shows.
    const space = value.indexOf(' ');
    if (space !== -1 && value.length - space - 1 >= MIN_SECRET) out.push(value.slice(space + 1).trim());
  };
  for (const name of CREDENTIAL_HEADERS) add(headers[name]);
  add(apiKey);
  if (fields !== undefined) for (const name of SECRET_FIELDS) add(fields[name]);
  // Longest first, so a token inside its `Bearer …` form is not replaced twice.
  return out.sort((a, b) => b.length - a.length);
}

interface StreamCapture {
  parts: string[];
  size: number;
}

declare module '../../core/context.js' {
  interface ContextVars {
    loggedResponse: Buffer;
    loggedStream: StreamCapture;
  }
}

export interface BodyCapture {
  /** onResponseBody: a non-SSE answer, after it was sent. */
  onBody(ctx: GatewayContext, body: Buffer): void;
  /** onResponseChunk: one event of a streamed answer (left unchanged). */
  onChunk(ctx: GatewayContext, event: SseEvent): void;
  /** What onDone hands to the writer. */
  take(ctx: GatewayContext): CapturedBodies | undefined;
  /** The stored text of a captured body: decoded, credentials scrubbed, redacted, cut to `max_bytes`. */
  render(body: Captured | undefined, secrets?: ReadonlyArray<string>): string | null;
}

const isTraffic = (ctx: GatewayContext): boolean => ctx.route.kind === 'model' || ctx.route.kind === 'passthrough';

/** Compiles the redact patterns; an invalid one fails the boot, naming it. */
export function compileRedactions(patterns: ReadonlyArray<string>): RegExp[] {
  return patterns.map((p, i) => {
    try {
      return new RegExp(p, 'g');
    } catch (err) {
      throw new Error(`bodies.redact[${i}] is not a valid regular expression: ${(err as Error).message}`, { cause: err });
    }
  });
}

export function createBodyCapture(options: BodyOptions): BodyCapture {
  const redactions = compileRedactions(options.redact);
  const limit = options.max_bytes + REDACT_MARGIN;

  function render(body: Captured | undefined, secrets: ReadonlyArray<string> = []): string | null {
    if (body === undefined) return null;
    let text: string;
    if (Array.isArray(body)) text = body.join('\n');
    else if (body.includes(0)) return `[binary: ${body.length} bytes]`;
    else text = body.toString('utf8');
    for (const secret of secrets) if (text.includes(secret)) text = text.split(secret).join('[redacted]');
    for (const re of redactions) text = text.replace(re, '[redacted]');
    if (Buffer.byteLength(text) <= options.max_bytes) return text;
    // A cut inside a multi-byte character decodes to U+FFFD at the end: drop it.
    return Buffer.from(text).toString('utf8', 0, options.max_bytes).replace(/\uFFFD+$/, '');
  }

  return {
    onBody(ctx, body) {
      if (isTraffic(ctx)) ctx.set('loggedResponse', Buffer.from(body.subarray(0, limit)));
    },
    onChunk(ctx, event) {
      if (!isTraffic(ctx) || (event.comment !== undefined && event.data.length === 0)) return;
      let capture = ctx.get('loggedStream');
      if (capture === undefined) ctx.set('loggedStream', (capture = { parts: [], size: 0 }));
      if (capture.size >= limit) return;
      // Characters, not bytes: a cheap bound; render() makes the exact byte cut.
      const data = event.data.length > limit - capture.size ? event.data.slice(0, limit - capture.size) : event.data;
      capture.parts.push(data);
      capture.size += data.length + 1;
    },
    take(ctx) {
      if (!isTraffic(ctx)) return undefined;
      const raw = ctx.rawBody;
      return {
        request: raw === undefined || raw.length === 0 ? undefined : Buffer.from(raw.subarray(0, limit)),
        response: ctx.get('loggedStream')?.parts ?? ctx.get('loggedResponse'),
        secrets: credentialValues(ctx.headers, ctx.target?.apiKey, ctx.target?.providerOptions),
      };
    },
    render,
  };
}
