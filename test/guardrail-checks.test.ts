/**
 * The built-in guardrail checks (`plugins/guardrails/checks/`), as plain functions and through
 * the real check registry: each check passing and failing; parameters refused with a 400 that
 * names the field; exact spans for every kind of personal data and secret; the prose, dates,
 * prices, order numbers, versions and identifiers that must not be flagged; spans that do not
 * change when the text goes on (what streams rely on); linear time on hostile input; and the
 * webhook against a real local server (answers, rewrites, timeouts, junk, size, SSRF).
 */
import t from 'tap';
import fc from 'fast-check';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createHash, randomBytes } from 'node:crypto';
import { builtinChecks } from '../plugins/guardrails/checks/index.js';
import { webhookCheck, MAX_WEBHOOK_ANSWER } from '../plugins/guardrails/checks/webhook.js';
import { findPii } from '../plugins/guardrails/checks/pii/index.js';
import { findSecrets } from '../plugins/guardrails/checks/secrets/index.js';
import { luhn } from '../plugins/guardrails/checks/pii/cards.js';
import { CheckRegistry } from '../plugins/guardrails/registry.js';
import { compileSafeRegex } from '../core/safe-regex.js';
import { openStore } from '../core/store/store.js';
import { createLogger } from '../core/logger.js';
import { generateApiKey } from '../core/store/api-key-hash.js';
import type { CheckContext, CheckDefinition, CheckResult, CustomHostPolicy, Finding } from '../core/index.js';
import { tempDir, type Teardown } from './helpers/gateway.js';

type Params = Record<string, unknown>;
type AnyCheck = CheckDefinition<Params>;

const LOOPBACK_OK: CustomHostPolicy = { allow: [], allow_loopback: true };
const CHECKS = builtinChecks({ hosts: LOOPBACK_OK }) as unknown as AnyCheck[];

function check(id: string): AnyCheck {
  const found = CHECKS.find((c) => c.id === id);
  if (found === undefined) throw new Error(`no check ${id}`);
  return found;
}

function ctx(text: string, over: Partial<CheckContext> = {}): CheckContext {
  return {
    phase: 'input',
    text,
    request: { model: 'gpt-4o', messages: [{ role: 'user', content: text }] },
    response: undefined,
    route: 'chat.completions',
    model: 'gpt-4o',
    provider: 'openai',
    metadata: {},
    signal: new AbortController().signal,
    ...over,
  };
}

async function run(id: string, params: Params, text: string, over: Partial<CheckContext> = {}): Promise<CheckResult> {
  const def = check(id);
  if (def.run !== undefined) return def.run(ctx(text, over), params);
  const found = def.find!(text, params)!;
  return { verdict: found.length === 0 };
}

/** The span of `needle` in `text` (first occurrence from `from`), as a finding. */
function spanOf(text: string, needle: string, label: string, from = 0): Finding {
  const start = text.indexOf(needle, from);
  if (start === -1) throw new Error(`${needle} is not in the text`);
  return { start, end: start + needle.length, label };
}

const registryStore = openStore({ dir: tempDir(), log: createLogger({ level: 'silent' }), env: {} });
t.teardown(() => registryStore.close());
const registry = new CheckRegistry(registryStore);
for (const c of builtinChecks({ hosts: LOOPBACK_OK })) registry.register(c);

/** A one-guardrail list through the registry: null, or the 400's status, code and param. */
function refusal(guardrail: Params): { status: number; code: string; param: string | null; message: string } | null {
  const err = registry.validate([guardrail], 'g');
  return err === null ? null : { status: err.status, code: err.code, param: err.param, message: err.message };
}

t.test('every check is registered once, with a description, and parameters the registry accepts', async (t) => {
  const ids = CHECKS.map((c) => c.id);
  t.equal(new Set(ids).size, ids.length, 'no id twice');
  for (const id of [
    'default.regexMatch', 'default.contains', 'default.wordCount', 'default.sentenceCount', 'default.characterCount',
    'default.jsonSchema', 'default.jsonKeys', 'default.validUrls', 'default.modelWhitelist', 'default.requiredMetadataKeys',
    'default.alllowercase', 'default.alluppercase', 'default.endsWith', 'default.pii', 'default.secrets', 'default.webhook',
  ]) {
    t.ok(ids.includes(id), id);
  }
  for (const c of CHECKS) t.ok(c.description.length > 20, `${c.id} says what it does`);
  t.same(check('default.jsonSchema').phases, ['output']);
  t.same(check('default.jsonKeys').phases, ['output']);
  t.same(check('default.modelWhitelist').phases, ['input']);
  t.same(check('default.requiredMetadataKeys').phases, ['input']);
  t.equal(check('default.pii').phases, undefined, 'pii: both phases');
});

