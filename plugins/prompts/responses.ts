/**
 * The Responses API's `prompt: {id, version?, variables?}` when `id` names a prompt stored in this
 * gateway (visible to the caller's workspace): the prompt is rendered and the call becomes a
 * normal Responses request, with the rendered messages (or text) as `input` ahead of any input
 * the caller sent, the prompt's parameters, and the prompt's target. When `id` names no stored
 * prompt, the field goes to the provider untouched (a prompt kept at OpenAI).
 *
 * Runs as a body hook, so the `prompts` plugin sits before `virtual-keys` and `config-strategy`
 * in the pipeline: the target it sets is what they route by.
 */
import type { GatewayContext } from '../../core/index.js';
import type { Store } from '../../core/index.js';
import { findPrompt } from './store.js';
import { renderRequest } from './routes.js';
import { applyTarget } from './completions.js';

interface ResponsesPrompt {
  id: string;
  version?: string | null;
  variables?: Record<string, unknown> | null;
}

/** Chat parameters as the Responses API names them. */
const RENAMED: Record<string, string> = { max_tokens: 'max_output_tokens', max_completion_tokens: 'max_output_tokens' };
/** Parameters the Responses API takes as they are. */
const KEPT = new Set(['temperature', 'top_p', 'metadata', 'parallel_tool_calls', 'user', 'store', 'truncation']);

export function renderResponsesPrompt(store: Store, ctx: GatewayContext): void {
  const body = ctx.body;
  const prompt = body?.prompt as ResponsesPrompt | undefined;
  if (body === undefined || prompt === undefined || typeof prompt.id !== 'string') return;
  const principal = ctx.get('principal');
  const stored = findPrompt(store, prompt.id);
  // Not ours (or not this workspace's): the provider's own prompt, forwarded untouched.
  if (principal === undefined || stored === undefined || stored.status !== 'active' || (principal.workspace_id !== null && stored.workspace_id !== principal.workspace_id)) return;
  const version = typeof prompt.version === 'string' && /^[1-9][0-9]{0,8}$/.test(prompt.version) ? Number(prompt.version) : undefined;
  const rendered = renderRequest(store, principal, prompt.id, { variables: prompt.variables ?? {}, ...(version !== undefined ? { version } : {}) });
  const next: Record<string, unknown> = { ...body };
  delete next.prompt;
  const items = typeof rendered.body.prompt === 'string'
    ? [{ role: 'user', content: rendered.body.prompt }]
    : (rendered.body.messages as Array<{ role: string; content: string }>).map((m) => ({ role: m.role === 'system' ? 'developer' : m.role, content: m.content }));
  const callerInput = body.input === undefined ? [] : typeof body.input === 'string' ? [{ role: 'user', content: body.input }] : (body.input as unknown[]);
  next.input = [...items, ...callerInput];
  if (typeof body.model !== 'string' || body.model === '') next.model = rendered.version.model;
  for (const [key, value] of Object.entries(rendered.version.parameters)) {
    const name = RENAMED[key] ?? (KEPT.has(key) ? key : undefined);
    if (name !== undefined && next[name] === undefined) next[name] = value;
  }
  ctx.setBody(next);
  applyTarget(ctx, rendered.version);
  ctx.set('promptRef', { slug: rendered.prompt.slug, version_id: rendered.version.id, version: rendered.version.version });
}
