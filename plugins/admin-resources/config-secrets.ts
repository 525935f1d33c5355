/**
 * Provider secrets inside routing configs. A config may carry provider keys on any node of its
 * tree (`targets[0].targets[1].api_key`); at rest each one is replaced by `{"sealed": "v1:…"}`,
 * reads show it masked (`sk-a*******xyz`), and only the router gets it back in clear.
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
  });
  return copy;
}
