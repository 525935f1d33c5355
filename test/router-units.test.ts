/**
 * The router's machinery as plain functions: the conditional-routing query language, the retry
 * pacing (backoff bounds, retry-after parsing) and the circuit-breaker state machine driven with
 * explicit clocks.
 */
import t from 'tap';
import { matches, type ConditionInput } from '../core/router/conditions.js';
import { BACKOFF_BASE_MS, BACKOFF_CAP_MS, backoffDelay, retryAfterMs } from '../core/router/backoff.js';
import { available, begin, breakerKey, record, resetBreakers, snapshot, type BreakerSettings } from '../core/router/breaker.js';

const input: ConditionInput = {
  metadata: { tier: 'pro', region: 'eu-west', seats: '25', beta: 'yes' },
  params: { model: 'gpt-4o', max_tokens: 1500, stream: false, temperature: 0.2, tags: ['a', 'b'], nested: { depth: { x: 3 } } },
  url: { pathname: '/v1/chat/completions' },
};

t.test('matches: each operator, both ways', async (t) => {
  const cases: Array<[string, Record<string, unknown>, boolean]> = [
    ['bare value is $eq', { 'metadata.tier': 'pro' }, true],
    ['bare value mismatch', { 'metadata.tier': 'free' }, false],
    ['$eq', { 'params.model': { $eq: 'gpt-4o' } }, true],
    ['$eq mismatch', { 'params.model': { $eq: 'gpt-4.1' } }, false],
    ['$ne', { 'params.model': { $ne: 'gpt-4.1' } }, true],
    ['$ne on the same value', { 'params.model': { $ne: 'gpt-4o' } }, false],
    ['$gt', { 'params.max_tokens': { $gt: 1000 } }, true],
    ['$gt equal is false', { 'params.max_tokens': { $gt: 1500 } }, false],
    ['$gte equal', { 'params.max_tokens': { $gte: 1500 } }, true],
    ['$gte above', { 'params.max_tokens': { $gte: 1501 } }, false],
    ['$lt', { 'params.temperature': { $lt: 0.5 } }, true],
    ['$lt equal is false', { 'params.temperature': { $lt: 0.2 } }, false],
    ['$lte equal', { 'params.temperature': { $lte: 0.2 } }, true],
    ['$lte below', { 'params.temperature': { $lte: 0.1 } }, false],
    ['$in', { 'params.model': { $in: ['gpt-4.1', 'gpt-4o'] } }, true],
    ['$in absent', { 'params.model': { $in: ['gpt-4.1', 'o3'] } }, false],
    ['$in with a non-array operand', { 'params.model': { $in: 'gpt-4o' } }, false],
    ['$nin', { 'params.model': { $nin: ['gpt-4.1', 'o3'] } }, true],
    ['$nin present', { 'params.model': { $nin: ['gpt-4o'] } }, false],
    ['$regex', { 'url.pathname': { $regex: '^/v1/chat' } }, true],
    ['$regex mismatch', { 'url.pathname': { $regex: '^/v1/embeddings' } }, false],
    ['$regex on a number never matches', { 'params.max_tokens': { $regex: '^15' } }, false],
    ['$regex invalid pattern never matches', { 'url.pathname': { $regex: '([' } }, false],
    ['a range: both operators must hold', { 'params.max_tokens': { $gt: 1000, $lt: 2000 } }, true],
    ['a range: one fails', { 'params.max_tokens': { $gt: 1000, $lt: 1200 } }, false],
    ['a deep dotted path', { 'params.nested.depth.x': 3 }, true],
    ['an object compared whole', { 'params.nested': { $eq: { depth: { x: 3 } } } }, true],
    ['a boolean', { 'params.stream': false }, true],
    ['every field of the query must match', { 'metadata.tier': 'pro', 'params.model': 'o3' }, false],
    ['the empty query matches', {}, true],
  ];
  for (const [name, query, expected] of cases) t.equal(matches(query, input), expected, name);
});