t.test('parameters: a bad one is a 400 naming the field', async (t) => {
  const cases: Array<[string, Params, string, string]> = [
    ['negative max', { 'default.wordCount': { max: -1 } }, 'value_below_minimum', 'g[0]["default.wordCount"].max'],
    ['min above max', { 'default.sentenceCount': { min: 5, max: 2 } }, 'invalid_parameter_combination', 'g[0]["default.sentenceCount"].max'],
    ['alias and name together', { 'default.wordCount': { max: 5, maxWords: 6 } }, 'invalid_parameter_combination', 'g[0]["default.wordCount"].maxWords'],
    ['a typo', { 'default.characterCount': { maximum: 5 } }, 'unknown_parameter', 'g[0]["default.characterCount"].maximum'],
    ['backreference', { 'default.regexMatch': { rule: '(a)\\1' } }, 'invalid_value', 'g[0]["default.regexMatch"].rule'],
    ['lookahead', { 'default.regexMatch': { rule: 'password(?=:)' } }, 'invalid_value', 'g[0]["default.regexMatch"].rule'],
    ['a flag RE2 lacks', { 'default.regexMatch': { rule: 'a', flags: 'g' } }, 'invalid_value', 'g[0]["default.regexMatch"].flags'],
    ['no rule', { 'default.regexMatch': { not: true } }, 'missing_required_parameter', 'g[0]["default.regexMatch"].rule'],
    ['no words', { 'default.contains': { words: [] } }, 'too_few_items', 'g[0]["default.contains"].words'],
    ['an empty word', { 'default.contains': { words: ['a', ''] } }, 'invalid_value', 'g[0]["default.contains"].words[1]'],
    ['an unknown operator', { 'default.contains': { words: ['a'], operator: 'some' } }, 'invalid_value', 'g[0]["default.contains"].operator'],
    ['an invalid schema', { 'default.jsonSchema': { schema: { type: 'strin' } } }, 'invalid_value', 'g[0]["default.jsonSchema"].schema'],
    ['a backtracking pattern in a schema', { 'default.jsonSchema': { schema: { type: 'string', pattern: '^(?!admin)' } } }, 'invalid_value', 'g[0]["default.jsonSchema"].schema'],
    ['a * inside a model name', { 'default.modelWhitelist': { models: ['gpt-4o', 'g*pt'] } }, 'invalid_value', 'g[0]["default.modelWhitelist"].models[1]'],
    ['an unknown PII category', { 'default.pii': { categories: ['email', 'passport'] } }, 'invalid_value', 'g[0]["default.pii"].categories[1]'],
    ['a tiny min_length', { 'default.secrets': { min_length: 2 } }, 'value_below_minimum', 'g[0]["default.secrets"].min_length'],
    ['both key lists', { 'default.requiredMetadataKeys': { keys: ['a'], metadataKeys: ['b'] } }, 'invalid_parameter_combination', 'g[0]["default.requiredMetadataKeys"].metadataKeys'],
    ['no key list', { 'default.requiredMetadataKeys': { operator: 'any' } }, 'missing_required_parameter', 'g[0]["default.requiredMetadataKeys"].keys'],
    ['metadata address', { 'default.webhook': { webhookURL: 'http://169.254.169.254/latest/meta-data' } }, 'invalid_upstream_url', 'g[0]["default.webhook"].webhookURL'],
    ['not a URL', { 'default.webhook': { webhookURL: 'hook' } }, 'invalid_value', 'g[0]["default.webhook"].webhookURL'],
    ['a header the gateway sets', { 'default.webhook': { webhookURL: 'https://hooks.example.com/x', headers: { 'Content-Type': 'text/plain' } } }, 'invalid_value', 'g[0]["default.webhook"].headers'],
    ['a timeout over 30 s', { 'default.webhook': { webhookURL: 'https://hooks.example.com/x', timeout: 60_000 } }, 'value_above_maximum', 'g[0]["default.webhook"].timeout'],
  ];
  for (const [why, guardrail, code, param] of cases) {
    t.match(refusal(guardrail), { status: 400, code, param }, why);
  }
  t.equal(refusal({ 'default.wordCount': { min: 1, max: 10 } }), null, 'good parameters pass');
  t.equal(refusal({ 'default.wordCount': { minWords: 1, maxWords: 10 } }), null, "the reference's names pass");
  t.equal(refusal({ 'default.regexMatch': { rule: '^(a+)+$' } }), null, 'a pattern that is only slow on a backtracking engine is fine on RE2');
  t.equal(refusal({ 'default.webhook': { webhookURL: 'https://hooks.example.com/guard', headers: { authorization: 'Bearer x' }, failOnError: true } }), null);
  t.match(refusal({ 'default.wordCount': { max: 3 }, redact: true }), { code: 'invalid_parameter_combination', param: 'g[0].redact' }, 'a count has no spans to redact');
  t.equal(refusal({ 'default.pii': {}, redact: true }), null, 'pii can redact');
});

t.test('parameters: refusals never echo a header value or a pattern', async (t) => {
  const secret = 'Bearer sk-live-NEVER-ECHO-THIS';
  const bad = refusal({ 'default.webhook': { webhookURL: 'https://hooks.example.com/x', headers: { authorization: `${secret}\r\nx: y` } } });
  t.match(bad, { status: 400, param: 'g[0]["default.webhook"].headers.authorization' });
  t.notOk(bad!.message.includes('NEVER-ECHO'), 'the value is not in the message');
  const pattern = refusal({ 'default.regexMatch': { rule: 'secret(?=sauce)' } });
  t.notOk(pattern!.message.includes('sauce'));
});

t.test('regexMatch: must match, or (not) must not, with the matches as spans', async (t) => {
  t.equal((await run('default.regexMatch', { rule: '\\d{3}-\\d{4}' }, 'call 555-1234')).verdict, true);
  t.equal((await run('default.regexMatch', { rule: '\\d{3}-\\d{4}' }, 'call me')).verdict, false);
  t.equal((await run('default.regexMatch', { rule: '^HELLO', flags: 'i' }, 'hello there')).verdict, true, 'flags apply');
  t.equal(check('default.regexMatch').find!('call 555-1234', { rule: '\\d{3}-\\d{4}' }), null, 'must-match has no spans');

  const text = 'ids 555-1234 and 555-9876.';
  const params = { rule: '\\d{3}-\\d{4}', not: true };
  t.same(check('default.regexMatch').find!(text, params), [spanOf(text, '555-1234', 'MATCH'), spanOf(text, '555-9876', 'MATCH')]);
  const failed = await run('default.regexMatch', params, text);
  t.equal(failed.verdict, false);
  t.notOk(JSON.stringify(failed).includes('555-'), 'the result never carries the match');
  t.equal((await run('default.regexMatch', params, 'nothing here')).verdict, true);
  t.equal(check('default.regexMatch').maxMatch!({ rule: 'x', max_match: 40 }), 40);
  t.equal(check('default.regexMatch').maxMatch!({ rule: 'x' }), 256);
});

