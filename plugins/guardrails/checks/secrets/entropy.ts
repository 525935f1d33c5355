/**
 * Unlabelled secrets: long runs of base64 / base64url characters (`[A-Za-z0-9+/_=-]`) that look
 * random (label SECRET). A run is one when it is at least `min_length` long, its Shannon entropy
 * is at least `min_entropy` bits per character, and it mixes at least two of upper case, lower
 * case and digits. Two kinds of strings pass those tests without being secrets, and are left out:
 *
 *  - hex (hashes, commit ids, UUIDs): a 16-symbol alphabet tops out at 4 bits per character,
 *    and they are everywhere in technical text. Hex-format keys are caught by prefix where they
 *    have one.
 *  - identifiers and paths (`AbstractSingletonProxyFactoryBean`, `node_modules/typescript/lib`,
 *    `my-deployment-7d4b9c8f6-x2k9p`): most of their letters sit in words of four letters or more
 *    (split at case changes and separators), where random text has only a few. A run with 60 %
 *    or more of its letters in such words is not reported.
 */
import type { Finding } from '../../../../core/index.js';
import { isAsciiLetter, isDigit, isHexDigit, isLower, isUpper } from '../char-classes.js';

export interface EntropyOptions {
  minEntropy: number;
  minLength: number;
}

/** Letters in words of this length or more make a run read as words. */
const WORD = 4;
const WORDY = 0.6;

function isRunChar(code: number): boolean {
  return isAsciiLetter(code) || isDigit(code) || code === 0x2b || code === 0x2f || code === 0x5f || code === 0x3d || code === 0x2d; // + / _ = -
}

export function findHighEntropy(text: string, options: EntropyOptions): Finding[] {
  const out: Finding[] = [];
  let i = 0;
  while (i < text.length) {
    if (!isRunChar(text.charCodeAt(i))) {
      i++;
      continue;
    }
    let end = i;
    while (end < text.length && isRunChar(text.charCodeAt(end))) end++;
    if (end - i >= options.minLength && looksRandom(text, i, end, options.minEntropy)) out.push({ start: i, end, label: 'SECRET' });
    i = end;
  }
  return out;
}

export function looksRandom(text: string, start: number, end: number, minEntropy: number): boolean {
  let upper = false;
  let lower = false;
  let digit = false;
  let hex = true;
  for (let i = start; i < end; i++) {
    const c = text.charCodeAt(i);
    if (isUpper(c)) upper = true;
    else if (isLower(c)) lower = true;
    else if (isDigit(c)) digit = true;
    if (!isHexDigit(c) && c !== 0x2d) hex = false;
  }
  if (hex || Number(upper) + Number(lower) + Number(digit) < 2) return false;
  return shannonEntropy(text, start, end) >= minEntropy && wordFraction(text, start, end) < WORDY;
}

/** Bits per character of `text[start, end)` (ASCII only, as runs are). */
export function shannonEntropy(text: string, start: number, end: number): number {
  const counts = new Uint32Array(128);
  for (let i = start; i < end; i++) counts[text.charCodeAt(i) & 0x7f]!++;
  const n = end - start;
  let bits = 0;
  for (const count of counts) {
    if (count === 0) continue;
    const p = count / n;
    bits -= p * Math.log2(p);
  }
  return bits;
}

/**
 * The share of letters that sit in words of {@link WORD} letters or more, words split at
 * non-letters, at lower→upper changes and before the last capital of an acronym (`HTTPServer`
 * is HTTP + Server).
 */
export function wordFraction(text: string, start: number, end: number): number {
  let letters = 0;
  let inWords = 0;
  let word = 0;
  const close = (): void => {
    if (word >= WORD) inWords += word;
    word = 0;
  };
  for (let i = start; i < end; i++) {
    const c = text.charCodeAt(i);
    if (!isAsciiLetter(c)) {
      close();
      continue;
    }
    letters++;
    if (word > 0 && isUpper(c)) {
      const prev = text.charCodeAt(i - 1);
      if (isLower(prev) || (i + 1 < end && isLower(text.charCodeAt(i + 1)))) close();
    }
    word++;
  }
  close();
  return letters === 0 ? 0 : inWords / letters;
}