t.test('matches: metadata numbers arrive as strings and compare as numbers', async (t) => {
  t.equal(matches({ 'metadata.seats': { $gt: 20 } }, input), true, '"25" > 20');
  t.equal(matches({ 'metadata.seats': { $gt: 100 } }, input), false, '"25" > 100 is false (not a string comparison)');
  t.equal(matches({ 'metadata.seats': { $lte: 25 } }, input), true, '"25" <= 25');
  t.equal(matches({ 'metadata.seats': 25 }, input), true, '"25" equals 25');
  t.equal(matches({ 'metadata.seats': { $in: [10, 25] } }, input), true, '"25" in [10, 25]');
  t.equal(matches({ 'metadata.seats': { $nin: [25] } }, input), false);
  t.equal(matches({ 'metadata.tier': { $gt: 5 } }, input), false, 'a non-numeric string never compares with a number');
  t.equal(matches({ 'metadata.missing': { $gte: 0 } }, { ...input, metadata: { ...input.metadata, missing: '' } }), false, 'the empty string is not 0');
});

t.test('matches: $and inside $or inside $and', async (t) => {
  const query = (tier: string, maxTokens: number): Record<string, unknown> => ({
    $and: [
      { 'url.pathname': { $regex: '^/v1/' } },
      {
        $or: [
          { $and: [{ 'metadata.tier': tier }, { 'params.max_tokens': { $gte: maxTokens } }] },
          { 'metadata.beta': 'no' },
        ],
      },
    ],
  });
  t.equal(matches(query('pro', 1000), input), true, 'the inner $and holds');
  t.equal(matches(query('pro', 2000), input), false, 'the inner $and fails on one clause and the $or sibling fails');
  t.equal(matches(query('free', 1000), input), false, 'the inner $and fails on the other clause');
  t.equal(matches({ $or: [{ 'metadata.tier': 'free' }, { $and: [{ 'metadata.region': { $regex: '^eu-' } }, { 'params.stream': false }] }] }, input), true);
  t.equal(matches({ $or: [] }, input), false, 'an empty $or matches nothing');
  t.equal(matches({ $and: [] }, input), true, 'an empty $and matches');
  t.equal(matches({ $or: 'nope' }, input), false, 'a non-array $or matches nothing');
  t.equal(matches({ $and: [{ 'metadata.tier': 'pro' }, 'garbage'] }, input), false, 'a non-object clause fails the $and');
});

t.test('matches: an unknown operator matches nothing; a missing field', async (t) => {
  t.equal(matches({ 'metadata.tier': { $exists: true } }, input), false, 'unknown operator');
  t.equal(matches({ 'metadata.tier': { $eq: 'pro', $like: 'p%' } }, input), false, 'an unknown operator next to a true one');
  t.equal(matches({ $nor: [{ 'metadata.tier': 'free' }] }, input), false, 'an unknown top-level operator is a missing field');
  t.equal(matches({ 'metadata.nope': 'x' }, input), false, 'missing field ≠ a value');
  t.equal(matches({ 'metadata.nope': { $gt: 0 } }, input), false, 'missing field is not > 0');
  t.equal(matches({ 'metadata.nope': { $lt: 0 } }, input), false, 'missing field is not < 0');
  t.equal(matches({ 'metadata.nope': { $in: ['x'] } }, input), false);
  t.equal(matches({ 'metadata.nope': { $regex: '.*' } }, input), false, 'a regex needs a string');
  t.equal(matches({ 'metadata.nope': { $ne: 'x' } }, input), true, 'a missing field is not equal to anything');
  t.equal(matches({ 'metadata.nope': { $nin: ['x'] } }, input), true);
  t.equal(matches({ 'params.model.name': 'gpt-4o' }, input), false, 'a path through a string');
  t.equal(matches({ 'params.nested.nope.deeper': 1 }, input), false, 'a path through a missing object');
});

