/**
 * Turns the YAML `pipeline` into loaded plugins: resolve each entry (a standard plugin name or a
 * path to a module), check its options against the plugin's `configSchema` with ajv (errors name
 * the YAML file, line and key), then run `setup` in YAML order.
 *
 * The core knows no plugin by name: the standard ones come in as a name → module map from the
 * composition root (the CLI, or a test).
 */
import { pathToFileURL } from 'node:url';
import { isAbsolute, resolve as resolvePath } from 'node:path';
import type { Ajv, ErrorObject, ValidateFunction } from 'ajv';
import type { ConfigProblem, GatewayConfig, Locator, PipelineEntry } from './config/types.js';
import { formatPath } from './config/load.js';
import type { AppServices, GatewayApp, PluginDefinition, PluginHooks } from './plugin.js';
import type { LoadedPlugin } from './pipeline.js';
import type { Logger } from './logger.js';
import type { ProviderRegistry } from './providers/registry.js';
import type { Store } from './store/store.js';
import type { TokenCounter } from './workers/types.js';
import type { Dispatcher } from 'undici';
import { schemaProblem } from './validation/schema-check.js';
import { fingerprint, precompiled } from './validation/precompiled.js';
import { newAjv } from './validation/ajv.js';

/** Standard plugins by name; each loads its module lazily (only what the pipeline uses is imported). */
export type PluginCatalog = Readonly<Record<string, () => Promise<{ default: PluginDefinition<never> }>>>;

/** A config that cannot run; every problem names where it is. */
export class ConfigError extends Error {
  readonly problems: ConfigProblem[];
  constructor(problems: ConfigProblem[]) {
    super(problems.map((p) => `${p.file}:${p.line}:${p.column} ${p.path}: ${p.message}`).join('\n'));
    this.name = 'ConfigError';
    this.problems = problems;
  }
}

interface Resolved {
  entry: PipelineEntry;
  index: number;
  definition: PluginDefinition<Record<string, unknown>>;
  options: Record<string, unknown>;
}

const isPath = (name: string): boolean => name.startsWith('./') || name.startsWith('../') || isAbsolute(name);

function isDefinition(value: unknown): value is PluginDefinition<Record<string, unknown>> {
  const v = value as { name?: unknown; setup?: unknown } | null;
  return typeof v === 'object' && v !== null && typeof v.name === 'string' && typeof v.setup === 'function';
}

/** Option-path segments of an entry: `pipeline[i]` for a bare name, `pipeline[i].<name>` for a mapping. */
function optionSegments(entry: PipelineEntry, index: number, hasOptions: boolean): Array<string | number> {
  return hasOptions ? ['pipeline', index, entry.name] : ['pipeline', index];
}

function problemAt(config: GatewayConfig, locate: Locator, segments: Array<string | number>, message: string, key = false): ConfigProblem {
  const { line, column } = locate(segments, { key });
  return { file: config.file, line, column, path: formatPath(segments), message };
}

/** The ajv options of plugins' option schemas, generated (cli/build-validators.ts) or compiled: every problem at once, defaults filled in. */
export const PLUGIN_OPTIONS_AJV_OPTIONS = { allErrors: true, useDefaults: true, strict: false, validateSchema: false } as const;

/** The ajv that compiles plugins' option schemas (with the formats they may name). */
export function optionsAjv(extra: object = {}): Ajv {
  return newAjv({ ...PLUGIN_OPTIONS_AJV_OPTIONS, ...extra }, { formats: true });
}

/**
 * Resolves modules and checks options. Used by `gateway validate` (no setup) and at boot.
 * Throws a {@link ConfigError} listing every problem found.
 */
