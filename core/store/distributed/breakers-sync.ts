/**
 * Circuit-breaker state shared across hosts through Valkey (distributed mode).
 *
 *   <prefix>breaker:s:<breaker key>   the open state {h, k, l, s, t} with PX = cooldown (hosts that start later read it)
 *   <prefix>breaker:f:<breaker key>   zset of failure times in the window, over every host
 *   <prefix>breakers                  pub/sub channel: open / closed / reset, as they happen
 *
 * Each host keeps its breakers in memory (core/router/breaker.ts) and reads only memory on the
 * request path. Valkey is told of what is rare: a circuit that opened or closed here, and each
 * failure seen while closed. The failure goes into the shared window by one script, which opens
 * the circuit for every host once the failures of all hosts reach `failure_threshold`; the
 * failure-rate rule stays per host (it needs every success, and successes never cost a round trip).
 *
 * Every host subscribes to the channel and applies what the others decided; after a reconnect it
 * reads the open states again, since messages sent while it was away are lost. While Valkey is
 * unreachable each host carries on with its own breakers; the faults count in
 * `gateway_shared_state_faults_total{kind="breaker"}` and the outage logs one warning.
 */
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Logger } from '../../logger.js';
import type { Distributed } from './connections.js';
import { Outage } from './faults.js';
import { applyRemote, forgetBreakers, shareBreakers, type BreakerSettings, type BreakerSync } from '../../router/breaker.js';

interface Message {
  /** The host that sent it (a host ignores its own). */
  h: string;
  s: 'open' | 'closed' | 'reset';
  k?: string;
  l?: string;
  /** Opened at (ms). */
  t?: number;
}

/**
 * KEYS: failures zset, state key. ARGV: now, window ms, threshold, cooldown ms, member, channel,
 * open message. Returns 1 when this failure opened the circuit for every host.
 */
const FAIL_SCRIPT = `
local now = tonumber(ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - tonumber(ARGV[2]))
redis.call('ZADD', KEYS[1], now, ARGV[5])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
if redis.call('EXISTS', KEYS[2]) == 1 then return 0 end
if redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[3]) then return 0 end
redis.call('SET', KEYS[2], ARGV[7], 'PX', ARGV[4])
redis.call('DEL', KEYS[1])
redis.call('PUBLISH', ARGV[6], ARGV[7])
return 1
`;

interface BreakerCommands {
  breakerFail(failures: string, state: string, now: number, window: number, threshold: number, cooldown: number, member: string, channel: string, message: string): Promise<number>;
}

/** Glob characters of a SCAN pattern, escaped (a key prefix may contain them). */
const globEscape = (s: string): string => s.replace(/[*?[\]\\]/g, '\\$&');

export interface SharedBreakers {
  close(): Promise<void>;
}

/**
 * Starts sharing this process's breakers through Valkey: subscribes, loads the open states, and
 * hooks into core/router/breaker.ts. `close()` undoes it.
 */
