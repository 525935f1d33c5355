/**
 * The gateway's MCP server for one session: each request is checked (enabled, allowed), routed
 * to its upstream server and answered with the upstream's answer, unchanged but for names.
 *
 *   tools/list, prompts/list, resources/list (+ templates)   the union of the session's servers,
 *                                                            minus what is disabled or not allowed
 *   tools/call, prompts/get, resources/read                  refused with -32010 when not allowed;
 *                                                            progress passed through as it comes;
 *                                                            cancelled when the client cancels or goes
 *
 * Guardrails (when the `guardrails` plugin is in the pipeline and the key or workspace has some):
 * input guardrails read the string values of `tools/call` and `prompts/get` arguments before the
 * upstream call, output guardrails the text of the result (`text` content items, embedded text
 * resources, string leaves of `structuredContent`; `prompts/get` messages; `resources/read` text
 * contents). A `deny` is -32010 naming the guardrails and checks, and the upstream is not called
 * (input); `redact` rewrites the strings in place in a copy. Checks see route `mcp`, the server's
 * slug as provider and the tool, prompt or resource as model.
 *
 * On the aggregated endpoint (`/v1/mcp`) tool and prompt names carry their server's slug,
 * `<slug>__<name>`, so two servers never collide; resources keep their URIs and are routed by the
 * server that listed them.
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListResourcesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  ResultSchema,
  type Prompt,
  type Resource,
  type ResourceTemplate,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { GatewayContext, GuardrailOutcome, GuardrailService, McpCall, Store, TextVerdict } from '../../core/index.js';
import { VERSION } from '../../core/version.js';
import { reachableServer, reachableServers, refusal, type CapabilityType, type Reachable } from './access.js';
import { SEPARATOR } from './call.js';
import { GatewayMcpError, McpErrors, relayed } from './errors.js';
import type { Session } from './session.js';
import { describe, UpstreamUnavailable } from './upstream.js';


export interface ProxyOptions {
  store: Store;
  timeoutFor(slug: string): number;
  /** The `guardrails` service, looked up lazily; absent: arguments and results pass unchecked. */
  guardrails?: () => GuardrailService | undefined;
}

interface Extra {
  signal: AbortSignal;
  requestId: string | number;
  _meta?: { progressToken?: string | number };
  sendNotification(n: { method: 'notifications/progress'; params: { progressToken: string | number; progress: number; total?: number; message?: string } }): Promise<void>;
}

/** Lists every page of an upstream list call. */
async function all<T>(page: (cursor: string | undefined) => Promise<{ nextCursor?: string } & Record<string, unknown>>, key: string, signal: AbortSignal): Promise<T[]> {
  const out: T[] = [];
  let cursor: string | undefined;
  for (let i = 0; i < 100; i++) {
    if (signal.aborted) break;
    const answer = await page(cursor);
    out.push(...((answer[key] as T[] | undefined) ?? []));
    if (answer.nextCursor === undefined || answer.nextCursor === '') break;
    cursor = answer.nextCursor;
  }
  return out;
}

// ── guardrails: the texts of arguments and results, and where each one goes back ─────────────

type Key = string | number;

/** The strings guardrails read, with where each sits in its object (for redaction to write back). */
interface Texts {
  texts: string[];
  /** `json`: a subtree deeper than {@link MAX_DEPTH}, checked as its JSON text. */
  slots: Array<{ path: Key[]; json: boolean }>;
}

/** How deep argument and `structuredContent` objects are walked; below that a subtree is checked as JSON. */
const MAX_DEPTH = 16;

function texts(): Texts {
  return { texts: [], slots: [] };
}

