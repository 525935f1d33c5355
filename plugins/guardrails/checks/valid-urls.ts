/**
 * `default.validUrls`: every URL in the text is well formed. No DNS lookups and no requests: a
 * guardrail that resolved names from model output would let that output make the gateway query
 * any name (and wait on it); so this is a syntax check (WHATWG URL, as browsers and undici parse)
 * with http(s) only and a plausible host (a dot, `localhost`, or an IP literal).
 *
 * A URL is found where `://` is: the scheme before it, the address up to a space, a quote or
 * `<>`, less trailing punctuation (`.`, `,`, a `)` that closes nothing in the URL, …). Each
 * invalid one is a span (INVALID_URL) that can be redacted.
 */
import { defineCheck, type Finding } from '../../../core/index.js';
import { isAsciiAlnum, isAsciiLetter } from './char-classes.js';
import { pieces } from './spans.js';

export interface ValidUrlsParams {
  only_https?: boolean;
  /** The reference gateway's option (check DNS only); accepted and ignored: nothing is resolved here. */
  onlyDNS?: boolean;
}

/** Longest URL accepted (and so the longest span): browsers and servers refuse much longer ones. */
export const MAX_URL_LENGTH = 2048;
const MAX_SCHEME_LENGTH = 32;

interface UrlCandidate {
  start: number;
  end: number;
  valid: boolean;
}

export function scanUrls(text: string, onlyHttps: boolean): UrlCandidate[] {
  const out: UrlCandidate[] = [];
  let from = 0;
  for (;;) {
    const sep = text.indexOf('://', from);
    if (sep === -1) break;
    let start = sep;
    while (start > 0 && sep - start < MAX_SCHEME_LENGTH && isSchemeChar(text.charCodeAt(start - 1))) start--;
    while (start < sep && !isAsciiLetter(text.charCodeAt(start))) start++;
    let end = sep + 3;
    while (end < text.length && !stopsUrl(text.charCodeAt(end))) end++;
    from = end;
    if (start === sep) continue; // `://` with no scheme: not a URL
    end = trimTrailing(text, start, end);
    const length = end - start;
    out.push({ start, end, valid: length <= MAX_URL_LENGTH && isValidUrl(text.slice(start, end), onlyHttps) });
  }
  return out;
}

function isSchemeChar(code: number): boolean {
  return isAsciiAlnum(code) || code === 0x2b || code === 0x2d || code === 0x2e; // + - .
}

/** Whitespace, controls, quotes and angle brackets end a URL in text. */
const STOPS = new Set([0x7f, 0x22, 0x27, 0x3c, 0x3e, 0x60, 0x85, 0xa0, 0x2028, 0x2029, 0x3000]); // DEL " ' < > ` and Unicode spaces

function stopsUrl(code: number): boolean {
  return code <= 0x20 || STOPS.has(code);
}

/** Sentence punctuation after a URL is not part of it; nor is a closing bracket it never opened. */
function trimTrailing(text: string, start: number, end: number): number {
  const opened: Record<string, number> = { ')': 0, ']': 0, '}': 0 };
  const closed: Record<string, number> = { ')': 0, ']': 0, '}': 0 };
  const pairs: Record<string, string> = { '(': ')', '[': ']', '{': '}' };
  for (let i = start; i < end; i++) {
    const c = text[i]!;
    if (c in pairs) opened[pairs[c]!]!++;
    else if (c in closed) closed[c]!++;
  }
  while (end > start) {
    const c = text[end - 1]!;
    if ('.,;:!?*'.includes(c)) {
      end--;
    } else if (c in closed) {
      // Balanced (`…/Foo_(bar)`) stays; an unmatched closer (`(see https://x.com)`) goes.
      if (closed[c]! <= opened[c]!) break;
      closed[c]!--;
      end--;
    } else {
      break;
    }
  }
  return end;
}

const LABEL = /^[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?$/;

export function isValidUrl(candidate: string, onlyHttps: boolean): boolean {
  let url: URL;
  try {
    url = new URL(candidate);
  } catch {
    return false;
  }
  if (url.protocol !== 'https:' && (onlyHttps || url.protocol !== 'http:')) return false;
  const host = url.hostname;
  if (host === 'localhost' || host.startsWith('[')) return true; // `[…]`: an IPv6 literal WHATWG accepted
  if (!host.includes('.')) return false;
  // WHATWG turned a numeric host into dotted IPv4 already; names get the RFC 1123 label rule.
  return host.split('.').every((label) => LABEL.test(label));
}

export const validUrls = defineCheck<ValidUrlsParams>({
  id: 'default.validUrls',
  description: 'Passes when every URL in the text is well formed: http or https (https only with only_https), a host with a dot, localhost or an IP. Syntax only: no DNS lookups, no requests. Each invalid URL is a span that can be redacted.',
  parameters: {
    type: 'object',
    properties: { only_https: { type: 'boolean' }, onlyDNS: { type: 'boolean' } },
    additionalProperties: false,
  },
  find(text, p) {
    const out: Finding[] = [];
    for (const c of scanUrls(text, p.only_https === true)) if (!c.valid) out.push(...pieces(c.start, c.end, MAX_URL_LENGTH, 'INVALID_URL'));
    return out;
  },
  maxMatch: () => MAX_URL_LENGTH,
  run(ctx, p) {
    const urls = scanUrls(ctx.text, p.only_https === true);
    const invalid = urls.filter((u) => !u.valid).length;
    return {
      verdict: invalid === 0,
      explanation: invalid === 0 ? `All ${urls.length} URLs are well formed.` : `${invalid} of ${urls.length} URLs are not well formed.`,
      data: { urls: urls.length, invalid },
    };
  },
});
