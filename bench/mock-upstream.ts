/**
 * The mock upstream: a real HTTP server speaking providers' wire formats, for tests and benchmarks:
 * OpenAI's five routes (also under Azure's `/openai/deployments/<d>/…` and `/openai/v1/…` paths),
 * Anthropic's `/v1/messages` and `/v1/messages/count_tokens`, Gemini's
 * `/v1beta/models/<m>:generateContent|streamGenerateContent|batchEmbedContents`, and Bedrock's
 * `/model/<id>/converse|converse-stream|invoke` (SigV4 checked with MOCK_AWS_ACCESS_KEY_ID /
 * MOCK_AWS_SECRET_ACCESS_KEY, or any `Bearer` API key; streams as AWS event-stream frames).
 *
 * Tests steer each request with directives, as a path prefix or `x-mock-*` headers:
 *
 *   POST /mock/status=503;retry_after=2/v1/chat/completions
 *   x-mock-status: 429
 *
 * Keys: status, retry_after, retry_after_ms, delay, hang, chunks, chunk_delay, first_byte_delay,
 * reset (before_headers | mid_stream), reset_after, error_event, fail_first, key, tool_call,
 * cache_read (cached prompt tokens reported by the Anthropic and Bedrock dialects).
 * `bench/mock/directives.ts` documents each.
 *
 * CLI: `gateway mock-upstream [--port 9000] [--host 127.0.0.1]`, or
 * `node dist/bench/mock-upstream.js …` (recording off).
 */

import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { startMockUpstream } from './mock/server.js';

export { startMockUpstream } from './mock/server.js';
export type { MockUpstream, MockUpstreamOptions, RecordedRequest } from './mock/server.js';
export { DEFAULT_DIRECTIVES, parseDirectives, type Directives } from './mock/directives.js';
export { cosine, embedText } from './mock/embedding.js';
export { mockFileContent } from './mock/echo.js';
export { MOCK_AWS_ACCESS_KEY_ID, MOCK_AWS_SECRET_ACCESS_KEY } from './mock/sigv4.js';

/**
 * Starts the mock on `--port` (default 9000) and `--host` (default 127.0.0.1) and serves until
 * SIGTERM or SIGINT. `gateway mock-upstream` and `npm run mock-upstream` both land here.
 */
export async function runMockUpstream(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: { port: { type: 'string', default: '9000' }, host: { type: 'string', default: '127.0.0.1' } },
  });
  const port = Number(values.port);
  if (!/^\d+$/.test(values.port) || port > 65535) throw new Error(`invalid --port: ${values.port}`);
  // Recording off: a benchmark run would otherwise keep every request body in memory.
  const mock = await startMockUpstream({ port, host: values.host, record: false });
  process.stdout.write(`mock upstream listening on ${mock.url}\n`);
  const stop = (): void => {
    void mock.close().then(() => process.exit(0));
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  runMockUpstream(process.argv.slice(2)).catch(function fail(error: unknown) {
    process.stderr.write(`mock upstream failed: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  });
}
