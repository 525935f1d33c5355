/**
 * The usage meter reads a JSON answer's usage from its end when usage is its last member
 * (core/usage/meter.ts `trailingUsage`), and parses the whole answer otherwise. Whatever the
 * answer, the usage it reports must be the one a whole parse finds: the root's own `usage`, never a
 * nested one, never one quoted in a string.
 */
import t from 'tap';
import fc from 'fast-check';
import { UsageMeter, readUsage, trailingUsage as trailingUsageOf } from '../core/usage/meter.js';
import { jsonValue } from './helpers/fuzz.js';

const trailingUsage = (text: string): ReturnType<typeof trailingUsageOf> => trailingUsageOf(Buffer.from(text));

const meterOf = (text: string): UsageMeter => {
  const meter = new UsageMeter(false);
  meter.body(Buffer.from(text));
  return meter;
};

/** What a whole parse finds: the reference the meter must agree with. */
function reference(text: string): ReturnType<typeof readUsage> {
  try {
    const parsed = JSON.parse(text) as unknown;
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return undefined;
    return readUsage((parsed as Record<string, unknown>).usage);
  } catch {
    return undefined;
  }
}

const chat = (usage: string): string =>
  `{"id":"c1","object":"chat.completion","model":"gpt-4o-mini","choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}],${usage}}`;

t.test('the root usage at the end is read from the end alone', async (t) => {
  const text = chat('"usage":{"prompt_tokens":4,"completion_tokens":5,"total_tokens":9,"prompt_tokens_details":{"cached_tokens":2}}');
  t.same(trailingUsage(text), { prompt_tokens: 4, completion_tokens: 5, total_tokens: 9, prompt_tokens_details: { cached_tokens: 2 } });
  t.same(meterOf(text).usage, { prompt_tokens: 4, completion_tokens: 5, total_tokens: 9, cached_tokens: 2, reasoning_tokens: 0, source: 'upstream' });
  t.same(trailingUsage(` \n${text}\n `), trailingUsage(text), 'blank space around the answer');
  t.same(trailingUsage('{"usage":{"input_tokens":3,"output_tokens":1}}'), { input_tokens: 3, output_tokens: 1 }, 'usage as the only member');
  t.same(trailingUsage('{"a":1, \n "usage":{"total_tokens":7}}'), { total_tokens: 7 }, 'blank space before the key');
  const multibyte = chat('"usage":{"prompt_tokens":4,"completion_tokens":5,"total_tokens":9}').replace('"hi"', '"h\u00e9 \u{1F600} \u4E2D"');
  t.same(trailingUsage(multibyte), { prompt_tokens: 4, completion_tokens: 5, total_tokens: 9 }, 'multi-byte characters before it');
  // The key is looked for in the last 2 KB first: a usage object longer than that (blank space
  // inside it) puts the key inside that window, across its edge, or before it.
  const misses: number[] = [];
  for (let pad = 1990; pad < 2080; pad++) {
    const text = `{"model":"m","choices":[],"usage":{"total_tokens":7${' '.repeat(pad)}}}`;
    if (trailingUsage(text)?.total_tokens !== 7 || meterOf(text).usage?.total_tokens !== 7) misses.push(pad);
  }
  t.same(misses, [], 'a long usage object is found wherever its key falls');
  const decoy = `{"model":"m","usage":{"total_tokens":7},"data":[{"usage":{"total_tokens":999${' '.repeat(3000)}}}]}`;
  t.equal(trailingUsage(decoy), undefined, 'a nested usage at the end of a long answer is not the root one');
  t.equal(meterOf(decoy).usage?.total_tokens, 7, 'and the whole parse finds the root one');
});

t.test('anything else is left to the whole parse, which finds the root usage', async (t) => {
  const cases: Array<[string, string, number | undefined]> = [
    ['usage not last', '{"usage":{"prompt_tokens":3,"completion_tokens":1},"model":"m"}', 3],
    ['a nested usage last, the root one first', '{"usage":{"prompt_tokens":3},"data":[{"usage":{"prompt_tokens":999}}]}', 3],
    ['a nested usage in an object at the end', '{"model":"m","meta":{"usage":{"prompt_tokens":999}}}', undefined],
    ['a key ending in "usage"', '{"model":"m","a\\"usage":{"prompt_tokens":999}}', undefined],
    ['usage quoted in a string', '{"model":"m","text":"say \\"usage\\":{\\"prompt_tokens\\":999}"}', undefined],
    ['usage null', '{"model":"m","usage":null}', undefined],
    ['usage an array', '{"model":"m","usage":[1,2]}', undefined],
  ];
  for (const [name, text, prompt] of cases) {
    t.equal(trailingUsage(text), undefined, `${name}: not read from the end`);
    t.equal(meterOf(text).usage?.prompt_tokens, prompt, `${name}: the meter reports the root's usage`);
    t.equal(meterOf(text).usage?.prompt_tokens, reference(text)?.prompt_tokens, `${name}: as a whole parse does`);
  }
  t.equal(trailingUsage('<html>"usage":{"prompt_tokens":1}}'), undefined, 'not an object: an HTML page');
  t.equal(trailingUsage('{"usage":{"prompt_tokens":1}'), undefined, 'a cut answer');
  t.notOk(meterOf('{"usage":{"prompt_tokens":1}').usage, 'and the meter has nothing from it');
});

t.test('without usage the answer is still parsed for the estimate: its model and text', async (t) => {
  const meter = meterOf('{"model":"served-model","choices":[{"message":{"content":"hello there"}}]}');
  t.equal(meter.usage, undefined);
  t.equal(meter.model, 'served-model');
  t.equal(meter.text, 'hello there');
});

t.test('any answer: the meter reports what a whole parse of it reports (property)', async (t) => {
  const usage = fc.record({ prompt_tokens: fc.nat(1e6), completion_tokens: fc.nat(1e6), total_tokens: fc.nat(2e6) });
  // Objects built with usage anywhere: last, first, nested, in arrays, as decoys of other shapes.
  const member = fc.oneof(
    fc.tuple(fc.constant('usage'), fc.oneof(usage, jsonValue(64))),
    fc.tuple(fc.string({ maxLength: 8 }), jsonValue(64)),
    fc.tuple(fc.string({ maxLength: 8 }), fc.record({ usage })),
    fc.tuple(fc.string({ maxLength: 8 }), fc.array(fc.record({ usage }), { maxLength: 2 })),
    // Any Unicode text, multi-byte characters and lone surrogates included: the answer is searched as bytes.
    fc.tuple(fc.string({ maxLength: 8, unit: 'binary' }), fc.string({ maxLength: 16, unit: 'binary' })),
  );
  fc.assert(
    fc.property(fc.array(member, { maxLength: 6 }), fc.boolean(), (members, spaced) => {
      const body = Object.fromEntries(members);
      const text = JSON.stringify(body, null, spaced ? 1 : undefined);
      const meter = meterOf(text);
      const expected = reference(text);
      if (JSON.stringify(meter.usage) !== JSON.stringify(expected)) throw new Error(`${text}: meter ${JSON.stringify(meter.usage)}, whole parse ${JSON.stringify(expected)}`);
    }),
    { numRuns: 3000 },
  );
  t.pass('3000 answers agree');
});
