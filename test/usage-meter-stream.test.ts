/**
 * The usage meter on a stream whose usage chunk the gateway asked for and the client did not
 * (core/usage/meter.ts, `strip`): the client must see each event without the root's `usage`, and
 * the usage-only chunk not at all. A chunk that ends in `,"usage":null}` loses the member from its
 * text (the upstream's bytes otherwise kept); any other is parsed and written again. Either way
 * the event the client gets must parse to the upstream's event without its `usage`.
 */
import t from 'tap';
import fc from 'fast-check';
import { UsageMeter } from '../core/usage/meter.js';
import type { SseEvent } from '../core/sse/sse-parser.js';
import { FUZZ_SEED } from './helpers/fuzz.js';

type Json = Record<string, unknown>;
const ev = (data: string): SseEvent => ({ data });

/** What the client must be sent for `data`: the parsed event without its root `usage`. */
function expected(data: string): unknown {
  const parsed = JSON.parse(data) as Json;
  delete parsed.usage;
  return parsed;
}

const chunk = (content: string): string =>
  `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"content":${JSON.stringify(content)}},"logprobs":null,"finish_reason":null}],"usage":null}`;

t.test('OpenAI chunks lose their null usage by text; the usage chunk is dropped and counted', async (t) => {
  const meter = new UsageMeter(true);
  const escaped = '{"id":"c","model":"m","choices":[{"index":0,"delta":{"content":"caf\\u00e9 1.0"}}],"usage":null}';
  const out = meter.event(ev(escaped));
  t.equal(out?.data, '{"id":"c","model":"m","choices":[{"index":0,"delta":{"content":"caf\\u00e9 1.0"}}]}', "the upstream's bytes, escapes kept, without the member");
  t.same(JSON.parse(out!.data), expected(escaped));
  t.equal(meter.event(ev(chunk('lo')))?.data, chunk('lo').replace(',"usage":null}', '}'));
  const last = '{"id":"c","model":"m","choices":[],"usage":{"prompt_tokens":4,"completion_tokens":2,"total_tokens":6}}';
  t.equal(meter.event(ev(last)), null, 'the usage-only chunk does not reach the client');
  t.match(meter.usage, { prompt_tokens: 4, completion_tokens: 2, total_tokens: 6, source: 'upstream' });
  t.equal(meter.text, 'café 1.0lo', 'the answer text is still read from every chunk');
  t.equal(meter.model, 'm');
});

t.test('other shapes are parsed and written again, without usage', async (t) => {
  const meter = new UsageMeter(true);
  for (const data of [
    '{"id":"c","choices":[{"delta":{"content":"a"}}], "usage": null}', // not compact
    '{"id":"c","usage":{"prompt_tokens":1},"choices":[{"delta":{"content":"b"}}],"usage":null}', // a second usage key
    '{"id":"c","choices":[{"delta":{"usage":1}}],"usage":null}', // a nested "usage": before the root's
    '{"usage":null,"id":"c","choices":[{"delta":{"content":"c"}}]}', // usage first
  ]) {
    const out = meter.event(ev(data));
    t.same(JSON.parse(out!.data), expected(data), data);
    t.notOk('usage' in (JSON.parse(out!.data) as Json), 'no root usage reaches the client');
  }
});

t.test('a client that asked for usage gets every event as it came', async (t) => {
  const meter = new UsageMeter(false);
  const data = chunk('x');
  t.equal(meter.event(ev(data))?.data, data);
});

t.test('any object with a null usage last: the client gets it without usage (property)', async (t) => {
  fc.assert(
    fc.property(fc.dictionary(fc.string(), fc.jsonValue()), (obj) => {
      const body = { ...obj };
      delete body.usage;
      const text = JSON.stringify(body);
      const data = text === '{}' ? '{"usage":null}' : `${text.slice(0, -1)},"usage":null}`;
      const out = new UsageMeter(true).event(ev(data));
      return out !== null && JSON.stringify(JSON.parse(out.data)) === JSON.stringify(expected(data));
    }),
    { numRuns: 500, seed: FUZZ_SEED },
  );
  t.pass('500 random objects');
});

