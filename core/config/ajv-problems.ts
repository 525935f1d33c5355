/**
 * Turns ajv's schema errors into config problems a person can act on: the YAML position of the
 * offending node, YAML words for types, and a "did you mean" for misspelt keys.
 */
import type { ErrorObject } from 'ajv';
import type { ConfigProblem } from './types.js';
import { formatPath, type Positions } from './positions.js';

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** JSON pointer → segments, with array indexes as numbers (they print as `[i]`). */
function pointerToSegments(pointer: string, data: unknown): Array<string | number> {
  const segments: Array<string | number> = [];
  let current = data;
  for (const raw of pointer.split('/').slice(1)) {
    const segment = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (Array.isArray(current)) {
      segments.push(Number(segment));
      current = current[Number(segment)];
    } else {
      segments.push(segment);
      current = isRecord(current) ? current[segment] : undefined;
    }
  }
  return segments;
}

/** Optimal string alignment distance: Levenshtein plus adjacent swaps, the usual typo (`prot`). */
function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i]);
  for (let j = 1; j <= b.length; j++) d[0]![j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, d[i - 2]![j - 2]! + 1);
      d[i]![j] = best;
    }
  }
  return d[a.length]![b.length]!;
}

function suggest(key: string, known: string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const candidate of known) {
    const distance = editDistance(key.toLowerCase(), candidate.toLowerCase());
    if (distance < bestDistance) [best, bestDistance] = [candidate, distance];
  }
  // A third of the word is the most a typo plausibly changes; beyond it the hint misleads.
  return bestDistance <= Math.max(1, Math.floor(Math.max(key.length, best?.length ?? 0) / 3)) ? best : undefined;
}

export function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a mapping';
  if (typeof value === 'string') return `"${value.length > 40 ? value.slice(0, 40) + '…' : value}"`;
  return String(value);
}

/** JSON Schema type names in the words a YAML author uses. */
const TYPE_NAMES: Record<string, string> = {
  object: 'a mapping',
  array: 'a list',
  string: 'a string',
  integer: 'an integer',
  number: 'a number',
  boolean: 'true or false',
  null: 'null',
};

function schemaString(schema: unknown, key: string): string | undefined {
  return isRecord(schema) && typeof schema[key] === 'string' ? schema[key] : undefined;
}

/** Turns one ajv error into a problem at the offending node, or null for ajv's summary errors. */
export function problemFromAjv(error: ErrorObject, data: unknown, file: string, positions: Positions): ConfigProblem | null {
  // `if` ("must match else schema") and the `propertyNames` wrapper only repeat a precise error.
  if (error.keyword === 'if' || error.keyword === 'propertyNames') return null;
  const segments = pointerToSegments(error.instancePath, data);
  let where = positions.locate(segments);
  let message = error.message ?? 'is invalid';
  const params: Record<string, unknown> = error.params;

  if (error.propertyName !== undefined) {
    segments.push(error.propertyName);
    where = positions.locateKey(segments);
    message = `${schemaString(error.parentSchema, 'patternErrorMessage') ?? message}, got "${error.propertyName}"`;
  } else if (error.keyword === 'additionalProperties' && typeof params.additionalProperty === 'string') {
    const key = params.additionalProperty;
    segments.push(key);
    where = positions.locateKey(segments);
    const properties = isRecord(error.parentSchema) && isRecord(error.parentSchema.properties) ? error.parentSchema.properties : {};
    const hint = suggest(key, Object.keys(properties));
    message = `unknown key "${key}"` + (hint ? ` (did you mean "${hint}"?)` : '');
  } else if (error.keyword === 'required' && typeof params.missingProperty === 'string') {
    // The missing key has no node: point at the mapping that should hold it.
    segments.push(params.missingProperty);
    message = `missing required key "${params.missingProperty}"`;
  } else if (error.keyword === 'type') {
    const custom = schemaString(error.parentSchema, 'errorMessage');
    const types: unknown[] = Array.isArray(params.type) ? params.type : [params.type];
    const expected = types.map((type) => TYPE_NAMES[String(type)] ?? String(type)).join(' or ');
    message = `${custom ?? `must be ${expected}`}, got ${describe(error.data)}`;
  } else if (error.keyword === 'pattern') {
    message = `${schemaString(error.parentSchema, 'patternErrorMessage') ?? message}, got ${describe(error.data)}`;
  } else if (error.keyword === 'minProperties' || error.keyword === 'maxProperties') {
    message = schemaString(error.parentSchema, 'errorMessage') ?? message;
  }
  return { file, ...where, path: formatPath(segments), message };
}