/** Every string leaf of `value`, depth-first in key order (object keys are not read). */
function leaves(value: unknown, into: Texts, path: Key[], depth: number): void {
  if (typeof value === 'string') {
    into.texts.push(value);
    into.slots.push({ path: [...path], json: false });
    return;
  }
  if (typeof value !== 'object' || value === null) return;
  if (depth >= MAX_DEPTH) {
    // Not a way around the checks: too deep to walk, checked whole.
    into.texts.push(JSON.stringify(value));
    into.slots.push({ path: [...path], json: true });
    return;
  }
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      path.push(i);
      leaves(value[i], into, path, depth + 1);
      path.pop();
    }
    return;
  }
  for (const k of Object.keys(value)) {
    path.push(k);
    leaves((value as Record<string, unknown>)[k], into, path, depth + 1);
    path.pop();
  }
}

/** The text of one MCP content item (`text`, or an embedded resource's `text`) at `path`. */
function contentText(item: unknown, path: Key[], into: Texts): void {
  if (typeof item !== 'object' || item === null) return;
  const c = item as { type?: unknown; text?: unknown; resource?: { text?: unknown } };
  if (c.type === 'text' && typeof c.text === 'string') {
    into.texts.push(c.text);
    into.slots.push({ path: [...path, 'text'], json: false });
  } else if (c.type === 'resource' && typeof c.resource?.text === 'string') {
    into.texts.push(c.resource.text);
    into.slots.push({ path: [...path, 'resource', 'text'], json: false });
  }
}

const argumentTexts = (args: unknown): Texts => {
  const out = texts();
  leaves(args, out, [], 0);
  return out;
};

const toolResultTexts = (result: Record<string, unknown>): Texts => {
  const out = texts();
  if (Array.isArray(result.content)) result.content.forEach((item: unknown, i) => contentText(item, ['content', i], out));
  if (result.structuredContent !== undefined) leaves(result.structuredContent, out, ['structuredContent'], 0);
  return out;
};

const promptTexts = (result: Record<string, unknown>): Texts => {
  const out = texts();
  const messages = Array.isArray(result.messages) ? (result.messages as Array<{ content?: unknown }>) : [];
  messages.forEach((m, i) => contentText(m?.content, ['messages', i, 'content'], out));
  return out;
};

const resourceTexts = (result: Record<string, unknown>): Texts => {
  const out = texts();
  const contents = Array.isArray(result.contents) ? (result.contents as unknown[]) : [];
  contents.forEach((c, i) => {
    const text = (c as { text?: unknown } | null)?.text;
    if (typeof text === 'string') {
      out.texts.push(text);
      out.slots.push({ path: ['contents', i, 'text'], json: false });
    }
  });
  return out;
};

/** A copy of `root` with the redacted texts in their places. */
function writeBack<T>(root: T, found: Texts, parts: string[]): T {
  let copy: unknown = structuredClone(root);
  found.slots.forEach((slot, i) => {
    const next = parts[i];
    if (next === undefined || next === found.texts[i]) return;
    let value: unknown = next;
    if (slot.json) {
      try {
        value = JSON.parse(next);
      } catch {
        // The redaction cut through the JSON's syntax: the subtree becomes its redacted text.
      }
    }
    if (slot.path.length === 0) {
      copy = value;
      return;
    }
    let holder = copy as Record<Key, unknown>;
    for (let k = 0; k < slot.path.length - 1; k++) holder = holder[slot.path[k]!] as Record<Key, unknown>;
    holder[slot.path[slot.path.length - 1]!] = value;
  });
  return copy as T;
}

/** `slug (check, check)` for each guardrail that denied. */
function deniedBy(outcomes: GuardrailOutcome[]): string {
  return outcomes
    .filter((o) => o.deny && !o.verdict)
    .map((o) => {
      const failed = o.checks.filter((c) => !c.verdict).map((c) => c.id);
      return failed.length === 0 ? o.id : `${o.id} (${failed.join(', ')})`;
    })
    .join('; ');
}

function isPromise<T>(v: unknown): v is Promise<T> {
  return typeof (v as { then?: unknown } | null)?.then === 'function';
}

