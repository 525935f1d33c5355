/**
 * API keys of well-known providers, by the prefix and shape each issues (label API_KEY). Keys
 * are read as maximal runs of `[A-Za-z0-9_-]`, so a prefix only counts at the start of a run
 * (`task-…` is not `sk-…`), and each shape says how long the rest is and what it is made of.
 * Variable-length keys must mix letters and digits: a long hyphenated word after `sk-` is prose.
 */
import type { Finding } from '../../../../core/index.js';
import { isAsciiAlnum, isDigit, isAsciiLetter, isUpper } from '../char-classes.js';

interface KeyShape {
  provider: string;
  prefixes: ReadonlyArray<string>;
  /** Accepts the part after the prefix. */
  rest(rest: string): boolean;
}

const atLeast = (n: number) => (rest: string) => rest.length >= n && mixed(rest);
const exactly = (n: number, ok: (code: number) => boolean) => (rest: string) => rest.length === n && every(rest, ok);
const base64url = (c: number): boolean => isAsciiAlnum(c) || c === 0x2d || c === 0x5f;
const upperOrDigit = (c: number): boolean => isUpper(c) || isDigit(c);

/** First match wins: longer prefixes of one provider come before shorter ones. */
const SHAPES: ReadonlyArray<KeyShape> = [
  { provider: 'anthropic', prefixes: ['sk-ant-'], rest: atLeast(32) },
  { provider: 'openai', prefixes: ['sk-proj-', 'sk-svcacct-', 'sk-admin-', 'sk-'], rest: atLeast(20) },
  { provider: 'aws', prefixes: ['AKIA', 'ASIA'], rest: exactly(16, upperOrDigit) },
  { provider: 'github', prefixes: ['ghp_', 'gho_', 'ghs_', 'ghu_', 'ghr_'], rest: exactly(36, isAsciiAlnum) },
  { provider: 'github', prefixes: ['github_pat_'], rest: atLeast(22) },
  { provider: 'slack', prefixes: ['xoxb-', 'xoxp-', 'xoxa-', 'xoxr-', 'xoxs-', 'xapp-'], rest: atLeast(10) },
  { provider: 'google', prefixes: ['AIza'], rest: exactly(35, base64url) },
  { provider: 'gitlab', prefixes: ['glpat-'], rest: atLeast(20) },
  { provider: 'stripe', prefixes: ['sk_live_', 'rk_live_'], rest: atLeast(16) },
  // This gateway's own keys: `gw-` and 32 random bytes in base64url (core/store/api-key-hash.ts).
  { provider: 'gateway', prefixes: ['gw-'], rest: exactly(43, base64url) },
];

function every(s: string, ok: (code: number) => boolean): boolean {
  for (let i = 0; i < s.length; i++) if (!ok(s.charCodeAt(i))) return false;
  return true;
}

function mixed(s: string): boolean {
  let letter = false;
  let digit = false;
  for (let i = 0; i < s.length && !(letter && digit); i++) {
    const c = s.charCodeAt(i);
    if (isDigit(c)) digit = true;
    else if (isAsciiLetter(c)) letter = true;
  }
  return letter && digit;
}

export function isKeyChar(code: number): boolean {
  return base64url(code);
}

/** The provider whose key `run` is, or null. */
export function keyProvider(run: string): string | null {
  for (const shape of SHAPES) {
    for (const prefix of shape.prefixes) {
      if (run.startsWith(prefix)) {
        if (shape.rest(run.slice(prefix.length))) return shape.provider;
        break; // a longer prefix of this shape matched: shorter ones would misread the rest
      }
    }
  }
  return null;
}

export function findProviderKeys(text: string): Finding[] {
  const out: Finding[] = [];
  let i = 0;
  while (i < text.length) {
    if (!isKeyChar(text.charCodeAt(i))) {
      i++;
      continue;
    }
    let end = i;
    while (end < text.length && isKeyChar(text.charCodeAt(end))) end++;
    // Every shape starts with a letter; runs of a few characters cannot be keys.
    if (end - i >= 14 && isAsciiLetter(text.charCodeAt(i))) {
      if (keyProvider(text.slice(i, end)) !== null) out.push({ start: i, end, label: 'API_KEY' });
    }
    i = end;
  }
  return out;
}
