/**
 * `gateway keys create`: mints an API key straight into the store of a config's data dir, for
 * operators who have the machine but no admin key yet (or lost it), and for provisioning scripts.
 *
 *   gateway keys create --type organisation|workspace-service|workspace-user --name NAME
 *                       [--workspace ID_OR_SLUG] (--scopes a,b | --preset NAME) [--config FILE]
 *
 * The key carries only the scopes asked for: a list, or a preset (completions, mcp, read-only,
 * admin; see SCOPE_PRESETS), and the command says on stderr what it granted.
 *
 * It may run while a gateway serves the same data dir: LMDB is multi-process (one robust write
 * mutex), and the insert bumps the collection version that every gateway process compares before
 * trusting its key cache, so the new key authenticates on the very next request.
 *
 * Distributed mode (store.postgres and store.redis set): the data dir is the host's replica of the
 * control plane; the command catches it up, then bootstraps and inserts in control-plane write
 * scopes, so the key is in PostgreSQL (and on every host within a second) when it is printed.
 * It needs GATEWAY_MASTER_KEY like the gateway, and fails if PostgreSQL is unreachable.
 *
 * stdout carries only what a script needs (the id and the raw key, shown this once); problems go
 * to stderr with exit code 1.
 */
import type { Store } from '../core/store/store.js';
import { openCliStore } from './store.js';
import { findWorkspace, defaultWorkspace } from '../core/admin/workspaces.js';
import { newApiKey } from '../core/store/api-key-record.js';
import { ALL_SCOPES, allowedScopes, SCOPE_PRESETS } from '../core/auth/scopes.js';
import type { ApiKeyType } from '../core/store/records.js';

export const KEYS_USAGE = `  gateway keys create --type organisation|workspace-service|workspace-user --name NAME
                      [--workspace ID_OR_SLUG] (--scopes a,b | --preset completions|mcp|read-only|admin)
                      [--config FILE]
                                     create an API key in the data dir's store; prints it once
`;

const TYPES: Record<string, ApiKeyType> = {
  organisation: 'organisation-service',
  'organisation-service': 'organisation-service',
  'workspace-service': 'workspace-service',
  'workspace-user': 'workspace-user',
};

interface CreateArgs {
  type: ApiKeyType;
  name: string;
  workspace: string | undefined;
  scopes: string[] | undefined;
  preset: string | undefined;
}

/** A problem the operator can fix: printed as is, exit 1. */
class UsageError extends Error {}

const FLAGS = new Set(['--type', '--name', '--workspace', '--scopes', '--preset']);

/** `keys create --type … --name …` (argv after the program); `--config` was already resolved by the caller. */
function parseCreate(argv: string[]): CreateArgs {
  const at = argv.indexOf('keys');
  const [sub, ...rest] = argv.slice(at + 1);
  if (sub !== 'create') throw new UsageError(sub === undefined ? 'missing subcommand: keys create' : `unknown subcommand "keys ${sub}" (expected "keys create")`);
  const flags = new Map<string, string>();
  for (let i = 0; i < rest.length; i++) {
    let arg = rest[i]!;
    let value: string | undefined;
    const eq = arg.indexOf('=');
    if (arg.startsWith('--') && eq > 0) [arg, value] = [arg.slice(0, eq), arg.slice(eq + 1)];
    if (arg === '--config' || arg === '-c') {
      if (value === undefined) i++;
      continue;
    }
    if (!FLAGS.has(arg)) throw new UsageError(`unknown argument "${arg}"`);
    value ??= rest[++i];
    if (value === undefined || value.length === 0) throw new UsageError(`${arg} needs a value`);
    flags.set(arg, value);
  }
  const typeArg = flags.get('--type');
  if (typeArg === undefined) throw new UsageError('--type is required (organisation, workspace-service or workspace-user)');
  const type = TYPES[typeArg];
  if (type === undefined) throw new UsageError(`unknown key type "${typeArg}" (expected organisation, workspace-service or workspace-user)`);
  const name = flags.get('--name');
  if (name === undefined) throw new UsageError('--name is required');
  if (name.length > 255) throw new UsageError('--name must be at most 255 characters');
  const workspace = flags.get('--workspace');
  if (workspace !== undefined && type === 'organisation-service') throw new UsageError('--workspace applies only to workspace keys');
  const scopes = flags.get('--scopes')?.split(',').map((s) => s.trim()).filter(Boolean);
  const preset = flags.get('--preset');
  if (scopes !== undefined && preset !== undefined) throw new UsageError('give --scopes or --preset, not both');
  if (scopes === undefined && preset === undefined) {
    throw new UsageError(`--scopes or --preset is required (presets: ${Object.keys(SCOPE_PRESETS).join(', ')})`);
  }
  if (preset !== undefined && SCOPE_PRESETS[preset] === undefined) {
    throw new UsageError(`unknown preset "${preset}" (expected ${Object.keys(SCOPE_PRESETS).join(', ')})`);
  }
  return { type, name, workspace, scopes, preset };
}

