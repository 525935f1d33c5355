/**
 * Which guardrails apply to a request.
 *
 *   routing config   each node may carry input_guardrails / output_guardrails (a child REPLACES its
 *                    parent's list) and default_input_guardrails / default_output_guardrails
 *                    (APPENDED at every leaf below, root first)
 *   API key          defaults.input_guardrails / output_guardrails (saved ids or slugs), appended
 *   workspace        defaults.input_guardrails / output_guardrails, appended last
 *
 * The result is per leaf of the config (the target path the router reports, e.g.
 * `config.targets[1]`); without a config there is one leaf, `config`. Parsed lists are cached
 * per config object, key record and workspace record, and dropped when a saved guardrail changes,
 * so a request with saved things parses nothing.
 */
import type { GatewayContext, Records, Store } from '../../core/index.js';
import { GatewayError } from '../../core/index.js';
import type { CheckRegistry, Guardrail } from './registry.js';
import { GuardrailErrors } from './errors.js';

type Json = Record<string, unknown>;

/** The guardrail list fields a config node may carry. */
export const LIST_FIELDS = ['input_guardrails', 'output_guardrails', 'default_input_guardrails', 'default_output_guardrails'] as const;

/** Every guardrail list in a config tree, with its path (for validation). */
export function configGuardrailLists(config: Json, param: string): Array<{ list: unknown; path: string }> {
  const out: Array<{ list: unknown; path: string }> = [];
  const walk = (node: Json, path: string, depth: number): void => {
    for (const field of LIST_FIELDS) if (node[field] !== undefined) out.push({ list: node[field], path: `${path}.${field}` });
    if (depth < 8 && Array.isArray(node.targets)) {
      node.targets.forEach((t, i) => {
        if (typeof t === 'object' && t !== null) walk(t as Json, `${path}.targets[${i}]`, depth + 1);
      });
    }
  };
  walk(config, param, 0);
  return out;
}

/** The guardrails of one leaf. */
export interface LeafGuardrails {
  input: Guardrail[];
  output: Guardrail[];
}

/** What applies to one request. */
export interface RequestGuardrails {
  /** By target path; `config` without a config. */
  leaves: Map<string, LeafGuardrails>;
  /** The input guardrails when every leaf has the same ones (checked once, before routing). */
  uniformInput: Guardrail[] | undefined;
  anyInput: boolean;
  anyOutput: boolean;
  /** Some guardrail records feedback (`on_success` / `on_fail`): else there is none to record. */
  anyFeedback: boolean;
}

const NONE: Guardrail[] = [];

interface Cached<T> {
  version: number;
  workspace: string;
  value: T;
}

export class Resolver {
  /** Parsed config leaves by config object (saved configs are frozen and shared); undefined: none. */
  readonly #configs = new WeakMap<object, Cached<Map<string, LeafGuardrails> | undefined>>();
  /** Parsed key and workspace lists by list object. */
  readonly #lists = new WeakMap<object, Cached<Guardrail[]>>();

  constructor(
    private readonly registry: CheckRegistry,
    private readonly store: Store,
  ) {}

  /** The guardrails of this request; undefined when none apply (the common case costs a few property reads). */
  resolve(ctx: GatewayContext, workspaceId: string): RequestGuardrails | undefined {
    const config = ctx.get('routingConfig');
    const defaults = ctx.get('principal')?.defaults;
    const ws = this.#workspace(workspaceId);
    const keyIn = defaults?.input_guardrails;
    const keyOut = defaults?.output_guardrails;
    const wsIn = ws?.defaults.input_guardrails;
    const wsOut = ws?.defaults.output_guardrails;
    const configLeaves = config === undefined ? undefined : this.#configLeaves(config, workspaceId);
    const attached = !!keyIn?.length || !!keyOut?.length || !!wsIn?.length || !!wsOut?.length;
    if (configLeaves === undefined && !attached) return undefined;
    // Only the config's guardrails (the common case): worked out once per config.
    if (!attached) return (configLeaves as CachedLeaves).plan ??= plan(configLeaves!);

    const extraIn = [...this.#list(keyIn, 'defaults.input_guardrails', workspaceId), ...this.#list(wsIn, 'workspace defaults.input_guardrails', workspaceId)];
    const extraOut = [...this.#list(keyOut, 'defaults.output_guardrails', workspaceId), ...this.#list(wsOut, 'workspace defaults.output_guardrails', workspaceId)];
    const leaves = new Map<string, LeafGuardrails>();
    if (configLeaves === undefined) leaves.set('config', { input: extraIn, output: extraOut });
    else {
      for (const [path, leaf] of configLeaves) {
        leaves.set(path, {
          input: extraIn.length === 0 ? leaf.input : [...leaf.input, ...extraIn],
          output: extraOut.length === 0 ? leaf.output : [...leaf.output, ...extraOut],
        });
      }
    }
    const p = plan(leaves);
    return p.anyInput || p.anyOutput ? p : undefined;
  }

  #workspace(id: string): Records.Workspace | undefined {
    return id === '' ? undefined : this.store.c.workspaces.cached(id);
  }

  /** A key's or workspace's list of saved references, parsed once per list and guardrails version. */
  #list(list: string[] | undefined, param: string, workspaceId: string): Guardrail[] {
    if (list === undefined || list.length === 0) return NONE;
    const version = this.store.c.guardrails.version();
    const hit = this.#lists.get(list);
    if (hit !== undefined && hit.version === version && hit.workspace === workspaceId) return hit.value;
    // Attached by an operator (validated then), so a guardrail of every workspace may be named. One that
    // was deleted since is the operator's to fix, and the request fails closed rather than going
    // out unchecked.
    const parsed = this.registry.parse(list, param);
    if (parsed instanceof GatewayError) {
      throw parsed.code === 'unknown_guardrail' ? GuardrailErrors.unavailable(`A guardrail attached to this API key or workspace (${param}) no longer exists; an operator must fix the attachment.`) : parsed;
    }
    this.#lists.set(list, { version, workspace: workspaceId, value: parsed });
    return parsed;
  }

