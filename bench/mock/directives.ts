/**
 * Directives: how a test steers one request to the mock, whichever provider it plays.
 *
 * Two sources, merged key by key, headers winning:
 *
 *   POST /mock/status=503;retry_after=2/v1/chat/completions     (path prefix)
 *   POST /mock/chunks=3/model/amazon.nova-lite-v1%3A0/converse-stream
 *   x-mock-status: 429                                          (request header)
 *
 * The path form exists so a gateway config can point different targets at different behaviours
 * through nothing but their base URL. Header names may use `-` or `_` (`x-mock-retry-after` and
 * `x-mock-retry_after` are the same key) because some proxies drop headers with underscores.
 * Unknown keys and unparsable values are ignored: a typo must not crash the mock.
 */

export type ResetMode = 'before_headers' | 'mid_stream';

/** One request's parsed directives. Defaults describe a well-behaved upstream. */
export interface Directives {
  /** HTTP status to fail with (>= 400), or 0 for a normal answer. */
  readonly status: number;
  /** Value of the `retry-after` header to add to any response. */
  readonly retryAfter: string | undefined;
  /** Value of the `retry-after-ms` header to add to any response. */
  readonly retryAfterMs: string | undefined;
  /** Milliseconds to wait before answering at all. */
  readonly delay: number;
  /** Never answer; the request stays open until the client goes away. */
  readonly hang: boolean;
  /** Number of content events in a stream. */
  readonly chunks: number;
  /** Milliseconds between stream events. */
  readonly chunkDelay: number;
  /** Milliseconds before the response headers and first byte (after `delay`). */
  readonly firstByteDelay: number;
  readonly reset: ResetMode | undefined;
  /** With `reset=mid_stream`: how many SSE events go out before the socket is destroyed. */
  readonly resetAfter: number;
  /** In a stream: send the dialect's error event after two content events, then end. */
  readonly errorEvent: boolean;
  /** The first N requests with the same `key` get the fault directives; later ones succeed. */
  readonly failFirst: number;
  /** Counter key for `fail_first`; undefined means "the request path". */
  readonly key: string | undefined;
  /** Chat completions answer with one tool call instead of text. */
  readonly toolCall: boolean;
  /**
   * Prompt tokens to report as read from the provider's prompt cache (Anthropic's
   * `cache_read_input_tokens`, Bedrock's `cacheReadInputTokens`); they are taken out of the
   * uncached input count, as both providers report it.
   */
  readonly cacheRead: number;
  /**
   * Answer 200 with an HTML page instead of the route's JSON (a misconfigured proxy or a login
   * page in front of the provider): the gateway must forward it and log it as unreadable.
   */
  readonly html: boolean;
}

export const DEFAULT_DIRECTIVES: Directives = Object.freeze({
  status: 0,
  retryAfter: undefined,
  retryAfterMs: undefined,
  delay: 0,
  hang: false,
  chunks: 5,
  chunkDelay: 0,
  firstByteDelay: 0,
  reset: undefined,
  resetAfter: 2,
  errorEvent: false,
  failFirst: 0,
  key: undefined,
  toolCall: false,
  cacheRead: 0,
  html: false,
});

const HEADER_PREFIX = 'x-mock-';

/**
 * Parses the path-prefix directives (`k=v;k=v`, already cut out of the URL) and any `x-mock-*`
 * headers from Node's flat `rawHeaders` list.
 *
 * The common benchmark request has neither, so that case returns the frozen defaults without
 * allocating anything.
 *
 * @example
 * parseDirectives('status=503;retry_after=2', ['X-Mock-Delay', '50']).status // 503
 */
export function parseDirectives(prefix: string, rawHeaders: readonly string[]): Directives {
  let pairs: Map<string, string> | undefined;
  if (prefix.length > 0) pairs = parsePrefix(prefix);
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i];
    const value = rawHeaders[i + 1];
    // Node's list is always name, value pairs; a hand-built odd list ends at its unpaired name.
    if (name === undefined || value === undefined) break;
    // Cheap first-character test keeps the loop from lower-casing every header name.
    if (name.length <= HEADER_PREFIX.length || (name.charCodeAt(0) | 0x20) !== 0x78) continue;
    const lower = name.toLowerCase();
    if (!lower.startsWith(HEADER_PREFIX)) continue;
    pairs ??= new Map();
    pairs.set(normaliseKey(lower.slice(HEADER_PREFIX.length)), value.trim());
  }
  return pairs === undefined ? DEFAULT_DIRECTIVES : fromPairs(pairs);
}

function parsePrefix(prefix: string): Map<string, string> {
  const pairs = new Map<string, string>();
  let text = prefix;
  if (text.includes('%')) {
    try {
      text = decodeURIComponent(text);
    } catch {
      // A malformed escape leaves the raw text; the keys still parse if they are plain.
    }
  }
  for (const part of text.split(';')) {
    const eq = part.indexOf('=');
    const key = eq === -1 ? part : part.slice(0, eq);
    // A bare key (`hang`) means "on", like a boolean HTML attribute.
    const value = eq === -1 ? '1' : part.slice(eq + 1);
    if (key.length > 0) pairs.set(normaliseKey(key.trim()), value.trim());
  }
  return pairs;
}

function normaliseKey(key: string): string {
  return key.toLowerCase().replaceAll('-', '_');
}

function fromPairs(pairs: Map<string, string>): Directives {
  const reset = pairs.get('reset');
  return {
    status: statusOf(pairs.get('status')),
    retryAfter: pairs.get('retry_after'),
    retryAfterMs: pairs.get('retry_after_ms'),
    delay: count(pairs.get('delay'), 0),
    hang: flag(pairs.get('hang')),
    chunks: Math.max(1, count(pairs.get('chunks'), DEFAULT_DIRECTIVES.chunks)),
    chunkDelay: count(pairs.get('chunk_delay'), 0),
    firstByteDelay: count(pairs.get('first_byte_delay'), 0),
    reset: reset === 'before_headers' || reset === 'mid_stream' ? reset : undefined,
    resetAfter: count(pairs.get('reset_after'), DEFAULT_DIRECTIVES.resetAfter),
    errorEvent: flag(pairs.get('error_event')),
    failFirst: count(pairs.get('fail_first'), 0),
    key: pairs.get('key'),
    toolCall: flag(pairs.get('tool_call')),
    cacheRead: count(pairs.get('cache_read'), 0),
    html: flag(pairs.get('html')),
  };
}

/** A non-negative integer, or the fallback when absent or unparsable. */
function count(value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  const n = Number.parseInt(value, 10);
  return Number.isFinite(n) && n >= 0 ? n : fallback;
}

function flag(value: string | undefined): boolean {
  return value !== undefined && value !== '0' && value !== 'false' && value !== '';
}

/** Only error statuses are meaningful: the mock has no way to "succeed with 302". */
function statusOf(value: string | undefined): number {
  const n = count(value, 0);
  return n >= 400 && n <= 599 ? n : 0;
}

/** True when the directives inject a fault that `fail_first` should gate. */
export function hasFault(d: Directives): boolean {
  return d.status !== 0 || d.hang || d.reset !== undefined || d.errorEvent || d.html;
}

/** The same directives with every fault removed: what a request past `fail_first` gets. */
export function withoutFaults(d: Directives): Directives {
  return { ...d, status: 0, hang: false, reset: undefined, errorEvent: false, html: false };
}