t.test('backoffDelay: full jitter within [0, min(cap, base·2^n))', async (t) => {
  for (let n = 0; n <= 12; n++) {
    const ceiling = Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** n);
    for (let i = 0; i < 200; i++) {
      const d = backoffDelay(n);
      if (!(Number.isInteger(d) && d >= 0 && d < ceiling)) {
        t.fail(`retry ${n}: ${d} outside [0, ${ceiling})`);
        break;
      }
    }
    t.equal(backoffDelay(n, () => 0), 0, `retry ${n}: random 0 waits nothing`);
    const high = backoffDelay(n, () => 0.999);
    t.ok(high < ceiling && high >= ceiling * 0.99, `retry ${n}: random 0.999 gives ${high}, close to ${ceiling}`);
  }
  t.equal(backoffDelay(3, () => 0.5), 400, 'base·2^3 = 800, half of it');
  t.ok(backoffDelay(60, () => 0.999) >= BACKOFF_CAP_MS * 0.99 && backoffDelay(60, () => 0.999) < BACKOFF_CAP_MS, 'a huge n stays under the cap');
  t.ok(backoffDelay(2000, () => 0.999) < BACKOFF_CAP_MS, '2^2000 is Infinity: still the cap');
});

t.test('retryAfterMs: ms, seconds, an HTTP date, garbage', async (t) => {
  const now = Date.parse('2025-01-01T00:00:00Z');
  t.equal(retryAfterMs({ 'retry-after-ms': '1500' }, now), 1500, 'retry-after-ms');
  t.equal(retryAfterMs({ 'retry-after-ms': '12.3' }, now), 13, 'fractional ms round up');
  t.equal(retryAfterMs({ 'retry-after-ms': '250', 'retry-after': '9' }, now), 250, 'retry-after-ms wins over retry-after');
  t.equal(retryAfterMs({ 'retry-after-ms': 'soon', 'retry-after': '2' }, now), 2000, 'a garbage retry-after-ms falls back to retry-after');
  t.equal(retryAfterMs({ 'retry-after': '3' }, now), 3000, 'seconds');
  t.equal(retryAfterMs({ 'retry-after': ' 0 ' }, now), 0, 'zero seconds, trimmed');
  t.equal(retryAfterMs({ 'retry-after': 'Wed, 01 Jan 2025 00:00:07 GMT' }, now), 7000, 'an HTTP date in the future');
  t.equal(retryAfterMs({ 'retry-after': 'Tue, 31 Dec 2024 23:59:00 GMT' }, now), 0, 'an HTTP date in the past: no wait');
  t.equal(retryAfterMs({}, now), undefined, 'no header');
  t.equal(retryAfterMs({ 'retry-after': 'soon' }, now), undefined, 'garbage');
  t.equal(retryAfterMs({ 'retry-after': '' }, now), undefined, 'empty');
  t.equal(retryAfterMs({ 'retry-after-ms': '-5' }, now), undefined, 'negative ms');
  // Date.parse is V8's lenient legacy parser: these are not HTTP dates, though it would read them as 2001 dates.
  t.equal(retryAfterMs({ 'retry-after': '1.5' }, now), undefined, 'fractional seconds are not valid retry-after');
  t.equal(retryAfterMs({ 'retry-after': '-1' }, now), undefined, 'negative seconds are garbage');
  t.equal(retryAfterMs({ 'retry-after': 'later 5' }, now), undefined, 'words and a number are garbage');
});

const threshold: BreakerSettings = { failure_threshold: 3, failure_rate: 1, min_requests: 1000, window_ms: 1000, cooldown_ms: 500 };
const state = (key: string): string | undefined => snapshot().find((s) => s.key === key)?.state;

