/**
 * Character tests shared by the hand-written scanners (PII, secrets, word search). Each looks at
 * one UTF-16 code unit (plus its pair, for the Unicode ones), so scanners built on them read every
 * character a bounded number of times: linear, with no regex backtracking to reason about.
 */

/** `0`–`9`. */
export function isDigit(code: number): boolean {
  return code >= 0x30 && code <= 0x39;
}

/** ASCII letter. */
export function isAsciiLetter(code: number): boolean {
  return (code >= 0x41 && code <= 0x5a) || (code >= 0x61 && code <= 0x7a);
}

export function isUpper(code: number): boolean {
  return code >= 0x41 && code <= 0x5a;
}

export function isLower(code: number): boolean {
  return code >= 0x61 && code <= 0x7a;
}

/** ASCII letter or digit. */
export function isAsciiAlnum(code: number): boolean {
  return isDigit(code) || isAsciiLetter(code);
}

export function isHexDigit(code: number): boolean {
  return isDigit(code) || (code >= 0x41 && code <= 0x46) || (code >= 0x61 && code <= 0x66);
}

const WORD = /^[\p{L}\p{N}\p{M}_]$/u;

/**
 * A word character in any script (letters, digits, combining marks, `_`), judged on the code
 * point at `i`; a low surrogate is judged with its high half. False outside the string.
 */
export function isWordCharAt(text: string, i: number): boolean {
  if (i < 0 || i >= text.length) return false;
  const code = text.charCodeAt(i);
  if (code < 0x80) return isAsciiAlnum(code) || code === 0x5f;
  const cp = text.codePointAt(i >= 1 && code >= 0xdc00 && code <= 0xdfff ? i - 1 : i) ?? code;
  return WORD.test(String.fromCodePoint(cp));
}

/** The character at `i` is an ASCII letter or digit (false outside the string). */
export function alnumAt(text: string, i: number): boolean {
  return i >= 0 && i < text.length && isAsciiAlnum(text.charCodeAt(i));
}

/** The character at `i` is a digit (false outside the string). */
export function digitAt(text: string, i: number): boolean {
  return i >= 0 && i < text.length && isDigit(text.charCodeAt(i));
}

/**
 * The index of the next match of `pattern` (a sticky-free /g regex of single characters) at or
 * after `from`, or the text's length: lets a scanner skip what cannot start a finding at native
 * speed instead of one JS call per character.
 */
export function nextAt(pattern: RegExp, text: string, from: number): number {
  pattern.lastIndex = from;
  const m = pattern.exec(text);
  return m === null ? text.length : m.index;
}