t.test('SafeRegex.matches agrees with a find-all on every window boundary', async (t) => {
  const patterns: Array<[string, string]> = [
    ['\\d{1,3}', ''],
    ['\\bcat\\b', ''],
    ['a[bc]?', ''],
    ['^x', ''],
    ['^b', 'm'],
    ['x$', ''],
    ['c$', 'm'],
    ['\\b\\w\\b', ''],
    ['x*', ''],
  ];
  const alphabet = fc.constantFrom('a', 'b', 'c', 'x', ' ', '\n', '1', '2', 'cat', ' cat ', '😀');
  fc.assert(
    fc.property(fc.array(alphabet, { maxLength: 120 }), fc.integer({ min: 3, max: 9 }), (parts, maxLength) => {
      const text = parts.join('');
      for (const [source, flags] of patterns) {
        const expected = [...text.matchAll(new RegExp(source, `g${flags}u`))].filter((m) => m[0].length > 0).map((m) => [m.index, m.index + m[0].length]);
        const got = compileSafeRegex(source, { flags }).matches(text, maxLength);
        if (JSON.stringify(got) !== JSON.stringify(expected)) throw new Error(`${source} on ${JSON.stringify(text)}: ${JSON.stringify(got)} ≠ ${JSON.stringify(expected)}`);
      }
    }),
    { numRuns: 300 },
  );
  t.pass('300 random texts, every pattern, windows as small as 6 characters');
});

t.test('SafeRegex.matches: a long match comes back in pieces no longer than the bound, covering it', async (t) => {
  const text = `start ${'z'.repeat(1000)} end`;
  const spans = compileSafeRegex('z+').matches(text, 100);
  t.ok(spans.every(([s, e]) => e - s <= 100 && e > s));
  t.equal(spans[0]![0], text.indexOf('z'));
  t.equal(spans[spans.length - 1]![1], text.lastIndexOf('z') + 1);
  for (let i = 1; i < spans.length; i++) t.equal(spans[i]![0], spans[i - 1]![1], 'pieces are contiguous');
});

t.test('SafeRegex.matches stays fast on a pattern that makes find-all quadratic', async (t) => {
  const re = compileSafeRegex('a*b|a');
  const text = 'a'.repeat(50_000);
  const started = Date.now();
  const spans = re.matches(text, 64);
  const elapsed = Date.now() - started;
  t.equal(spans.length, 50_000, 'every "a" is a match');
  t.ok(spans.every(([s, e], i) => s === i && e === i + 1));
  t.ok(elapsed < 5000, `${elapsed} ms (a plain find-all loop needs ~40 s here)`);
});

t.test('contains: any, all, none; case and word boundaries; spans for none', async (t) => {
  const text = 'I love New York and the concatenated cats of Zürich.';
  t.equal((await run('default.contains', { words: ['york', 'paris'] }, text)).verdict, true, 'any is the default');
  t.equal((await run('default.contains', { words: ['paris', 'rome'] }, text)).verdict, false);
  const all = await run('default.contains', { operator: 'all', words: ['new york', 'paris', 'zürich'] }, text);
  t.equal(all.verdict, false);
  t.same(all.data?.found, ['new york', 'zürich'], "the operator's words found (case-insensitively, a phrase too)");
  t.same(all.data?.missing, ['paris']);
  t.equal((await run('default.contains', { operator: 'all', words: ['new york', 'ZÜRICH'] }, text)).verdict, true);
  t.equal((await run('default.contains', { words: ['cat'] }, text)).verdict, false, '"cat" is not a word in "concatenated" or "cats"');
  t.equal((await run('default.contains', { words: ['cat'], word_boundary: false }, text)).verdict, true);
  t.equal((await run('default.contains', { words: ['new york'], case_sensitive: true }, text)).verdict, false);
  t.equal((await run('default.contains', { words: ['New York'], case_sensitive: true }, text)).verdict, true);
  t.equal((await run('default.contains', { words: ['$100'] }, 'it costs $100.')).verdict, true, 'a word that starts with a symbol');
  t.equal((await run('default.contains', { words: ['café'] }, 'two cafés')).verdict, false, 'boundaries in any script');

  const none = { operator: 'none', words: ['new york', 'york city', 'zürich'] };
  const city = 'From New York City to Zürich, then New York.';
  t.same(check('default.contains').find!(city, none), [
    spanOf(city, 'New York', 'WORD'),
    spanOf(city, 'Zürich', 'WORD'),
    spanOf(city, 'New York', 'WORD', 20),
  ], 'leftmost, then longest; overlapping words give one span');
  const result = await run('default.contains', none, city);
  t.equal(result.verdict, false);
  t.equal(result.data?.occurrences, 3);
  t.equal((await run('default.contains', none, 'From Boston.')).verdict, true);
  t.equal(check('default.contains').find!(city, { words: ['x'] }), null, 'any/all have no spans');
  t.equal(check('default.contains').maxMatch!(none), 'york city'.length);
});

t.test('contains: a hostile word list stays linear', async (t) => {
  // Every word is a suffix of the next: the dictionary chain is as long as it gets (256).
  const words = Array.from({ length: 256 }, (_, i) => '-'.repeat(i + 1));
  const started = Date.now();
  const found = check('default.contains').find!('-'.repeat(100_000), { operator: 'none', words });
  t.ok(Date.now() - started < 5000, `${Date.now() - started} ms`);
  t.equal(found!.length, Math.ceil(100_000 / 256), 'leftmost-longest pieces of 256');
});

t.test('counts: words and sentences by Unicode segmentation, characters by code point', async (t) => {
  t.same((await run('default.wordCount', { min: 4, max: 4 }, "Hello, world! Don't panic.")).data, { count: 4, min: 4, max: 4 });
  t.equal((await run('default.wordCount', { max: 3 }, "Hello, world! Don't panic.")).verdict, false);
  t.ok(((await run('default.wordCount', {}, '我喜欢猫')).data!.count as number) >= 2, 'text without spaces has several words');
  t.equal((await run('default.wordCount', { minWords: 5 }, 'one two three')).verdict, false, "the reference's name works");
  t.equal((await run('default.sentenceCount', { min: 5, max: 5 }, 'It rained. We stayed in! Was it late? Yes. 3.14 is pi.')).verdict, true, 'a decimal point ends no sentence');
  t.equal((await run('default.sentenceCount', { max: 1 }, 'One. Two.')).verdict, false);
  t.equal((await run('default.sentenceCount', { min: 1 }, '  ...  ')).verdict, false, 'punctuation alone is no sentence');
  t.equal((await run('default.characterCount', { max: 7 }, 'héllo 👋')).verdict, true, 'an emoji is one character (UTF-16 length is 8)');
  t.equal((await run('default.characterCount', { max: 6 }, 'héllo 👋')).verdict, false);
  t.equal((await run('default.characterCount', { min: 1 }, '')).verdict, false);
  t.equal((await run('default.characterCount', {}, 'anything')).verdict, true, 'no bounds, no failure');
});