  /** The leaves of a config and their guardrails (undefined when the config names none). */
  #configLeaves(config: Json, workspaceId: string): Map<string, LeafGuardrails> | undefined {
    const version = this.store.c.guardrails.version();
    const hit = this.#configs.get(config);
    if (hit !== undefined && hit.version === version && hit.workspace === workspaceId) return hit.value;
    const leaves = new Map<string, LeafGuardrails>();
    let named = false;
    const parse = (list: unknown, path: string): Guardrail[] => {
      const parsed = this.registry.parse(list, path, workspaceId);
      if (parsed instanceof GatewayError) throw parsed;
      if (parsed.length > 0) named = true;
      return parsed;
    };
    const walk = (node: Json, path: string, input: Guardrail[], output: Guardrail[], dIn: Guardrail[], dOut: Guardrail[], depth: number): void => {
      const ownIn = node.input_guardrails === undefined ? input : parse(node.input_guardrails, `${path}.input_guardrails`);
      const ownOut = node.output_guardrails === undefined ? output : parse(node.output_guardrails, `${path}.output_guardrails`);
      const defIn = node.default_input_guardrails === undefined ? dIn : [...dIn, ...parse(node.default_input_guardrails, `${path}.default_input_guardrails`)];
      const defOut = node.default_output_guardrails === undefined ? dOut : [...dOut, ...parse(node.default_output_guardrails, `${path}.default_output_guardrails`)];
      if (Array.isArray(node.targets) && depth < 8) {
        node.targets.forEach((t, i) => {
          if (typeof t === 'object' && t !== null) walk(t as Json, `${path}.targets[${i}]`, ownIn, ownOut, defIn, defOut, depth + 1);
        });
        return;
      }
      leaves.set(path, { input: defIn.length === 0 ? ownIn : [...ownIn, ...defIn], output: defOut.length === 0 ? ownOut : [...ownOut, ...defOut] });
    };
    // Paths as the router names its targets (`config.targets[1]`), and as 400s name the field.
    walk(config, 'config', NONE, NONE, NONE, NONE, 0);
    const value = named ? leaves : undefined;
    this.#configs.set(config, { version, workspace: workspaceId, value });
    return value;
  }
}

/** A config's leaves with the plan worked out from them (kept with the leaves). */
type CachedLeaves = Map<string, LeafGuardrails> & { plan?: RequestGuardrails };

/** What applies, from the leaves: whether every leaf has the same input guardrails, and what there is at all. */
function plan(leaves: Map<string, LeafGuardrails>): RequestGuardrails {
  let uniform: Guardrail[] | undefined;
  let same = true;
  let anyInput = false;
  let anyOutput = false;
  let anyFeedback = false;
  const feeds = (g: Guardrail): boolean => g.onSuccess !== undefined || g.onFail !== undefined;
  for (const leaf of leaves.values()) {
    if (leaf.input.length > 0) anyInput = true;
    if (leaf.output.length > 0) anyOutput = true;
    if (leaf.input.some(feeds) || leaf.output.some(feeds)) anyFeedback = true;
    if (uniform === undefined) uniform = leaf.input;
    else if (same && !sameList(uniform, leaf.input)) same = false;
  }
  return { leaves, uniformInput: same ? uniform : undefined, anyInput, anyOutput, anyFeedback };
}

function sameList(a: Guardrail[], b: Guardrail[]): boolean {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