export async function resolvePlugins(config: GatewayConfig, locate: Locator, catalog: PluginCatalog): Promise<Resolved[]> {
  const problems: ConfigProblem[] = [];
  const resolved: Resolved[] = [];
  // One ajv per resolution, made if a schema needs compiling: option schemas come from plugin
  // modules and are compiled once here, each checked first against the meta-schema by the shared
  // checker (validation/schema-check.ts).
  let ajv: Ajv | undefined;
  const seen = new Set<string>();

  for (const [index, entry] of config.pipeline.entries()) {
    const hasOptions = Object.keys(entry.options).length > 0;
    const at = optionSegments(entry, index, hasOptions);
    let mod: unknown;
    try {
      if (isPath(entry.name)) mod = await import(pathToFileURL(resolvePath(config.baseDir, entry.name)).href);
      else if (catalog[entry.name]) mod = await catalog[entry.name]!();
      else {
        const known = Object.keys(catalog);
        problems.push(
          problemAt(config, locate, ['pipeline', index], `unknown plugin "${entry.name}"${known.length ? ` (standard plugins: ${known.join(', ')})` : ''}; a custom plugin is a path starting with ./, ../ or /`),
        );
        continue;
      }
    } catch (err) {
      problems.push(problemAt(config, locate, ['pipeline', index], `cannot load plugin "${entry.name}": ${(err as Error).message}`));
      continue;
    }
    const definition = (mod as { default?: unknown }).default;
    if (!isDefinition(definition)) {
      problems.push(problemAt(config, locate, ['pipeline', index], `"${entry.name}" does not default-export definePlugin({ name, setup })`));
      continue;
    }
    if (seen.has(definition.name)) {
      problems.push(problemAt(config, locate, ['pipeline', index], `plugin "${definition.name}" appears twice in the pipeline`));
      continue;
    }
    seen.add(definition.name);
    const options = structuredClone(entry.options);
    if (definition.configSchema) {
      // A standard plugin's schema was checked and generated at build time (precompiled.ts); any
      // other schema (a custom plugin's, or one edited since the build) is checked and compiled here.
      let validate: ValidateFunction | undefined;
      try {
        validate = precompiled<ValidateFunction>(`plugin-${definition.name}`, () => fingerprint(PLUGIN_OPTIONS_AJV_OPTIONS, definition.configSchema));
        if (validate === undefined) {
          const problem = schemaProblem(definition.configSchema);
          if (problem !== null) throw new Error(`schema is invalid: ${problem}`);
          validate = (ajv ??= optionsAjv()).compile(definition.configSchema);
        }
      } catch (err) {
        problems.push(problemAt(config, locate, at, `plugin "${definition.name}" has an invalid configSchema: ${(err as Error).message}`));
        continue;
      }
      if (!validate(options)) {
        for (const e of validate.errors ?? []) problems.push(optionProblem(config, locate, at, e));
        continue;
      }
    }
    resolved.push({ entry, index, definition, options });
  }
  if (problems.length > 0) throw new ConfigError(problems.sort((a, b) => a.line - b.line || a.column - b.column));
  return resolved;
}

function optionProblem(config: GatewayConfig, locate: Locator, at: Array<string | number>, e: ErrorObject): ConfigProblem {
  const segments = [...at];
  for (const part of e.instancePath.split('/').slice(1)) {
    const key = part.replace(/~1/g, '/').replace(/~0/g, '~');
    segments.push(/^\d+$/.test(key) ? Number(key) : key);
  }
  let message = e.message ?? 'is invalid';
  if (e.keyword === 'additionalProperties') {
    const extra = (e.params as { additionalProperty?: string }).additionalProperty;
    if (extra !== undefined) {
      segments.push(extra);
      return problemAt(config, locate, segments, `unknown option "${extra}"`, true);
    }
  } else if (e.keyword === 'required') {
    message = `missing required option "${(e.params as { missingProperty?: string }).missingProperty}"`;
  } else if (e.keyword === 'enum') {
    message = `must be one of ${JSON.stringify((e.params as { allowedValues?: unknown }).allowedValues)}`;
  }
  return problemAt(config, locate, segments, message);
}

export interface SetupContext {
  config: GatewayConfig;
  locate: Locator;
  catalog: PluginCatalog;
  providers: ProviderRegistry;
  log: Logger;
  store: Store;
  tokens: TokenCounter;
  upstream: Dispatcher;
}

/** Resolves, validates and sets up every plugin in YAML order. On failure, closes what was set up. */
export async function loadPlugins(c: SetupContext): Promise<LoadedPlugin[]> {
  const resolved = await resolvePlugins(c.config, c.locate, c.catalog);
  const services = new Map<string, unknown>();
  const loaded: LoadedPlugin[] = [];
  for (const r of resolved) {
    const name = r.definition.name;
    const app: GatewayApp = {
      config: c.config,
      store: c.store,
      tokens: c.tokens,
      upstream: c.upstream,
      log: c.log.child({ plugin: name }),
      registerProvider: (adapter) => c.providers.register(adapter),
      provide(key, service) {
        services.set(key as string, service);
      },
      service<K extends keyof AppServices>(key: K): AppServices[K] {
        if (!services.has(key as string)) {
          throw new Error(`plugin "${name}" needs the service "${String(key)}", which no earlier plugin in the pipeline provides`);
        }
        return services.get(key as string) as AppServices[K];
      },
    };
    let hooks: PluginHooks | void;
    try {
      hooks = await r.definition.setup(app, r.options);
    } catch (err) {
      await closePlugins(loaded, c.log);
      throw new ConfigError([problemAt(c.config, c.locate, ['pipeline', r.index], `plugin "${name}" failed to start: ${(err as Error).message}`)]);
    }
    loaded.push({ name, index: r.index, hooks: hooks ?? {} });
  }
  return loaded;
}

/** Runs `close()` in reverse load order; failures are logged, the rest still close. */
export async function closePlugins(plugins: ReadonlyArray<LoadedPlugin>, log: Logger): Promise<void> {
  for (let i = plugins.length - 1; i >= 0; i--) {
    const p = plugins[i]!;
    try {
      await p.hooks.close?.();
    } catch (err) {
      log.error('plugin close failed', { plugin: p.name, err });
    }
  }
}