t.test('jsonSchema: the answer (or its fenced block) validates; patterns run on RE2', async (t) => {
  const schema = { type: 'object', properties: { name: { type: 'string' }, age: { type: 'integer', minimum: 0 } }, required: ['name'] };
  t.equal((await run('default.jsonSchema', { schema }, '{"name":"Ann","age":3}', { phase: 'output' })).verdict, true);
  t.equal((await run('default.jsonSchema', { schema }, 'Here you go:\n```json\n{"name": "Ann"}\n```\nAnything else?')).verdict, true, 'a fenced block');
  const bad = await run('default.jsonSchema', { schema }, '{"age": -1}');
  t.equal(bad.verdict, false);
  t.match(bad.data, { json: true, valid: false, errors: [{ keyword: String }] });
  t.match(await run('default.jsonSchema', { schema }, 'Sure! The name is Ann.'), { verdict: false, data: { json: false } });

  const slow = { type: 'string', pattern: '^(a+)+$' };
  const started = Date.now();
  t.equal((await run('default.jsonSchema', { schema: slow }, JSON.stringify(`${'a'.repeat(40)}!`))).verdict, false);
  t.ok(Date.now() - started < 1000, 'the ReDoS pattern answers at once (V8 would take minutes)');
  t.equal((await run('default.jsonSchema', { schema: { type: 'object', patternProperties: { '^x-': { type: 'number' } } } }, '{"x-a": "no"}')).verdict, false, 'patternProperties too');

  t.equal(refusal({ 'default.jsonSchema': { schema: { $id: 'same', type: 'string' } } }), null);
  t.equal(refusal({ 'default.jsonSchema': { schema: { $id: 'same', type: 'number' } } }), null, 'two schemas with one $id both compile');
  const tuple = { $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'array', prefixItems: [{ type: 'string' }, { type: 'number' }], items: false };
  t.equal((await run('default.jsonSchema', { schema: tuple }, '["a", 1]')).verdict, true, '2020-12 when $schema says so');
  t.equal((await run('default.jsonSchema', { schema: tuple }, '["a", 1, 2]')).verdict, false);
});

t.test('jsonKeys: top-level keys, all by default', async (t) => {
  const answer = '{"title": "x", "tags": []}';
  t.equal((await run('default.jsonKeys', { keys: ['title', 'tags'] }, answer)).verdict, true);
  const missing = await run('default.jsonKeys', { keys: ['title', 'summary'] }, answer);
  t.equal(missing.verdict, false);
  t.same(missing.data, { operator: 'all', found: ['title'], missing: ['summary'] });
  t.equal((await run('default.jsonKeys', { keys: ['title', 'summary'], operator: 'any' }, answer)).verdict, true);
  t.equal((await run('default.jsonKeys', { keys: ['title'], operator: 'none' }, answer)).verdict, false);
  t.equal((await run('default.jsonKeys', { keys: ['toString'] }, answer)).verdict, false, 'inherited names are not keys');
  t.equal((await run('default.jsonKeys', { keys: ['0'] }, '["a"]')).verdict, false, 'an array is not an object');
  t.equal((await run('default.jsonKeys', { keys: ['a'] }, '```json\n{"a": 1}\n```')).verdict, true);
});

t.test('validUrls: syntax only, invalid URLs as spans', async (t) => {
  const good = 'See https://example.com/path?q=1, (https://en.wikipedia.org/wiki/Foo_(bar)) and http://localhost:8080/x or http://[2001:db8::1]/.';
  t.same(check('default.validUrls').find!(good, {}), []);
  t.match(await run('default.validUrls', {}, good), { verdict: true, data: { urls: 4, invalid: 0 } });
  const text = 'Links: https://ok.example.org/a, ftp://files.example.com/x, https://intranet/page, https://-bad-.com and https://exa..mple.com.';
  t.same(check('default.validUrls').find!(text, {}), [
    spanOf(text, 'ftp://files.example.com/x', 'INVALID_URL'),
    spanOf(text, 'https://intranet/page', 'INVALID_URL'),
    spanOf(text, 'https://-bad-.com', 'INVALID_URL'),
    spanOf(text, 'https://exa..mple.com', 'INVALID_URL'),
  ]);
  t.match(await run('default.validUrls', {}, text), { verdict: false, data: { urls: 5, invalid: 4 } });
  t.equal((await run('default.validUrls', { only_https: true }, 'http://example.com')).verdict, false);
  t.equal((await run('default.validUrls', { onlyDNS: true }, 'https://example.com')).verdict, true, "the reference's option is accepted");
  t.equal((await run('default.validUrls', {}, 'no links at all')).verdict, true);
});

t.test('modelWhitelist: exact names and trailing wildcards; an unknown model fails', async (t) => {
  const models = ['gpt-4o*', 'claude-3-5-sonnet'];
  t.equal((await run('default.modelWhitelist', { models }, '', { model: 'gpt-4o-mini' })).verdict, true);
  t.equal((await run('default.modelWhitelist', { models }, '', { model: 'claude-3-5-sonnet' })).verdict, true);
  t.equal((await run('default.modelWhitelist', { models }, '', { model: 'claude-3-5-sonnet-latest' })).verdict, false, 'no wildcard, no prefix match');
  t.equal((await run('default.modelWhitelist', { models }, '', { model: 'gpt-4' })).verdict, false);
  t.equal((await run('default.modelWhitelist', { models, not: true }, '', { model: 'gpt-4' })).verdict, true);
  t.equal((await run('default.modelWhitelist', { models, not: true }, '', { model: 'gpt-4o' })).verdict, false);
  t.equal((await run('default.modelWhitelist', { models }, '', { model: undefined })).verdict, false);
  t.equal((await run('default.modelWhitelist', { models, not: true }, '', { model: undefined })).verdict, false);
});

