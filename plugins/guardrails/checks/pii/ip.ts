/**
 * IP addresses: dotted-quad IPv4 (exactly four parts, so version numbers such as 1.2.3 and
 * 1.2.3.4.5 are not addresses) and IPv6 in any form `node:net` accepts (compressed, with an
 * embedded IPv4 tail), as long as it has a digit and two colons — so `::`, C++'s `a::b` and
 * clock times (`12:30:45`, not IPv6) stay out. A dotted quad that is a version number
 * ("version 1.2.3.4") cannot be told from an address and is reported.
 *
 * Candidates are the maximal runs of hex digits, dots and colons that no letter, digit or `_`
 * touches, each read once.
 */
import { isIP } from 'node:net';
import type { Finding } from '../../../../core/index.js';
import { isDigit, isHexDigit, isWordCharAt, nextAt } from '../char-classes.js';

/** `ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255`. */
export const MAX_IP_LENGTH = 45;

/** What every address has. */
const ANCHOR = /[0-9:]/g;

function maybeAddress(text: string, start: number, end: number): boolean {
  let dots = 0;
  let colons = 0;
  for (let i = start; i < end; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x2e) dots++;
    else if (c === 0x3a) colons++;
  }
  return dots >= 3 || colons >= 2;
}

function isRunChar(code: number): boolean {
  return isHexDigit(code) || code === 0x2e || code === 0x3a; // . :
}

/** What every address has: a dotted quad's `d.d.d.d`, or two colons with at most four hex digits between. */
const MAYBE = /[0-9]\.[0-9]{1,3}\.[0-9]{1,3}\.[0-9]|:[0-9A-Fa-f]{0,4}:/;

export function findIps(text: string): Finding[] {
  if (!MAYBE.test(text)) return [];
  const out: Finding[] = [];
  let i = 0;
  while (i < text.length) {
    // Every address has a digit or a colon: find the next one natively, then its whole run.
    const anchor = nextAt(ANCHOR, text, i);
    if (anchor >= text.length) break;
    let start = anchor;
    while (start > i && isRunChar(text.charCodeAt(start - 1))) start--;
    let end = anchor;
    while (end < text.length && isRunChar(text.charCodeAt(end))) end++;
    i = end;
    if (end - start > MAX_IP_LENGTH + 1 || isWordCharAt(text, start - 1) || isWordCharAt(text, end)) continue;
    // An address has three dots or two colons: most runs (a word of hex letters, a number) have neither.
    if (!maybeAddress(text, start, end)) continue;
    const found = address(text, start, end);
    if (found !== null) out.push({ start, end: found, label: 'IP_ADDRESS' });
  }
  return out;
}

/** Where the address that is the run `[start, end)` ends (one trailing `.` or `:` may be punctuation), or null. */
function address(text: string, start: number, end: number): number | null {
  for (const stop of [end, end - 1]) {
    if (stop <= start) break;
    if (stop < end && text[stop] !== '.' && text[stop] !== ':') break;
    const candidate = text.slice(start, stop);
    if (candidate.includes(':')) {
      if (isIP(candidate) === 6 && hasDigit(candidate) && candidate.indexOf(':') !== candidate.lastIndexOf(':')) return stop;
    } else if (isIP(candidate) === 4) {
      return stop;
    }
  }
  return null;
}

function hasDigit(s: string): boolean {
  for (let i = 0; i < s.length; i++) if (isDigit(s.charCodeAt(i))) return true;
  return false;
}
