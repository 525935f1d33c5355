/**
 * The two Lua scripts that hold every governance counter of distributed mode in Valkey: one takes
 * (before the upstream call), one settles (after the answer). Each runs atomically in Valkey, so
 * every host sees one order of takes, and uses Valkey's clock (`TIME`), so host clocks never
 * matter.
 *
 *   take    KEYS = rate cells…, budget hashes…   one round trip per request, all or nothing:
 *           rate cell   GCRA, the same arithmetic as core/store/counters.ts (a TAT per key, PX = until full)
 *           budget      hash { u: settled spend, r:<bucket>: reserved in flight }; admits when the
 *                       reservation fits: u + reserved + this reservation ≤ limit
 *   settle  KEYS = token cells…, budget hashes…   after the answer (batched, never awaited by a client):
 *           rate cell   TAT += delta × emission (a give-back never fills a cell beyond full)
 *           budget      r:<bucket> −= reservation, u += the real spend; returns the new u
 *
 * A budget hash without its `u` field was lost by Valkey (a restart without persistence): the take
 * seeds it with the host's replicated mirror of the total (`seed`), so a lifetime budget does not
 * start again from zero; a reset writes `u = 0` explicitly, never deletes it, so a reset is never
 * undone by a seed.
 *
 * Reservations sit in per-minute buckets of the budget's hash: a host killed between take and
 * settle never gives its reservation back, so a bucket older than RESERVATION_BUCKETS minutes is
 * dropped at the next take of that budget (the pinned amount ages out instead of staying forever).
 *
 * Numbers cross as strings: Valkey turns a Lua number into an integer reply, and `%.17g` keeps a
 * TAT of ~1.7e12 ms exact to the fraction GCRA's epsilon needs.
 */
import type { Redis } from 'ioredis';

/** A reservation ages out after this many whole buckets (one a minute): longer than any request. */
export const RESERVATION_BUCKET_MS = 60_000;
export const RESERVATION_BUCKETS = 15;

const TAKE = `
local n = tonumber(ARGV[1])
local m = tonumber(ARGV[2])
local bucketMs = tonumber(ARGV[3])
local kept = tonumber(ARGV[4])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local eps = 1e-3
local olds, nexts = {}, {}
local retry, failed = 0, -1
for i = 1, n do
  local o = 4 + 3 * (i - 1)
  local cost, em, burst = tonumber(ARGV[o + 1]), tonumber(ARGV[o + 2]), tonumber(ARGV[o + 3])
  local stored = redis.call('GET', KEYS[i])
  local tat = now
  if stored then tat = tonumber(stored) end
  olds[i] = tat
  local nt = math.max(tat, now) + cost * em
  local wait
  if cost > burst then wait = 1e300 else wait = nt - burst * em - now end
  if wait > eps and wait > retry then
    retry = wait
    failed = i
  end
  nexts[i] = nt
end
local bo = 4 + 3 * n
local bucket = math.floor(now / bucketMs)
local used, held = {}, {}
local bfailed = -1
for j = 1, m do
  local key = KEYS[n + j]
  local o = bo + 4 * (j - 1)
  local reserve, limit = tonumber(ARGV[o + 1]), tonumber(ARGV[o + 2])
  local fields = redis.call('HGETALL', key)
  local u, r = 0, 0
  local hasU = false
  for k = 1, #fields, 2 do
    local f = fields[k]
    if f == 'u' then
      hasU = true
      u = tonumber(fields[k + 1])
    elseif string.sub(f, 1, 2) == 'r:' then
      if tonumber(string.sub(f, 3)) <= bucket - kept then
        redis.call('HDEL', key, f)
      else
        r = r + tonumber(fields[k + 1])
      end
    end
  end
  local seed = tonumber(ARGV[o + 4])
  if (not hasU) and seed > 0 then
    u = seed
    redis.call('HSET', key, 'u', ARGV[o + 4])
    local expireAt = tonumber(ARGV[o + 3])
    if expireAt > 0 then redis.call('PEXPIREAT', key, expireAt) end
  end
  used[j], held[j] = u, r
  local fits
  if reserve > 0 then fits = u + r + reserve <= limit + 1e-9 else fits = u + r < limit end
  if (not fits) and bfailed == -1 then bfailed = j end
end
local out = {}
if failed == -1 and bfailed == -1 then
  for i = 1, n do
    local o = 4 + 3 * (i - 1)
    if tonumber(ARGV[o + 1]) ~= 0 then
      redis.call('SET', KEYS[i], string.format('%.17g', nexts[i]), 'PX', math.max(1, math.ceil(nexts[i] - now)))
    end
  end
  for j = 1, m do
    local o = bo + 4 * (j - 1)
    local reserve, expireAt = tonumber(ARGV[o + 1]), tonumber(ARGV[o + 3])
    if reserve > 0 then
      redis.call('HINCRBYFLOAT', KEYS[n + j], 'r:' .. bucket, ARGV[o + 1])
      held[j] = held[j] + reserve
    end
    if expireAt > 0 and reserve > 0 then redis.call('PEXPIREAT', KEYS[n + j], expireAt) end
  end
  out[1] = 1
  out[2] = -1
  for i = 1, n do out[4 + i] = string.format('%.17g', nexts[i]) end
else
  out[1] = 0
  if failed ~= -1 then out[2] = failed - 1 else out[2] = n + bfailed - 1 end
  for i = 1, n do out[4 + i] = string.format('%.17g', olds[i]) end
end
out[3] = string.format('%.17g', retry)
out[4] = tostring(now)
for j = 1, m do
  out[4 + n + 2 * j - 1] = string.format('%.17g', used[j])
  out[4 + n + 2 * j] = string.format('%.17g', held[j])
end
out[4 + n + 2 * m + 1] = tostring(bucket)
return out
`;

