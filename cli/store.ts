/**
 * The store a CLI command works on: the data dir of a config, opened the way the gateway opens it.
 * In distributed mode (store.postgres and store.redis set) the data dir is the host's replica: it
 * is caught up first, and writes go through control-plane write scopes so they reach PostgreSQL
 * (and every host) before the command prints success. The bootstrap runs as at a first start, so
 * a command that is the first to open a data dir prints the admin key it created.
 */
import { loadConfigFile, formatProblem } from '../core/config/load.js';
import { openStore, type Store } from '../core/store/store.js';
import { bootstrap } from '../core/store/bootstrap.js';
import { openDistributed, type Distributed } from '../core/store/distributed/connections.js';
import { requireSharedMasterKey } from '../core/store/distributed/replica.js';
import { createLogger } from '../core/logger.js';

export interface CliStore {
  store: Store;
  organisationId: string;
  /** Runs `fn` as one control-plane write (in a write scope when distributed). */
  write<T>(fn: () => T): Promise<T>;
  close(): Promise<void>;
}

/**
 * Opens the store of `configFile`'s data dir, or writes the problem to stderr (prefixed with
 * `gateway <command>:`) and returns undefined.
 */
export async function openCliStore(configFile: string, command: string): Promise<CliStore | undefined> {
  const { config, problems } = await loadConfigFile(configFile);
  if (config === null || problems.length > 0) {
    for (const p of problems) process.stderr.write(`${formatProblem(p)}\n`);
    return undefined;
  }
  const log = createLogger();
  const { postgres, redis } = config.store;
  let distributed: Distributed | undefined;
  let store: Store;
  try {
    if (postgres && redis) {
      requireSharedMasterKey(process.env);
      distributed = await openDistributed(postgres, redis, log);
    }
    store = openStore({ dir: config.store.path, log, mapSize: config.store.map_size, distributed });
  } catch (err) {
    await distributed?.close();
    process.stderr.write(`gateway ${command}: ${(err as Error).message}\n`);
    return undefined;
  }
  try {
    await store.replica?.start({ feed: false });
    const boot = await bootstrap(store, process.env, log);
    if (boot.generatedAdminKey !== undefined) {
      // This run was the first to open the data dir: the bootstrap admin key exists only here.
      process.stdout.write(`admin_key: ${boot.generatedAdminKey}\n`);
    }
    return {
      store,
      organisationId: boot.organisationId,
      write: (fn) => (store.replica ? store.replica.writeScope(fn) : Promise.resolve(fn())),
      close: () => store.close(),
    };
  } catch (err) {
    await store.close();
    process.stderr.write(`gateway ${command}: ${(err as Error).message}\n`);
    return undefined;
  }
}