t.test('requiredMetadataKeys: all, any, none', async (t) => {
  const metadata = { team: 'search', _user: 'u1' };
  const all = await run('default.requiredMetadataKeys', { keys: ['team', 'env'] }, '', { metadata });
  t.equal(all.verdict, false);
  t.same(all.data, { operator: 'all', found: ['team'], missing: ['env'] });
  t.equal((await run('default.requiredMetadataKeys', { keys: ['team', '_user'] }, '', { metadata })).verdict, true);
  t.equal((await run('default.requiredMetadataKeys', { keys: ['team', 'env'], operator: 'any' }, '', { metadata })).verdict, true);
  t.equal((await run('default.requiredMetadataKeys', { keys: ['env'], operator: 'any' }, '', { metadata })).verdict, false);
  t.equal((await run('default.requiredMetadataKeys', { metadataKeys: ['env'], operator: 'none' }, '', { metadata })).verdict, true);
  t.equal((await run('default.requiredMetadataKeys', { keys: ['constructor'] }, '', { metadata })).verdict, false, 'inherited names are not keys');
});

t.test('alllowercase / alluppercase: cased letters only, any script', async (t) => {
  t.equal((await run('default.alllowercase', {}, 'hello world 123 ß! αβγ')).verdict, true);
  t.match(await run('default.alllowercase', {}, 'Hello Ωmega'), { verdict: false, data: { uppercase_letters: 2 } });
  t.equal((await run('default.alllowercase', {}, '123 !? 中文')).verdict, true, 'nothing cased');
  t.equal((await run('default.alluppercase', {}, 'HELLO 123 ΑΒΓ')).verdict, true);
  t.match(await run('default.alluppercase', {}, 'HELLo'), { verdict: false, data: { lowercase_letters: 1 } });
});

t.test('endsWith: trailing white space ignored unless trim is false', async (t) => {
  t.equal((await run('default.endsWith', { suffix: 'Thanks.' }, 'All done. Thanks.\n\n')).verdict, true);
  t.equal((await run('default.endsWith', { suffix: 'Thanks.', trim: false }, 'All done. Thanks.\n\n')).verdict, false);
  t.equal((await run('default.endsWith', { suffix: 'Thanks.' }, 'Thanks. All done.')).verdict, false);
});

t.test('pii: exact spans for every category', async (t) => {
  const samples: Array<[string, string]> = [
    ['EMAIL', 'john.doe+news@mail.example.co.uk'],
    ['PHONE', '+44 20 7946 0958'],
    ['PHONE', '(415) 555-2671'],
    ['PHONE', '1-800-555-0199'],
    ['PHONE', '+1 (202) 555-0143'],
    ['PHONE', '+49 (0)30 1234567'],
    ['CREDIT_CARD', '4111 1111 1111 1111'],
    ['CREDIT_CARD', '5555-5555-5555-4444'],
    ['CREDIT_CARD', '378282246310005'],
    ['CREDIT_CARD', '3782 822463 10005'],
    ['IBAN', 'DE89 3704 0044 0532 0130 00'],
    ['IBAN', 'GB82WEST12345698765432'],
    ['SSN', '123-45-6789'],
    ['IP_ADDRESS', '192.168.10.254'],
    ['IP_ADDRESS', '2001:db8:85a3::8a2e:370:7334'],
    ['IP_ADDRESS', '::ffff:10.0.0.1'],
  ];
  for (const [label, value] of samples) {
    for (const text of [`${value}`, `Details: ${value}.`, `(${value}) and more`]) {
      t.same(findPii(text), [spanOf(text, value, label)], `${label} in ${JSON.stringify(text)}`);
    }
  }
  const text = 'Mail a@b.io, call +1 415 555 2671, card 4012888888881881, IBAN FR1420041010050500013M02606, SSN 078-05-1121, host 10.1.2.3.';
  t.same(findPii(text), [
    spanOf(text, 'a@b.io', 'EMAIL'),
    spanOf(text, '+1 415 555 2671', 'PHONE'),
    spanOf(text, '4012888888881881', 'CREDIT_CARD'),
    spanOf(text, 'FR1420041010050500013M02606', 'IBAN'),
    spanOf(text, '078-05-1121', 'SSN'),
    spanOf(text, '10.1.2.3', 'IP_ADDRESS'),
  ]);
  t.same(findPii(text, ['email', 'ssn']).map((f) => f.label), ['EMAIL', 'SSN'], 'categories filter');
  const result = await run('default.pii', {}, text);
  t.equal(result.verdict, false);
  t.same(result.data, { found: { EMAIL: 1, PHONE: 1, CREDIT_CARD: 1, IBAN: 1, SSN: 1, IP_ADDRESS: 1 } });
  for (const [, value] of samples) t.notOk(JSON.stringify(await run('default.pii', {}, value)).includes(value), 'no finding in the result');
});

t.test('pii: checksums and ranges are what decide', async (t) => {
  t.same(findPii('4111 1111 1111 1111').map((f) => f.label), ['CREDIT_CARD']);
  t.same(findPii('4111 1111 1111 1112'), [], 'Luhn fails');
  t.equal(luhn('4111111111111111'), true);
  t.equal(luhn('4111111111111112'), false);
  t.same(findPii('9111 1111 1111 1111'.replace(/1$/, String(luhnDigit('911111111111111')))), [], 'Luhn passes, but no network issues 9…');
  t.same(findPii('DE89 3704 0044 0532 0130 01'), [], 'mod-97 fails');
  t.same(findPii('DE89 3704 0044 0532 0130 0'), [], 'one character short of a German IBAN');
  for (const ssn of ['000-12-3456', '666-12-3456', '912-34-5678', '123-00-4567', '123-45-0000']) t.same(findPii(`SSN ${ssn}`), [], `${ssn} is never issued`);
  t.same(findPii('10.0.0.256'), [], 'an octet over 255');
  t.same(findPii('4111 1111 1111 1111 1111 1111'), [], 'no card is read out of a longer chain of groups');
  t.same(findPii('4111 1111 1111 1111 123').map((f) => f.end), [19], 'a card followed by its CVC');
  t.same(findPii('4111111111111111 1234').map((f) => f.end), [16]);
  t.same(findPii('4111 1111 1111 1111 12345'), [], 'five digits after it are not a CVC');
});