function checkScopes(type: ApiKeyType, scopes: string[]): string[] {
  const known = new Set(ALL_SCOPES);
  const allowed = allowedScopes(type);
  for (const scope of scopes) {
    if (!known.has(scope)) throw new UsageError(`unknown scope "${scope}"`);
    if (!allowed.has(scope)) throw new UsageError(`the scope "${scope}" cannot be given to ${type} keys`);
  }
  if (scopes.length === 0) throw new UsageError('no scope to grant');
  return [...new Set(scopes)];
}

/** The same record shape the admin API's create writes (plugins/admin-api-keys). */
function insertKey(store: Store, args: CreateArgs, organisationId: string): { id: string; raw: string; scopes: string[] } {
  let workspaceId: string | null = null;
  if (args.type !== 'organisation-service') {
    const ws = args.workspace === undefined ? defaultWorkspace(store) : findWorkspace(store, args.workspace);
    if (ws === undefined) throw new UsageError(`workspace "${args.workspace}" does not exist`);
    workspaceId = ws.id;
  }
  const scopes = checkScopes(args.type, args.scopes ?? SCOPE_PRESETS[args.preset!]!(args.type));
  const { record, raw } = newApiKey({
    type: args.type,
    name: args.name,
    description: 'Created with `gateway keys create`.',
    organisation_id: organisationId,
    workspace_id: workspaceId,
    scopes,
  });
  store.c.apiKeys.insert(record);
  return { id: record.id, raw, scopes };
}

/**
 * Runs `gateway keys …` and returns the exit code.
 *
 * @example
 *   process.exitCode = await keysCommand(['keys', 'create', '--type', 'organisation', '--name', 'ci'], 'config/gateway.yaml');
 */
export async function keysCommand(argv: string[], configFile: string): Promise<number> {
  let args: CreateArgs;
  try {
    args = parseCreate(argv);
  } catch (err) {
    process.stderr.write(`gateway keys: ${(err as Error).message}\n${KEYS_USAGE}`);
    return 1;
  }
  const opened = await openCliStore(configFile, 'keys');
  if (opened === undefined) return 1;
  try {
    const { id, raw, scopes } = await opened.write(() => insertKey(opened.store, args, opened.organisationId));
    // Shown once: only the hash is stored.
    process.stdout.write(`id: ${id}\nkey: ${raw}\n`);
    const how = args.preset !== undefined ? ` (preset ${args.preset})` : '';
    process.stderr.write(`created a ${args.type} API key with ${scopes.length} scope${scopes.length === 1 ? '' : 's'}${how}: ${scopes.join(', ')}\n`);
    process.stderr.write('store the key now: it is not shown again\n');
    return 0;
  } catch (err) {
    const message = err instanceof UsageError ? err.message : `could not create the key: ${(err as Error).message}`;
    process.stderr.write(`gateway keys: ${message}\n`);
    return 1;
  } finally {
    await opened.close();
  }
}
