/**
 * ajv and ajv-formats, loaded when a schema is first compiled rather than at every start (loading
 * ajv's compiler takes 60–140 ms here). The gateway's own schemas are generated at build time
 * (precompiled.ts) and need only ajv's small runtime helpers, so a start on the shipped pipeline
 * compiles nothing: ajv loads with the first admin call, the first config sent with a request, a
 * custom plugin's options or a guardrail's parameters.
 *
 * @example
 *   const ajv = newAjv({ allErrors: true }, { formats: true });
 */
import { createRequire } from 'node:module';
import type { Ajv, Options } from 'ajv';

const load = createRequire(import.meta.url);

/** An ajv of `options`; `formats` adds ajv-formats' formats (`date-time`, `uri`, …). */
export function newAjv(options: Options, { formats = false }: { formats?: boolean } = {}): Ajv {
  const { Ajv: AjvClass } = load('ajv') as typeof import('ajv');
  const ajv = new AjvClass(options);
  if (formats) addFormats(ajv);
  return ajv;
}

/** Adds ajv-formats' formats to `ajv` (an instance of any of ajv's classes). */
export function addFormats(ajv: Ajv): void {
  (load('ajv-formats') as typeof import('ajv-formats')).default(ajv);
}