const SETTLE = `
local n = tonumber(ARGV[1])
local m = tonumber(ARGV[2])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
for i = 1, n do
  local o = 2 + 2 * (i - 1)
  local delta, em = tonumber(ARGV[o + 1]), tonumber(ARGV[o + 2])
  if delta ~= 0 then
    local stored = redis.call('GET', KEYS[i])
    local tat = now
    if stored then tat = tonumber(stored) end
    local nt = math.max(tat, now) + delta * em
    if nt <= now then
      redis.call('DEL', KEYS[i])
    else
      redis.call('SET', KEYS[i], string.format('%.17g', nt), 'PX', math.max(1, math.ceil(nt - now)))
    end
  end
end
local bo = 2 + 2 * n
local out = {}
for j = 1, m do
  local key = KEYS[n + j]
  local o = bo + 4 * (j - 1)
  local reserved, bucket, actual, expireAt = tonumber(ARGV[o + 1]), ARGV[o + 2], tonumber(ARGV[o + 3]), tonumber(ARGV[o + 4])
  if reserved > 0 then
    local f = 'r:' .. bucket
    local cur = redis.call('HGET', key, f)
    if cur then
      local left = tonumber(cur) - reserved
      if left <= 1e-9 then redis.call('HDEL', key, f) else redis.call('HSET', key, f, string.format('%.17g', left)) end
    end
  end
  local u
  if actual > 0 then
    u = redis.call('HINCRBYFLOAT', key, 'u', ARGV[o + 3])
    if expireAt > 0 then redis.call('PEXPIREAT', key, expireAt) end
  else
    u = redis.call('HGET', key, 'u') or '0'
  end
  out[j] = u
end
return out
`;

/** A rate cell to take from (the same shape as the LMDB counters' take). */
export interface RateTake {
  key: string;
  cost: number;
  emissionMs: number;
  burst: number;
}

/** A budget to reserve from: `reserve` (0 = admit while any headroom is left) against `limit`. */
export interface BudgetTake {
  key: string;
  reserve: number;
  limit: number;
  /** When the key may expire (ms since epoch, the end of a periodic budget's period), or 0: never. */
  expireAt: number;
  /** The spend this host last saw (its replicated mirror): the total when Valkey lost the counter; 0 = none. */
  seed: number;
}

export interface TakeReply {
  ok: boolean;
  /** Index of the refusing counter: rates first, then budgets (-1 when ok). */
  failed: number;
  retryAfterMs: number;
  /** Valkey's clock, ms since epoch. */
  now: number;
  /** Each cell's TAT after the take (or as it stands, when refused). */
  tats: number[];
  /** Each budget's settled spend and reserved total (including this take when ok). */
  budgets: Array<{ used: number; reserved: number }>;
  /** The reservation bucket this take used: settle gives the reservation back from it. */
  bucket: string;
}

export interface RateSettle {
  key: string;
  delta: number;
  emissionMs: number;
}

export interface BudgetSettle {
  key: string;
  reserved: number;
  bucket: string;
  actual: number;
  expireAt: number;
}

interface GovernanceRedis {
  gwGovTake(numKeys: number, ...args: Array<string | number>): Promise<string[] | number[]>;
  gwGovSettle(numKeys: number, ...args: Array<string | number>): Promise<string[]>;
}

