/**
 * Build step (`npm run build`, and `npm install` through `prepare`): writes the gateway's own
 * schemas as ajv standalone code, each module with the fingerprint of what it was made from, so a
 * start loads them instead of compiling (core/validation/precompiled.ts).
 *
 *   dist/core/validation/generated/request.cjs          one export per model route (`chat_completions`, …)
 *   dist/core/validation/generated/config.cjs           the config schema
 *   dist/core/validation/generated/meta.cjs             JSON Schema draft-07, which checks plugins' schemas
 *   dist/core/validation/generated/plugin-<name>.cjs    each standard plugin's option schema
 *
 * A standard plugin's option schema that fails the meta-schema fails the build, naming the plugin:
 * a start trusts the schemas it finds generated. CommonJS, because ajv's standalone code requires
 * its runtime helpers (`ajv/dist/runtime/…`, `ajv-formats`), and the gateway loads these
 * synchronously at boot. Run: `node dist/cli/build-validators.js`.
 */
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv, type AnySchema } from 'ajv';
import standaloneCode from 'ajv/dist/standalone/index.js';
import { exportName, REQUEST_AJV_OPTIONS, requestSchemas } from '../core/validation/index.js';
import { CONFIG_AJV_OPTIONS, CONFIG_VOCABULARY, configSchemaText } from '../core/config/load.js';
import { fingerprint, GENERATED_DIR } from '../core/validation/precompiled.js';
import { CHECKER_AJV_OPTIONS, DRAFT_07, draft07, schemaProblem } from '../core/validation/schema-check.js';
import { optionsAjv, PLUGIN_OPTIONS_AJV_OPTIONS } from '../core/plugin-loader.js';
import type { ModelRoute } from '../core/routes.js';
import { standardPlugins } from '../plugins/index.js';

const SOURCE = { code: { source: true } };

/** A module: ajv's standalone code of `what` (a validator, or export names), and the fingerprint the start compares. */
function moduleOf(ajv: Ajv, what: Parameters<typeof standaloneCode.default>[1], print: string): string {
  return `${standaloneCode.default(ajv, what)}\nmodule.exports.fingerprint = ${JSON.stringify(print)};\n`;
}

/** The generated modules' text by name. */
export async function generateValidators(): Promise<Record<string, string>> {
  const out: Record<string, string> = {};

  const schemas = requestSchemas();
  const requests = new Ajv({ ...REQUEST_AJV_OPTIONS, ...SOURCE });
  const names: Record<string, string> = {};
  for (const route of Object.keys(schemas) as ModelRoute[]) {
    const name = exportName(route);
    requests.addSchema(schemas[route], name);
    names[name] = name;
  }
  out.request = moduleOf(requests, names, fingerprint(REQUEST_AJV_OPTIONS, schemas));

  const text = configSchemaText();
  const configs = new Ajv({ ...CONFIG_AJV_OPTIONS, ...SOURCE });
  configs.addVocabulary(CONFIG_VOCABULARY);
  out.config = moduleOf(configs, configs.compile(JSON.parse(text) as AnySchema), fingerprint(CONFIG_AJV_OPTIONS, text));

  const checker = new Ajv({ ...CHECKER_AJV_OPTIONS, ...SOURCE });
  const meta = checker.getSchema(DRAFT_07);
  if (meta === undefined) throw new Error(`ajv has no ${DRAFT_07} meta-schema`);
  out.meta = moduleOf(checker, meta, fingerprint(CHECKER_AJV_OPTIONS, draft07()));

  for (const [name, load] of Object.entries(standardPlugins)) {
    const schema = (await load()).default.configSchema as AnySchema | undefined;
    if (schema === undefined) continue;
    const problem = schemaProblem(schema, { compiled: true });
    if (problem !== null) throw new Error(`plugin "${name}" has an invalid configSchema: ${problem}`);
    const ajv = optionsAjv(SOURCE);
    out[`plugin-${name}`] = moduleOf(ajv, ajv.compile(schema), fingerprint(PLUGIN_OPTIONS_AJV_OPTIONS, schema));
  }
  return out;
}

/** Writes the modules into `dir`, replacing what an earlier build left there. */
export async function writeValidators(dir: string): Promise<string[]> {
  const modules = await generateValidators();
  mkdirSync(dir, { recursive: true });
  for (const file of readdirSync(dir)) if (file.endsWith('.cjs')) rmSync(path.join(dir, file));
  for (const [name, code] of Object.entries(modules)) writeFileSync(path.join(dir, `${name}.cjs`), code);
  return Object.keys(modules);
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const dir = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'core', 'validation', GENERATED_DIR);
  writeValidators(dir).then(
    (names) => process.stdout.write(`${names.length} validators generated in ${path.relative(process.cwd(), dir) || dir}\n`),
    (err: unknown) => {
      process.stderr.write(`validators not generated: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exit(1);
    },
  );
}
