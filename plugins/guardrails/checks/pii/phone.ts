/**
 * Phone numbers in the two forms that are recognisable without a country's numbering plan:
 *
 *   international  +CC then digit groups joined by single spaces, dashes or dots, with at most
 *                  one group in parentheses: `+44 20 7946 0958`, `+1 (202) 555-0143`,
 *                  `+49 (0)30 1234567`, `+14155552671`; 7–15 digits in all (E.164), 8 or more
 *                  when written as one run.
 *   North America  NXX-NXX-XXXX with one kind of separator (`202-555-0143`, `202.555.0143`,
 *                  `202 555 0143`), `(202) 555-0143`, each optionally after `1-`/`1 `/`1.`;
 *                  area code and exchange start with 2–9.
 *
 * Ten bare digits and seven-digit local numbers are left out: they are as likely ids, amounts or
 * codes. The number must stand alone (no letter, digit or digit-joining punctuation around it).
 */
import type { Finding } from '../../../../core/index.js';
import { digitAt, nextAt } from '../char-classes.js';
import { aloneAfter, aloneBefore, digitRun } from './boundaries.js';

/** Longest phone number as written: 15 digits and their separators, with a bracketed group. */
export const MAX_PHONE_LENGTH = 40;

/** Where a phone number could start. */
const START = /[0-9+(]/g;

/** What every phone number this finds has: `+` and a digit, `(NXX)`, or `NXX` then a separator and `NXX`. */
const MAYBE = /\+[0-9]|\([0-9]{3}\)|[0-9]{3}[-. ][0-9]{3}/;

export function findPhones(text: string): Finding[] {
  if (!MAYBE.test(text)) return [];
  const out: Finding[] = [];
  let i = nextAt(START, text, 0);
  while (i < text.length) {
    const c = text[i];
    let end: number | null = null;
    if ((c === '+' || c === '(' || digitAt(text, i)) && aloneBefore(text, i) && text[i - 1] !== '+') {
      end = c === '+' ? international(text, i) : northAmerican(text, i);
    }
    if (end !== null && aloneAfter(text, end)) {
      out.push({ start: i, end, label: 'PHONE' });
      i = end;
    } else {
      i = nextAt(START, text, i + (digitAt(text, i) ? Math.max(1, digitRun(text, i)) : 1));
    }
  }
  return out;
}

/** `+CC …`: where it ends, or null. */
function international(text: string, start: number): number | null {
  let at = start + 1;
  if (!digitAt(text, at) || text[at] === '0') return null;
  let digits = 0;
  let groups = 0;
  let bracketed = false;
  for (;;) {
    if (digitAt(text, at)) {
      const run = digitRun(text, at);
      digits += run;
      groups++;
      at += run;
    } else if (text[at] === '(' && !bracketed && groups > 0) {
      const run = digitRun(text, at + 1);
      if (run < 1 || run > 4 || text[at + 1 + run] !== ')') return null;
      digits += run;
      groups++;
      bracketed = true;
      at += run + 2;
    } else {
      return null;
    }
    if (digits > 15) return null;
    // Next: one separator and another group; or, with no separator, a bracket after digits
    // (`+1(202)…`) or digits after the bracket (`(0)30`).
    const next = text[at];
    if ((next === ' ' || next === '-' || next === '.') && (digitAt(text, at + 1) || (text[at + 1] === '(' && !bracketed))) {
      at++;
      continue;
    }
    if ((next === '(' && !bracketed) || (digitAt(text, at) && text[at - 1] === ')')) continue;
    break;
  }
  if (digits < 7 || (groups === 1 && digits < 8)) return null;
  return at;
}

/** `(NXX) NXX-XXXX`, `NXX-NXX-XXXX` (one kind of separator), optionally after `1-`: where it ends, or null. */
function northAmerican(text: string, start: number): number | null {
  let at = start;
  // Trunk prefix: "1-202-…", "1 (202) …".
  if (text[at] === '1' && !digitAt(text, at + 1) && ' -.'.includes(text[at + 1] ?? 'x') && (digitAt(text, at + 2) || text[at + 2] === '(')) at += 2;
  if (text[at] === '(') {
    if (digitRun(text, at + 1) !== 3 || text[at + 4] !== ')' || !nxx(text, at + 1)) return null;
    at += 5;
    if (text[at] === ' ') at++;
    if (digitRun(text, at) !== 3 || !nxx(text, at)) return null;
    at += 3;
    if (text[at] !== '-' && text[at] !== '.' && text[at] !== ' ') return null;
  } else {
    if (digitRun(text, at) !== 3 || !nxx(text, at)) return null;
    const sep = text[at + 3] ?? '';
    if (sep !== '-' && sep !== '.' && sep !== ' ') return null;
    at += 4;
    if (digitRun(text, at) !== 3 || !nxx(text, at) || text[at + 3] !== sep) return null;
    at += 3;
  }
  at++;
  if (digitRun(text, at) !== 4) return null;
  return at + 4;
}

/** A North-American area code or exchange: three digits, the first 2–9. */
function nxx(text: string, at: number): boolean {
  return text[at] !== '0' && text[at] !== '1';
}