t.test('breaker: the failure threshold opens the circuit', async (t) => {
  resetBreakers();
  const k = 'unit|threshold|-';
  t.equal(available(k, threshold, 0), true, 'an unknown target is available');
  t.equal(record(k, 'lbl', false, threshold, 0), undefined, 'a success changes nothing');
  t.equal(record(k, 'lbl', true, threshold, 1), undefined);
  t.equal(record(k, 'lbl', true, threshold, 2), undefined);
  t.equal(state(k), 'closed');
  t.equal(available(k, threshold, 3), true, 'two failures: still closed');
  t.equal(record(k, 'lbl', true, threshold, 3), 'open', 'the third failure opens');
  t.match(snapshot().find((s) => s.key === k), { label: 'lbl', state: 'open', failures: 3, requests: 4, opens: 1, opened_at: new Date(3).toISOString() });
  t.equal(available(k, threshold, 4), false, 'open: not available');
  t.equal(available(k, threshold, 502), false, 'one ms before the cooldown ends');
  t.equal(record(k, 'lbl', true, threshold, 10), undefined, 'a late answer while open changes nothing');
  t.equal(state(k), 'open');
});

t.test('breaker: the failure rate needs min_requests', async (t) => {
  resetBreakers();
  const rate: BreakerSettings = { failure_threshold: 100, failure_rate: 0.5, min_requests: 4, window_ms: 10_000, cooldown_ms: 500 };
  const few = 'unit|rate-few|-';
  t.equal(record(few, 'x', true, rate, 0), undefined);
  t.equal(record(few, 'x', true, rate, 1), undefined);
  t.equal(record(few, 'x', true, rate, 2), undefined, '3 of 3 failed, but under min_requests');
  t.equal(state(few), 'closed');
  t.equal(record(few, 'x', true, rate, 3), 'open', '4 of 4: the rate trips at min_requests');

  const mixed = 'unit|rate-mixed|-';
  t.equal(record(mixed, 'x', false, rate, 0), undefined);
  t.equal(record(mixed, 'x', false, rate, 1), undefined);
  t.equal(record(mixed, 'x', true, rate, 2), undefined);
  t.equal(record(mixed, 'x', false, rate, 3), undefined, '1 of 4');
  t.equal(record(mixed, 'x', false, rate, 4), undefined, '1 of 5');
  t.equal(record(mixed, 'x', true, rate, 5), undefined, '2 of 6 = 0.33 < 0.5');
  t.equal(record(mixed, 'x', true, rate, 6), undefined, '3 of 7 = 0.43 < 0.5');
  t.equal(record(mixed, 'x', true, rate, 7), 'open', '4 of 8 = 0.5 trips');
});

t.test('breaker: the window forgets old failures', async (t) => {
  resetBreakers();
  const k = 'unit|window|-';
  t.equal(record(k, 'w', true, threshold, 0), undefined);
  t.equal(record(k, 'w', true, threshold, 400), undefined);
  t.equal(record(k, 'w', true, threshold, 1500), undefined, 'the failures at 0 and 400 are out of the 1000 ms window');
  t.match(snapshot().find((s) => s.key === k), { state: 'closed', failures: 1, requests: 1 });
  t.equal(record(k, 'w', true, threshold, 1600), undefined);
  t.equal(record(k, 'w', true, threshold, 2400), 'open', '1500, 1600, 2400 are within one window');
});

t.test('breaker: cooldown, one probe at a time, probe success closes', async (t) => {
  resetBreakers();
  const k = 'unit|probe-ok|-';
  for (let i = 0; i < 3; i++) record(k, 'p', true, threshold, 0);
  t.equal(state(k), 'open');
  t.equal(available(k, threshold, 499), false, 'cooling down');
  begin(k, 'p', threshold, 499);
  t.equal(state(k), 'open', 'an attempt during the cooldown is not a probe');
  t.equal(available(k, threshold, 500), true, 'the cooldown is over');
  begin(k, 'p', threshold, 500);
  t.equal(state(k), 'half_open', 'the next attempt is the probe');
  t.equal(available(k, threshold, 501), false, 'no second probe while one is in flight');
  t.equal(available(k, threshold, 5000), false, 'however long it takes');
  t.equal(record(k, 'p', false, threshold, 600), 'closed', 'the probe succeeded');
  t.match(snapshot().find((s) => s.key === k), { state: 'closed', failures: 0, requests: 0, opened_at: null, opens: 1 });
  t.equal(available(k, threshold, 601), true);
  t.equal(record(k, 'p', true, threshold, 700), undefined, 'the old failures were forgotten: one new failure does not reopen');
  t.equal(state(k), 'closed');
});

