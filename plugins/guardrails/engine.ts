/**
 * Runs guardrails on a whole text (a request, a whole answer, a stream's text at its end).
 *
 *   redacting guardrails, in order ──▶ each rewrites the text parts the next one sees
 *   the others ──▶ every check; a guardrail passes when all its checks pass
 *   a check that throws or times out ──▶ an error result; it fails the guardrail unless
 *                                        `on_error: allow` (fail closed by default)
 *
 * Checks that answer synchronously (every span check, counts, keys) run without a promise, so a
 * request whose guardrails are all local costs no extra event-loop turn.
 */
import type { CheckContext, CheckPhase, CheckResult, Finding } from '../../core/index.js';
import type { BoundCheck, Guardrail } from './registry.js';
import type { CheckOutcome, GuardrailOutcome } from '../../core/index.js';
import type { CheckPool } from './pool.js';

/** What the guardrails of one phase look at. */
export interface Subject {
  phase: CheckPhase;
  route: string;
  /** The text parts, in order (redaction rewrites them one by one). */
  parts: string[];
  request: Record<string, unknown> | undefined;
  response: Record<string, unknown> | undefined;
  model: string | undefined;
  provider: string | undefined;
  metadata: Record<string, string>;
  /** The request's abort signal, made only if a check asks for it. */
  requestSignal: () => AbortSignal;
  /** Where built-in checks on large texts run (none: everything on the main thread). */
  pool?: CheckPool | undefined;
}

function pooled(subject: Subject, check: BoundCheck, text: string): boolean {
  const pool = subject.pool;
  return pool !== undefined && text.length >= pool.threshold && pool.poolable(check);
}

export interface Verdicts {
  outcomes: GuardrailOutcome[];
  /** A guardrail with `deny` failed. */
  denied: boolean;
  /** The parts after redaction (the same array when nothing was redacted). */
  parts: string[];
  /** Spans replaced, over every redacting guardrail. */
  redacted: number;
  /** A check's rewrite of the whole request or answer (webhooks), the last one wins. */
  transformed: CheckResult['transformed'];
}

const DEFAULT_TIMEOUT_MS = 5000;
const DEFAULT_MAX_MATCH = 256;

function isPromise<T>(v: unknown): v is Promise<T> {
  return typeof (v as { then?: unknown } | null)?.then === 'function';
}

/** `[LABEL]` in place of every span (sorted, non-overlapping after merging). */
export function redactSpans(text: string, findings: Finding[]): string {
  if (findings.length === 0) return text;
  const sorted = findings.slice().sort((a, b) => a.start - b.start || b.end - a.end);
  let out = '';
  let at = 0;
  for (const f of sorted) {
    if (f.end <= at) continue; // inside a span already replaced
    if (f.start < at) {
      at = f.end; // overlapping the span just replaced: the replacement covers it too
      continue;
    }
    out += text.slice(at, f.start) + `[${f.label}]`;
    at = f.end;
  }
  return out + text.slice(at);
}

/** The spans of one check, or null when, with its parameters, the check is not about spans. */
export function spansOf(check: BoundCheck, text: string): Finding[] | null {
  return check.def.find === undefined ? null : check.def.find(text, check.params);
}

/** How much of a stream a span check needs to hold back. */
export function holdbackOf(check: BoundCheck): number {
  return check.def.maxMatch?.(check.params) ?? DEFAULT_MAX_MATCH;
}

function now(): number {
  return performance.now();
}

function errorText(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  return message.slice(0, 300);
}

/**
 * What a check sees. A class (one hidden class, the getter on the prototype): a check context is
 * made for every check of every request, and its signal (a controller and a timer) only when a
 * check asks for it.
 */
class RunContext implements CheckContext {
  readonly phase: CheckContext['phase'];
  readonly request: CheckContext['request'];
  readonly response: CheckContext['response'];
  readonly route: string;
  readonly model: string | undefined;
  readonly provider: string | undefined;
  readonly metadata: Record<string, string>;
  #controller: AbortController | undefined = undefined;
  #timer: NodeJS.Timeout | undefined = undefined;
  #unlink: (() => void) | undefined = undefined;

  constructor(
    private readonly subject: Subject,
    readonly text: string,
    private readonly timeoutMs: number,
  ) {
    this.phase = subject.phase;
    this.request = subject.request;
    this.response = subject.response;
    this.route = subject.route;
    this.model = subject.model;
    this.provider = subject.provider;
    this.metadata = subject.metadata;
  }

