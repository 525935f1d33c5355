/**
 * Provider secrets inside routing configs. A config may carry provider keys on any node of its
 * tree (`targets[0].targets[1].api_key`); at rest each one is replaced by `{"sealed": "v1:…"}`,
 * reads show it masked (`sk-a*******xyz`), and only the router gets it back in clear.
 *
 * The inline guardrails of a node's guardrail lists (`input_guardrails`, `default_output_guardrails`,
 * …) carry secrets too: the header values of their checks (a webhook's `Authorization`). Each
 * value is sealed, masked and unsealed the same way; the header names stay readable. (The
 * `guardrails` plugin does the same for saved guardrails; plugins do not share files, hence the
 * few lines here.)
 *
 *   client config ──seal──▶ stored config ──mask──▶ admin reads
 *                                         └─unseal─▶ resolveConfig (router)
 *
 * The walk follows `targets` only: that is where nodes live, and validation bounds its depth.
 */
import { maskSecret, type Store } from '../../core/index.js';
import { isSecretField } from './provider-fields.js';

type Node = Record<string, unknown>;

/** A sealed value in a stored config; `format: json` when the secret was an object (service account JSON). */
interface Sealed {
  sealed: string;
  format?: 'json';
}

/** `api_key`, and the provider credentials a leaf may carry (AWS secret key, Vertex service account, …). */
const isConfigSecret = (name: string): boolean => name === 'api_key' || isSecretField(name);

function isSealed(value: unknown): value is Sealed {
  return typeof value === 'object' && value !== null && typeof (value as Sealed).sealed === 'string';
}

/** The guardrail lists a config node may carry. */
const GUARDRAIL_LISTS = ['input_guardrails', 'output_guardrails', 'default_input_guardrails', 'default_output_guardrails'] as const;

const isObject = (v: unknown): v is Node => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Where a `headers` object sits in a node: list, guardrail index, check id. */
interface HeadersPlace {
  list: string;
  index: number;
  check: string;
}

/** Each `headers` object of the checks of the inline guardrails in a node's lists. */
function eachGuardrailHeaders(node: Node, visit: (headers: Node, at: HeadersPlace) => void): void {
  for (const list of GUARDRAIL_LISTS) {
    const guardrails = node[list];
    if (!Array.isArray(guardrails)) continue;
    guardrails.forEach((guardrail, index) => {
      // Strings name saved guardrails, whose secrets live in their own records.
      if (!isObject(guardrail)) return;
      for (const [check, params] of Object.entries(guardrail)) {
        if (isObject(params) && isObject(params.headers)) visit(params.headers, { list, index, check });
      }
    });
  }
}

/** The `headers` object at the same place of another node (the stored one an update replaces). */
function headersAt(node: Node | undefined, at: HeadersPlace): Node | undefined {
  const list = node?.[at.list];
  const guardrail = Array.isArray(list) ? (list[at.index] as unknown) : undefined;
  const params = isObject(guardrail) ? guardrail[at.check] : undefined;
  return isObject(params) && isObject(params.headers) ? params.headers : undefined;
}

function eachNode(node: Node, visit: (node: Node, path: number[]) => void, path: number[] = []): void {
  visit(node, path);
  const targets = node.targets;
  if (!Array.isArray(targets)) return;
  targets.forEach((child, i) => {
    if (typeof child === 'object' && child !== null) eachNode(child as Node, visit, [...path, i]);
  });
}

/** The node at `path` (child indexes) of a tree, if the tree has one there. */
function nodeAt(root: Node | undefined, path: number[]): Node | undefined {
  let node = root;
  for (const i of path) {
    const targets = node?.targets;
    node = Array.isArray(targets) && typeof targets[i] === 'object' && targets[i] !== null ? (targets[i] as Node) : undefined;
  }
  return node;
}

/**
 * A copy of `config` with every provider secret sealed, ready to store.
 *
 * With `previous` (the stored config an update replaces), a value that is exactly the masked
 * form of the secret stored at the same place keeps that secret: a client that reads a config
 * and sends it back changed elsewhere must not replace its keys with their masks.
 */
