/**
 * The linear-time regex helper every caller-supplied pattern goes through (conditional routing's
 * `$regex`, guardrail patterns): what it accepts, what it refuses with which code, and that the
 * pattern that froze the event loop for 9.5 s on V8's engine now answers at once.
 */
import t from 'tap';
import { compileSafeRegex, MAX_PATTERN_LENGTH, requiredLiteral, trySafeRegex } from '../core/safe-regex.js';
import { RE2JS } from 're2js';
import { matches } from '../core/router/conditions.js';

t.test('ReDoS: ^(a+)+$ against a long non-matching input answers at once', async (t) => {
  const re = compileSafeRegex('^(a+)+$');
  const started = Date.now();
  t.equal(re.test(`${'a'.repeat(28)}!`), false);
  t.equal(re.test(`${'a'.repeat(100_000)}!`), false, 'linear: even 100k characters');
  t.equal(re.test('a'.repeat(40)), true);
  t.ok(Date.now() - started < 2000, 'a sanity bound (the backtracking engine needs hours for the 100k input)');
});

t.test('the conditional-routing matcher uses it', async (t) => {
  const input = { metadata: {}, params: { model: `${'a'.repeat(40)}!` }, url: { pathname: '/v1/chat/completions' } };
  t.equal(matches({ 'params.model': { $regex: '^(a+)+$' } }, input), false);
  t.equal(matches({ 'params.model': { $regex: '^a+!$' } }, input), true);
  t.equal(matches({ 'params.model': { $regex: '(a)\\1' } }, input), false, 'a pattern RE2 refuses never matches');
});

t.test('search semantics and flags', async (t) => {
  t.equal(compileSafeRegex('gpt').test('openai/gpt-4o'), true, 'unanchored, like RegExp#test');
  t.equal(compileSafeRegex('^GPT').test('gpt-4o'), false);
  t.equal(compileSafeRegex('^GPT', { flags: 'i' }).test('gpt-4o'), true, 'the i flag');
  t.equal(compileSafeRegex('(?i)^GPT').test('gpt-4o'), true, 'inline flags');
  t.equal(compileSafeRegex('^b$', { flags: 'm' }).test('a\nb'), true, 'the m flag');
  t.equal(compileSafeRegex('(?<tier>pro|free)').test('tier=pro'), true, 'named groups');
  t.equal(compileSafeRegex('\\d{4}-\\d{4}').test('card 1234-5678'), true);
  t.equal(compileSafeRegex('x'), compileSafeRegex('x'), 'compiled once per source');
});

t.test('refusals: a 400 with a stable code naming the field, never the pattern', async (t) => {
  const cases: Array<[string, string, string | undefined, string]> = [
    ['backreference', '(a)\\1', undefined, 'invalid_value'],
    ['lookahead', 'a(?=b)', undefined, 'invalid_value'],
    ['negative lookahead', 'a(?!b)', undefined, 'invalid_value'],
    ['lookbehind', '(?<=a)b', undefined, 'invalid_value'],
    ['unbalanced', '(abc', undefined, 'invalid_value'],
    ['an unknown flag', 'abc', 'g', 'invalid_value'],
    ['too long', 'a'.repeat(MAX_PATTERN_LENGTH + 1), undefined, 'string_too_long'],
  ];
  for (const [why, source, flags, code] of cases) {
    try {
      compileSafeRegex(source, { param: 'rules[0].pattern', ...(flags === undefined ? {} : { flags }) });
      t.fail(`${why}: accepted`);
    } catch (err) {
      const e = err as { status: number; code: string; param: string; message: string };
      t.match({ status: e.status, code: e.code, param: e.param }, { status: 400, code, param: 'rules[0].pattern' }, why);
      t.notOk(e.message.includes(source), `${why}: the message does not echo the pattern`);
    }
    t.equal(trySafeRegex(source, flags === undefined ? {} : { flags }), null, `${why}: trySafeRegex gives null`);
  }
  t.ok(compileSafeRegex('a'.repeat(MAX_PATTERN_LENGTH)), 'exactly the bound is fine');
});

t.test('the required-literal prefilter: only literals every match has, and the same answers as RE2 alone', async (t) => {
  const cases: Array<[string, string | undefined]> = [
    ['BEGIN [A-Z]+ PRIVATE KEY', ' PRIVATE KEY'],
    ['foo|bar', undefined],
    ['x{100}', undefined],
    ['abc+def', 'def'],
    ['(abc)?xyz1', 'xyz1'],
    ['a\\.b\\.c', 'a.b.c'],
    ['\\d{3}-\\d{4}', undefined],
    ['(?i)secret', undefined],
    ['xy(z|w)abc', 'abc'],
    ['ab?cdef', 'cdef'],
    ['\\Qa|b\\E', undefined],
  ];
  for (const [source, literal] of cases) t.equal(requiredLiteral(source), literal, source);

  const patterns = ['BEGIN [A-Z]+ PRIVATE KEY', 'abc+def', 'x(yz)?top secret', '^eu-west-\\d', 'a\\.b\\.c', 'n[ou]pe(s|!)end'];
  const words = ['BEGIN RSA PRIVATE KEY', 'abcccdef', 'abdef', 'xtop secret', 'xyztop secret', 'eu-west-1', 'a.b.c', 'axbxc', 'nopes end', 'nupe!end', 'PRIVATE KEY', 'top secre'];
  let random = 7;
  const next = (): number => (random = (random * 1103515245 + 12345) % 2147483648) / 2147483648;
  for (let k = 0; k < 300; k++) {
    const text = Array.from({ length: 1 + Math.floor(next() * 5) }, () => words[Math.floor(next() * words.length)]).join(next() < 0.5 ? ' ' : '');
    for (const source of patterns) {
      const plain = RE2JS.compile(source);
      if (compileSafeRegex(source).test(text) !== plain.test(text)) return t.fail(`${source} on ${JSON.stringify(text)}`);
    }
  }
  t.pass('300 random texts: the prefilter never changes an answer');
});