  get signal(): AbortSignal {
    if (this.#controller === undefined) {
      const c = (this.#controller = new AbortController());
      const ms = this.timeoutMs;
      this.#timer = setTimeout(() => c.abort(new Error(`the check timed out after ${ms} ms`)), ms);
      const parent = this.subject.requestSignal();
      const onAbort = (): void => c.abort(parent.reason);
      if (parent.aborted) onAbort();
      else {
        parent.addEventListener('abort', onAbort, { once: true });
        this.#unlink = () => parent.removeEventListener('abort', onAbort);
      }
    }
    return this.#controller.signal;
  }

  /** The check is over: its timer and its link to the request go. */
  cancel(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#unlink?.();
  }
}

/** One check's verdict on the whole text; a promise only when the check itself is async. */
function runCheck(check: BoundCheck, g: Guardrail, subject: Subject, text: string): CheckOutcome | Promise<CheckOutcome> {
  const started = now();
  const finish = (result: CheckResult): CheckOutcome => {
    const outcome: CheckOutcome = { id: check.id, verdict: result.verdict === true, duration_ms: round(now() - started) };
    if (result.explanation !== undefined) outcome.explanation = result.explanation;
    if (result.data !== undefined) outcome.data = result.data;
    if (result.transformed !== undefined) transforms.set(outcome, result.transformed);
    return outcome;
  };
  const failed = (err: unknown): CheckOutcome => ({
    id: check.id,
    verdict: g.onError === 'allow',
    error: errorText(err),
    duration_ms: round(now() - started),
  });
  const fromSpans = (spans: Finding[] | null): CheckResult => {
    const list = spans ?? [];
    return list.length === 0 ? { verdict: true } : { verdict: false, data: { found: list.length, labels: [...new Set(list.map((s) => s.label))] } };
  };
  try {
    if (pooled(subject, check, text)) {
      const pool = subject.pool!;
      const work = check.def.run === undefined || check.def.find?.('', check.params) != null ? pool.find(check, text).then(fromSpans) : pool.run(check, subject, text);
      return work.then(finish, failed);
    }
    // A verdict is the check's `run` when it has one (a pattern test is cheaper than finding every
    // match); else its spans.
    const run = check.def.run;
    if (run === undefined) return finish(fromSpans(check.def.find === undefined ? null : check.def.find(text, check.params)));
    const timeoutMs = g.timeoutMs ?? check.def.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    const ctx = new RunContext(subject, text, timeoutMs);
    const result = run(ctx, check.params);
    if (!isPromise<CheckResult>(result)) {
      ctx.cancel();
      return finish(result);
    }
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`the check timed out after ${timeoutMs} ms`)), timeoutMs);
    });
    return Promise.race([result, timeout]).then(
      (r) => {
        clearTimeout(timer);
        ctx.cancel();
        return finish(r);
      },
      (err: unknown) => {
        clearTimeout(timer);
        ctx.cancel();
        return failed(err);
      },
    );
  } catch (err) {
    return failed(err);
  }
}

/** Rewrites asked for by async checks, attached to their outcome until the guardrail is summed up. */
const transforms = new WeakMap<CheckOutcome, NonNullable<CheckResult['transformed']>>();

function round(ms: number): number {
  return Math.round(ms * 1000) / 1000;
}

function outcomeOf(g: Guardrail, checks: CheckOutcome[], started: number, redacted?: number): GuardrailOutcome {
  let verdict = true;
  let error = false;
  for (const c of checks) {
    if (!c.verdict) verdict = false;
    if (c.error !== undefined) error = true;
  }
  const outcome: GuardrailOutcome = { id: g.id, verdict, deny: g.deny, async: g.async, checks, duration_ms: round(now() - started) };
  if (redacted !== undefined) outcome.redacted = redacted;
  if (error) outcome.error = true;
  return outcome;
}

type Redaction = { parts: string[]; outcome: GuardrailOutcome };

/**
 * A redacting guardrail over the parts: each span check rewrites what the next sees. Synchronous
 * unless a part is large enough for the pool.
 */
