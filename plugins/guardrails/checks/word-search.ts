/**
 * A multi-word search in one pass (Aho–Corasick), for `default.contains`.
 *
 * Why not one big RE2 alternation: the word list may hold 1,000 words of up to 256 characters,
 * far past the 512-character bound on patterns, and a trie built once reads each character of
 * the text once (plus fail-link steps that are paid for by earlier steps), whatever the list.
 *
 *   words ──▶ trie (goto) ──▶ fail links (BFS) ──▶ dictionary links (nearest word on the fail chain)
 *   text  ──▶ one walk; at each position, the words ending there: the node's, then its dictionary chain
 *
 * Every word ending at one position is a suffix of the longest one, so the dictionary chain holds
 * words of distinct lengths: at most 256 entries, and only walked where a word ends and (with word
 * boundaries) the position is a boundary. Case-insensitive search folds each UTF-16 unit on its
 * own (`toLowerCase` where that keeps one unit), so positions in the folded text are positions in
 * the original.
 */
import { isWordCharAt } from './char-classes.js';

export interface WordSearchOptions {
  caseSensitive: boolean;
  /** A word must not be part of a longer word: no word character right before or after it. */
  wordBoundary: boolean;
}

/**
 * Called for each occurrence: `text.slice(start, end)` is `words[word]` (up to case). Numbers,
 * not an object: a hostile list can make millions of calls on a long text.
 */
export type OnWord = (start: number, end: number, word: number) => boolean | void;

export class WordSearch {
  /** Edges by `node * 0x10000 + unit`; one map rather than one per node (up to 256k nodes). */
  readonly #goto = new Map<number, number>();
  readonly #fail: number[] = [0];
  /** The word (its first index in the list) that ends at a node, or -1. */
  readonly #wordAt: number[] = [-1];
  /** The nearest node on the fail chain where a word ends, or -1. */
  readonly #dict: number[] = [-1];
  readonly #lengths: number[];
  readonly #options: WordSearchOptions;
  /**
   * For each word, the index of the first word it is the same as (up to case, when folding):
   * hits name that one.
   */
  readonly canonical: number[] = [];

  constructor(words: ReadonlyArray<string>, options: WordSearchOptions) {
    this.#options = options;
    this.#lengths = words.map((w) => w.length);
    words.forEach((word, index) => {
      let node = 0;
      for (let i = 0; i < word.length; i++) {
        const key = node * 0x10000 + this.#unit(word.charCodeAt(i));
        let child = this.#goto.get(key);
        if (child === undefined) {
          child = this.#fail.length;
          this.#fail.push(0);
          this.#wordAt.push(-1);
          this.#dict.push(-1);
          this.#goto.set(key, child);
        }
        node = child;
      }
      if (this.#wordAt[node] === -1) this.#wordAt[node] = index;
      this.canonical.push(this.#wordAt[node]!);
    });
    this.#link();
  }

  /**
   * Calls `onHit` for each occurrence that passes the boundary rule, by end position, longest
   * first at each end. Stops early when `onHit` returns false.
   */
  scan(text: string, onHit: OnWord): void {
    let node = 0;
    for (let i = 0; i < text.length; i++) {
      node = this.#step(node, this.#unit(text.charCodeAt(i)));
      let at = this.#wordAt[node] !== -1 ? node : this.#dict[node]!;
      if (at === -1) continue;
      const end = i + 1;
      // Every word ending here ends with the same character, so the end rule is judged once.
      if (this.#options.wordBoundary && isWordCharAt(text, end - 1) && isWordCharAt(text, end)) continue;
      for (; at !== -1; at = this.#dict[at]!) {
        const word = this.#wordAt[at]!;
        const start = end - this.#lengths[word]!;
        if (this.#options.wordBoundary && isWordCharAt(text, start) && isWordCharAt(text, start - 1)) continue;
        if (onHit(start, end, word) === false) return;
      }
    }
  }

  #unit(code: number): number {
    if (this.#options.caseSensitive) return code;
    if (code < 0x80) return code >= 0x41 && code <= 0x5a ? code + 0x20 : code;
    const lower = String.fromCharCode(code).toLowerCase();
    return lower.length === 1 ? lower.charCodeAt(0) : code;
  }

  #step(node: number, unit: number): number {
    for (;;) {
      const child = this.#goto.get(node * 0x10000 + unit);
      if (child !== undefined) return child;
      if (node === 0) return 0;
      node = this.#fail[node]!;
    }
  }

  /** Fail and dictionary links, breadth first (a node's links point at shallower nodes). */
  #link(): void {
    const children = new Map<number, Array<[number, number]>>(); // node → [unit, child]
    for (const [key, child] of this.#goto) {
      const parent = Math.floor(key / 0x10000);
      let list = children.get(parent);
      if (list === undefined) children.set(parent, (list = []));
      list.push([key % 0x10000, child]);
    }
    const queue: number[] = [0];
    for (let head = 0; head < queue.length; head++) {
      const node = queue[head]!;
      for (const [unit, child] of children.get(node) ?? []) {
        queue.push(child);
        if (node !== 0) {
          let f = this.#fail[node]!;
          for (;;) {
            const next = this.#goto.get(f * 0x10000 + unit);
            if (next !== undefined) {
              this.#fail[child] = next;
              break;
            }
            if (f === 0) break;
            f = this.#fail[f]!;
          }
        }
        const fail = this.#fail[child]!;
        this.#dict[child] = this.#wordAt[fail] !== -1 ? fail : this.#dict[fail]!;
      }
    }
  }
}

/**
 * The occurrences that do not overlap, leftmost first and then longest: the spans to redact.
 * One pass to note the longest word starting at each position (occurrences at one start arrive
 * shortest first, as their ends grow), one pass to pick.
 */
export function leftmostLongest(search: WordSearch, text: string): Array<[number, number]> {
  const longest = new Int32Array(text.length + 1);
  let found = false;
  search.scan(text, (start, end) => {
    longest[start] = end;
    found = true;
  });
  const out: Array<[number, number]> = [];
  if (!found) return out;
  for (let s = 0; s < text.length; s++) {
    const end = longest[s]!;
    if (end === 0) continue;
    out.push([s, end]);
    s = end - 1;
  }
  return out;
}
