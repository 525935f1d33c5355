/**
 * The governance scripts against a real redis-server: all or nothing across several keys, GCRA
 * burst and refill, a give-back never overfills a cell, budget reserve/settle arithmetic, stale
 * reservations age out; and what one governance script costs over loopback.
 */
import t from 'tap';
import { Redis } from 'ioredis';
import { needServices } from './helpers/services.js';
import {
  RESERVATION_BUCKET_MS,
  RESERVATION_BUCKETS,
  settleGovernance,
  takeGovernance,
  type BudgetTake,
  type RateTake,
} from '../core/store/distributed/governance-scripts.js';
import { budgetValkeyKey, resetBudgetUsage } from '../core/store/distributed/governance-budgets.js';
import type { Distributed } from '../core/store/distributed/connections.js';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

t.test('governance scripts', async (t) => {
  const svc = needServices(t, ['redis']);
  if (!svc) return;
  const server = await svc.redis();
  const redis = new Redis(server.url, { maxRetriesPerRequest: 0 });
  t.teardown(() => redis.disconnect());
  let n = 0;
  const key = (name: string): string => `test:${++n}:${name}`;

  t.test('all or nothing across several rate cells and budgets', async (t) => {
    const a = key('a');
    const b = key('b');
    const c = key('c');
    const budget = key('budget');
    const rates: RateTake[] = [
      { key: a, cost: 1, emissionMs: 1000, burst: 10 },
      { key: b, cost: 1, emissionMs: 1000, burst: 10 },
      { key: c, cost: 1, emissionMs: 60_000, burst: 1 },
    ];
    const first = await takeGovernance(redis, rates, [{ key: budget, reserve: 2, limit: 10, expireAt: 0, seed: 0 }]);
    t.ok(first.ok, 'every counter has room: taken');
    t.ok(Number(await redis.get(a)) > 0 && Number(await redis.get(b)) > 0 && Number(await redis.get(c)) > 0, 'three TATs written');
    const [tatA, tatB] = [await redis.get(a), await redis.get(b)];
    const second = await takeGovernance(redis, rates, [{ key: budget, reserve: 2, limit: 10, expireAt: 0, seed: 0 }]);
    t.notOk(second.ok, 'the 1-per-minute cell refuses');
    t.equal(second.failed, 2, 'the refusing counter is named');
    t.ok(second.retryAfterMs > 55_000 && second.retryAfterMs <= 60_000, 'retry after about a minute');
    t.equal(await redis.get(a), tatA, 'cell a untouched');
    t.equal(await redis.get(b), tatB, 'cell b untouched');
    t.equal(second.budgets[0]!.reserved, 2, 'the budget kept only the first reservation');
    // A budget that refuses leaves the rate cells as they were.
    const other = key('budget');
    const third = await takeGovernance(redis, rates.slice(0, 2), [
      { key: budget, reserve: 1, limit: 10, expireAt: 0, seed: 0 },
      { key: other, reserve: 11, limit: 10, expireAt: 0, seed: 0 },
    ]);
    t.notOk(third.ok);
    t.equal(third.failed, 3, 'budgets are numbered after the rate cells');
    t.equal(await redis.get(a), tatA, 'a refused budget takes no rate cell');
    t.equal(Number(await redis.hget(budget, `r:${third.bucket}`)), 2, 'nor another budget');
    t.equal(await redis.exists(other), 0, 'nor itself');
  });

  t.test('GCRA: a burst of `burst`, then one unit per emission interval', async (t) => {
    const cell = key('gcra');
    const take = (): Promise<boolean> => takeGovernance(redis, [{ key: cell, cost: 1, emissionMs: 200, burst: 5 }], []).then((r) => r.ok);
    for (let i = 0; i < 5; i++) t.ok(await take(), `burst ${i + 1}`);
    const refused = await takeGovernance(redis, [{ key: cell, cost: 1, emissionMs: 200, burst: 5 }], []);
    t.notOk(refused.ok, 'the sixth is refused');
    t.ok(refused.retryAfterMs > 0 && refused.retryAfterMs <= 200, 'retry within one interval');
    await sleep(refused.retryAfterMs + 30);
    t.ok(await take(), 'one unit refilled');
    t.notOk(await take(), 'only one');
    const ttl = await redis.pttl(cell);
    t.ok(ttl > 0 && ttl <= 1000, 'the key expires when the cell is full again');
    // Exactness: 7 takes of 1/7 of a minute fit a 7-per-minute cell, an 8th does not.
    const seventh = key('gcra7');
    let passed = 0;
    for (let i = 0; i < 8; i++) if ((await takeGovernance(redis, [{ key: seventh, cost: 1, emissionMs: 60_000 / 7, burst: 7 }], [])).ok) passed++;
    t.equal(passed, 7, 'float intervals fit exactly');
  });

  t.test('a give-back never fills a cell beyond full', async (t) => {
    const cell = key('tokens');
    const spec = { key: cell, cost: 600, emissionMs: 60, burst: 1000 };
    t.ok((await takeGovernance(redis, [spec], [])).ok, 'an estimate of 600 tokens reserved');
    await settleGovernance(redis, [{ key: cell, delta: -5000, emissionMs: 60 }], []);
    t.equal(await redis.exists(cell), 0, 'a give-back larger than the take empties the cell (full)');
    t.ok((await takeGovernance(redis, [{ ...spec, cost: 1000 }], [])).ok, 'a full burst passes');
    t.notOk((await takeGovernance(redis, [{ ...spec, cost: 1 }], [])).ok, 'and nothing more: the give-back did not overfill');
    await settleGovernance(redis, [{ key: cell, delta: 50, emissionMs: 60 }], []);
    const tat = Number(await redis.get(cell));
    t.ok(tat > Date.now() + 1000 * 60, 'a positive correction (usage above the estimate) moves the TAT further');
  });

  t.test('budgets: reserve, settle, refuse when the reservation does not fit', async (t) => {
    const b = key('budget');
    const take = (reserve: number): Promise<Awaited<ReturnType<typeof takeGovernance>>> => takeGovernance(redis, [], [{ key: b, reserve, limit: 10, expireAt: 0, seed: 0 }]);
    const r1 = await take(4);
    const r2 = await take(4);
    t.ok(r1.ok && r2.ok, 'two reservations of 4 fit a limit of 10');
    t.same(r2.budgets[0], { used: 0, reserved: 8 });
    t.notOk((await take(4)).ok, '0 + 8 + 4 > 10: refused');
    const [used] = await settleGovernance(redis, [], [{ key: b, reserved: 4, bucket: r1.bucket, actual: 3, expireAt: 0 }]);
    t.equal(used, 3, 'settled: the real spend is charged');
    const r3 = await take(3);
    t.ok(r3.ok, '3 + 4 + 3 = 10 fits exactly');
    t.same(r3.budgets[0], { used: 3, reserved: 7 });
    t.notOk((await take(0.5)).ok, 'nothing more fits');
    await settleGovernance(redis, [], [{ key: b, reserved: 4, bucket: r2.bucket, actual: 0, expireAt: 0 }]);
    const after = await take(0);
    t.same(after.budgets[0], { used: 3, reserved: 3 }, 'a cancelled request gives its reservation back and charges nothing');
    await settleGovernance(redis, [], [{ key: b, reserved: 3, bucket: r3.bucket, actual: 7.5, expireAt: 0 }]);
    const over = await take(0);
    t.same(over.budgets[0], { used: 10.5, reserved: 0 }, 'a request spending beyond its reservation is charged in full');
    t.notOk(over.ok, 'a budget used up refuses even a zero reservation');
    // A settle after an admin reset (HDEL u) charges the fresh counter; a reservation never goes negative.
    await redis.hdel(b, 'u');
    await settleGovernance(redis, [], [{ key: b, reserved: 3, bucket: r3.bucket, actual: 1, expireAt: 0 }]);
    t.same((await take(0)).budgets[0], { used: 1, reserved: 0 });
  });

  t.test('a reservation whose host never settled ages out', async (t) => {
    const b = key('budget');
    const now = Number((await redis.time())[0]) * 1000;
    const stale = Math.floor(now / RESERVATION_BUCKET_MS) - RESERVATION_BUCKETS;
    await redis.hset(b, `r:${stale}`, '9', `r:${stale + 1}`, '0.5');
    const r = await takeGovernance(redis, [], [{ key: b, reserve: 5, limit: 10, expireAt: 0, seed: 0 }]);
    t.ok(r.ok, 'the stale reservation no longer counts');
    t.equal(r.budgets[0]!.reserved, 5.5, 'the one still young does');
    t.equal(await redis.hexists(b, `r:${stale}`), 0, 'and the stale one is dropped');
  });

  t.test('a budget Valkey lost is seeded from the host mirror; a reset is zero, not lost', async (t) => {
    // The key the gateway uses for a counter, under this test's own prefix.
    const d = { redis, key: (name: string) => `test:seed:${name}` } as unknown as Distributed;
    const b = budgetValkeyKey(d, 'lifetime');
    const take = (reserve: number, seed: number): ReturnType<typeof takeGovernance> => takeGovernance(redis, [], [{ key: b, reserve, limit: 10, expireAt: 0, seed }]);
    // Valkey restarted empty: the mirror says 8 of 10 were spent, so a reservation of 3 no longer fits.
    const lost = await take(3, 8);
    t.notOk(lost.ok, 'the seeded spend counts');
    t.equal(lost.budgets[0]!.used, 8);
    t.equal(await redis.hget(b, 'u'), '8', 'and is written back');
    // Once Valkey holds the total, a (stale) mirror no longer matters.
    const held = await take(2, 1);
    t.ok(held.ok);
    t.equal(held.budgets[0]!.used, 8, 'the stored total wins over the seed');
    // A reset writes u = 0: the next take's seed (a mirror from before the reset) cannot undo it.
    await resetBudgetUsage(d, ['lifetime']);
    t.equal(await redis.hget(b, 'u'), '0', 'a reset writes zero');
    const afterReset = await take(3, 8);
    t.ok(afterReset.ok, 'a reset stays a reset');
    t.equal(afterReset.budgets[0]!.used, 0);
  });

  t.test('periodic budgets expire after their period; cumulative ones do not', async (t) => {
    const periodic = key('budget');
    const cumulative = key('budget');
    const at = Date.now() + 3_600_000;
    await takeGovernance(redis, [], [
      { key: periodic, reserve: 1, limit: 10, expireAt: at, seed: 0 },
      { key: cumulative, reserve: 1, limit: 10, expireAt: 0, seed: 0 },
    ] satisfies BudgetTake[]);
    const ttl = await redis.pttl(periodic);
    t.ok(ttl > 3_500_000 && ttl <= 3_600_000, 'expires when asked');
    t.equal(await redis.pttl(cumulative), -1, 'never expires');
  });

  t.test('what one governance script costs over loopback', async (t) => {
    const rates: RateTake[] = [
      { key: key('bench-a'), cost: 1, emissionMs: 0.001, burst: 1e9 },
      { key: key('bench-b'), cost: 10, emissionMs: 0.001, burst: 1e9 },
    ];
    const budgets: BudgetTake[] = [{ key: key('bench-c'), reserve: 0.001, limit: 1e12, expireAt: 0, seed: 0 }];
    for (let i = 0; i < 200; i++) await takeGovernance(redis, rates, budgets);
    const samples: number[] = [];
    for (let i = 0; i < 2000; i++) {
      const start = process.hrtime.bigint();
      await takeGovernance(redis, rates, budgets);
      samples.push(Number(process.hrtime.bigint() - start) / 1000);
    }
    samples.sort((x, y) => x - y);
    const p50 = samples[Math.floor(samples.length * 0.5)]!;
    const p99 = samples[Math.floor(samples.length * 0.99)]!;
    t.comment(`governance take (2 rate cells + 1 budget), loopback: p50 ${p50.toFixed(0)} µs, p99 ${p99.toFixed(0)} µs`);
    t.ok(samples.length === 2000, 'measured');
  });
});