export function shareBreakersThrough(distributed: Distributed, log: Logger): SharedBreakers {
  const host = randomUUID();
  const redis = distributed.redis as Redis & Partial<BreakerCommands>;
  if (redis.breakerFail === undefined) redis.defineCommand('breakerFail', { numberOfKeys: 2, lua: FAIL_SCRIPT });
  const commands = redis as Redis & BreakerCommands;
  const outage = new Outage(distributed, 'breaker', log);
  const channel = distributed.key('breakers');
  const stateKey = (key: string): string => distributed.key(`breaker:s:${key}`);
  const failuresKey = (key: string): string => distributed.key(`breaker:f:${key}`);
  let closed = false;
  let sequence = 0;
  /** Circuits this host opened, until their cooldown ends: announced again after an outage. */
  const opens = new Map<string, { message: string; until: number }>();

  /** Runs `call` unless an outage says to skip it (then this host's own breakers carry on alone). */
  const send = (call: () => Promise<unknown>): void => {
    if (!outage.attempt()) return outage.skipped();
    call().then(
      () => outage.ok(),
      (err: unknown) => outage.fault(err),
    );
  };

  const apply = (m: Message): void => {
    if (m.h === host) return;
    if (m.s === 'reset') return forgetBreakers();
    if (typeof m.k !== 'string' || typeof m.l !== 'string') return;
    const changed = applyRemote(m.k, m.l, m.s, typeof m.t === 'number' ? m.t : Date.now());
    if (changed) log.warn(`circuit ${m.s} (another host)`, { target: m.l });
  };

  /** Open states another host set while this one was not listening (at start, after a reconnect). */
  const load = async (): Promise<void> => {
    try {
      let cursor = '0';
      do {
        const [next, keys] = await redis.scan(cursor, 'MATCH', `${globEscape(distributed.key('breaker:s:'))}*`, 'COUNT', 500);
        cursor = next;
        const values = keys.length > 0 ? await redis.mget(...keys) : [];
        for (const v of values) {
          if (v === null) continue;
          try {
            apply(JSON.parse(v) as Message);
          } catch {
            // Not ours: skip it.
          }
        }
      } while (cursor !== '0' && !closed);
      outage.ok();
    } catch (err) {
      outage.fault(err);
    }
  };

  const subscriber = distributed.subscriber();
  subscriber.on('message', (ch: string, text: string) => {
    if (ch !== channel) return;
    try {
      apply(JSON.parse(text) as Message);
    } catch {
      // A message this code did not write: ignore it.
    }
  });
  /** Tells every host that `key` is open until `until` (ms). */
  const announce = (key: string, message: string, until: number): Promise<unknown> =>
    Promise.all([redis.set(stateKey(key), message, 'PX', Math.max(1, until - Date.now())), redis.publish(channel, message)]);

  /** After an outage: the circuits this host opened meanwhile (alone), told to the others now. */
  const reannounce = async (): Promise<void> => {
    const now = Date.now();
    for (const [key, { message, until }] of opens) {
      if (until <= now) opens.delete(key);
      else await announce(key, message, until);
    }
  };

  // 'ready' comes at the first connect and after every reconnect (ioredis re-subscribes by itself).
  // The two connections come back in either order: catching up after each is harmless (an open
  // state applied twice changes nothing) and makes sure one of them finds both ready.
  const catchUp = (): void => {
    if (!closed) void load().then(reannounce).catch((err: unknown) => outage.fault(err));
  };
  subscriber.on('ready', catchUp);
  redis.on('ready', catchUp);
  void subscriber.subscribe(channel).catch((err: unknown) => outage.fault(err));

  const sync: BreakerSync = {
    opened(key: string, label: string, openedAt: number, settings: BreakerSettings) {
      const message = JSON.stringify({ h: host, s: 'open', k: key, l: label, t: openedAt } satisfies Message);
      const until = openedAt + Math.max(1, settings.cooldown_ms);
      opens.set(key, { message, until });
      send(() => announce(key, message, until));
    },
    closed(key: string, label: string) {
      opens.delete(key);
      const message = JSON.stringify({ h: host, s: 'closed', k: key, l: label } satisfies Message);
      send(() => Promise.all([redis.del(stateKey(key), failuresKey(key)), redis.publish(channel, message)]));
    },
    failed(key: string, label: string, at: number, settings: BreakerSettings) {
      const message = JSON.stringify({ h: host, s: 'open', k: key, l: label, t: at } satisfies Message);
      const member = `${host}:${++sequence}`;
      send(() =>
        commands
          .breakerFail(failuresKey(key), stateKey(key), at, settings.window_ms, settings.failure_threshold, Math.max(1, settings.cooldown_ms), member, channel, message)
          .then((opened) => {
            // The other hosts' failures and this one reached the threshold: open here too (the
            // message this script published is ignored here, being this host's own).
            if (opened === 1 && applyRemote(key, label, 'open', at)) log.warn('circuit open (failures over every host)', { target: label });
          }),
      );
    },
    reset() {
      const message = JSON.stringify({ h: host, s: 'reset' } satisfies Message);
      opens.clear();
      send(async () => {
        await redis.publish(channel, message);
        for (const pattern of ['breaker:s:', 'breaker:f:']) {
          let cursor = '0';
          do {
            const [next, keys] = await redis.scan(cursor, 'MATCH', `${globEscape(distributed.key(pattern))}*`, 'COUNT', 500);
            cursor = next;
            if (keys.length > 0) await redis.del(...keys);
          } while (cursor !== '0');
        }
      });
    },
  };
  const undo = shareBreakers(sync);

  return {
    async close() {
      closed = true;
      undo();
      redis.off('ready', catchUp);
      subscriber.disconnect();
    },
  };
}