/** The check digit that makes `body` + digit pass Luhn. */
function luhnDigit(body: string): number {
  for (let d = 0; d < 10; d++) if (luhn(body + d)) return d;
  throw new Error('unreachable');
}

const PROSE = [
  'On 2024-06-15 at 14:30:00 we shipped v2.3.4 (build 20240615.1) to 1,250 customers in 12 countries.',
  'Order #A-123456-78 totalled $1,234.56 (EUR 1.234,56); ticket 4521, ref 987654321, SKU 12-345-678.',
  'Order 2024061512345678 shipped on 15/06/2024; invoice INV-2024-000123; tracking 1Z999AA10123456784.',
  'Python 3.12.1 and Node 20.18.0 are required; Windows 10.0.19041.1 works; see RFC 5322 section 3.4.',
  'The meeting is in room 101 from 9:00 to 17:30, ratio 16:9, final score 3-1, pi is 3.14159265358979.',
  'ISBN 978-3-16-148410-0, the year 1999, a timestamp 1718461800000, and 1.2.3.4.5 is not an address.',
  'Prices: 19.99, 1 299,00 kr, ¥12,000; quantities 100 200 300; coordinates 48.8566, 2.3522.',
  'C++ uses std::vector and a::b, Rust uses Foo::bar(); call me at noon; write to the team tomorrow.',
].join('\n');

t.test('pii: no false alarms on prose, dates, prices, order numbers and versions', async (t) => {
  t.same(findPii(PROSE).map((f) => `${f.label} ${PROSE.slice(f.start, f.end)}`), []);
  t.equal((await run('default.pii', {}, PROSE)).verdict, true);
});

t.test('pii: hostile input stays linear', async (t) => {
  const inputs = ['@'.repeat(200_000), 'a@'.repeat(100_000), '1 '.repeat(100_000), '+1 '.repeat(70_000), '1.'.repeat(100_000), `${'a'.repeat(64)}@${'b'.repeat(250)}.`.repeat(600), 'DE89 '.repeat(40_000), '1-'.repeat(100_000), '(2'.repeat(100_000)];
  for (const input of inputs) {
    const started = Date.now();
    findPii(input);
    const ms = Date.now() - started;
    t.ok(ms < 3000, `${JSON.stringify(input.slice(0, 12))}… (${input.length} chars): ${ms} ms`);
  }
});

const JWT = `${Buffer.from('{"alg":"HS256","typ":"JWT"}').toString('base64url')}.${Buffer.from('{"sub":"1234567890","name":"Ann"}').toString('base64url')}.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c`;
const PEM = ['-----BEGIN RSA PRIVATE KEY-----', 'MIIBOgIBAAJBAKj34GkxFhD90vcNLYLInFEX6Ppy1tPf9Cnzj4p4WGeKLs1Pt8Qu', 'KUpRKfFLfRYC9AIKjbJTWit+CqvjWYzvQwECAwEAAQJAIJLixBy2qpFoS4DSmoEm', '-----END RSA PRIVATE KEY-----'].join('\n');

t.test('secrets: provider keys, PEM blocks, JWTs and random tokens, as exact spans', async (t) => {
  const keys: Array<[string, string]> = [
    ['openai', `sk-proj-${'Ab3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1eF3hJ5kL7n'}`],
    ['openai', 'sk-Ab3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1eF3hJ5kL7nP9'],
    ['anthropic', `sk-ant-api03-${'Xy7Zq2Wv4Ut6Sr8Qp0On2Ml4Kj6Ih8Gf0Ed2Cb4Az6'}-AA`],
    ['aws', 'AKIAIOSFODNN7EXAMPLE'],
    ['aws', 'ASIAY34FZKBOKMUTVV7A'],
    ['github', `ghp_${'a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8'}`],
    ['github', `github_pat_11ABCDEFG0${'abcdefghij1234567890'}_xyz`],
    ['slack', 'xoxb-2648251385-4851246531-AbCdEfGhIjKlMnOpQrStUvWx'],
    ['google', `AIza${'SyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY'}`],
    ['gitlab', 'glpat-xK9mN2pQ4sT6vW8yZ0bC'],
    ['stripe', 'sk_live_4eC39HqLyjWDarjtT1zdp7dc'],
    ['gateway', generateApiKey()],
  ];
  for (const [provider, key] of keys) {
    const text = `key=${key}; done`;
    t.same(findSecrets(text), [spanOf(text, key, 'API_KEY')], `${provider}: ${key.slice(0, 12)}…`);
    const result = await run('default.secrets', {}, text);
    t.same(result.data?.providers, [provider]);
    t.notOk(JSON.stringify(result).includes(key), 'the result never carries the key');
  }

  const pemText = `Here is my key:\n${PEM}\nPlease keep it safe.`;
  t.same(findSecrets(pemText), [spanOf(pemText, PEM, 'PRIVATE_KEY')]);
  const cut = PEM.split('\n').slice(0, 3).join('\n');
  const cutText = `${cut}\nsorry, that got cut off`;
  t.same(findSecrets(cutText), [spanOf(cutText, cut, 'PRIVATE_KEY')], 'a block with no END runs to the end of its base64 lines');

  const jwtText = `Authorization: Bearer ${JWT}.`;
  t.same(findSecrets(jwtText), [spanOf(jwtText, JWT, 'JWT')]);

  const token = 'Zx9Qw2Lr7Tp4Vb8Nm1Kc6Hd3Jf5Gs0YaE';
  const tokenText = `password: ${token}`;
  t.same(findSecrets(tokenText), [spanOf(tokenText, token, 'SECRET')]);
  t.same(findSecrets(tokenText, { min_length: 40 }), [], 'min_length');
  t.same(findSecrets(tokenText, { min_entropy: 5.5 }), [], 'min_entropy (33 characters carry at most log2(33) ≈ 5.04 bits each)');
  t.equal((await run('default.secrets', {}, tokenText)).verdict, false);
  t.equal(check('default.secrets').maxMatch!({}), 8192, 'a whole key block fits what a stream holds back');
});

