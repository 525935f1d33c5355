/**
 * How deep a JSON value nests, measured without recursion: the check that protects recursive
 * copies, encoders and sealers from a body nested thousands deep must not be recursive itself.
 */

/**
 * True when an object or array sits deeper than `max` levels below `value` (the value itself is
 * level 0).
 *
 * @example
 *   nestsDeeper({ a: { b: {} } }, 1) // true: `b`'s object is at level 2
 */
export function nestsDeeper(value: unknown, max: number): boolean {
  const stack: Array<[unknown, number]> = [[value, 0]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    if (typeof node !== 'object' || node === null) continue;
    if (depth > max) return true;
    for (const child of Object.values(node)) stack.push([child, depth + 1]);
  }
  return false;
}
