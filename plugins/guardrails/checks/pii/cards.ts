/**
 * Payment card numbers: 13–19 digits, written together or in groups joined by single spaces or
 * single dashes (one kind per number; the first group four digits, the others three to six, as
 * cards print them: 4-4-4-4, 4-6-5, 4-4-4-4-3), that pass the Luhn checksum and start with a
 * prefix a card network issues at that length (ISO/IEC 7812 IIN ranges of Visa, Mastercard, Amex,
 * Discover, JCB, Diners, UnionPay, Maestro). The network check is what keeps timestamps and most
 * order numbers out: a random 16-digit number passes Luhn one time in ten.
 *
 * A number is read as a chain (groups joined by one kind of separator) that stands alone; the
 * card is the whole chain or, when one group of three or four digits follows (its CVC), the
 * chain without it. Digits inside a longer run or chain are never a card.
 */
import type { Finding } from '../../../../core/index.js';
import { digitAt, nextAt } from '../char-classes.js';
import { aloneAfter, aloneBefore, digitRun } from './boundaries.js';

/** Where a card could start. */
const DIGIT = /[0-9]/g;

/** Longest card as written: 19 digits and 4 separators (4-4-4-4-3). */
export const MAX_CARD_LENGTH = 23;

/**
 * What every card has, tested natively before any scanning: four digits, then at once or after one
 * separator three more (a chain's first group is four digits; an unbroken card has 13 or more).
 */
const MAYBE = /[0-9]{4}[ -]?[0-9]{3}/;

export function findCards(text: string): Finding[] {
  if (!MAYBE.test(text)) return [];
  const out: Finding[] = [];
  let i = 0;
  while (i < text.length) {
    if (!digitAt(text, i)) {
      i = nextAt(DIGIT, text, i);
      continue;
    }
    // Most numbers in text are short and alone: too few digits for a card, and no group after.
    const run = digitRun(text, i);
    const next = text[i + run];
    if (run < 13 && !((next === ' ' || next === '-') && digitAt(text, i + run + 1))) {
      i += run;
      continue;
    }
    const groups = chain(text, i);
    const last = groups[groups.length - 1]!;
    const chainEnd = last[1];
    // The chain is at most a card and a CVC when it counts, so both ends are within reach.
    if (aloneBefore(text, i, '.,') && aloneAfter(text, chainEnd, '.,')) {
      const card = cardIn(text, groups);
      if (card !== null) out.push({ start: i, end: card, label: 'CREDIT_CARD' });
    }
    i = chainEnd;
  }
  return out;
}

/** Digit groups from `i` joined by one kind of single separator (space or dash). */
function chain(text: string, i: number): Array<[number, number]> {
  const groups: Array<[number, number]> = [];
  let sep = '';
  let at = i;
  for (;;) {
    const end = at + digitRun(text, at);
    groups.push([at, end]);
    const next = text[end];
    if ((next !== ' ' && next !== '-') || !digitAt(text, end + 1) || (sep !== '' && next !== sep)) break;
    sep = next;
    at = end + 1;
  }
  return groups;
}

/**
 * Where the card that starts the chain ends, or null: the whole chain, or all of it but a last
 * group of three or four digits (a CVC). A longer chain is some other number.
 */
function cardIn(text: string, groups: ReadonlyArray<[number, number]>): number | null {
  const whole = cardOfGroups(text, groups);
  if (whole !== null || groups.length < 2) return whole;
  const [start, end] = groups[groups.length - 1]!;
  return end - start === 3 || end - start === 4 ? cardOfGroups(text, groups.slice(0, -1)) : null;
}

/** The end of `groups` when together they are a card number written as cards print it. */
function cardOfGroups(text: string, groups: ReadonlyArray<[number, number]>): number | null {
  const sizes = groups.map(([s, e]) => e - s);
  if (groups.length > 1 && (sizes[0] !== 4 || sizes.slice(1).some((n) => n < 3 || n > 6))) return null;
  if (sizes.reduce((a, b) => a + b, 0) > 19) return null;
  const digits = groups.map(([s, e]) => text.slice(s, e)).join('');
  return isCardNumber(digits) ? groups[groups.length - 1]![1] : null;
}

export function isCardNumber(digits: string): boolean {
  return digits.length >= 13 && digits.length <= 19 && issued(digits) && luhn(digits);
}

/** The Luhn (mod 10) checksum of ISO/IEC 7812-1. */
export function luhn(digits: string): boolean {
  let sum = 0;
  for (let i = digits.length - 1, double = false; i >= 0; i--, double = !double) {
    let d = digits.charCodeAt(i) - 0x30;
    if (double) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return sum % 10 === 0;
}

/** [first prefix, last prefix (same number of digits), lengths] of the IIN ranges networks issue. */
const RANGES: ReadonlyArray<[number, number, ReadonlyArray<number>]> = [
  [4, 4, [13, 16, 19]], // Visa
  [51, 55, [16]], // Mastercard
  [2221, 2720, [16]], // Mastercard 2-series
  [34, 34, [15]], // American Express
  [37, 37, [15]],
  [6011, 6011, [16, 17, 18, 19]], // Discover
  [644, 649, [16, 17, 18, 19]],
  [65, 65, [16, 17, 18, 19]],
  [3528, 3589, [16, 17, 18, 19]], // JCB
  [300, 305, [14, 15, 16, 17, 18, 19]], // Diners Club
  [36, 36, [14, 15, 16, 17, 18, 19]],
  [38, 39, [16, 17, 18, 19]],
  [62, 62, [16, 17, 18, 19]], // UnionPay
  [50, 50, [13, 14, 15, 16, 17, 18, 19]], // Maestro
  [56, 58, [13, 14, 15, 16, 17, 18, 19]],
  [6304, 6304, [13, 14, 15, 16, 17, 18, 19]],
  [6759, 6759, [13, 14, 15, 16, 17, 18, 19]],
  [6761, 6763, [13, 14, 15, 16, 17, 18, 19]],
];

function issued(digits: string): boolean {
  for (const [low, high, lengths] of RANGES) {
    const width = String(low).length;
    const prefix = Number(digits.slice(0, width));
    if (prefix >= low && prefix <= high && lengths.includes(digits.length)) return true;
  }
  return false;
}
