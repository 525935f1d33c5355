/**
 * The incremental SSE parser: events split anywhere (even inside a UTF-8 character), every line
 * ending, comments, multi-line data, and a final event without its blank line.
 */
import t from 'tap';
import { SseParser, serializeSse, type SseEvent } from '../core/sse/sse-parser.js';

const sample = 'event: delta\ndata: {"a":"héllo 👋"}\n\n: ping\n\ndata: line1\ndata: line2\nid: 7\nretry: 1500\n\ndata: [DONE]\n\n';

function parseAll(pieces: Buffer[]): SseEvent[] {
  const p = new SseParser();
  return [...pieces.flatMap((c) => p.push(c)), ...p.end()];
}

t.test('every split point yields the same events', async (t) => {
  const bytes = Buffer.from(sample);
  const whole = parseAll([bytes]);
  t.same(whole, [
    { event: 'delta', data: '{"a":"héllo 👋"}' },
    { data: '', comment: 'ping' },
    { data: 'line1\nline2', id: '7', retry: 1500 },
    { data: '[DONE]' },
  ]);
  for (let i = 1; i < bytes.length; i++) {
    const split = parseAll([bytes.subarray(0, i), bytes.subarray(i)]);
    if (JSON.stringify(split) !== JSON.stringify(whole)) {
      t.fail(`split at byte ${i} changed the events`);
      return;
    }
  }
  t.same(parseAll([...bytes].map((b) => Buffer.from([b]))), whole, 'byte by byte');
});

t.test('CRLF and CR line endings, including a CRLF split across chunks', async (t) => {
  t.same(parseAll([Buffer.from('data: a\r\n\r\ndata: b\r\rdata: c\r'), Buffer.from('\n\r\n')]), [{ data: 'a' }, { data: 'b' }, { data: 'c' }]);
});

t.test('line endings that change within a stream, split at every byte', async (t) => {
  // LF-only stretches take the parser's string-search path, stretches with a CR the per-character one.
  const bytes = Buffer.from('data: a\n\ndata: b\r\n\r\ndata: c\r\rdata: d\n\n: ping\r\n\r\ndata: e\n\n');
  const want = [{ data: 'a' }, { data: 'b' }, { data: 'c' }, { data: 'd' }, { data: '', comment: 'ping' }, { data: 'e' }];
  t.same(parseAll([bytes]), want);
  let changed = 0;
  for (let i = 1; i < bytes.length; i++) if (JSON.stringify(parseAll([bytes.subarray(0, i), bytes.subarray(i)])) !== JSON.stringify(want)) changed++;
  t.equal(changed, 0, 'no split point changes the events');
  t.same(parseAll([...bytes].map((b) => Buffer.from([b]))), want, 'byte by byte');
});

t.test('a final event without its blank line is still delivered at end', async (t) => {
  t.same(parseAll([Buffer.from('data: tail')]), [{ data: 'tail' }]);
});

t.test('serialize then parse round-trips', async (t) => {
  const events: SseEvent[] = [{ event: 'error', data: '{"error":{}}' }, { data: 'multi\nline', id: '3' }, { data: '', comment: 'ping' }];
  t.same(parseAll([Buffer.from(events.map(serializeSse).join(''))]), events);
});
