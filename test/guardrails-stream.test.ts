/**
 * The stream scanner on its own: however an answer is cut into events, redaction gives the same
 * text as redacting the whole answer, a deny happens before any part of a span is sent, and
 * ordinary prose flows with little held back (the checks' `settled`).
 */
import t from 'tap';
import { OPERATOR_URL_POLICY, type SseEvent } from '../core/index.js';
import { builtinChecks } from '../plugins/guardrails/checks/index.js';
import { StreamGuard } from '../plugins/guardrails/stream.js';
import { redactSpans } from '../plugins/guardrails/engine.js';
import type { Guardrail } from '../plugins/guardrails/registry.js';

const checks = new Map(builtinChecks({ hosts: OPERATOR_URL_POLICY }).map((c) => [c.id, c]));

function guardrail(ids: string[], action: { redact?: boolean; deny?: boolean }): Guardrail {
  return {
    id: 'g',
    checks: ids.map((id) => ({ id, def: checks.get(id)! as never, params: {} })),
    deny: action.deny === true,
    async: false,
    redact: action.redact === true,
    onError: 'block',
    timeoutMs: undefined,
    onFail: undefined,
    onSuccess: undefined,
  };
}

/** A deterministic random generator (mulberry32), so a failure can be replayed. */
function rng(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let x = Math.imul(a ^ (a >>> 15), 1 | a);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = ['the', 'report', 'covers', '14', 'regions', 'and', '2026', 'plans', 'in', 'plain', 'words', 'v1.2.3', '$120', 'order', '#5521', 'see', 'page', '3'];
const SECRETS = [
  'ann.lee@corp.example.com',
  '+44 20 7946 0958',
  '(202) 555-0143',
  '4111 1111 1111 1111',
  '5555-5555-5555-4444',
  'DE89 3704 0044 0532 0130 00',
  'GB82 WEST 1234 5698 7654 32',
  '078-05-1120',
  '192.168.10.23',
  '2001:db8::8a2e:370:7334',
  'sk-proj-Zq8rT2vLx9NwQ4mKc7Hb3Jf6Yd1Gs5Pa',
  'AKIAIOSFODNN7EXAMPLE',
  'ghp_aB3dE5fG7hJ9kL2mN4pQ6rS8tU0vW1xY3z5A',
  'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U',
];

function text(random: () => number): string {
  const parts: string[] = [];
  const n = 20 + Math.floor(random() * 40);
  for (let i = 0; i < n; i++) parts.push(random() < 0.15 ? SECRETS[Math.floor(random() * SECRETS.length)]! : WORDS[Math.floor(random() * WORDS.length)]!);
  return parts.join(random() < 0.9 ? ' ' : '\n');
}

function chunks(s: string, random: () => number): string[] {
  const out: string[] = [];
  for (let i = 0; i < s.length; ) {
    const n = 1 + Math.floor(random() * 12);
    out.push(s.slice(i, i + n));
    i += n;
  }
  return out;
}

const event = (content: string): SseEvent => ({ data: JSON.stringify({ id: 'c', choices: [{ index: 0, delta: { content } }] }) });
const DONE: SseEvent = { data: '[DONE]' };

/** Runs a stream through the guard: the text the client gets, and whether it was denied (and when). */
function run(guard: StreamGuard, pieces: string[]): { out: string; denied: boolean } {
  let out = '';
  const take = (r: SseEvent | SseEvent[] | null | void, passed: SseEvent): void => {
    const list = r === undefined ? [passed] : r === null ? [] : Array.isArray(r) ? r : [r];
    for (const e of list) {
      if (e.data === '[DONE]') continue;
      out += (JSON.parse(e.data) as { choices: Array<{ delta: { content?: string } }> }).choices[0]!.delta.content ?? '';
    }
  };
  for (const p of pieces) {
    const ev = event(p);
    take(guard.event(ev), ev);
    if (guard.denied) return { out, denied: true };
  }
  take(guard.event(DONE), DONE);
  if (guard.denied) return { out, denied: true };
  for (const e of guard.end() ?? []) take(e, e);
  return { out, denied: guard.denied };
}

const ids = ['default.pii', 'default.secrets'];

t.test('redaction is the same however the answer is cut into events', async (t) => {
  for (let seed = 1; seed <= 300; seed++) {
    const random = rng(seed);
    const whole = text(random);
    const g = guardrail(ids, { redact: true });
    let expected = whole;
    for (const c of g.checks) expected = redactSpans(expected, c.def.find!(expected, c.params) ?? []);
    const { out } = run(new StreamGuard('chat.completions', [g]), chunks(whole, random));
    if (out !== expected) {
      t.equal(out, expected, `seed ${seed}`);
      return;
    }
  }
  t.pass('300 random answers, random cuts: stream redaction = whole redaction');
});

t.test('deny: a stream with a span ends before any of the span is sent; one without flows whole', async (t) => {
  let denied = 0;
  for (let seed = 1000; seed < 1200; seed++) {
    const random = rng(seed);
    const whole = text(random);
    const g = guardrail(ids, { deny: true });
    const spans = g.checks.flatMap((c) => c.def.find!(whole, c.params) ?? []).sort((a, b) => a.start - b.start);
    const { out, denied: was } = run(new StreamGuard('chat.completions', [g]), chunks(whole, random));
    if (spans.length === 0) {
      if (was || out !== whole) return t.fail(`seed ${seed}: a clean answer was changed`);
      continue;
    }
    denied++;
    if (!was) return t.fail(`seed ${seed}: not denied`);
    if (out.length > spans[0]!.start) return t.fail(`seed ${seed}: ${out.length - spans[0]!.start} characters of the span went out`);
  }
  t.ok(denied > 50, `${denied} streams with a span were denied in time`);
});

t.test('prose flows: with PII and secrets checks, at most the last word or number is held back', async (t) => {
  const g = guardrail(ids, { redact: true });
  const guard = new StreamGuard('chat.completions', [g]);
  const sentence = 'The report covers fourteen regions and the plans for next year in plain words ';
  let out = '';
  for (const word of sentence.split(/(?<= )/)) {
    const r = guard.event(event(word));
    for (const e of r === undefined ? [] : r === null ? [] : Array.isArray(r) ? r : [r]) out += (JSON.parse(e.data) as { choices: Array<{ delta: { content: string } }> }).choices[0]!.delta.content;
  }
  // Everything but the word still open at the end has gone out.
  t.ok(out.length >= sentence.length - 'words '.length, `released ${out.length} of ${sentence.length}`);
  t.equal(sentence.startsWith(out), true);
});
