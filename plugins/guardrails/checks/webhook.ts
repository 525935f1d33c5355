/**
 * `default.webhook`: an operator's HTTP service gives the verdict, and may rewrite the request
 * or the answer.
 *
 *   run ─▶ POST webhookURL  {phase, text, request, response, route, model, provider, metadata}
 *          content-type: application/json + the guardrail's headers
 *       ◀─ 2xx {verdict: boolean, explanation?: string,
 *               transformedData?: {request?: {json?: object}, response?: {json?: object}}}
 *
 * The URL passes the SSRF guard twice: as text when the guardrail is saved or sent
 * (`checkUpstreamUrl` against the custom-host policy), and at connect time, on the addresses its
 * name resolves to (the upstream agent's connector, so DNS rebinding is refused too). Redirects
 * are not followed. Anything but a well-formed answer within `timeout` — another status, a body
 * over 1 MB, not that shape, no answer — throws, and the engine fails the guardrail closed unless
 * its `on_error` says otherwise. Messages never carry header values (they are credentials) nor
 * the URL (its query may be).
 */
import type { Agent, Dispatcher } from 'undici';
import { checkUpstreamUrl, defineCheck, guardedConnector, ValidationErrors, type CheckDefinition, type CheckResult, type CustomHostPolicy, type HostResolver } from '../../../core/index.js';
// Not on the core's public surface yet (see the report): the connector the upstream agent uses.

export interface WebhookParams {
  webhookURL: string;
  headers?: Record<string, string>;
  timeout?: number;
  /** The reference gateway's switch; accepted and ignored: a guardrail's `on_error` decides. */
  failOnError?: boolean;
}

export interface WebhookOptions {
  hosts: CustomHostPolicy;
  /** Resolves host names at connect time (tests inject one); the OS resolver by default. */
  resolveHost?: HostResolver;
}

export const DEFAULT_WEBHOOK_TIMEOUT = 3000;
export const MAX_WEBHOOK_ANSWER = 1024 * 1024;
/** Headers the gateway sets itself, or that would change how the body is framed. */
const RESERVED_HEADERS = new Set(['content-type', 'content-length', 'transfer-encoding', 'connection', 'host', 'keep-alive', 'upgrade', 'expect', 'te', 'trailer']);

/** A failed webhook call; `code` says which way it failed. */
export class WebhookError extends Error {
  constructor(
    readonly code: 'WEBHOOK_TIMEOUT' | 'WEBHOOK_ABORTED' | 'WEBHOOK_REFUSED' | 'WEBHOOK_UNREACHABLE' | 'WEBHOOK_STATUS' | 'WEBHOOK_TOO_LARGE' | 'WEBHOOK_BAD_ANSWER',
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'WebhookError';
  }
}

export function webhookCheck(options: WebhookOptions): CheckDefinition<WebhookParams> {
  let agent: Agent | undefined;
  // One agent for every webhook, made on first use: keep-alive connections to the same hook
  // are reused, and each new one passes the connect-time guard. undici's index loads then too,
  // not at every start (core/upstream/undici.ts).
  const dispatcher = (undici: typeof import('undici')): Dispatcher =>
    (agent ??= new undici.Agent({
      keepAliveTimeout: 10_000,
      connect: guardedConnector({ timeout: 10_000, policy: () => options.hosts, ...(options.resolveHost ? { resolve: options.resolveHost } : {}) }),
    }));

  return defineCheck<WebhookParams>({
    id: 'default.webhook',
    description: 'POSTs the text and the request (or answer) as JSON to webhookURL; the JSON answer {verdict, explanation?, transformedData?} is the verdict and may rewrite the request or answer. No redirects; the URL must pass the gateway\'s SSRF guard.',
    parameters: {
      type: 'object',
      properties: {
        webhookURL: { type: 'string', format: 'uri', maxLength: 2048 },
        headers: {
          type: 'object',
          maxProperties: 32,
          propertyNames: { type: 'string', maxLength: 256, pattern: "^[!#$%&'*+.^_`|~0-9A-Za-z-]+$" },
          additionalProperties: { type: 'string', maxLength: 8192, pattern: '^[\\t\\x20-\\x7e\\x80-\\xff]*$' },
        },
        timeout: { type: 'integer', minimum: 1, maximum: 30_000 },
        failOnError: { type: 'boolean' },
      },
      required: ['webhookURL'],
      additionalProperties: false,
    },
    // The webhook's own `timeout` (at most 30 s) governs; this only bounds a hung call.
    timeoutMs: 31_000,
    async run(ctx, p) {
      const timeout = p.timeout ?? DEFAULT_WEBHOOK_TIMEOUT;
      const timer = AbortSignal.timeout(timeout);
      const signal = AbortSignal.any([ctx.signal, timer]);
      const body = JSON.stringify({
        phase: ctx.phase,
        text: ctx.text,
        request: ctx.request ?? null,
        response: ctx.response ?? null,
        route: ctx.route,
        model: ctx.model ?? null,
        provider: ctx.provider ?? null,
        metadata: ctx.metadata,
      });
      let raw: string;
      try {
        const undici = await import('undici');
        const res = await undici.request(p.webhookURL, {
          method: 'POST',
          dispatcher: dispatcher(undici),
          headers: { ...p.headers, 'content-type': 'application/json' },
          body,
          signal,
          headersTimeout: timeout,
          bodyTimeout: timeout,
        });
        const status = res.statusCode;
        if (status < 200 || status >= 300) {
          discard(res.body);
          const redirect = status >= 300 && status < 400 ? ' (redirects are not followed)' : '';
          throw new WebhookError('WEBHOOK_STATUS', `The webhook answered HTTP ${status}${redirect}.`);
        }
        raw = await readBounded(res.body);
      } catch (err) {
        throw callFailure(err, { timer, outer: ctx.signal, timeout });
      }
      return toResult(raw);
    },
    validateParams(p, param) {
      const refused = checkUpstreamUrl(p.webhookURL, options.hosts, `${param}.webhookURL`);
      if (refused !== null) return refused;
      for (const name of Object.keys(p.headers ?? {})) {
        if (RESERVED_HEADERS.has(name.toLowerCase())) {
          return ValidationErrors.invalidValue(`${param}.headers: the gateway sets ${name.toLowerCase()} itself.`, { param: `${param}.headers` });
        }
      }
      return null;
    },
  });
}

