/**
 * Conditional routing queries: a small Mongo-style language over the request.
 *
 *   {"metadata.tier": {"$eq": "pro"}}
 *   {"$or": [{"params.model": {"$in": ["gpt-4o", "gpt-4.1"]}}, {"metadata.beta": "yes"}]}
 *   {"$and": [{"params.max_tokens": {"$gt": 1000}}, {"url.pathname": {"$regex": "^/v1/chat"}}]}
 *
 * Fields are dotted paths into `{metadata, params (the request body), url: {pathname}}`. A bare
 * value means `$eq`. Operators: $eq $ne $gt $gte $lt $lte $in $nin $regex $and $or, at any depth.
 * `$regex` runs on the linear-time RE2 engine (core/safe-regex.ts), never on V8's backtracking
 * one: a caller's pattern must not be able to freeze the event loop. Patterns compile once per
 * source (queries come from configs, which are reused); configs are checked at parse and save
 * time, so a pattern RE2 refuses only reaches here from an older saved config, and never matches.
 */
import { trySafeRegex, type SafeRegex } from '../safe-regex.js';

export interface ConditionInput {
  metadata: Record<string, string>;
  params: Record<string, unknown>;
  url: { pathname: string };
}

const regexCache = new Map<string, SafeRegex | null>();

function regex(source: string): SafeRegex | null {
  let re = regexCache.get(source);
  if (re === undefined) {
    re = trySafeRegex(source); // null: an invalid pattern never matches (configs are validated; this is defence)
    if (regexCache.size > 1000) regexCache.clear();
    regexCache.set(source, re);
  }
  return re;
}

function lookup(input: ConditionInput, path: string): unknown {
  let node: unknown = input;
  for (const part of path.split('.')) {
    if (typeof node !== 'object' || node === null) return undefined;
    node = (node as Record<string, unknown>)[part];
  }
  return node;
}

const NUMERIC = /^\s*-?\d+(\.\d+)?([eE][+-]?\d+)?\s*$/;

/** A number, or a string that is exactly a number (metadata values arrive as strings). */
function asNumber(v: unknown): number | undefined {
  if (typeof v === 'number') return Number.isFinite(v) ? v : undefined;
  return typeof v === 'string' && NUMERIC.test(v) ? Number(v) : undefined;
}

function compare(a: unknown, b: unknown): number | undefined {
  const x = asNumber(a);
  const y = asNumber(b);
  if (x !== undefined && y !== undefined) return x - y;
  if (typeof a === 'string' && typeof b === 'string') return a < b ? -1 : a > b ? 1 : 0;
  return undefined; // booleans, arrays, objects: no ordering
}

function equals(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a === 'object' || typeof b === 'object') return JSON.stringify(a) === JSON.stringify(b);
  return compare(a, b) === 0;
}

function test(value: unknown, condition: unknown): boolean {
  if (typeof condition !== 'object' || condition === null || Array.isArray(condition)) return equals(value, condition);
  for (const [op, operand] of Object.entries(condition as Record<string, unknown>)) {
    let ok: boolean;
    switch (op) {
      case '$eq':
        ok = equals(value, operand);
        break;
      case '$ne':
        ok = !equals(value, operand);
        break;
      case '$gt':
      case '$gte':
      case '$lt':
      case '$lte': {
        const c = compare(value, operand);
        ok = c !== undefined && (op === '$gt' ? c > 0 : op === '$gte' ? c >= 0 : op === '$lt' ? c < 0 : c <= 0);
        break;
      }
      case '$in':
        ok = Array.isArray(operand) && operand.some((o) => equals(value, o));
        break;
      case '$nin':
        ok = Array.isArray(operand) && !operand.some((o) => equals(value, o));
        break;
      case '$regex': {
        const re = typeof operand === 'string' ? regex(operand) : null;
        ok = re !== null && typeof value === 'string' && re.test(value);
        break;
      }
      default:
        ok = false; // an unknown operator matches nothing rather than everything
    }
    if (!ok) return false;
  }
  return true;
}

/** True when `query` matches the request. */
export function matches(query: Record<string, unknown>, input: ConditionInput): boolean {
  for (const [key, condition] of Object.entries(query)) {
    if (key === '$and') {
      if (!Array.isArray(condition) || !condition.every((q) => typeof q === 'object' && q !== null && matches(q as Record<string, unknown>, input))) return false;
    } else if (key === '$or') {
      if (!Array.isArray(condition) || !condition.some((q) => typeof q === 'object' && q !== null && matches(q as Record<string, unknown>, input))) return false;
    } else if (!test(lookup(input, key), condition)) return false;
  }
  return true;
}