t.test('secrets: no false alarms on words, identifiers, paths, hashes and UUIDs', async (t) => {
  const benign = [
    PROSE,
    'Donaudampfschifffahrtsgesellschaftskapitaen Rindfleischetikettierungsueberwachungsaufgabenuebertragungsgesetz',
    'AbstractSingletonProxyFactoryBeanDefinitionReader getUser2FactorAuthenticationTokenForAccount thisIsAVeryLongCamelCaseIdentifierName',
    'node_modules/typescript/lib/tsc2024/index com/example/project/module/SubModuleFactory /usr/local/lib/python3/site-packages',
    'INTERNAL_SERVER_ERROR_RESPONSE_TIMEOUT_2024 test_user_registration_with_invalid_email_2 aws-us-east-1-production-database-replica-02',
    'pod my-kubernetes-deployment-7d4b9c8f6-x2k9p restarted',
    `uuid 550e8400-e29b-41d4-a716-446655440000, sha256 ${createHash('sha256').update('x').digest('hex')}, commit ${createHash('sha1').update('y').digest('hex')}`,
    'sk-this-is-not-a-real-key-just-a-hyphenated-phrase and task-runner-configuration-file',
    'https://docs.example.com/guides/getting-started/installation-and-configuration',
  ];
  for (const text of benign) t.same(findSecrets(text).map((f) => text.slice(f.start, f.end)), [], text.slice(0, 40));
});

t.test('secrets: hostile input stays linear; long tokens come in pieces', async (t) => {
  const blob = randomBytes(300_000).toString('base64');
  let started = Date.now();
  const found = findSecrets(`data ${blob} end`);
  t.ok(Date.now() - started < 3000, `${Date.now() - started} ms`);
  t.ok(found.length > 1 && found.every((f) => f.end - f.start <= 8192 && f.label === 'SECRET'));
  t.equal(found[0]!.start, 5);
  t.equal(found[found.length - 1]!.end, 5 + blob.length);
  for (const input of ['-----BEGIN PRIVATE KEY-----'.repeat(20_000), 'eyJ.'.repeat(100_000), `eyJ${'a'.repeat(200_000)}`, 'sk-'.repeat(100_000)]) {
    started = Date.now();
    findSecrets(input);
    t.ok(Date.now() - started < 3000, `${JSON.stringify(input.slice(0, 12))}…: ${Date.now() - started} ms`);
  }
});

t.test('span checks: a span never depends on text more than maxMatch past it', async (t) => {
  // What streams rely on: the engine holds back maxMatch characters, so every span that ends
  // before that must be the same whether or not the rest of the text has arrived.
  const fragments = fc.constantFrom(
    ' ', '\n', '. ', 'the ', 'price 12.50 ', '-', '1', '12', '123', '4111 ', '1111', '@', 'a@b.io', 'john.doe@example.com',
    '4111 1111 1111 1111', '4111111111111111', '+44 20 7946 0958', '(415) 555-2671', '202-555-0143', 'DE89 3704 0044 0532 0130 00',
    'GB82WEST12345698765432', '123-45-6789', '10.0.0.1', '2001:db8::1', 'AKIAIOSFODNN7EXAMPLE', JWT, 'Zx9Qw2Lr7Tp4Vb8Nm1Kc6Hd3Jf5Gs0YaE',
    'https://example.com/a', 'https://bad', 'cat', 'Cat ', 'concat', `${'lorem ipsum '.repeat(40)}`,
  );
  // [check, parameters, runs, filler]: the secrets bound is 8192, so their texts get a filler
  // that makes cuts more than maxMatch past a span possible.
  const cases: Array<[string, Params, number, number]> = [
    ['default.pii', {}, 150, 0],
    ['default.secrets', {}, 40, 9000],
    ['default.contains', { operator: 'none', words: ['cat', 'lorem ipsum', '4111'] }, 150, 0],
    ['default.regexMatch', { rule: '\\d{3}-\\d{4}|[a-z]+@[a-z]+', not: true, max_match: 64 }, 150, 0],
    ['default.validUrls', {}, 150, 0],
  ];
  for (const [id, params, numRuns, filler] of cases) {
    const def = check(id);
    const hold = def.maxMatch!(params);
    fc.assert(
      fc.property(fc.array(fragments, { minLength: 1, maxLength: 80 }), fc.double({ min: 0, max: 1, noNaN: true }), (parts, where) => {
        const body = parts.join('');
        const text = filler === 0 ? body : `${body}${' '.repeat(filler)}${body}`;
        const k = Math.floor(where * text.length);
        const settled = (spans: Finding[] | null): Finding[] => (spans ?? []).filter((s) => s.end <= k - hold);
        const all = def.find!(text, params) ?? [];
        const whole = settled(all);
        const prefix = settled(def.find!(text.slice(0, k), params));
        if (JSON.stringify(whole) !== JSON.stringify(prefix)) throw new Error(`${id}: cut at ${k} of ${JSON.stringify(text)}`);
        if (all.some((s) => s.end - s.start > hold)) throw new Error(`${id}: a span longer than maxMatch`);
      }),
      { numRuns },
    );
    t.pass(`${id}: settled spans equal on every cut`);
  }
});

// ── webhook ───────────────────────────────────────────────────────────────────────────────────

interface Received {
  path: string;
  headers: IncomingMessage['headers'];
  body: Record<string, unknown>;
}

