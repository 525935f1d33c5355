/**
 * E-mail addresses: a practical subset of RFC 5322 — a dot-atom local part of letters, digits and
 * `. _ % + -` (at most 64 characters, no leading, trailing or doubled dot), `@`, and a domain of
 * at least two LDH labels (RFC 1123) ending in an alphabetic TLD or a punycode one. Quoted local
 * parts, comments and IP-literal domains are left out: they do not occur in the text people and
 * models write.
 *
 * Found from each `@`: the local part is read backwards (at most 65 characters) and the domain
 * forwards (at most 254), and neither read crosses another `@`, so every character is read at
 * most twice. A span is at most 64 + 1 + 253 characters.
 */
import type { Finding } from '../../../../core/index.js';
import { isAsciiAlnum, isAsciiLetter } from '../char-classes.js';

const MAX_LOCAL = 64;
const MAX_DOMAIN = 253;
export const MAX_EMAIL_LENGTH = MAX_LOCAL + 1 + MAX_DOMAIN;

function isLocalChar(code: number): boolean {
  return isAsciiAlnum(code) || code === 0x2e || code === 0x5f || code === 0x25 || code === 0x2b || code === 0x2d; // . _ % + -
}

function isDomainChar(code: number): boolean {
  return isAsciiAlnum(code) || code === 0x2d || code === 0x2e; // - .
}

export function findEmails(text: string): Finding[] {
  const out: Finding[] = [];
  for (let at = text.indexOf('@'); at !== -1; at = text.indexOf('@', at + 1)) {
    let start = at;
    while (start > 0 && at - start <= MAX_LOCAL && isLocalChar(text.charCodeAt(start - 1))) start--;
    if (at - start > MAX_LOCAL) continue; // a longer run: not a local part
    while (start < at && text.charCodeAt(start) === 0x2e) start++; // "see...john@" → "john@"
    if (start === at) continue;
    const local = text.slice(start, at);
    if (local.endsWith('.') || local.includes('..')) continue;

    let end = at + 1;
    while (end < text.length && end - at - 1 <= MAX_DOMAIN && isDomainChar(text.charCodeAt(end))) end++;
    if (end - at - 1 > MAX_DOMAIN) continue;
    // A sentence may end right after the address: "write to a@b.com."
    while (end > at + 1 && (text[end - 1] === '.' || text[end - 1] === '-')) end--;
    if (!isDomain(text.slice(at + 1, end))) continue;
    out.push({ start, end, label: 'EMAIL' });
  }
  return out;
}

function isDomain(domain: string): boolean {
  const labels = domain.split('.');
  if (labels.length < 2) return false;
  for (const label of labels) {
    if (label.length === 0 || label.length > 63 || label.startsWith('-') || label.endsWith('-')) return false;
  }
  const tld = labels[labels.length - 1]!;
  if (tld.startsWith('xn--')) return tld.length > 4;
  if (tld.length < 2) return false;
  for (let i = 0; i < tld.length; i++) if (!isAsciiLetter(tld.charCodeAt(i))) return false;
  return true;
}
