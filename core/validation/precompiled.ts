/**
 * The gateway's own schemas as validators generated at build time (ajv's standalone code), so a
 * start does not compile them: the model routes' request schemas, the config schema, the standard
 * plugins' option schemas and JSON Schema's meta-schema (which checks plugins' schemas) took about
 * 0.3 s of every start, and their generated code loads in a few milliseconds.
 *
 *   build   cli/build-validators.ts ─▶ dist/core/validation/generated/<name>.cjs (+ its fingerprint)
 *   start   fingerprint(ajv options, schema) ─▶ the generated module when its fingerprint matches
 *                                           └─▶ otherwise ajv compiles the schema, as before
 *
 * The fingerprint covers ajv's version, its options and the schema itself, so a generated validator is used
 * only for exactly what it was generated from: a schema edited without a new build, a missing or
 * broken file, all fall back to compiling, which is slower to start and otherwise the same.
 */
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';

const load = createRequire(import.meta.url);

/** Where the generated modules live, relative to this file (dist/core/validation/). */
export const GENERATED_DIR = 'generated';

/** Which validator a caller got: generated at build time, or compiled at run time. */
export type ValidatorSource = 'generated' | 'compiled';

let ajvVersion: string | undefined;

/** What a generated module is made from: ajv, its options and the schema (an object, or the text it is read from). */
export function fingerprint(options: object, schema: unknown): string {
  ajvVersion ??= (load('ajv/package.json') as { version: string }).version;
  return createHash('sha256')
    .update(ajvVersion)
    .update('\0')
    .update(JSON.stringify(options))
    .update('\0')
    .update(typeof schema === 'string' ? schema : JSON.stringify(schema))
    .digest('hex');
}

/** A name a generated module may have (a standard plugin's `plugin-<name>`): no path in it. */
const MODULE_NAME = /^[a-z0-9][a-z0-9-]*$/;

/**
 * The generated module `name` when it was generated from what `print` fingerprints; undefined
 * otherwise. `print` may be a function: it is then called only when there is such a module (a
 * custom plugin's schema, which has none, is not fingerprinted at all).
 */
export function precompiled<T>(name: string, print: string | (() => string)): T | undefined {
  if (!MODULE_NAME.test(name)) return undefined;
  let mod: { fingerprint?: unknown };
  try {
    mod = load(`./${GENERATED_DIR}/${name}.cjs`) as { fingerprint?: unknown };
  } catch {
    return undefined; // not generated (a build by tsc alone), or unreadable: compile instead
  }
  return mod.fingerprint === (typeof print === 'string' ? print : print()) ? (mod as T) : undefined;
}
