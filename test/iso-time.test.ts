/**
 * `isoTime` (core/store/ids.ts) formats a log record's `created_at` from a cached minute prefix:
 * it must give exactly what `Date.prototype.toISOString` gives, at every millisecond, across
 * minute, hour, day and year boundaries, for fractional times and out of the plain range.
 */
import t from 'tap';
import fc from 'fast-check';
import { isoTime } from '../core/store/ids.js';

const reference = (ms: number): string => new Date(Math.trunc(ms)).toISOString();

t.test('boundaries', async (t) => {
  const edges = [
    0,
    59_999,
    60_000,
    Date.UTC(2026, 11, 31, 23, 59, 59, 999),
    Date.UTC(2027, 0, 1, 0, 0, 0, 0),
    Date.UTC(2028, 1, 29, 12, 0, 9, 5),
    Date.UTC(9999, 11, 31, 23, 59, 59, 999),
    Date.UTC(9999, 11, 31, 23, 59, 59, 999) + 1,
    -1,
    1_795_729_750_123.987,
  ];
  for (const ms of edges) t.equal(isoTime(ms), reference(ms), `${ms}`);
  // The same minute again after another minute: the prefix cache must follow the time, not the order.
  const a = Date.UTC(2026, 10, 26, 10, 0, 1, 2);
  const b = Date.UTC(2026, 10, 26, 10, 1, 1, 2);
  for (const ms of [a, b, a, b + 59_000, a]) t.equal(isoTime(ms), reference(ms));
});

t.test('any time (property)', async (t) => {
  fc.assert(
    fc.property(fc.double({ min: -8.64e15, max: 8.64e15, noNaN: true }), (ms) => isoTime(ms) === reference(ms)),
    { numRuns: 20_000 },
  );
  // Times near now, in order and out of order, as requests finish.
  fc.assert(
    fc.property(fc.array(fc.integer({ min: 0, max: 3_600_000 }), { minLength: 1, maxLength: 50 }), (offsets) => offsets.every((o) => isoTime(1_795_729_750_000 + o) === reference(1_795_729_750_000 + o))),
    { numRuns: 2_000 },
  );
  t.pass('every time formatted as toISOString formats it');
});
