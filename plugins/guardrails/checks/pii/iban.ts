/**
 * IBANs (ISO 13616): a country code, two check digits and the BBAN, written together
 * (`DE89370400440532013000`) or in groups of four joined by single spaces
 * (`DE89 3704 0044 0532 0130 00`, the print format). A candidate must have exactly its country's
 * length and pass `ibantools`' validation: the mod-97 checksum, the country's BBAN format, and
 * the national check digits where the country has them.
 */
import { countrySpecs, isValidIBAN } from 'ibantools';
import type { Finding } from '../../../../core/index.js';
import { alnumAt, digitAt, isAsciiAlnum, isUpper, nextAt } from '../char-classes.js';

/** Longest IBAN as printed: 34 characters and 8 spaces. */
export const MAX_IBAN_LENGTH = 42;

/** Where an IBAN could start: two capitals and two digits (a lookahead, so overlapping starts are all seen). */
const START = /[A-Z](?=[A-Z][0-9]{2})/g;

/** What every IBAN starts with. */
const MAYBE = /[A-Z]{2}[0-9]{2}/;

export function findIbans(text: string): Finding[] {
  if (!MAYBE.test(text)) return [];
  const out: Finding[] = [];
  for (let i = nextAt(START, text, 0); i + 4 <= text.length; i = nextAt(START, text, i + 1)) {
    if (!isUpper(text.charCodeAt(i)) || !isUpper(text.charCodeAt(i + 1)) || !digitAt(text, i + 2) || !digitAt(text, i + 3)) continue;
    if (alnumAt(text, i - 1)) continue;
    const length = countrySpecs[text.slice(i, i + 2)]?.chars;
    if (length === undefined) continue;
    const end = compactEnd(text, i, length) ?? groupedEnd(text, i, length);
    if (end === null) continue;
    const iban = text.slice(i, end).replaceAll(' ', '').toUpperCase();
    if (!isValidIBAN(iban)) continue;
    out.push({ start: i, end, label: 'IBAN' });
    i = end - 1;
  }
  return out;
}

/** `DE89370400440532013000`: a run of exactly `length` letters and digits. */
function compactEnd(text: string, i: number, length: number): number | null {
  const end = i + length;
  if (end > text.length) return null;
  for (let j = i + 4; j < end; j++) if (!isAsciiAlnum(text.charCodeAt(j))) return null;
  return alnumAt(text, end) ? null : end;
}

/** `DE89 3704 0044 0532 0130 00`: groups of four, the last one shorter if the length says so. */
function groupedEnd(text: string, i: number, length: number): number | null {
  let at = i + 4;
  let count = 4;
  while (count < length) {
    if (text[at] !== ' ') return null;
    let size = 0;
    while (size < 4 && alnumAt(text, at + 1 + size)) size++;
    count += size;
    at += 1 + size;
    if (size === 0 || count > length || (size < 4 && count < length)) return null;
  }
  return alnumAt(text, at) ? null : at;
}
