/**
 * The guardrail check contract: what one check is, for the `guardrails` plugin's built-ins and for
 * plugin authors who add their own (`defineCheck`, registered through the `guardrails` service).
 *
 * A check reads the text of a request (input) or of an answer (output) and gives a verdict. Checks
 * that object to SPANS of text (PII, secrets, a banned word, a pattern) also say where (`find`):
 * those can redact, and run incrementally on streams, holding back at most `maxMatch` characters.
 * The others (counts, JSON Schema, a webhook) see the whole text: on a stream they run at its end.
 *
 *   defineCheck<{ words: string[] }>({
 *     id: 'acme.noCodenames',
 *     description: 'Fails when a project codename appears',
 *     parameters: { type: 'object', properties: { words: { type: 'array', items: { type: 'string' } } }, required: ['words'] },
 *     find: (text, p) => spansOf(text, p.words, 'CODENAME'),
 *     maxMatch: (p) => Math.max(...p.words.map((w) => w.length)),
 *   });
 *
 * Parameters are validated with ajv against `parameters` when a guardrail is saved or sent (a bad
 * one is a 400 naming the field), so `run` and `find` get parameters of their declared shape.
 */
import type { MaybePromise } from './plugin.js';
import type { GatewayError } from './errors.js';
import type { GatewayContext } from './context.js';

export type CheckPhase = 'input' | 'output';

/** What a check sees. */
export interface CheckContext {
  phase: CheckPhase;
  /**
   * The text the check reads. Input: every text part of the request (system prompt, messages,
   * prompt, input, instructions) joined by `\n`, whatever the client's dialect. Output: the
   * answer's text (on a stream, all of it, at the end).
   */
  text: string;
  /** The client's request body, in its own dialect. */
  request: Record<string, unknown> | undefined;
  /** Output, whole answers: the answer as JSON, in the client's dialect. Undefined on streams and for input. */
  response: Record<string, unknown> | undefined;
  /** The model route (`chat.completions`, `messages`, `embeddings`, …). */
  route: string;
  /** The model asked for (input) or that answered (output), when known. */
  model: string | undefined;
  /** The provider of the target, when known. */
  provider: string | undefined;
  /** `x-gateway-metadata` and the key's default metadata. */
  metadata: Record<string, string>;
  /** Aborted when the check times out or the request is gone: pass it to anything cancellable. */
  signal: AbortSignal;
}

/** A check's verdict. */
export interface CheckResult {
  /** True: the text passes. */
  verdict: boolean;
  /** Why, in a sentence an operator reads in the logs (never the matched secret itself). */
  explanation?: string;
  /** Small facts for the results (counts, which words, which labels). Never the matched text. */
  data?: Record<string, unknown>;
  /**
   * A rewrite the check asks for (webhooks): the whole request body (input, client dialect) or the
   * whole answer (output, whole answers only).
   */
  transformed?: { request?: Record<string, unknown>; response?: Record<string, unknown> };
}

/** A span a check objects to: `text.slice(start, end)`, replaced by `[label]` when redacting. */
export interface Finding {
  start: number;
  end: number;
  /** Upper-case kind, e.g. `EMAIL`, `CREDIT_CARD`, `SECRET`, `MATCH`. */
  label: string;
}

export interface CheckDefinition<P = Record<string, unknown>> {
  /** `<namespace>.<name>`, e.g. `default.regexMatch`; `default.` is the built-ins'. */
  id: string;
  description: string;
  /** JSON Schema (draft-07) of the parameter object. */
  parameters: Record<string, unknown>;
  /** Where the check applies; both when absent. */
  phases?: ReadonlyArray<CheckPhase>;
  /**
   * The spans that make the check fail, for these parameters; `null` when, with these parameters,
   * the verdict is not a matter of spans (e.g. "must contain all of these words"). A check whose
   * `find` answers spans fails exactly when it finds one, can redact, and runs on streams as they
   * flow. Positions are UTF-16 indexes into `text`.
   */
  find?(text: string, params: P): Finding[] | null;
  /** The longest span `find` can return (characters): how much a stream holds back. Default 256. */
  maxMatch?(params: P): number;
  /**
   * Streams: the index in `text` from which a span could still start if more text came (its
   * length when none could), so a stream releases text sooner than `length − maxMatch`. Ordinary
   * prose then flows with at most a word held back. It must never be later than the start of a
   * span more text could complete: when in doubt, return less. Without it, `length − maxMatch`.
   */
  settled?(text: string, params: P): number;
  /**
   * The verdict on a whole text. Optional for checks with `find` (then: pass when nothing is
   * found). Throwing or rejecting is an error result: the guardrail fails closed unless its
   * `on_error` is `allow`.
   */
  run?(ctx: CheckContext, params: P): MaybePromise<CheckResult>;
  /** Default time limit of one run (ms); a guardrail's `timeout` overrides it. Default 5000. */
  timeoutMs?: number;
  /**
   * What the schema cannot say about the parameters (a pattern that compiles on the safe regex
   * engine, a webhook URL the SSRF guard allows): a 400 naming `param` + the field, or null.
   * Runs when the guardrail is saved or sent, never per request.
   */
  validateParams?(params: P, param: string): GatewayError | null;
}

