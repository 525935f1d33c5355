/**
 * Lookups and checks shared by the prompt and partial routes: finding records by slug or id,
 * reading a version by number or label, the partials a workspace can include, and the analysis
 * of a prompt's templates at save time.
 */
import { AdminErrors, nestsDeeper, ValidationErrors, type Records, type Store } from '../../core/index.js';
import { analyse, emptyUse, unknownPartial, type PartialLookup, type TemplateUse } from './templates.js';

export type PromptRecord = Records.PromptRecord;
export type PromptVersion = Records.PromptVersion;
export type PromptContent = Records.PromptContent;
export type PartialRecord = Records.PromptPartialRecord;
export type PartialVersion = Records.PromptPartialVersion;
export type Template = PromptContent['template'];

/** A label name: `production`, `staging`, `canary-2`. */
export const LABEL_PATTERN = /^[a-z0-9_-]{1,32}$/;

/** Prompts are addressed by slug; the id works too. */
export function findPrompt(store: Store, slugOrId: string): PromptRecord | undefined {
  return store.c.prompts.getBy('slug', slugOrId) ?? store.c.prompts.get(slugOrId);
}

export function findPartial(store: Store, slugOrId: string): PartialRecord | undefined {
  return store.c.promptPartials.getBy('slug', slugOrId) ?? store.c.promptPartials.get(slugOrId);
}

export function versionByNumber(store: Store, prompt: PromptRecord, version: number): PromptVersion | undefined {
  return store.c.promptVersions.getBy('number', `${prompt.id}:${version}`);
}

/** The version a call asks for: a number, a label, or (neither) the default. 404 when there is none. */
export function selectVersion(store: Store, prompt: PromptRecord, choice: { version?: number; label?: string }): PromptVersion {
  if (choice.version !== undefined && choice.label !== undefined) {
    throw ValidationErrors.invalidParameterCombination('Give either version or label, not both.', { param: 'label' });
  }
  let number = prompt.version;
  if (choice.label !== undefined) {
    const labelled = Object.prototype.hasOwnProperty.call(prompt.labels, choice.label) ? prompt.labels[choice.label] : undefined;
    if (labelled === undefined) throw AdminErrors.notFound(`The prompt has no label "${choice.label}".`, 'label');
    number = labelled;
  } else if (choice.version !== undefined) number = choice.version;
  const found = versionByNumber(store, prompt, number);
  if (found === undefined) throw AdminErrors.notFound(`The prompt has no version ${number}.`, 'version');
  return found;
}

/**
 * Partials a template of `workspaceId` can include: active partials of that workspace, by slug,
 * at their latest version (a partial change applies to every prompt at its next render; see
 * index.ts). Reads go through the collection's memory cache.
 */
export function partialLookup(store: Store, workspaceId: string): PartialLookup {
  return (name) => {
    const found = store.c.promptPartials.cachedBy('slug', name);
    return found !== undefined && found.workspace_id === workspaceId && found.status === 'active' ? found.content : undefined;
  };
}

/** The templates of a prompt with the param that names each: `template` or `template[1].content`. */
export function templatesOf(template: Template): Array<{ text: string; param: string }> {
  return typeof template === 'string' ? [{ text: template, param: 'template' }] : template.map((m, i) => ({ text: m.content, param: `template[${i}].content` }));
}

/**
 * Parses every template of a prompt (400 `invalid_template` naming the field and line), checks
 * that the partials it includes exist in the workspace (400 `unknown_partial`), and returns what
 * it uses, including the variables of the partials included outside any section (as they are now).
 */
export function analyseTemplates(templates: Array<{ text: string; param: string }>, partial: PartialLookup): TemplateUse {
  const use = emptyUse();
  for (const { text, param } of templates) {
    const own = analyse(text, param);
    for (const name of own.partials) {
      if (partial(name) === undefined) throw unknownPartial(`${param} includes the partial "${name}", which does not exist in this workspace.`, { param });
    }
    merge(use, own);
    // Top-level partials (and theirs, once each) contribute their top-level variables.
    const queue = [...own.topPartials];
    const seen = new Set<string>();
    while (queue.length > 0) {
      const name = queue.shift()!;
      if (seen.has(name)) continue;
      seen.add(name);
      const text = partial(name);
      if (text === undefined) continue;
      const inner = analyse(text, param);
      for (const v of inner.variables) use.variables.add(v);
      for (const v of inner.required) use.required.add(v);
      for (const p of inner.partials) use.partials.add(p);
      queue.push(...inner.topPartials);
    }
  }
  return use;
}

function merge(into: TemplateUse, from: TemplateUse): void {
  for (const v of from.variables) into.variables.add(v);
  for (const v of from.required) into.required.add(v);
  for (const p of from.partials) into.partials.add(p);
  for (const p of from.topPartials) into.topPartials.add(p);
}

/** Keys a prompt's parameters may not set: the request's own structure, and fields kept apart. */
const RESERVED_PARAMETERS = ['model', 'messages', 'prompt', 'input', 'tools', 'tool_choice', 'response_format', 'stream'];

/** Deepest nesting of parameters, tools and response formats (they are copied into every render). */
export const MAX_VALUE_DEPTH = 32;

export function assertParameters(parameters: Record<string, unknown>, param = 'parameters'): void {
  for (const key of RESERVED_PARAMETERS) {
    if (Object.prototype.hasOwnProperty.call(parameters, key)) {
      throw AdminErrors.invalid(`${param}.${key} is not a model parameter here: ${key === 'model' ? 'use the prompt\'s model' : key === 'stream' ? 'choose streaming per call' : `set ${key} on the prompt itself`}.`, `${param}.${key}`);
    }
  }
  assertShallow(parameters, param);
}

export function assertShallow(value: unknown, param: string): void {
  if (nestsDeeper(value, MAX_VALUE_DEPTH)) throw AdminErrors.invalid(`${param} nests deeper than ${MAX_VALUE_DEPTH} levels.`, param);
}

/**
 * The target of a prompt: exactly one of a virtual key (or provider record) slug or id, a saved
 * config slug or id, both of the prompt's workspace, or a provider id.
 */
export function assertTarget(store: Store, target: { virtual_key?: string | null; config?: string | null; provider?: string | null }, workspaceId: string): void {
  const given = (['virtual_key', 'config', 'provider'] as const).filter((k) => target[k] !== undefined && target[k] !== null);
  if (given.length !== 1) {
    throw ValidationErrors.invalidParameterCombination('Give exactly one target: virtual_key, config or provider.', { param: given[1] ?? 'virtual_key' });
  }
  if (target.virtual_key != null) {
    const ref = target.virtual_key;
    const vk = store.c.virtualKeys.getBy('slug', ref) ?? store.c.virtualKeys.get(ref);
    const provider = store.c.providers.getBy('slug', ref) ?? store.c.providers.get(ref);
    const ok = (vk !== undefined && vk.workspace_id === workspaceId) || (provider !== undefined && provider.workspace_id === workspaceId);
    if (!ok) throw AdminErrors.invalid('virtual_key names no virtual key or provider of this workspace.', 'virtual_key');
  }
  if (target.config != null) {
    const ref = target.config;
    const config = store.c.configs.getBy('slug', ref) ?? store.c.configs.get(ref);
    if (config === undefined || config.workspace_id !== workspaceId || config.status !== 'active') {
      throw AdminErrors.invalid('config names no active config of this workspace.', 'config');
    }
  }
}