/**
 * Content chunks after the first are kept unparsed and read only when the answer text is wanted
 * (core/usage/meter.ts, `deferrable`). Against what parsing every chunk at once gives: random
 * streams of OpenAI's chunks mixed with the shapes that must still be parsed at once (tool calls
 * with a `type`, a root `type`, empty `choices`, chunks not written compactly, contents that spell the keys the
 * text test looks for), with or without the usage chunk, stripped or not. Each forwarded event,
 * the answer text, the usage and the model must be what a parse of every chunk gives.
 */
t.test('chunks read later give what a parse of every chunk gives (property)', async (t) => {
  const content = fc.oneof(
    fc.string(),
    fc.constantFrom('"type"', 'prototype', '"choices":[]', 'echoices', '"usage":null}', ',"usage":null}', 'usage', '\\u0022type\\u0022', 'tool "type": x', '\n\r\u2028'),
  );
  const contentChunk = content.map((c) => chunk(c));
  const shape = fc.oneof(
    { weight: 6, arbitrary: contentChunk },
    { weight: 1, arbitrary: content.map((c) => `{"id":"c","model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"type":"function","function":{"arguments":${JSON.stringify(c)}}}]}}],"usage":null}`) },
    { weight: 1, arbitrary: fc.constantFrom('{"id":"c","model":"m","choices":[],"usage":null}', '{"id":"c","choices" : [ ],"usage":null}') },
    { weight: 1, arbitrary: content.map((c) => `{"id":"c", "choices": [], "x": {"choices":[{"delta":{"content":${JSON.stringify(c)}}}]},"usage":null}`) },
    { weight: 1, arbitrary: content.map((c) => `{"id":"c","choices":[{"delta":{"content":${JSON.stringify(c)}}}], "usage": null}`) },
    { weight: 1, arbitrary: content.map((c) => `{"id":"c","choices":[{"index":0,"text":${JSON.stringify(c)}}],"usage":null}`) },
    { weight: 1, arbitrary: content.map((c) => `{"id":"c","x":{"choices":[{"delta":{"content":${JSON.stringify(c)}}}]},"choices":[],"usage":null}`) },
    { weight: 1, arbitrary: content.map((c) => `{"id":"c","xchoices":[{"delta":{"content":${JSON.stringify(c)}}}],"usage":null}`) },
    { weight: 1, arbitrary: content.map((c) => `{"id":"c","image":${JSON.stringify(c)},"choices":[{"delta":{"content":"i"}}],"usage":null}`) },
    // A root `type` is another dialect's event (here the Responses API's), read as such and forwarded as it came.
    { weight: 1, arbitrary: content.map((c) => `{"type":"response.output_text.delta","delta":${JSON.stringify(c)},"choices":[{"delta":{"content":"z"}}],"usage":null}`) },
  );
  const usageChunk = '{"id":"c","model":"m","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":5,"total_tokens":8}}';
  fc.assert(
    fc.property(fc.array(shape, { maxLength: 30 }), fc.boolean(), fc.boolean(), (middle, withUsage, strip) => {
      const stream = [chunk('first'), ...middle, ...(withUsage ? [usageChunk] : []), '[DONE]'];
      const meter = new UsageMeter(strip);
      let text = '';
      for (const data of stream) {
        const out = meter.event(ev(data));
        if (data === '[DONE]') {
          if (out?.data !== data) return false;
          continue;
        }
        const parsed = JSON.parse(data) as Json;
        if (parsed.type !== undefined) {
          text += parsed.delta as string;
          if (out?.data !== data) return false;
          continue;
        }
        for (const c of (Array.isArray(parsed.choices) ? parsed.choices : []) as Json[]) {
          const delta = c.delta as Json | undefined;
          if (typeof delta?.content === 'string') text += delta.content;
          else if (typeof c.text === 'string') text += c.text;
        }
        const dropped = strip && Array.isArray(parsed.choices) && parsed.choices.length === 0;
        if (dropped !== (out === null)) return false;
        if (out !== null && JSON.stringify(JSON.parse(out.data)) !== JSON.stringify(strip ? expected(data) : parsed)) return false;
        if (out !== null && !strip && out.data !== data) return false;
      }
      return meter.text === text && meter.model === 'gpt-4o-mini' && (withUsage ? meter.usage?.total_tokens === 8 : meter.usage === undefined);
    }),
    { numRuns: 1000, seed: FUZZ_SEED },
  );
  t.pass('1,000 random streams');
});

