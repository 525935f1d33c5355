/**
 * The usage meter reads a usage object's bytes itself when it has the providers' shape
 * (core/usage/usage-json.ts) and leaves anything else to JSON.parse. Whatever it accepts must be
 * exactly what JSON.parse makes of the same text, key order included; what it refuses costs only
 * speed. It must accept what OpenAI and Anthropic send, or it buys nothing.
 */
import t from 'tap';
import fc from 'fast-check';
import { readUsageJson } from '../core/usage/usage-json.js';
import { UsageMeter } from '../core/usage/meter.js';

const read = (text: string): Record<string, unknown> | undefined => {
  const bytes = Buffer.from(text);
  return readUsageJson(bytes, 0, bytes.length);
};

/** JSON.parse's object, or undefined when the text is not a JSON object. */
function parsed(text: string): Record<string, unknown> | undefined {
  try {
    const value = JSON.parse(text) as unknown;
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

const OPENAI_CHAT =
  '{"prompt_tokens":22,"completion_tokens":14,"total_tokens":36,"prompt_tokens_details":{"cached_tokens":0,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":0,"audio_tokens":0,"accepted_prediction_tokens":0,"rejected_prediction_tokens":0}}';
const OPENAI_RESPONSES = '{"input_tokens":328,"input_tokens_details":{"cached_tokens":0},"output_tokens":52,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":380}';
const ANTHROPIC =
  '{"input_tokens":2095,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"cache_creation":{"ephemeral_5m_input_tokens":0,"ephemeral_1h_input_tokens":0},"output_tokens":503,"service_tier":"standard"}';
const ANTHROPIC_TOOLS = '{"input_tokens":12,"output_tokens":34,"server_tool_use":{"web_search_requests":1,"web_fetch_requests":null}}';
const PRETTY = '{\n  "prompt_tokens": 9,\n  "completion_tokens": 12,\n  "total_tokens": 21,\n  "completion_tokens_details": {\n    "reasoning_tokens": 0\n  }\n}\n';

t.test('the providers’ usage objects are read as JSON.parse reads them', async (t) => {
  for (const [name, text] of Object.entries({ OPENAI_CHAT, OPENAI_RESPONSES, ANTHROPIC, ANTHROPIC_TOOLS, PRETTY })) {
    const got = read(text);
    t.ok(got, `${name} is read`);
    t.same(got, JSON.parse(text), name);
    t.same(Object.keys(got ?? {}), Object.keys(JSON.parse(text) as object), `${name}: key order`);
  }
  t.same(read('{}'), {}, 'an empty object');
  t.same(read(' \t{ "total_tokens" : 7 }\r\n'), { total_tokens: 7 }, 'blank space anywhere JSON allows it');
  t.same(read('{"total_tokens":1,"prompt_tokens":2,"total_tokens":3}'), { total_tokens: 3, prompt_tokens: 2 }, 'a repeated key: the last value, the first place');
  t.same(read('{"total_tokens":999999999999999}'), { total_tokens: 999999999999999 }, 'fifteen digits');
});

t.test('anything else is left to JSON.parse', async (t) => {
  const refused: Array<[string, string]> = [
    ['another key', '{"total_tokens":7,"num_sources_used":2}'],
    ['__proto__', '{"__proto__":{"total_tokens":7}}'],
    ['an escaped key', '{"total\\u005ftokens":7}'],
    ['a fraction', '{"total_tokens":7.5}'],
    ['an exponent', '{"total_tokens":7e2}'],
    ['a negative number', '{"total_tokens":-7}'],
    ['a leading zero', '{"total_tokens":07}'],
    ['sixteen digits', '{"total_tokens":1234567890123456}'],
    ['true', '{"total_tokens":true}'],
    ['an array', '{"total_tokens":[7]}'],
    ['three levels', '{"prompt_tokens_details":{"cached_tokens":{"audio_tokens":1}}}'],
    ['an escape in a string', '{"service_tier":"stand\\"ard"}'],
    ['non-ASCII in a string', '{"service_tier":"st\u00e4ndard"}'],
    ['a control character in a string', '{"service_tier":"a\tb"}'],
    ['a trailing comma', '{"total_tokens":7,}'],
    ['a missing comma', '{"total_tokens":7 "prompt_tokens":1}'],
    ['a colon between members', '{"total_tokens":7:"prompt_tokens":1}'],
    ['a comma for a colon', '{"total_tokens",7}'],
    ['a bracket for a brace', '{"total_tokens":7]'],
    ['a key not quoted', '{total_tokens:7}'],
    ['text after it', '{"total_tokens":7} x'],
    ['two objects', '{"total_tokens":7}{}'],
    ['cut short', '{"total_tokens":7'],
    ['cut in a string', '{"service_tier":"stan'],
    ['cut in null', '{"service_tier":nul'],
    ['not an object', 'null'],
    ['nothing', ''],
  ];
  for (const [name, text] of refused) t.equal(read(text), undefined, name);
  // The bytes after `end` belong to the answer, not the usage: never read.
  const bytes = Buffer.from('{"total_tokens":7}}');
  t.equal(readUsageJson(bytes, 0, bytes.length - 2), undefined, 'an object whose `}` is past the end');
  t.same(readUsageJson(bytes, 0, bytes.length - 1), { total_tokens: 7 }, 'and with it');
  const nul = Buffer.from('{"service_tier":null}');
  t.equal(readUsageJson(nul, 0, nul.indexOf('null') + 3), undefined, '`null` cut by the end');
});

const NAMES = ['prompt_tokens', 'completion_tokens', 'total_tokens', 'cached_tokens', 'input_tokens', 'output_tokens', 'service_tier', 'prompt_tokens_details', 'cache_creation', 'server_tool_use'];
const OTHER_KEYS = ['usage', 'total', '__proto__', 'constructor', 'prompt_tokens ', 'Total_tokens', 'prompt\\u005ftokens', ''];

/** Texts near the shape: mostly the names and values read here, some of everything else. */
const scalarText = fc.oneof(
  { weight: 6, arbitrary: fc.nat({ max: 1e6 }).map(String) },
  { weight: 1, arbitrary: fc.constantFrom('0', '00', '01', '-1', '1.5', '1e3', '1E3', '-0', '1234567890123456', '999999999999999', '9007199254740993') },
  { weight: 2, arbitrary: fc.constantFrom('null', 'true', 'false', 'nul', '[]', '[1]', '"standard"', '"a\\"b"', '"\u00e9"', '"a\\u0041"', '""', '"\t"') },
  { weight: 1, arbitrary: fc.string({ maxLength: 6 }).map((s) => JSON.stringify(s)) },
);
const valueText = (depth: number): fc.Arbitrary<string> => (depth > 0 ? fc.oneof({ weight: 3, arbitrary: scalarText }, { weight: 1, arbitrary: objectText(depth - 1) }) : scalarText);
const blank = fc.constantFrom('', '', '', ' ', '\n  ', '\t', '\r\n');
const objectText = (depth: number): fc.Arbitrary<string> =>
  fc
    .array(
      fc.tuple(
        fc.oneof({ weight: 8, arbitrary: fc.constantFrom(...NAMES) }, { weight: 1, arbitrary: fc.constantFrom(...OTHER_KEYS) }),
        valueText(depth),
        blank,
        blank,
      ),
      { maxLength: 6 },
    )
    .map((members) => `{${members.map(([k, v, a, b]) => `${a}"${k}"${b}:${a}${v}${b}`).join(',')}}`);
/**
 * One character dropped, doubled or replaced: texts just off the shape. Half the time the
 * character is one of the text's `{ } , : "` (where a reader that accepted a wrong separator
 * would show), else any.
 */
const mangled = fc
  .tuple(objectText(2), fc.nat(), fc.boolean(), fc.constantFrom('drop', 'double', '{', '}', '[', ']', ',', ':', '"', ' ', '.', 'e', '-', '0', 'n', '\\'))
  .map(([text, at, structural, how]) => {
    const positions = structural ? [...text].flatMap((ch, i) => ('{},:"'.includes(ch) ? [i] : [])) : Array.from(text, (_, i) => i);
    if (positions.length === 0) return text;
    const i = positions[at % positions.length]!;
    if (how === 'drop') return text.slice(0, i) + text.slice(i + 1);
    if (how === 'double') return text.slice(0, i + 1) + text.slice(i);
    return text.slice(0, i) + how + text.slice(i + 1);
  });

t.test('what it reads, JSON.parse reads the same; what JSON.parse refuses, it refuses', async (t) => {
  let accepted = 0;
  let runs = 0;
  fc.assert(
    fc.property(fc.oneof(objectText(2), mangled), blank, blank, (text, before, after) => {
      const whole = before + text + after;
      const got = read(whole);
      const expected = parsed(whole);
      runs++;
      if (got === undefined) return true;
      accepted++;
      return expected !== undefined && JSON.stringify(got) === JSON.stringify(expected);
    }),
    { numRuns: 5000 },
  );
  // A reader that refused everything would pass the property: a good share must be read.
  t.ok(accepted > runs / 10, `${accepted} of ${runs} texts read without JSON.parse`);
});

/** The shape itself: the names, integers, null, plain strings, one level of objects, any blank space. */
const shapeValue = fc.oneof(fc.nat({ max: 1e9 }).map(String), fc.constant('null'), fc.constantFrom('"standard"', '"priority"', '""'));
const shapeObject = (nested: boolean): fc.Arbitrary<string> =>
  fc
    .array(fc.tuple(fc.constantFrom(...NAMES), nested ? shapeValue : fc.oneof(shapeValue, shapeObject(true)), blank, blank), { maxLength: 6 })
    .map((members) => `{${members.map(([k, v, a, b]) => `${a}"${k}"${b}:${a}${v}${b}`).join(',')}}`);

t.test('every text of the shape is read, as JSON.parse reads it', async () => {
  fc.assert(
    fc.property(shapeObject(false), blank, (text, after) => {
      const got = read(text + after);
      return got !== undefined && JSON.stringify(got) === JSON.stringify(JSON.parse(text));
    }),
    { numRuns: 1000 },
  );
});

t.test('the meter reports the same usage whichever way the answer’s usage was read', async (t) => {
  for (const usage of [OPENAI_CHAT, OPENAI_RESPONSES, ANTHROPIC, '{"total_tokens":7,"num_sources_used":2}', '{"prompt_tokens":1.5,"completion_tokens":2}']) {
    const answer = Buffer.from(`{"id":"x","model":"m","choices":[],"usage":${usage}}`);
    const meter = new UsageMeter(false);
    t.ok(meter.body(answer));
    const whole = new UsageMeter(false);
    // The same usage not last: the meter parses the whole answer.
    t.ok(whole.body(Buffer.from(`{"usage":${usage},"id":"x","model":"m","choices":[]}`)));
    t.same(meter.usage, whole.usage, usage);
  }
});