const defined = new WeakSet<Redis>();

/**
 * Registers both scripts on the client once (ioredis runs them by EVALSHA, loading on NOSCRIPT).
 * Before the first pipeline: a pipeline knows the commands defined when it was made.
 */
export function defineGovernanceScripts(redis: Redis): void {
  if (defined.has(redis)) return;
  redis.defineCommand('gwGovTake', { lua: TAKE });
  redis.defineCommand('gwGovSettle', { lua: SETTLE });
  defined.add(redis);
}

function commands(redis: Redis): GovernanceRedis {
  defineGovernanceScripts(redis);
  return redis as unknown as GovernanceRedis;
}

/**
 * Takes every rate cell and reserves every budget, or nothing.
 *
 * @example
 *   const r = await takeGovernance(redis, [{ key: 'gw:gov:r:pol:1', cost: 1, emissionMs: 600, burst: 100 }], []);
 */
export async function takeGovernance(redis: Redis, rates: ReadonlyArray<RateTake>, budgets: ReadonlyArray<BudgetTake>): Promise<TakeReply> {
  const raw = await commands(redis).gwGovTake(rates.length + budgets.length, ...takeArgs(rates, budgets));
  return parseTakeReply(raw, rates.length, budgets.length);
}

/** The same take, queued on a pipeline (several requests' takes in one socket write); parse its reply with {@link parseTakeReply}. */
export function takeOnPipeline(pipeline: ReturnType<Redis['pipeline']>, rates: ReadonlyArray<RateTake>, budgets: ReadonlyArray<BudgetTake>): void {
  (pipeline as unknown as GovernanceRedis).gwGovTake(rates.length + budgets.length, ...takeArgs(rates, budgets));
}

function takeArgs(rates: ReadonlyArray<RateTake>, budgets: ReadonlyArray<BudgetTake>): Array<string | number> {
  const args: Array<string | number> = [];
  for (const r of rates) args.push(r.key);
  for (const b of budgets) args.push(b.key);
  args.push(rates.length, budgets.length, RESERVATION_BUCKET_MS, RESERVATION_BUCKETS);
  for (const r of rates) args.push(r.cost, r.emissionMs, r.burst);
  for (const b of budgets) args.push(b.reserve, b.limit, b.expireAt, b.seed);
  return args;
}

/** The take script's reply, for `n` rate cells and `m` budgets. */
export function parseTakeReply(reply: ReadonlyArray<string | number>, n: number, m: number): TakeReply {
  const raw = reply.map(String);
  const tats: number[] = new Array<number>(n);
  for (let i = 0; i < n; i++) tats[i] = Number(raw[4 + i]);
  const out: TakeReply['budgets'] = new Array(m);
  for (let j = 0; j < m; j++) out[j] = { used: Number(raw[4 + n + 2 * j]), reserved: Number(raw[5 + n + 2 * j]) };
  return {
    ok: raw[0] === '1',
    failed: Number(raw[1]),
    retryAfterMs: Number(raw[2]) >= 1e299 ? Infinity : Number(raw[2]),
    now: Number(raw[3]),
    tats,
    budgets: out,
    bucket: raw[4 + n + 2 * m]!,
  };
}

/** Applies token corrections and settles budgets; resolves to each budget's new settled spend. */
export async function settleGovernance(redis: Redis, rates: ReadonlyArray<RateSettle>, budgets: ReadonlyArray<BudgetSettle>): Promise<number[]> {
  const args: Array<string | number> = [];
  pushSettleArgs(args, rates, budgets);
  return (await commands(redis).gwGovSettle(rates.length + budgets.length, ...args)).map(Number);
}

/** The same settle, queued on a pipeline (several requests' settles in one round trip). */
export function settleOnPipeline(pipeline: ReturnType<Redis['pipeline']>, rates: ReadonlyArray<RateSettle>, budgets: ReadonlyArray<BudgetSettle>): void {
  const args: Array<string | number> = [];
  pushSettleArgs(args, rates, budgets);
  (pipeline as unknown as GovernanceRedis).gwGovSettle(rates.length + budgets.length, ...args);
}

function pushSettleArgs(args: Array<string | number>, rates: ReadonlyArray<RateSettle>, budgets: ReadonlyArray<BudgetSettle>): void {
  for (const r of rates) args.push(r.key);
  for (const b of budgets) args.push(b.key);
  args.push(rates.length, budgets.length);
  for (const r of rates) args.push(r.delta, r.emissionMs);
  for (const b of budgets) args.push(b.reserved, b.bucket, b.actual, b.expireAt);
}
