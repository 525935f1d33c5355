/**
 * Output guardrails on a stream, as it flows.
 *
 * Span checks (PII, secrets, banned words, `not` patterns) scan the text as it arrives. Each text
 * event is held; what is released is the text that can no longer be part of a match:
 *
 *   pending text ─▶ spans found ─▶ release what is settled, never cutting a span
 *                                  redact: spans become [LABEL] in the released text
 *                                  deny:   the stream ends with `event: error` before the span is sent
 *                                  else:   the failure is recorded, the text passes
 *
 * Settled means no span could still start there: at most each check's longest span (`maxMatch`)
 * back from the end, and less where the check says where a span could still start (`settled`:
 * for PII and secrets, the trailing word or number), so a secret or an email split across two
 * events is still caught while ordinary prose flows with about a word held back.
 * A non-text event (finish, tool calls, usage, the end of a content block) releases everything
 * before it. Summary events that repeat the text (Responses' `*.done`, `response.completed`) are
 * rewritten whole. Checks that need the whole answer (JSON Schema, counts, webhooks) run when the
 * stream ends, on the text as sent; a `deny` then ends the stream with the error event, and what
 * was already sent stays sent.
 */
import type { SseEvent } from '../../core/index.js';
import type { BoundCheck, Guardrail } from './registry.js';
import { holdbackOf, redactSpans, spansOf } from './engine.js';
import { eventDelta, eventTextKind, mapWholeEvent, withDelta } from './text.js';
import type { CheckOutcome, GuardrailOutcome } from '../../core/index.js';
import type { Finding } from '../../core/index.js';

type Json = Record<string, unknown>;

/** The event that ends an answer, per dialect: `[DONE]`, `message_stop`, `response.completed`. */
function isTerminal(event: SseEvent, chunk: Json | undefined): boolean {
  if (chunk === undefined) return event.data === '[DONE]';
  const type = chunk.type;
  return type === 'message_stop' || type === 'response.completed' || type === 'response.incomplete' || type === 'response.failed';
}

/** The text kept for checks that run at the end; beyond it they see the first MAX_TEXT characters. */
const MAX_TEXT = 1 << 20;

/** Characters of released text the checks still see before what is pending. */
const CONTEXT = 32;

interface Lane {
  /** Received, not yet released. */
  pending: string;
  /** The last {@link CONTEXT} characters released (as received). */
  context: string;
  /** The last text event of this lane: released text goes out in its shape. */
  template: { event: SseEvent; chunk: Json } | undefined;
}

/** A span check of a guardrail, scanning as the stream flows. */
interface Scanner {
  g: Guardrail;
  check: BoundCheck;
  found: number;
  labels: Set<string>;
  error: string | undefined;
  ms: number;
  /** Its longest span: how far back from the end a span could still be growing. */
  holdback: number;
}

export interface StreamVerdict {
  /** Outcomes of the span checks (per guardrail), and of the end-of-stream checks. */
  outcomes: GuardrailOutcome[];
  /** A span check of a `deny` guardrail found something: the stream must end now. */
  denied: boolean;
}

export class StreamGuard {
  readonly #route: string;
  readonly #scanners: Scanner[];
  /** Guardrails whose checks need the whole text: they run at the end. */
  readonly endGuardrails: Guardrail[];
  readonly #lanes = new Map<string, Lane>();
  /** The text as sent, for the end-of-stream checks. */
  text = '';
  denied = false;

  constructor(route: string, guardrails: ReadonlyArray<Guardrail>) {
    this.#route = route;
    const scanners: Scanner[] = [];
    const end: Guardrail[] = [];
    for (const g of guardrails) {
      // A guardrail scans as the stream flows when every check of it is about spans.
      const spanChecks = g.checks.every((c) => c.def.find !== undefined && spansOf(c, '') !== null);
      if (!spanChecks) {
        end.push(g);
        continue;
      }
      for (const check of g.checks) {
        scanners.push({ g, check, found: 0, labels: new Set(), error: undefined, ms: 0, holdback: holdbackOf(check) });
      }
    }
    this.#scanners = scanners;
    this.endGuardrails = end;
  }