async function startHook(t: Teardown): Promise<{ url: string; received: Received[] }> {
  const received: Received[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = req.url ?? '/';
      received.push({ path, headers: req.headers, body: JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as Record<string, unknown> });
      const json = (status: number, body: unknown): void => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(typeof body === 'string' ? body : JSON.stringify(body));
      };
      switch (path) {
        case '/pass':
          return json(200, { verdict: true, explanation: 'looks fine' });
        case '/fail':
          return json(200, { verdict: false, explanation: 'policy 7 says no', transformedData: { request: { json: null }, response: { json: null } } });
        case '/rewrite':
          return json(200, { verdict: true, transformedData: { request: { json: { model: 'gpt-4o', messages: [{ role: 'user', content: '[REDACTED]' }] } } } });
        case '/slow':
          return void setTimeout(() => json(200, { verdict: true }), 1500).unref();
        case '/error':
          return json(500, { error: 'boom' });
        case '/junk':
          return json(200, '<html>not json</html>');
        case '/shape':
          return json(200, { verdict: 'yes' });
        case '/redirect':
          res.writeHead(302, { location: '/pass' });
          return res.end();
        case '/big': {
          res.writeHead(200, { 'content-type': 'application/json' });
          const chunk = Buffer.alloc(64 * 1024, 0x61);
          let sent = 0;
          const pump = (): void => {
            while (sent < 2 * MAX_WEBHOOK_ANSWER) {
              sent += chunk.length;
              if (!res.write(chunk)) return void res.once('drain', pump);
            }
            res.end();
          };
          res.on('error', () => {});
          return pump();
        }
        default:
          return json(404, {});
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, received };
}

t.test('webhook: verdicts, rewrites, and what the hook receives', async (t) => {
  const hook = await startHook(t);
  const webhook = check('default.webhook');
  const params = (path: string, extra: Params = {}): Params => ({ webhookURL: `${hook.url}${path}`, headers: { 'x-hook-secret': 'S3CRET-VALUE' }, ...extra });
  t.equal(webhook.validateParams!(params('/pass'), 'g'), null, 'loopback is allowed by this policy');

  const passed = await webhook.run!(ctx('hello there', { metadata: { team: 'a' } }), params('/pass'));
  t.same(passed, { verdict: true, explanation: 'looks fine' });
  const seen = hook.received.at(-1)!;
  t.equal(seen.headers['content-type'], 'application/json');
  t.equal(seen.headers['x-hook-secret'], 'S3CRET-VALUE', 'the guardrail\'s headers are sent');
  t.match(seen.body, { phase: 'input', text: 'hello there', route: 'chat.completions', model: 'gpt-4o', provider: 'openai', metadata: { team: 'a' }, response: null });
  t.same((seen.body.request as Params).messages, [{ role: 'user', content: 'hello there' }]);

  t.same(await webhook.run!(ctx('x'), params('/fail')), { verdict: false, explanation: 'policy 7 says no' }, 'null rewrites are no rewrites');
  const rewritten = await webhook.run!(ctx('my card is 4111 1111 1111 1111'), params('/rewrite'));
  t.same(rewritten, { verdict: true, transformed: { request: { model: 'gpt-4o', messages: [{ role: 'user', content: '[REDACTED]' }] } } });
});

t.test('webhook: every failure throws a message that says which, never the header values', async (t) => {
  const hook = await startHook(t);
  const webhook = check('default.webhook');
  const cases: Array<[string, Params, string, RegExp]> = [
    ['500', {}, '/error', /HTTP 500/],
    ['junk', {}, '/junk', /not JSON/],
    ['wrong shape', {}, '/shape', /no boolean verdict/],
    ['redirect', {}, '/redirect', /HTTP 302 \(redirects are not followed\)/],
    ['over 1 MB', {}, '/big', /larger than 1048576 bytes/],
    ['slow', { timeout: 200 }, '/slow', /did not answer within 200 ms/],
  ];
  for (const [why, extra, path, message] of cases) {
    const started = Date.now();
    const err = await (webhook.run!(ctx('x'), { webhookURL: `${hook.url}${path}`, headers: { authorization: 'Bearer S3CRET-VALUE' }, ...extra }) as Promise<CheckResult>).then(
      () => null,
      (e: Error) => e,
    );
    t.ok(err instanceof Error, `${why}: throws`);
    t.match(err!.message, message, why);
    t.notOk(err!.message.includes('S3CRET') || err!.message.includes(hook.url), `${why}: no header value, no URL`);
    if (why === 'slow') t.ok(Date.now() - started < 1400, 'the timeout cut the call short');
  }
  t.equal(hook.received.filter((r) => r.path === '/pass').length, 0, 'the redirect was not followed');

  const aborted = new AbortController();
  setTimeout(() => aborted.abort(), 50);
  await t.rejects(webhook.run!(ctx('x', { signal: aborted.signal }), { webhookURL: `${hook.url}/slow` }) as Promise<CheckResult>, { code: 'WEBHOOK_ABORTED' }, 'the request going away cancels the call');
});

t.test('webhook: the SSRF guard, as text and at connect time', async (t) => {
  const hook = await startHook(t);
  const port = new URL(hook.url).port;
  const strict: CustomHostPolicy = { allow: [], allow_loopback: false };

  const guarded = webhookCheck({ hosts: strict });
  t.match(guarded.validateParams!({ webhookURL: `${hook.url}/pass` }, 'g'), { status: 400, code: 'invalid_upstream_url', param: 'g.webhookURL' }, 'a loopback URL is refused when saved');
  t.match(guarded.validateParams!({ webhookURL: 'http://169.254.169.254/latest' }, 'g'), { code: 'invalid_upstream_url' });
  t.match(webhookCheck({ hosts: LOOPBACK_OK }).validateParams!({ webhookURL: 'http://[fd00:ec2::254]/' }, 'g'), { code: 'invalid_upstream_url' }, 'metadata even where loopback is allowed');

  // A public-looking name that resolves to loopback (DNS rebinding): passes as text, refused at connect.
  const toLoopback = async (): Promise<Array<{ address: string; family: number }>> => [{ address: '127.0.0.1', family: 4 }];
  const rebinding = webhookCheck({ hosts: strict, resolveHost: toLoopback });
  const url = `http://hooks.example.test:${port}/pass`;
  t.equal(rebinding.validateParams!({ webhookURL: url }, 'g'), null, 'the name looks public');
  const before = hook.received.length;
  await t.rejects(rebinding.run!(ctx('x'), { webhookURL: url }) as Promise<CheckResult>, { code: 'WEBHOOK_REFUSED', message: /does not call/ });
  t.equal(hook.received.length, before, 'nothing reached the server');

  const allowed = webhookCheck({ hosts: LOOPBACK_OK, resolveHost: toLoopback });
  t.same(await allowed.run!(ctx('x'), { webhookURL: url }), { verdict: true, explanation: 'looks fine' }, 'the same name under a policy that allows loopback');
});