/** Declares a check (the identity function, for types). Register it with the `guardrails` service. */
export function defineCheck<P = Record<string, unknown>>(def: CheckDefinition<P>): CheckDefinition<P> {
  return def;
}

// ── results: per check and per guardrail, for the 446 body, the `x-gateway-guardrails` header,
// the log record, analytics and metrics ─────────────────────────────────────────────────────
/** One check's result. Never carries the text it matched. */
export interface CheckOutcome {
  id: string;
  verdict: boolean;
  explanation?: string;
  data?: Record<string, unknown>;
  /** The check threw or timed out: why (its verdict is then the guardrail's `on_error`). */
  error?: string;
  duration_ms: number;
}

/** One guardrail's result: it passes when every check passes. */
export interface GuardrailOutcome {
  id: string;
  verdict: boolean;
  deny: boolean;
  async: boolean;
  /** Spans replaced when the guardrail redacts. */
  redacted?: number;
  /** A check errored (thrown, timed out). */
  error?: boolean;
  checks: CheckOutcome[];
  duration_ms: number;
}

/** Every guardrail that ran on a request, by phase (the reference's names). */
export interface HookResults {
  before_request_hooks: GuardrailOutcome[];
  after_request_hooks: GuardrailOutcome[];
}

declare module './context.js' {
  interface ContextVars {
    /** The guardrail results of the request, set by the guardrails plugin before the response phase ends. */
    guardrailResults: HookResults;
  }
}

/** What a {@link GuardrailService.checkTexts} call is about (what checks see as route, provider, model). */
export interface TextSubject {
  /** `CheckContext.route`, e.g. `mcp`. */
  route: string;
  /** `CheckContext.provider`, e.g. the MCP server's slug. */
  provider?: string;
  /** `CheckContext.model`, e.g. the tool's name. */
  model?: string;
}

/** The verdict of the request's guardrails on a list of texts. */
export interface TextVerdict {
  /** A guardrail with `deny` failed: the caller refuses what it was about to send or return. */
  denied: boolean;
  /** The texts after redaction, in order (the same array as given when nothing was redacted). */
  parts: string[];
  /** Spans replaced. */
  redacted: number;
  /** The results of the guardrails that ran now (also appended to the request's `guardrailResults`). */
  outcomes: GuardrailOutcome[];
}

/** What the `guardrails` plugin provides to the plugins after it. */
export interface GuardrailService {
  /** Adds a check (a plugin's own, or a replacement for a built-in with the same id). */
  register(check: CheckDefinition<never> | CheckDefinition<Record<string, unknown>>): void;
  /** The ids of every known check. */
  ids(): string[];
  /**
   * Checks a list of guardrails (inline objects or saved ids/slugs) as a config, key or workspace
   * carries it: a 400 naming `param` (e.g. `config.input_guardrails[0]['default.wordCount'].max`)
   * when a check id, an action key or a parameter is wrong; null when it is fine.
   */
  validate(list: unknown, param: string, workspaceId?: string): GatewayError | null;
  /** Every guardrail list inside a routing config (`input_guardrails`, `default_output_guardrails`, … at any node). */
  validateConfig(config: Record<string, unknown>, param: string, workspaceId?: string): GatewayError | null;
  /**
   * Runs the guardrails attached to the request's API key and workspace (`defaults.input_guardrails`
   * / `output_guardrails`) for `phase` on texts that are not a model request or answer (an MCP
   * tool's arguments or result). Undefined, synchronously and before `parts` is read, when none
   * applies: pass `parts` as a function to build them only then. Synchronous when every check is.
   *
   * The outcomes are appended to the request's `guardrailResults` (input ▶ `before_request_hooks`,
   * output ▶ `after_request_hooks`), so the log record, metrics and analytics count them; `async`
   * guardrails run after the response and land there too. Throws a 500 `guardrail_unavailable`
   * when an attached saved guardrail no longer exists (fail closed).
   */
  checkTexts(ctx: GatewayContext, phase: CheckPhase, parts: string[] | (() => string[]), about: TextSubject): undefined | MaybePromise<TextVerdict>;
  /** Whether {@link checkTexts} would run any guardrail for this request and phase (nothing is run or recorded). */
  checksTexts(ctx: GatewayContext, phase: CheckPhase): boolean;
}

declare module './plugin.js' {
  interface AppServices {
    guardrails: GuardrailService;
  }
}
