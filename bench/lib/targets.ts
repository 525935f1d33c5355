/**
 * The three things every scenario measures, side by side in the same run:
 *
 *   direct   client ──────────────────────────────► mock      (the floor: mock + client cost)
 *   bare     client ──► bare proxy (node+undici) ──► mock      (the floor for any Node proxy)
 *   gateway  client ──► gateway (empty pipeline) ──► mock
 *
 * Every target receives the same headers and body, so the bytes on the client leg are identical;
 * only the gateway reads its `x-gateway-*` headers, the others pass or ignore them.
 */

export type TargetName = 'direct' | 'bare' | 'gateway';

export const TARGET_NAMES: readonly TargetName[] = ['direct', 'bare', 'gateway'];

/** A request as a load generator sends it. */
export interface BenchRequest {
  readonly path: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

export interface Target {
  readonly name: TargetName;
  /** http://127.0.0.1:PORT */
  readonly origin: string;
  /** The process serving `origin` (the mock for `direct`). */
  readonly pid: number;
  /**
   * A chat completion request for this target. `directives` are mock directives (`chunks=20;
   * chunk_delay=5`): a path prefix for direct and bare, the custom host's path for the gateway.
   */
  chatRequest(options?: { stream?: boolean; directives?: string }): BenchRequest;
}

/** ~150 bytes, like the small-prompt case in peer benchmarks (Bifrost uses ~200 B). */
const CHAT_BODY = {
  model: 'gpt-4o-mini',
  messages: [
    { role: 'system', content: 'You are terse.' },
    { role: 'user', content: 'Say hello to the benchmark in one short line.' },
  ],
  max_tokens: 16,
};

export const CHAT_BODY_JSON = JSON.stringify(CHAT_BODY);
export const CHAT_STREAM_BODY_JSON = JSON.stringify({ ...CHAT_BODY, stream: true });

function directiveSegment(directives: string | undefined): string {
  return directives ? `/mock/${directives}` : '';
}

/** Builds a target; `mockOrigin` is where the gateway is told to send (direct mode). */
export function createTarget(name: TargetName, origin: string, pid: number, mockOrigin: string): Target {
  return {
    name,
    origin,
    pid,
    chatRequest({ stream = false, directives } = {}) {
      const segment = directiveSegment(directives);
      const throughGateway = name === 'gateway';
      return {
        path: throughGateway ? '/v1/chat/completions' : `${segment}/v1/chat/completions`,
        headers: {
          'content-type': 'application/json',
          authorization: 'Bearer sk-bench',
          'x-gateway-provider': 'openai',
          'x-gateway-custom-host': `${mockOrigin}${throughGateway ? segment : ''}/v1`,
        },
        body: stream ? CHAT_STREAM_BODY_JSON : CHAT_BODY_JSON,
      };
    },
  };
}