export function sealConfig(store: Store, config: Record<string, unknown>, previous?: Record<string, unknown>): Record<string, unknown> {
  const copy = structuredClone(config);
  eachNode(copy, (node, path) => {
    for (const [name, value] of Object.entries(node)) {
      if (!isConfigSecret(name) || value === null || value === undefined) continue;
      if (typeof value === 'string') {
        const before = nodeAt(previous, path)?.[name];
        const unchanged = value.includes('*******') && isSealed(before) && before.format === undefined && maskSecret(store.secrets.decrypt(before.sealed)) === value;
        node[name] = unchanged ? before : ({ sealed: store.secrets.encrypt(value) } satisfies Sealed);
      } else {
        node[name] = { sealed: store.secrets.encrypt(JSON.stringify(value)), format: 'json' } satisfies Sealed;
      }
    }
    eachGuardrailHeaders(node, (headers, at) => {
      const before = headersAt(nodeAt(previous, path), at);
      for (const [name, value] of Object.entries(headers)) {
        // Not a string: the check's parameter schema refuses it; nothing to seal.
        if (typeof value !== 'string') continue;
        const old = before?.[name];
        const unchanged = isSealed(old) && old.format === undefined && maskSecret(store.secrets.decrypt(old.sealed)) === value;
        headers[name] = unchanged ? old : ({ sealed: store.secrets.encrypt(value) } satisfies Sealed);
      }
    });
  });
  return copy;
}

/** A copy of a stored config for admin reads: secrets masked, never in clear. */
export function maskConfig(store: Store, stored: Record<string, unknown>): Record<string, unknown> {
  const copy = structuredClone(stored);
  eachNode(copy, (node) => {
    for (const [name, value] of Object.entries(node)) {
      if (!isConfigSecret(name) || !isSealed(value)) continue;
      node[name] = value.format === 'json' ? '[masked]' : maskSecret(store.secrets.decrypt(value.sealed));
    }
    eachGuardrailHeaders(node, (headers) => {
      for (const [name, value] of Object.entries(headers)) if (isSealed(value)) headers[name] = maskSecret(store.secrets.decrypt(value.sealed));
    });
  });
  return copy;
}

/** A copy of a stored config with its secrets in clear, as the router needs it. */
export function unsealConfig(store: Store, stored: Record<string, unknown>): Record<string, unknown> {
  const copy = structuredClone(stored);
  eachNode(copy, (node) => {
    for (const [name, value] of Object.entries(node)) {
      if (!isConfigSecret(name) || !isSealed(value)) continue;
      const plain = store.secrets.decrypt(value.sealed);
      node[name] = value.format === 'json' ? (JSON.parse(plain) as unknown) : plain;
    }
    eachGuardrailHeaders(node, (headers) => {
      for (const [name, value] of Object.entries(headers)) if (isSealed(value)) headers[name] = store.secrets.decrypt(value.sealed);
    });
  });
  return copy;
}

/** True when some node of the config carries a guardrail list (so the guardrails service has work). */
export function hasGuardrailLists(config: Node): boolean {
  let found = false;
  eachNode(config, (node) => {
    found ||= GUARDRAIL_LISTS.some((list) => node[list] !== undefined);
  });
  return found;
}

/** Levels of `targets` walked before validation: twice what the routing schema accepts (4). */
const HIDE_DEPTH = 8;

/**
 * A config as the audit trail may see it: the header values of its inline guardrails `[masked]`.
 * Copies only the nodes, guardrails and checks it changes and shares the rest (no deep clone: the
 * body is not yet validated, and may nest deeper than a recursive copy survives). Nodes deeper
 * than {@link HIDE_DEPTH} are left alone: the routing schema refuses such a config, and the audit
 * masks whatever lies that deep whole.
 *
 * The admin framework builds the audit record from the request body once the handler has run,
 * and its secret field names do not include `headers`: a handler puts this config in the body in
 * place of the one it works with.
 */
export function hiddenGuardrailHeaders(node: Node, depth = 0): Node {
  let copy: Node | undefined;
  for (const list of GUARDRAIL_LISTS) {
    const guardrails = node[list];
    if (!Array.isArray(guardrails)) continue;
    const hidden = guardrails.map(hiddenInGuardrail);
    if (hidden.some((g, i) => g !== guardrails[i])) (copy ??= { ...node })[list] = hidden;
  }
  const targets = node.targets;
  if (depth < HIDE_DEPTH && Array.isArray(targets)) {
    const hidden = targets.map((t: unknown) => (isObject(t) ? hiddenGuardrailHeaders(t, depth + 1) : t));
    if (hidden.some((t, i) => t !== targets[i])) (copy ??= { ...node }).targets = hidden;
  }
  return copy ?? node;
}

function hiddenInGuardrail(guardrail: unknown): unknown {
  if (!isObject(guardrail)) return guardrail;
  let copy: Node | undefined;
  for (const [check, params] of Object.entries(guardrail)) {
    if (!isObject(params) || !isObject(params.headers)) continue;
    const headers = Object.fromEntries(Object.keys(params.headers).map((name) => [name, '[masked]']));
    (copy ??= { ...guardrail })[check] = { ...params, headers };
  }
  return copy ?? guardrail;
}