/** The server and upstream name a client-side name means on the session's endpoint; -32011 or -32012 when there is none. */
export function routeName(store: Store, session: Session, name: string): { r: Reachable; name: string } {
  if (session.scope.kind === 'one') {
    const r = reachableServer(store, session.principal, session.scope.slug);
    if (r === undefined) throw McpErrors.unavailable(`The MCP server "${session.scope.slug}" is no longer available.`);
    return { r, name };
  }
  const at = name.indexOf(SEPARATOR);
  const r = at > 0 ? reachableServer(store, session.principal, name.slice(0, at)) : undefined;
  if (r === undefined) throw McpErrors.notFound(`"${name}" names no MCP server this key may use (names here are <server>${SEPARATOR}<name>).`);
  return { r, name: name.slice(at + SEPARATOR.length) };
}

/** -32010 naming the reason when the session's key may not use the capability. */
export function checkUse(store: Store, session: Session, r: Reachable, type: CapabilityType, name: string): void {
  const why = refusal(store, session.principal, r, type, name);
  if (why !== null) throw McpErrors.denied(why);
}

export function createProxyServer(session: Session, options: ProxyOptions): Server {
  const { store } = options;
  const server = new Server(
    { name: session.scope.kind === 'one' ? `gateway/${session.scope.slug}` : 'gateway', version: VERSION },
    { capabilities: { tools: {}, prompts: {}, resources: {} } },
  );
  /** Which server each resource URI came from (aggregated endpoint). */
  const resourceServer = new Map<string, string>();

  /** The servers this session reaches now (a server archived since drops out). */
  function servers(): Reachable[] {
    if (session.scope.kind === 'all') return reachableServers(store, session.principal);
    const one = reachableServer(store, session.principal, session.scope.slug);
    return one === undefined ? [] : [one];
  }

  const route = (name: string): { r: Reachable; name: string } => routeName(store, session, name);
  const exposed = (r: Reachable, name: string): string => (session.scope.kind === 'all' ? `${r.server.slug}${SEPARATOR}${name}` : name);
  const check = (r: Reachable, type: CapabilityType, name: string): void => checkUse(store, session, r, type, name);

  /** The upstream client, or -32011 naming the server (never its credentials). */
  async function client(r: Reachable): Promise<Client> {
    try {
      return await session.upstream(r);
    } catch (err) {
      throw McpErrors.unavailable(err instanceof UpstreamUnavailable ? err.message : `MCP server "${r.server.slug}": ${describe(err)}`);
    }
  }

  /** Lists from every server; one that fails is left out of an aggregated list, and fails a single one. */
  async function gather<T>(extra: Extra, list: (c: Client, signal: AbortSignal) => Promise<T[]>, keep: (r: Reachable, item: T) => T | undefined): Promise<T[]> {
    const targets = servers();
    const results = await Promise.all(
      targets.map(async (r) => {
        try {
          const items = await list(await client(r), extra.signal);
          return items.map((item) => keep(r, item)).filter((x): x is T => x !== undefined);
        } catch (err) {
          if (session.scope.kind === 'one') throw err instanceof McpError ? relayed(err) : McpErrors.unavailable(`MCP server "${r.server.slug}": ${describe(err)}`);
          return [];
        }
      }),
    );
    return results.flat();
  }

  /** Runs one upstream call with the request's cancellation, timeout and progress, and records its outcome. */
  async function call<T>(extra: Extra, r: Reachable, run: (c: Client, opts: Parameters<Client['callTool']>[2]) => Promise<T>): Promise<T> {
    const record = session.calls.get(extra.requestId);
    if (record !== undefined) record.server = r.server.slug;
    const c = await client(r);
    // Cancelled by the client (notifications/cancelled: the SDK aborts extra.signal) or gone (its
    // HTTP request ended: index.ts aborts the local one). One listener, not AbortSignal.any's
    // composite signal per call.
    const local = session.aborts.get(extra.requestId);
    let signal = extra.signal;
    if (local !== undefined) {
      if (extra.signal.aborted) local.abort(extra.signal.reason);
      else extra.signal.addEventListener('abort', () => local.abort(extra.signal.reason), { once: true });
      signal = local.signal;
    }
    const token = extra._meta?.progressToken;
    const started = performance.now();
    try {
      return await run(c, {
        signal,
        timeout: options.timeoutFor(r.server.slug),
        resetTimeoutOnProgress: true,
        ...(token === undefined
          ? {}
          : { onprogress: (p) => void extra.sendNotification({ method: 'notifications/progress', params: { ...p, progressToken: token } }).catch(() => undefined) }),
      });
    } catch (err) {
      if (err instanceof McpError) {
        if (err.code === ErrorCode.ConnectionClosed) throw McpErrors.unavailable(`The MCP server "${r.server.slug}" closed the connection mid-call.`);
        throw relayed(err);
      }
      if (signal.aborted) throw new GatewayMcpError(ErrorCode.ConnectionClosed, 'The call was cancelled.');
      throw McpErrors.unavailable(`The MCP server "${r.server.slug}" failed mid-call: ${describe(err)}`);
    } finally {
      if (record !== undefined) record.upstream_ms = performance.now() - started;
    }
  }

  /**
   * The request's guardrails on `root`'s texts: `root` itself when none apply or nothing was
   * redacted, a copy with the redacted texts otherwise; -32010 when a `deny` guardrail fails.
   */
  function screen<T>(extra: Extra, phase: 'input' | 'output', r: Reachable, name: string, root: T, collect: (root: T) => Texts, what: string): T | Promise<T> {
    const service = options.guardrails?.();
    if (service === undefined) return root;
    const ctx: GatewayContext | undefined = session.contexts.get(extra.requestId);
    // Every request a handler sees was tracked with its HTTP request; were one not, fail closed.
    if (ctx === undefined) throw McpErrors.denied(`Guardrails could not check ${what}: the request is not tracked.`);
    let found: Texts | undefined;
    const about = { route: 'mcp', provider: r.server.slug, model: name };
    const failed = (err: unknown): never => {
      if (err instanceof McpError) throw relayed(err);
      throw new GatewayMcpError(ErrorCode.InternalError, `Guardrails could not check ${what}: ${err instanceof Error ? err.message : String(err)}`);
    };
    let v: ReturnType<GuardrailService['checkTexts']>;
    try {
      v = service.checkTexts(ctx, phase, () => (found = collect(root)).texts, about);
    } catch (err) {
      return failed(err);
    }
    if (v === undefined) return root;
    const apply = (verdict: TextVerdict): T => {
      if (verdict.denied) {
        const results = ctx.get('guardrailResults');
        const message = phase === 'input' ? `A guardrail denied ${what}: it was not sent to the MCP server. Denied by ${deniedBy(verdict.outcomes)}.` : `A guardrail denied ${what}. Denied by ${deniedBy(verdict.outcomes)}.`;
        throw McpErrors.denied(message, results === undefined ? undefined : { hook_results: results });
      }
      return verdict.parts === found!.texts || verdict.redacted === 0 ? root : writeBack(root, found!, verdict.parts);
    };
    return isPromise<TextVerdict>(v) ? v.then(apply, failed) : apply(v);
  }

  const note = (extra: Extra, f: (rec: McpCall) => void): void => {
    const rec = session.calls.get(extra.requestId);
    if (rec !== undefined) f(rec);
  };

  server.setRequestHandler(ListToolsRequestSchema, async (_req, extra) => ({
    tools: await gather<Tool>(extra as Extra, (c, signal) => all<Tool>((cursor) => c.listTools({ cursor }, { signal }), 'tools', signal), (r, t) =>
      refusal(store, session.principal, r, 'tool', t.name) === null ? { ...t, name: exposed(r, t.name) } : undefined,
    ),
  }));

  server.setRequestHandler(CallToolRequestSchema, async (req, extra) => {
    const { r, name } = route(req.params.name);
    check(r, 'tool', name);
    // Also without arguments: checks on metadata or on the tool's name (as `model`) still apply.
    const args = await screen(extra as Extra, 'input', r, name, req.params.arguments, argumentTexts, "the tool's arguments");
    // The result is checked as a tools/call result once, by this side's SDK server on the way out
    // (and against the tool's output schema by the client, which listed it): upstream, the SDK
    // client checks only that it is a result.
    const params = { ...req.params, name, ...(args === undefined ? {} : { arguments: args }) };
    const answer = await call(extra as Extra, r, (c, opts) => c.request({ method: 'tools/call', params }, ResultSchema, opts));
    const result = await screen(extra as Extra, 'output', r, name, answer as Record<string, unknown>, toolResultTexts, "the tool's result");
    if (result.isError === true) note(extra as Extra, (rec) => (rec.outcome = 'error'));
    return result;
  });

  server.setRequestHandler(ListPromptsRequestSchema, async (_req, extra) => ({
    prompts: await gather<Prompt>(extra as Extra, (c, signal) => (c.getServerCapabilities()?.prompts ? all<Prompt>((cursor) => c.listPrompts({ cursor }, { signal }), 'prompts', signal) : Promise.resolve([])), (r, p) =>
      refusal(store, session.principal, r, 'prompt', p.name) === null ? { ...p, name: exposed(r, p.name) } : undefined,
    ),
  }));

  server.setRequestHandler(GetPromptRequestSchema, async (req, extra) => {
    const { r, name } = route(req.params.name);
    check(r, 'prompt', name);
    // Also without arguments: checks on metadata or on the tool's name (as `model`) still apply.
    const args = await screen(extra as Extra, 'input', r, name, req.params.arguments, argumentTexts, "the prompt's arguments");
    const prompt = await call(extra as Extra, r, (c, opts) => c.getPrompt({ ...req.params, name, ...(args === undefined ? {} : { arguments: args }) }, opts));
    return screen(extra as Extra, 'output', r, name, prompt as Record<string, unknown>, promptTexts, 'the prompt');
  });

  server.setRequestHandler(ListResourcesRequestSchema, async (_req, extra) => ({
    resources: await gather<Resource>(extra as Extra, (c, signal) => (c.getServerCapabilities()?.resources ? all<Resource>((cursor) => c.listResources({ cursor }, { signal }), 'resources', signal) : Promise.resolve([])), (r, res) => {
      if (refusal(store, session.principal, r, 'resource', res.uri) !== null) return undefined;
      resourceServer.set(res.uri, r.server.slug);
      return res;
    }),
  }));

  server.setRequestHandler(ListResourceTemplatesRequestSchema, async (_req, extra) => ({
    resourceTemplates: await gather<ResourceTemplate>(
      extra as Extra,
      (c, signal) => (c.getServerCapabilities()?.resources ? all<ResourceTemplate>((cursor) => c.listResourceTemplates({ cursor }, { signal }), 'resourceTemplates', signal) : Promise.resolve([])),
      (r, t) => (refusal(store, session.principal, r, 'resource', t.uriTemplate) === null ? t : undefined),
    ),
  }));

  server.setRequestHandler(ReadResourceRequestSchema, async (req, extra) => {
    const uri = req.params.uri;
    let r: Reachable | undefined;
    if (session.scope.kind === 'one') r = route(uri).r;
    else {
      const slug = resourceServer.get(uri);
      r = slug === undefined ? undefined : reachableServer(store, session.principal, slug);
      if (r === undefined) throw McpErrors.notFound(`The resource "${uri}" is not one this endpoint listed (list resources first).`);
    }
    check(r, 'resource', uri);
    const resource = await call(extra as Extra, r, (c, opts) => c.readResource(req.params, opts));
    return screen(extra as Extra, 'output', r, uri, resource as Record<string, unknown>, resourceTexts, 'the resource');
  });

  return server;
}
