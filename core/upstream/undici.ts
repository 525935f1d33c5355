/**
 * undici's Agent and connector, from their own modules. undici's index loads the whole library
 * (fetch, WebSocket, EventSource, cookies, caches, mocks and proxies) to export them: about 0.1 s
 * of every start, for the two classes the gateway needs at boot. What else it uses of undici
 * (`request`: token exchanges, webhooks, exporters, embeddings) imports the index when it first runs.
 *
 * Every dispatcher keeps the API undici's index gives it (`agent.request()`, `stream`, `pipeline`,
 * `upgrade`, `connect`: plugins call them on `app.upstream`), installed here as the index installs
 * it, from the same modules, so whichever loads first, the methods are the same.
 *
 * These are undici's own files, not its public exports: undici is pinned to one version in
 * package.json, and every test run starts the gateway through them, so a change of layout in an
 * upgrade fails at once.
 */
import { createRequire } from 'node:module';
import type * as Undici from 'undici';

const load = createRequire(import.meta.url);

const Dispatcher = load('undici/lib/dispatcher/dispatcher.js') as typeof Undici.Dispatcher;
Object.assign(Dispatcher.prototype, load('undici/lib/api/index.js'));

export const Agent = load('undici/lib/dispatcher/agent.js') as typeof Undici.Agent;
export type Agent = Undici.Agent;
export const buildConnector = load('undici/lib/core/connect.js') as typeof Undici.buildConnector;
