/**
 * Where things are in a YAML document: key paths to line and column, for every problem message.
 * Positions come from the parsed Document's nodes (not the JS value), so they survive
 * interpolation, which edits nodes in place.
 */
import { isMap, isPair, isScalar, isSeq } from 'yaml';
import type { Document, LineCounter } from 'yaml';
import type { Locator } from './types.js';

export type Segments = ReadonlyArray<string | number>;
export const NOWHERE = { line: 0, column: 0 };

interface Found {
  /** Offset of the deepest node found on the path (the value, or its key when the value is empty). */
  offset: number | null;
  /** Offset of the last segment's key, when the whole path exists and ends at a mapping key. */
  keyOffset: number | null;
}

function nodeOffset(node: unknown): number | null {
  if (node === null || typeof node !== 'object' || !('range' in node)) return null;
  const range = (node as { range?: [number, number, number] | null }).range;
  // `key:` with nothing after it yields an empty null scalar placed after the line; the key is a better spot.
  if (!range || (isScalar(node) && range[0] === range[1])) return null;
  return range[0];
}

function findOffset(doc: Document, segments: Segments): Found {
  let current: unknown = doc.contents;
  let offset = nodeOffset(current);
  let keyOffset: number | null = null;
  for (const segment of segments) {
    keyOffset = null;
    if (isMap(current)) {
      const pair = current.items.find(function matches(p) {
        return isPair(p) && isScalar(p.key) && String(p.key.value) === String(segment);
      });
      if (!pair) break;
      keyOffset = nodeOffset(pair.key);
      current = pair.value;
      offset = nodeOffset(current) ?? keyOffset ?? offset;
    } else if (isSeq(current) && /^\d+$/.test(String(segment))) {
      const item: unknown = current.items[Number(segment)];
      if (item === undefined) break;
      current = item;
      offset = nodeOffset(current) ?? offset;
    } else {
      break;
    }
  }
  return { offset, keyOffset };
}

export interface Positions {
  locate: Locator;
  /** The position of the last segment's key itself (for unknown keys), else as `locate`. */
  locateKey: Locator;
  at(offset: number): { line: number; column: number };
}

export function createPositions(doc: Document, lineCounter: LineCounter): Positions {
  function at(offset: number): { line: number; column: number } {
    const { line, col } = lineCounter.linePos(offset);
    return { line, column: col };
  }
  return {
    at,
    locate: function locate(segments, options) {
      const { offset, keyOffset } = findOffset(doc, segments);
      const best = options?.key === true ? (keyOffset ?? offset) : offset;
      return best === null ? NOWHERE : at(best);
    },
    locateKey: function locateKey(segments) {
      const { offset, keyOffset } = findOffset(doc, segments);
      const best = keyOffset ?? offset;
      return best === null ? NOWHERE : at(best);
    },
  };
}

/** `pipeline[2].cache.max_entries`; keys that are not plain words are quoted: `pipeline[7]["./x.js"]`. */
export function formatPath(segments: Segments): string {
  let out = '';
  for (const segment of segments) {
    if (typeof segment === 'number') out += `[${segment}]`;
    else if (/^[A-Za-z_][A-Za-z0-9_-]*$/.test(segment)) out += out === '' ? segment : `.${segment}`;
    else out += `[${JSON.stringify(segment)}]`;
  }
  return out;
}
