/**
 * When a number found in text stands on its own: the detectors accept a card, an SSN or a phone
 * number only where it is not a piece of something longer (a longer digit run, a decimal, a
 * product code), which is most of what keeps prices, dates and order numbers out.
 */
import { alnumAt, digitAt } from '../char-classes.js';

/**
 * True when no letter or digit touches `[start, end)`, and no joiner (`.`, `,`, `-`, `/` by
 * default) links it to another digit on either side (`3.14159…`, `1,234`, `12-34-…`).
 */
export function standsAlone(text: string, start: number, end: number, joiners = '.,-/'): boolean {
  return aloneBefore(text, start, joiners) && aloneAfter(text, end, joiners);
}

/** The left half of {@link standsAlone}. */
export function aloneBefore(text: string, start: number, joiners = '.,-/'): boolean {
  if (alnumAt(text, start - 1)) return false;
  return !(start >= 2 && joiners.includes(text[start - 1]!) && digitAt(text, start - 2));
}

/** The right half of {@link standsAlone}. */
export function aloneAfter(text: string, end: number, joiners = '.,-/'): boolean {
  if (alnumAt(text, end)) return false;
  return !(end + 1 < text.length && joiners.includes(text[end]!) && digitAt(text, end + 1));
}

/** The length of the run of digits starting at `i` (0 when `text[i]` is not a digit). */
export function digitRun(text: string, i: number): number {
  let j = i;
  while (digitAt(text, j)) j++;
  return j - i;
}
