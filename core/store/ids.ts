/**
 * Identifiers: UUIDv7 (time-ordered, so an id index lists oldest to newest and a reverse scan
 * gives newest first without a second index), slugs from names.
 */
import { randomBytes } from 'node:crypto';

let lastMs = 0;
let seq = 0;
// Random bytes drawn in blocks: every request id is a UUIDv7 now, and one randomBytes() call per
// id would be a syscall-sized cost on the hot path (randomUUID pools its entropy the same way).
// Each id takes the 8 random bytes of its second half (the first half is time and sequence).
const POOL_SIZE = 8 * 1024;
let pool = randomBytes(POOL_SIZE);
let offset = 0;

/** The two hex digits of each byte, as character codes: `HEX[2b]`, `HEX[2b + 1]`. */
const HEX = new Uint8Array(512);
for (let b = 0; b < 256; b++) {
  const h = b.toString(16).padStart(2, '0');
  HEX[2 * b] = h.charCodeAt(0);
  HEX[2 * b + 1] = h.charCodeAt(1);
}
/** Where each of the 16 bytes' two digits go in the 36 characters (the dashes stay in place). */
const AT = [0, 2, 4, 6, 9, 11, 14, 16, 19, 21, 24, 26, 28, 30, 32, 34];
/** The id is written here and read out as one flat string: no Buffer, hex string or slices per id. */
const TEXT = Buffer.from('00000000-0000-0000-0000-000000000000', 'latin1');

function put(i: number, byte: number): void {
  const at = AT[i]!;
  TEXT[at] = HEX[2 * byte]!;
  TEXT[at + 1] = HEX[2 * byte + 1]!;
}

/**
 * A UUIDv7 (RFC 9562): 48-bit ms timestamp, then random bits; monotonic within this process.
 * On the request path (every request's id): about a third of the cost of formatting a Buffer's
 * hex and slicing it (micro-benchmark in bench/HISTORY.md, thirteenth session).
 */
export function uuidv7(now = Date.now()): string {
  if (now <= lastMs) {
    now = lastMs;
    seq = (seq + 1) & 0xfff;
    if (seq === 0) now = ++lastMs;
  } else seq = 0;
  lastMs = now;
  if (offset + 8 > POOL_SIZE) {
    pool = randomBytes(POOL_SIZE);
    offset = 0;
  }
  // 48 bits of milliseconds, big-endian: the high 16 bits, then the low 32.
  const high = Math.floor(now / 0x1_0000_0000);
  const low = now >>> 0;
  put(0, (high >>> 8) & 0xff);
  put(1, high & 0xff);
  put(2, low >>> 24);
  put(3, (low >>> 16) & 0xff);
  put(4, (low >>> 8) & 0xff);
  put(5, low & 0xff);
  put(6, 0x70 | ((seq >> 8) & 0x0f));
  put(7, seq & 0xff);
  put(8, (pool[offset]! & 0x3f) | 0x80);
  for (let i = 9; i < 16; i++) put(i, pool[offset + i - 8]!);
  offset += 8;
  return TEXT.toString('latin1', 0, 36);
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const isUuid = (s: string): boolean => UUID.test(s);

/** `My Team Key!` → `my-team-key-3f9a1c`: readable, unique enough, safe in a URL path. */
export function slugify(name: string, suffix = true): string {
  const base = name
    .toLowerCase()
    .normalize('NFKD')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 40);
  const tail = randomBytes(3).toString('hex');
  return suffix ? `${base || 'item'}-${tail}` : base || `item-${tail}`;
}

/**
 * Longest id, slug or name a caller may use to look something up (path ids, `workspace_id`,
 * `x-gateway-virtual-key`, a saved config's slug). Every stored id and slug is far shorter; the
 * bound turns an oversized lookup into a 400 before it reaches the store, whose keys are limited
 * (LMDB: about 1978 bytes).
 */
export const MAX_ID_LENGTH = 255;
/** Longest raw credential header (`x-gateway-api-key`): keys are short, signed JWTs can reach a few KB. */
export const MAX_RAW_KEY_LENGTH = 8192;

export const nowIso = (): string => new Date().toISOString();

/** Years 0–9999: the range where an ISO time is `YYYY-MM-DDTHH:MM:SS.mmmZ` (beyond it, ±YYYYYY). */
const PLAIN_ISO_END = 253_402_300_800_000;
let minuteStart = Number.NaN;
let minutePrefix = '';

/**
 * `new Date(ms).toISOString()` for a time on the request path (a log record's `created_at`):
 * the minute's `YYYY-MM-DDTHH:MM:` is formatted once and the seconds appended, about a tenth of
 * the cost of formatting the whole date (~0.5 µs) on every request.
 */
export function isoTime(ms: number): string {
  const t = Math.trunc(ms);
  if (!(t >= 0 && t < PLAIN_ISO_END)) return new Date(t).toISOString();
  const within = t % 60_000;
  const minute = t - within;
  if (minute !== minuteStart) {
    minutePrefix = new Date(minute).toISOString().slice(0, 17);
    minuteStart = minute;
  }
  const s = Math.floor(within / 1000);
  const milli = within - s * 1000;
  return `${minutePrefix}${s < 10 ? '0' : ''}${s}.${milli < 100 ? (milli < 10 ? '00' : '0') : ''}${milli}Z`;
}
