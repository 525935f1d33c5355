/**
 * Non-finite numbers in parsed JSON. `JSON.parse('1e999')` is `Infinity` (and `-1e999` is
 * `-Infinity`); JSON Schema's `type: number` accepts both, so a rate limit or a `credit_limit` of
 * 1e999 used to be stored and then read back as `null` (JSON has no Infinity). Bodies that are
 * kept (admin writes, routing configs) are walked once after parsing and refused with a 400
 * naming the field. Model-route bodies are not walked: they are forwarded as the bytes received,
 * and their numeric fields carry schema bounds.
 */
import type { GatewayError } from '../errors.js';
import { ValidationErrors } from './errors.js';

const IDENTIFIER = /^[A-Za-z_$][\w$]{0,63}$/;

/**
 * The first non-finite number in `value`, as a 400 `invalid_value` whose `param` is its path
 * (`rate_limits[0].value`, under `prefix` when given); null when every number is finite.
 * Iterative, so a deeply nested value cannot overflow the stack.
 *
 * @example
 *   nonFiniteNumber(JSON.parse('{"credit_limit": 1e999}'))?.param // 'credit_limit'
 */
export function nonFiniteNumber(value: unknown, prefix = ''): GatewayError | null {
  const stack: Array<{ node: unknown; path: string }> = [{ node: value, path: prefix }];
  while (stack.length > 0) {
    const { node, path } = stack.pop()!;
    if (typeof node === 'number') {
      if (!Number.isFinite(node)) {
        const param = path === '' ? 'body' : path;
        return ValidationErrors.invalidValue(`${param} must be a finite number.`, { param });
      }
    } else if (Array.isArray(node)) {
      for (let i = node.length - 1; i >= 0; i--) stack.push({ node: node[i], path: `${path}[${i}]` });
    } else if (typeof node === 'object' && node !== null) {
      const keys = Object.keys(node);
      for (let i = keys.length - 1; i >= 0; i--) {
        const key = keys[i]!;
        // Keys are the caller's: a long or odd one is not echoed in the param.
        const segment = IDENTIFIER.test(key) ? key : '[key]';
        stack.push({ node: (node as Record<string, unknown>)[key], path: path === '' ? segment : `${path}.${segment}` });
      }
    }
  }
  return null;
}