function redactWith(g: Guardrail, parts: string[], subject: Subject): Redaction | Promise<Redaction> {
  const started = now();
  const checks: CheckOutcome[] = [];
  let out = parts;
  let total = 0;
  const step = (i: number): Redaction | Promise<Redaction> => {
    for (; i < g.checks.length; i++) {
      const check = g.checks[i]!;
      const t0 = now();
      const spans = out.map((part) => (pooled(subject, check, part) ? subject.pool!.find(check, part) : spansOf(check, part)));
      const apply = (found: Array<Finding[] | null>): void => {
        let count = 0;
        const labels = new Set<string>();
        const next = out.map((part, k) => {
          const list = found[k];
          if (list === null || list === undefined || list.length === 0) return part;
          count += list.length;
          for (const f of list) labels.add(f.label);
          return redactSpans(part, list);
        });
        if (count > 0) out = next;
        total += count;
        checks.push({ id: check.id, verdict: true, ...(count > 0 ? { data: { redacted: count, labels: [...labels] } } : {}), duration_ms: round(now() - t0) });
      };
      const failed = (err: unknown): void => {
        checks.push({ id: check.id, verdict: g.onError === 'allow', error: errorText(err), duration_ms: round(now() - t0) });
      };
      if (spans.some(isPromise)) {
        const next = i + 1;
        return Promise.all(spans).then(apply, failed).then(() => step(next));
      }
      apply(spans as Array<Finding[] | null>);
    }
    return { parts: out, outcome: outcomeOf(g, checks, started, total) };
  };
  try {
    return step(0);
  } catch (err) {
    checks.push({ id: g.checks[checks.length]?.id ?? g.id, verdict: g.onError === 'allow', error: errorText(err), duration_ms: round(now() - started) });
    return { parts: out, outcome: outcomeOf(g, checks, started, total) };
  }
}

/** A list's redacting guardrails and the others, once per (shared) list. */
const kindsOf = new WeakMap<ReadonlyArray<Guardrail>, { redactions: Guardrail[]; others: Guardrail[] }>();

function kinds(list: ReadonlyArray<Guardrail>): { redactions: Guardrail[]; others: Guardrail[] } {
  let k = kindsOf.get(list);
  if (k === undefined) {
    k = { redactions: list.filter((g) => g.redact), others: list.filter((g) => !g.redact) };
    kindsOf.set(list, k);
  }
  return k;
}

/**
 * Runs `guardrails` (none of them async: the caller runs those later) on the subject. The result
 * is synchronous when every check is.
 */
export function runGuardrails(guardrails: ReadonlyArray<Guardrail>, subject: Subject): Verdicts | Promise<Verdicts> {
  const { redactions, others } = kinds(guardrails);
  let parts = subject.parts;
  let redacted = 0;
  const outcomes: Array<GuardrailOutcome | Promise<GuardrailOutcome>> = [];
  for (let i = 0; i < redactions.length; i++) {
    const r = redactWith(redactions[i]!, parts, subject);
    if (isPromise<Redaction>(r)) {
      // A part went to the pool: the rest follows once it is back, in the same order.
      const rest = redactions.slice(i + 1);
      return r.then(async (first) => {
        const done: GuardrailOutcome[] = [...(outcomes as GuardrailOutcome[]), first.outcome];
        let p = first.parts;
        let n = redacted + (first.outcome.redacted ?? 0);
        for (const g of rest) {
          const next = await redactWith(g, p, subject);
          p = next.parts;
          n += next.outcome.redacted ?? 0;
          done.push(next.outcome);
        }
        const v = await runGuardrails(others, { ...subject, parts: p });
        return { ...v, outcomes: [...done, ...v.outcomes], parts: p, redacted: n + v.redacted };
      });
    }
    parts = r.parts;
    redacted += r.outcome.redacted ?? 0;
    outcomes.push(r.outcome);
  }
  let text: string | undefined;
  let pending = false;
  const seen = parts === subject.parts ? subject : { ...subject, parts };
  for (const g of others) {
    text ??= parts.length === 1 ? parts[0]! : parts.join('\n');
    const started = now();
    const checks = g.checks.map((c) => runCheck(c, g, seen, text!));
    if (checks.some(isPromise)) {
      pending = true;
      outcomes.push(Promise.all(checks).then((done) => outcomeOf(g, done, started)));
    } else outcomes.push(outcomeOf(g, checks as CheckOutcome[], started));
  }
  const sum = (done: GuardrailOutcome[]): Verdicts => {
    let transformed: CheckResult['transformed'];
    for (const o of done) for (const c of o.checks) transformed = transforms.get(c) ?? transformed;
    return { outcomes: done, denied: done.some((o) => o.deny && !o.verdict), parts, redacted, transformed };
  };
  if (!pending) return sum(outcomes as GuardrailOutcome[]);
  return Promise.all(outcomes).then(sum);
}
