/**
 * The `Server-Timing` durations (core/response-writer.ts `millis`): three decimals, as
 * `toFixed(3)` writes them, for any duration a timer can measure.
 */
import t from 'tap';
import { millis } from '../core/response-writer.js';

t.test('millis writes a duration with three decimals', async (t) => {
  t.equal(millis(0), '0.000');
  t.equal(millis(1.5), '1.500');
  t.equal(millis(0.0004), '0.000', 'below half a µs rounds down');
  t.equal(millis(0.0006), '0.001');
  t.equal(millis(0.05), '0.050');
  t.equal(millis(12.3456), '12.346');
  t.equal(millis(999.9996), '1000.000', 'a carry into the whole ms');
  t.equal(millis(-0.2), '0.000', 'a negative difference of two clocks is no time');
  t.equal(millis(86_400_000.25), '86400000.250');
});

t.test('millis agrees with toFixed(3) on random durations', async (t) => {
  let worst = 0;
  for (let i = 0; i < 20_000; i++) {
    const ms = Math.random() * 10 ** Math.floor(Math.random() * 7);
    const ours = millis(ms);
    if (!/^\d+\.\d{3}$/.test(ours)) return t.fail(`${ms} → ${ours}`);
    // Both round to the µs; they may differ by one µs where the value sits on a half µs.
    worst = Math.max(worst, Math.abs(Number(ours) - Number(ms.toFixed(3))));
  }
  t.ok(worst <= 0.0010001, `at most one µs apart (${worst})`);
});