t.test('breaker: probe failure reopens for another cooldown', async (t) => {
  resetBreakers();
  const k = 'unit|probe-fail|-';
  for (let i = 0; i < 3; i++) record(k, 'p', true, threshold, 0);
  begin(k, 'p', threshold, 500);
  t.equal(record(k, 'p', true, threshold, 550), 'open', 'the probe failed');
  t.match(snapshot().find((s) => s.key === k), { state: 'open', opens: 2, opened_at: new Date(550).toISOString() });
  t.equal(available(k, threshold, 1049), false, 'the cooldown starts again from the failed probe');
  t.equal(available(k, threshold, 1050), true);
  begin(k, 'p', threshold, 1050);
  t.equal(state(k), 'half_open');
  t.equal(record(k, 'p', false, threshold, 1060), 'closed');
});

t.test('breaker: the latest 1,000 outcomes count, the failures among them as they come and go', async (t) => {
  // Nothing trips here (a rate of 1 over at least 10,000): only the counts are read.
  const counting: BreakerSettings = { failure_threshold: 1e9, failure_rate: 1, min_requests: 10_000, window_ms: 60_000, cooldown_ms: 1000 };
  const k = 'unit|ring|-';
  const counts = () => snapshot().find((s) => s.key === k)!;
  let changed = 0;
  for (let i = 0; i < 600; i++) if (record(k, 'ring', true, counting, i) !== undefined) changed++;
  t.equal(changed, 0, 'the circuit stays closed');
  t.same([counts().requests, counts().failures], [600, 600], 'room grows with the traffic');
  for (let i = 600; i < 1600; i++) record(k, 'ring', false, counting, i);
  t.same([counts().requests, counts().failures], [1000, 0], 'the failures left as the latest 1,000 came in');
  for (let i = 1600; i < 2000; i++) record(k, 'ring', i % 2 === 0, counting, i);
  t.same([counts().requests, counts().failures], [1000, 200], 'around the ring: the oldest go, one by one');
  record(k, 'ring', true, counting, 1300 + 60_000); // outcomes before 1300 are out of the window
  t.same([counts().requests, counts().failures], [701, 201], 'the window forgets outcomes older than window_ms');
  record(k, 'ring', false, counting, 10_000_000);
  t.same([counts().requests, counts().failures], [1, 0], 'and all of them after a long quiet');
  resetBreakers();
});

t.test('breaker: keys are provider + host + key fingerprint, never the key', async (t) => {
  const a = breakerKey({ provider: 'openai', customHost: 'http://h/v1', apiKey: 'sk-secret-a' });
  t.equal(a, breakerKey({ provider: 'openai', customHost: 'http://h/v1', apiKey: 'sk-secret-a', label: 'other', path: 'config.targets[3]' }), 'labels and paths do not matter');
  t.not(a, breakerKey({ provider: 'openai', customHost: 'http://h/v1', apiKey: 'sk-secret-b' }), 'another key');
  t.not(a, breakerKey({ provider: 'openai', customHost: 'http://g/v1', apiKey: 'sk-secret-a' }), 'another host');
  t.not(a, breakerKey({ provider: 'groq', customHost: 'http://h/v1', apiKey: 'sk-secret-a' }), 'another provider');
  t.notMatch(a, 'sk-secret-a');
  t.equal(breakerKey({ provider: 'openai' }), 'openai||-');
});

t.test('resetBreakers forgets every circuit', async (t) => {
  const k = 'unit|reset|-';
  for (let i = 0; i < 3; i++) record(k, 'r', true, threshold, 0);
  t.equal(available(k, threshold, 1), false);
  resetBreakers();
  t.equal(available(k, threshold, 1), true);
  t.same(snapshot(), []);
});
