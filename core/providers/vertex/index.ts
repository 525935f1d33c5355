/**
 * Google Cloud Vertex AI: Gemini and Anthropic's Claude models, one provider id (`vertex-ai`).
 *
 *   OpenAI chat ─┬─ claude-* ─► claude.ts ─► POST …/publishers/anthropic/models/{m}:rawPredict
 *                │                            (:streamRawPredict)          Anthropic Messages body
 *                └─ others ──► gemini.ts ─► POST …/publishers/google/models/{m}:generateContent
 *                                             (:streamGenerateContent?alt=sse)      Gemini body
 *   OpenAI embeddings ───────► gemini.ts ─► POST …/publishers/google/models/{m}:predict
 *
 *   … = https://{region}-aiplatform.googleapis.com/v1/projects/{project}/locations/{region}
 *
 * The model picks the half, per call; both reuse the Gemini and Anthropic translators. Anthropic's
 * Messages API (`POST /v1/messages`) reaches a Claude model natively (`nativeCall`): the client's
 * body goes to `:rawPredict` / `:streamRawPredict` as Vertex wants it (no `model`,
 * `anthropic_version`), so thinking, prompt caching and every other Messages field arrive, and
 * the answer comes back untouched. Other models get it translated through chat.
 *
 * Fields (virtual key, config target, or `x-gateway-vertex-*` headers in direct mode):
 * `vertex_project_id`, `vertex_region` (`global` allowed), and the credentials, either
 * - `vertex_service_account_json`: a service-account key, exchanged for an access token
 *   (access-token.ts) that `sign` adds as `authorization: Bearer …`, after every hook ran;
 * - or the target's API key (in direct mode `Authorization: Bearer <access token>`), sent as is.
 */
import { Agent } from '../../upstream/undici.js';
import { Errors } from '../../errors.js';
import type { Target } from '../../router/types.js';
import type { ProviderAdapter, SignableRequest, TranslateContext, Translator } from '../types.js';
import { guardedConnector } from '../../upstream/connect-guard.js';
import type { CustomHostPolicy } from '../../upstream/ssrf.js';
import { accessTokens, type TokenServices } from './access-token.js';
import { claudeOnVertex, isClaudeModel, nativeMessages } from './claude.js';
import { geminiOnVertex } from './gemini.js';
import { vertexUrl } from './location.js';
import { SERVICE_ACCOUNT_FIELD, serviceAccountOf } from './service-account.js';

export type { TokenServices } from './access-token.js';

/** The translator for the call's model: Claude's or Gemini's (which also embeds). */
function half(ctx: TranslateContext): Translator {
  if (!isClaudeModel(ctx.request.model)) return geminiOnVertex;
  if (!claudeOnVertex.routes.has(ctx.route)) throw Errors.unsupportedRoute('Claude models on Vertex AI serve chat only.');
  return claudeOnVertex;
}

const translate: Translator = {
  routes: new Set(['chat.completions', 'embeddings']),
  request: (ctx) => half(ctx).request(ctx),
  response: (ctx, body) => half(ctx).response(ctx, body),
  stream: (ctx) => half(ctx).stream(ctx),
  error: (ctx, status, body, headers) => half(ctx).error(ctx, status, body, headers),
};

/** Without the gateway's services (an adapter used on its own): public token endpoints only. */
const PUBLIC_ONLY: CustomHostPolicy = Object.freeze({ allow: [], allow_loopback: false }) as CustomHostPolicy;
let standalone: TokenServices | undefined;
function standaloneServices(): TokenServices {
  standalone ??= {
    policy: () => PUBLIC_ONLY,
    dispatcher: new Agent({ connect: guardedConnector({ timeout: 10_000, policy: () => PUBLIC_ONLY }) }),
  };
  return standalone;
}

function hasServiceAccount(target: Target): boolean {
  const raw = target.providerOptions?.[SERVICE_ACCOUNT_FIELD];
  return raw !== undefined && raw !== null && raw !== '';
}

/**
 * The Vertex AI adapter. `services` are the gateway's URL policy and upstream agent, which the
 * token exchange goes through (the registry passes them); without them only public token
 * endpoints are reached, through an agent of its own with the same connect-time guard.
 *
 * @example
 *   // targets: [{ provider: vertex-ai, vertex_project_id: my-proj, vertex_region: us-east5,
 *   //             vertex_service_account_json: { type: service_account, client_email: …, private_key: … } }]
 *   // direct: x-gateway-provider: vertex-ai, x-gateway-vertex-project-id: my-proj,
 *   //         x-gateway-vertex-region: us-east5, Authorization: Bearer ya29.…
 */
export function createVertexAdapter(services?: TokenServices): ProviderAdapter {
  return {
    id: 'vertex-ai',
    baseUrl: 'https://aiplatform.googleapis.com/v1',
    routes: translate.routes,
    url: vertexUrl,
    nativeCall: (route, _target, body) => (route === 'messages' ? nativeMessages(body) : undefined),
    authHeaders(target: Target): Record<string, string> {
      // A service account wins: `sign` adds its token (and reports a malformed one, as a
      // result rather than a throw here). Otherwise the key is an access token.
      if (target.apiKey === undefined || hasServiceAccount(target)) return {};
      return { authorization: `Bearer ${target.apiKey}` };
    },
    async sign(_request: SignableRequest, target: Target): Promise<Record<string, string>> {
      const account = serviceAccountOf(target.providerOptions);
      if (account === undefined) return {};
      return { authorization: `Bearer ${await accessTokens.get(account, services ?? standaloneServices())}` };
    },
    translate,
  };
}

/** The built-in instance (standalone services); each gateway registry builds its own with the gateway's. */
export const vertexAI: ProviderAdapter = createVertexAdapter();
