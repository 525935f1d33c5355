/**
 * `${VAR}` and `${VAR:-default}` in YAML string scalars.
 *
 * Substitution runs on the parsed yaml Document, one scalar node at a time, never on the raw
 * text: the nodes keep their source ranges, so every later problem (interpolation, schema, units)
 * still points at the right line and column, and an environment value containing `:` or `#`
 * cannot change the document's structure.
 */

import { isAlias, isMap, isPair, isScalar, isSeq, parseDocument } from 'yaml';
import type { Document, Scalar } from 'yaml';

/** A problem found while interpolating, located by key path and source offset. */
export interface InterpolationProblem {
  segments: Array<string | number>;
  /** Offset of the scalar in the source text. */
  offset: number;
  message: string;
}

type Env = NodeJS.ProcessEnv;

const EXPRESSION = /^([A-Za-z_][A-Za-z0-9_]*)(?::-(.*))?$/s;

type Expansion = { ok: true; text: string } | { ok: false; message: string };

/**
 * Expands every `${…}` of one string.
 *
 * @example
 * expandString('http://${HOST:-localhost}:8080', {}) // { ok: true, text: 'http://localhost:8080' }
 */
export function expandString(source: string, env: Env): Expansion {
  // `$${` (escape) or `${` (expression start); the expression itself is read by hand. Local, because
  // a shared /g regex carries `lastIndex` between calls.
  const token = /\$\$\{|\$\{/g;
  let text = '';
  let last = 0;
  for (let match = token.exec(source); match !== null; match = token.exec(source)) {
    text += source.slice(last, match.index);
    if (match[0] === '$${') {
      text += '${';
      last = token.lastIndex;
      continue;
    }
    const close = source.indexOf('}', token.lastIndex);
    if (close === -1) {
      return { ok: false, message: 'unterminated "${" (write "$${" for a literal "${")' };
    }
    const body = source.slice(token.lastIndex, close);
    // Nesting would need a real grammar; refusing it beats silently producing "${B" text.
    if (body.includes('${')) return { ok: false, message: `nested "\${" in "\${${body}}" is not supported` };
    const parts = EXPRESSION.exec(body);
    if (parts === null) {
      return { ok: false, message: `"\${${body}}" is not a valid expression: use \${NAME} or \${NAME:-default}` };
    }
    const [, name = '', fallback] = parts;
    const value = env[name];
    if (fallback !== undefined) {
      // Shell semantics of `:-`: the default also applies when the variable is set but empty.
      text += value === undefined || value === '' ? fallback : value;
    } else if (value === undefined) {
      return { ok: false, message: `environment variable ${name} is not set` };
    } else {
      text += value;
    }
    last = close + 1;
    token.lastIndex = last;
  }
  return { ok: true, text: text + source.slice(last) };
}

/** True when the whole scalar is one `${…}` expression, the case where the result gets a YAML type. */
function isSingleExpression(source: string): boolean {
  return /^\$\{[^{}]*\}$/.test(source);
}

/**
 * Reads substituted text as a plain YAML scalar, so `port: ${PORT:-8787}` is the number 8787 and
 * `${FLAG:-true}` a boolean. Anything that would not stay a single plain scalar (`a: b`, `- x`,
 * a trailing `# comment`, a quoted string) is kept as the literal string: an environment value
 * must never add structure to the config.
 */
function retype(text: string): unknown {
  if (text.trim() === '') return text;
  const doc = parseDocument(text);
  const node = doc.contents;
  if (doc.errors.length > 0 || !isScalar(node) || node.type !== 'PLAIN') return text;
  if (node.source !== text.trim()) return text;
  return node.value;
}

function interpolateScalar(node: Scalar, segments: Array<string | number>, env: Env, problems: InterpolationProblem[]): void {
  const source = node.value;
  if (typeof source !== 'string' || !source.includes('${')) return;
  const result = expandString(source, env);
  if (!result.ok) {
    problems.push({ segments, offset: node.range?.[0] ?? 0, message: result.message });
    return;
  }
  // A quoted scalar asked for a string, so only plain ones are re-typed.
  node.value = isSingleExpression(source) && node.type === 'PLAIN' ? retype(result.text) : result.text;
}

function walk(node: unknown, segments: Array<string | number>, env: Env, problems: InterpolationProblem[]): void {
  // An alias shares its anchor's node, which the walk reaches (and expands) once at the anchor.
  if (isAlias(node)) return;
  if (isScalar(node)) {
    interpolateScalar(node, segments, env, problems);
  } else if (isMap(node)) {
    for (const pair of node.items) {
      if (!isPair(pair)) continue;
      // Keys are left alone: the schema names them, and a key built from the environment is a typo magnet.
      const key = isScalar(pair.key) ? String(pair.key.value) : String(pair.key);
      walk(pair.value, [...segments, key], env, problems);
    }
  } else if (isSeq(node)) {
    node.items.forEach(function walkItem(item, index) {
      walk(item, [...segments, index], env, problems);
    });
  }
}

/**
 * Replaces `${…}` expressions in every string value of `doc`, in place. Returns the problems
 * (an unset variable without default, a malformed expression), each at its scalar.
 */
export function interpolateDocument(doc: Document, env: Env): InterpolationProblem[] {
  const problems: InterpolationProblem[] = [];
  walk(doc.contents, [], env, problems);
  return problems;
}