/** The body as text, or a WEBHOOK_TOO_LARGE error past {@link MAX_WEBHOOK_ANSWER} bytes. */
async function readBounded(body: Dispatcher.ResponseData['body']): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_WEBHOOK_ANSWER) {
      discard(body);
      throw new WebhookError('WEBHOOK_TOO_LARGE', `The webhook's answer is larger than ${MAX_WEBHOOK_ANSWER} bytes.`);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** Drops a body we will not read (closing the connection); its abort error has nowhere to go. */
function discard(body: Dispatcher.ResponseData['body']): void {
  body.on('error', () => {});
  body.destroy();
}

/** What went wrong, as a WebhookError whose message carries no header value, URL or body. */
function callFailure(err: unknown, at: { timer: AbortSignal; outer: AbortSignal; timeout: number }): WebhookError {
  if (err instanceof WebhookError) return err;
  if (at.timer.aborted) return new WebhookError('WEBHOOK_TIMEOUT', `The webhook did not answer within ${at.timeout} ms.`, { cause: err });
  if (at.outer.aborted) return new WebhookError('WEBHOOK_ABORTED', 'The webhook call was cancelled.', { cause: err });
  const codes = errorCodes(err);
  if (codes.includes('UPSTREAM_ADDRESS_REFUSED')) {
    return new WebhookError('WEBHOOK_REFUSED', "The webhook's host resolves to an address the gateway does not call (loopback, private or metadata).", { cause: err });
  }
  return new WebhookError('WEBHOOK_UNREACHABLE', `The webhook could not be reached${codes.length === 0 ? '' : ` (${codes.join(', ')})`}.`, { cause: err });
}

/** The `code`s along an error's `cause` chain (undici wraps the socket's error). */
function errorCodes(err: unknown): string[] {
  const codes: string[] = [];
  for (let e = err, depth = 0; typeof e === 'object' && e !== null && depth < 4; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') codes.push(code);
  }
  return codes;
}

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The webhook's JSON answer as a check result, or WEBHOOK_BAD_ANSWER. */
function toResult(raw: string): CheckResult {
  let answer: unknown;
  try {
    answer = JSON.parse(raw);
  } catch (err) {
    throw new WebhookError('WEBHOOK_BAD_ANSWER', "The webhook's answer is not JSON.", { cause: err });
  }
  if (!isObject(answer) || typeof answer.verdict !== 'boolean') {
    throw new WebhookError('WEBHOOK_BAD_ANSWER', "The webhook's answer has no boolean verdict.");
  }
  if (answer.explanation !== undefined && answer.explanation !== null && typeof answer.explanation !== 'string') {
    throw new WebhookError('WEBHOOK_BAD_ANSWER', "The webhook's explanation is not a string.");
  }
  const result: CheckResult = { verdict: answer.verdict };
  if (typeof answer.explanation === 'string') result.explanation = answer.explanation.slice(0, 1000);
  const transformed = answer.transformedData;
  if (transformed !== undefined && transformed !== null) {
    if (!isObject(transformed)) throw new WebhookError('WEBHOOK_BAD_ANSWER', "The webhook's transformedData is not an object.");
    const rewrite: NonNullable<CheckResult['transformed']> = {};
    for (const side of ['request', 'response'] as const) {
      const part = transformed[side];
      if (part === undefined || part === null) continue;
      if (!isObject(part) || (part.json !== undefined && part.json !== null && !isObject(part.json))) {
        throw new WebhookError('WEBHOOK_BAD_ANSWER', `The webhook's transformedData.${side} is not {json: object}.`);
      }
      if (isObject(part.json)) rewrite[side] = part.json;
    }
    if (rewrite.request !== undefined || rewrite.response !== undefined) result.transformed = rewrite;
  }
  return result;
}