  /** True when nothing needs to look at events as they flow. */
  get idle(): boolean {
    return this.#scanners.length === 0 && this.endGuardrails.length === 0;
  }

  /** One event of the stream: what goes on in its place (null: nothing yet, or denied: see `denied`). */
  event(event: SseEvent): SseEvent | SseEvent[] | null | void {
    if (this.denied || event.data.length === 0) return undefined;
    let chunk: Json | undefined;
    if (event.data.charCodeAt(0) === 123 /* { */) {
      try {
        chunk = JSON.parse(event.data) as Json;
      } catch {
        chunk = undefined;
      }
    }
    const kind = chunk === undefined ? 'none' : eventTextKind(this.#route, chunk);
    if (kind === 'delta' && chunk !== undefined) {
      const lane = this.#lane(chunk);
      lane.pending += eventDelta(this.#route, chunk);
      lane.template = { event, chunk };
      if (this.#scanners.length === 0) return this.#release(lane, lane.pending.length);
      return this.#advance(lane, false);
    }
    // Anything else ends the text before it: release it all, then the event.
    const released = this.#flushAll();
    if (released === null) return null;
    let out = event;
    if (kind === 'whole' && this.#scanners.some((s) => s.g.redact)) {
      const rewritten = mapWholeEvent(chunk!, (t) => this.#redactWhole(t));
      out = { ...event, data: JSON.stringify(rewritten) };
    }
    // The event that tells the client the answer is complete waits for the end-of-stream checks:
    // a deny there must reach a client that has not stopped reading.
    if (this.endGuardrails.length > 0 && isTerminal(event, chunk)) {
      this.tail.push(out);
      return released.length === 0 ? null : released;
    }
    if (released.length === 0) return out;
    released.push(out);
    return released;
  }

  /** Terminal events held for the end-of-stream checks; released when they pass. */
  tail: SseEvent[] = [];

  /** The stream ended: whatever is pending goes out. Null when denied. */
  end(): SseEvent[] | null {
    return this.#flushAll();
  }

  /** Outcomes of the span checks, per guardrail. */
  spanOutcomes(): GuardrailOutcome[] {
    const by = new Map<Guardrail, CheckOutcome[]>();
    for (const s of this.#scanners) {
      const list = by.get(s.g) ?? [];
      const verdict = s.error !== undefined ? s.g.onError === 'allow' : s.g.redact || s.found === 0;
      list.push({
        id: s.check.id,
        verdict,
        ...(s.found > 0 ? { data: s.g.redact ? { redacted: s.found, labels: [...s.labels] } : { found: s.found, labels: [...s.labels] } } : {}),
        ...(s.error !== undefined ? { error: s.error } : {}),
        duration_ms: Math.round(s.ms * 1000) / 1000,
      });
      by.set(s.g, list);
    }
    return [...by].map(([g, checks]) => ({
      id: g.id,
      verdict: checks.every((c) => c.verdict),
      deny: g.deny,
      async: false,
      ...(g.redact ? { redacted: checks.reduce((n, c) => n + (Number((c.data as { redacted?: number } | undefined)?.redacted) || 0), 0) } : {}),
      ...(checks.some((c) => c.error !== undefined) ? { error: true } : {}),
      checks,
      duration_ms: checks.reduce((n, c) => n + c.duration_ms, 0),
    }));
  }

  #lane(chunk: Json): Lane {
    const key = this.#route === 'messages' ? String(chunk.index ?? 0) : this.#route === 'responses' ? `${String(chunk.output_index ?? 0)}:${String(chunk.content_index ?? 0)}` : String((chunk.choices as Json[])[0]?.index ?? 0);
    let lane = this.#lanes.get(key);
    if (lane === undefined) {
      lane = { pending: '', context: '', template: undefined };
      this.#lanes.set(key, lane);
    }
    return lane;
  }

  #flushAll(): SseEvent[] | null {
    const out: SseEvent[] = [];
    for (const lane of this.#lanes.values()) {
      if (lane.pending.length === 0) continue;
      const r = this.#advance(lane, true);
      if (r === null && this.denied) return null;
      if (Array.isArray(r)) out.push(...r);
      else if (r) out.push(r);
    }
    return out;
  }

  /**
   * Scans the lane's pending text and releases what is settled (`all`: everything). Returns the
   * event to send, or null (nothing to send yet, or denied).
   */
  #advance(lane: Lane, all: boolean): SseEvent | null {
    // The checks see a little of the text already released before what is pending, so a span's
    // left edge is judged as it is in the whole answer (a number "standing alone", a word boundary).
    const offset = lane.context.length;
    const scan = lane.context + lane.pending;
    let cut = scan.length;
    const settled: Array<{ s: Scanner; spans: Finding[] }> = [];
    for (const s of this.#scanners) {
      if (s.error !== undefined) continue;
      const t0 = performance.now();
      let spans: Finding[];
      try {
        spans = spansOf(s.check, scan) ?? [];
        if (!all) {
          // What this check still needs: its longest span back from the end, or less when it can say
          // where a span could still start (`settled`).
          let own = scan.length - s.holdback;
          if (s.check.def.settled !== undefined) own = Math.max(own, s.check.def.settled(scan, s.check.params));
          cut = Math.min(cut, Math.max(offset, own));
        }
      } catch (err) {
        s.error = err instanceof Error ? err.message.slice(0, 300) : String(err);
        s.ms += performance.now() - t0;
        if (s.g.onError === 'block' && s.g.deny) return this.#deny();
        continue;
      }
      s.ms += performance.now() - t0;
      // Spans in pending's positions; those wholly in the released context were dealt with then.
      const own: Finding[] = [];
      for (const f of spans) if (f.end > offset) own.push({ start: Math.max(0, f.start - offset), end: f.end - offset, label: f.label });
      settled.push({ s, spans: own });
    }
    cut -= offset;
    // A span across the cut is held whole: the cut moves back to where it starts (until no span,
    // of any check, crosses it).
    for (let moved = !all; moved; ) {
      moved = false;
      for (const { spans } of settled) {
        for (const f of spans) {
          if (f.start < cut && f.end > cut) {
            cut = f.start;
            moved = true;
          }
        }
      }
    }
    const redactions: Finding[] = [];
    for (const { s, spans } of settled) {
      const done = spans.filter((f) => f.end <= cut);
      if (done.length === 0) continue;
      s.found += done.length;
      for (const f of done) s.labels.add(f.label);
      if (s.g.redact) redactions.push(...done);
      else if (s.g.deny) return this.#deny();
    }
    if (cut <= 0) return null;
    return this.#release(lane, cut, redactions);
  }

  #release(lane: Lane, cut: number, redactions: Finding[] = []): SseEvent | null {
    const released = lane.pending.slice(0, cut);
    const piece = redactSpans(released, redactions);
    lane.pending = lane.pending.slice(cut);
    lane.context = (lane.context + released).slice(-CONTEXT);
    if (this.text.length < MAX_TEXT) this.text += piece;
    // The events that brought the text are dropped (the hook returns null for them); the settled
    // text goes out in the shape of the last one.
    if (piece.length === 0) return null;
    const t = lane.template!;
    return { ...t.event, data: JSON.stringify(withDelta(this.#route, t.chunk, piece)) };
  }

  #redactWhole(text: string): string {
    let out = text;
    for (const s of this.#scanners) {
      if (!s.g.redact || s.error !== undefined) continue;
      try {
        const spans = spansOf(s.check, out);
        if (spans !== null && spans.length > 0) out = redactSpans(out, spans);
      } catch {
        // counted on the delta path; the summary keeps what the deltas made of it
      }
    }
    return out;
  }

  /** The caller sees `denied` and ends the stream with the results (`stream.fail`). */
  #deny(): null {
    this.denied = true;
    return null;
  }
}