t.test('kept chunks are read in order when a chunk read at once adds text, and when they grow large', async (t) => {
  const meter = new UsageMeter(true);
  meter.event(ev(chunk('a')));
  meter.event(ev(chunk('b')));
  meter.event(ev('{"id":"c","choices":[{"delta":{"content":"c"}}], "usage": null}')); // parsed at once
  meter.event(ev(chunk('d')));
  t.equal(meter.text, 'abcd');

  const long = new UsageMeter(false);
  const piece = 'x'.repeat(1000);
  let want = '';
  for (let i = 0; i < 400; i++) {
    long.event(ev(chunk(`${i}${piece}`)));
    want += `${i}${piece}`;
  }
  t.equal(long.text, want, 'past the bound of kept characters, the text is still whole and in order');
});

t.test('a chunk read later that is not JSON adds no text', async (t) => {
  const meter = new UsageMeter(true);
  meter.event(ev(chunk('a')));
  const broken = '{"id":"c","choices":[{"delta":{"content":"b"}}],"usage":null}'.replace('"b"}', '"b"');
  const out = meter.event(ev(broken));
  t.equal(out?.data, broken.replace(',"usage":null}', '}'), 'forwarded without its null usage (the one difference from parsing it at once)');
  t.equal(meter.text, 'a');
});

/**
 * Anthropic's text deltas are kept unparsed too (`anthropicTextDelta`). The reference is the same
 * meter given each event with a space after its `{`: JSON the same, but no kept-chunk shortcut
 * matches it, so every event is parsed at once. Random Messages streams mixing text deltas with
 * the shapes that must still be read at once (a later root `type` that turns a delta into a
 * `message_delta` with usage, a nested `delta` object, tool and thinking deltas, deltas without a
 * type) must give the same text, usage and model, and forward every event as it came.
 */
t.test("Anthropic's text deltas read later give what a parse of every event gives (property)", async (t) => {
  const text = fc.oneof(fc.string(), fc.constantFrom('"type"', 'prototype', 'ype"', '"delta":{"type":', 'usage', '\u2028'));
  const delta = (d: string): string => `{"type":"content_block_delta","index":0,"delta":${d}}`;
  const shape = fc.oneof(
    { weight: 6, arbitrary: text.map((c) => delta(`{"type":"text_delta","text":${JSON.stringify(c)}}`)) },
    { weight: 1, arbitrary: text.map((c) => delta(`{"text":${JSON.stringify(c)}}`)) },
    { weight: 1, arbitrary: text.map((c) => delta(`{"type":"input_json_delta","partial_json":${JSON.stringify(c)}}`)) },
    { weight: 1, arbitrary: text.map((c) => delta(`{"type":"thinking_delta","thinking":${JSON.stringify(c)}}`)) },
    { weight: 1, arbitrary: fc.nat(50).map((n) => `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x"},"type":"message_delta","usage":{"output_tokens":${n}}}`) },
    { weight: 1, arbitrary: fc.nat(50).map((n) => `{"type":"content_block_delta","index":0,"type":"message_delta","delta":{"text":"y"},"usage":{"output_tokens":${n}}}`) },
    { weight: 1, arbitrary: fc.nat(50).map((n) => `{"type":"content_block_delta","x":{"delta":{"type":"a"}},"type":"message_delta","usage":{"output_tokens":${n}}}`) },
    { weight: 1, arbitrary: fc.constantFrom('{"type":"ping"}', '{"type":"content_block_stop","index":0}', '{"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}') },
  );
  const start = '{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-x","content":[],"usage":{"input_tokens":9,"output_tokens":1}}}';
  fc.assert(
    fc.property(fc.array(shape, { maxLength: 30 }), fc.boolean(), (middle, withUsage) => {
      const stream = [start, ...middle, ...(withUsage ? ['{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":12}}'] : []), '{"type":"message_stop"}'];
      const meter = new UsageMeter(false);
      const reference = new UsageMeter(false);
      for (const data of stream) {
        if (meter.event(ev(data))?.data !== data) return false;
        reference.event(ev(`{ ${data.slice(1)}`));
      }
      return meter.text === reference.text && JSON.stringify(meter.usage) === JSON.stringify(reference.usage) && meter.model === reference.model;
    }),
    { numRuns: 1000, seed: FUZZ_SEED },
  );
  t.pass('1,000 random streams');
});
