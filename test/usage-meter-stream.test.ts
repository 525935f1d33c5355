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
