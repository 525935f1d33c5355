/**
 * Request and record ids (core/store/ids.ts): UUIDv7 as RFC 9562 lays it out, in time order, and
 * strictly increasing within this process, also within one millisecond and across the random
 * pool's refills.
 */
import t from 'tap';
import { isUuid, uuidv7 } from '../core/store/ids.js';

const V7 = /^([0-9a-f]{8})-([0-9a-f]{4})-7([0-9a-f]{3})-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

t.test('the layout: 48-bit time, version 7, the sequence, the variant, random bits', async (t) => {
  const now = Date.UTC(2026, 10, 27, 10, 0, 0, 123);
  const id = uuidv7(now);
  const m = V7.exec(id);
  t.ok(m, `${id} is a version 7 UUID with the RFC variant`);
  t.ok(isUuid(id));
  t.equal(parseInt(m![1]! + m![2]!, 16), now, 'the first 48 bits are the millisecond timestamp (11 hex digits today, zero-padded to 12)');
});

t.test('strictly increasing, within a millisecond and across refills of the random pool', async (t) => {
  const now = Date.now() + 1000;
  const ids = Array.from({ length: 5000 }, () => uuidv7(now));
  t.equal(new Set(ids).size, ids.length, 'no id repeats');
  let sorted = true;
  for (let i = 1; i < ids.length; i++) if (!(ids[i - 1]! < ids[i]!)) sorted = false;
  t.ok(sorted, 'each id sorts after the one before (4,096 per millisecond, then the next millisecond)');
  t.ok(ids.every((id) => V7.test(id)));
  const seqs = ids.slice(0, 3).map((id) => parseInt(V7.exec(id)![3]!, 16));
  t.same(seqs.slice(1).map((s, i) => s - seqs[i]!), [1, 1], 'ids of one millisecond count up in the sequence field');
  const later = uuidv7(now - 10_000);
  t.ok(later > ids.at(-1)!, 'a clock that steps back does not break the order');
  const randoms = new Set(ids.map((id) => id.slice(19)));
  t.ok(randoms.size > 4990, 'the random part differs between ids');
});
