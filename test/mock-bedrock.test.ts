/**
 * The mock's Bedrock Runtime, driven the way AWS clients drive Bedrock: requests signed by the
 * AWS SDK's own SigV4 signer (`@smithy/signature-v4`), stream bytes decoded by the SDK's
 * event-stream codec. If those accept what the mock sends and the mock accepts what they sign,
 * gateway tests against the mock exercise the real protocol; the mock's hand-written verifier is
 * also pinned to AWS's published test vector.
 */

import { crc32 } from 'node:zlib';
import { Hash } from '@smithy/hash-node';
import { EventStreamCodec } from '@smithy/eventstream-codec';
import { SignatureV4 } from '@smithy/signature-v4';
import { fromUtf8, toUtf8 } from '@smithy/util-utf8';
import t from 'tap';
import { request } from 'undici';
import { cosine, parseDirectives, startMockUpstream, type MockUpstream } from '../bench/mock-upstream.js';
import { encodeMessage } from '../bench/mock/event-stream.js';
import {
  canonicalRequest,
  MOCK_AWS_ACCESS_KEY_ID,
  MOCK_AWS_SECRET_ACCESS_KEY,
  signatureV4,
  verifySigV4,
} from '../bench/mock/sigv4.js';

const REGION = 'us-west-2';
const MODEL = 'anthropic.claude-3-5-haiku-20241022-v1:0';
const USER_TEXT = 'What is the capital city of France, and why is it famous?';
const SYSTEM_TEXT = 'You are terse.';
const EXPECTED_REPLY = `Mock reply to: ${USER_TEXT.slice(0, 40)}`;
const PROMPT_TOKENS = Math.ceil(SYSTEM_TEXT.length / 4) + Math.ceil(USER_TEXT.length / 4);
const OUTPUT_TOKENS = Math.ceil(EXPECTED_REPLY.length / 4);
const BEDROCK_NS = 'http://internal.amazon.com/coral/com.amazon.bedrock/';
const AUTH_NS = 'http://internal.amazon.com/coral/com.amazon.coral.service/';
const MISMATCH = 'The request signature we calculated does not match the signature you provided.';

const CONVERSE = {
  system: [{ text: SYSTEM_TEXT }],
  messages: [{ role: 'user', content: [{ text: USER_TEXT }] }],
  inferenceConfig: { maxTokens: 256 },
};
const TOOLS = {
  tools: [
    { toolSpec: { name: 'get_weather', inputSchema: { json: { type: 'object', properties: { location: { type: 'string' }, days: { type: 'integer' } } } } } },
    { toolSpec: { name: 'other', inputSchema: { json: { type: 'object' } } } },
  ],
};

interface Credentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

interface CallOptions {
  /** The body to sign; defaults to the body sent. */
  signBody?: string;
  credentials?: Credentials;
  service?: string;
  signingDate?: Date;
  /** Headers added after signing (unsigned). */
  extra?: Record<string, string>;
  /** Skip signing entirely and send these headers. */
  unsigned?: Record<string, string>;
}

interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

const MOCK_CREDENTIALS: Credentials = { accessKeyId: MOCK_AWS_ACCESS_KEY_ID, secretAccessKey: MOCK_AWS_SECRET_ACCESS_KEY };
const codec = new EventStreamCodec(toUtf8, fromUtf8);

async function start(t: { teardown(fn: () => unknown): void }): Promise<MockUpstream> {
  const mock = await startMockUpstream({ port: 0 });
  t.teardown(() => mock.close());
  return mock;
}

/** `/model/<encoded id>/<op>`, behind the directive prefix when given. */
function modelPath(op: string, directives = '', model = MODEL): string {
  return `${directives === '' ? '' : `/mock/${directives}`}/model/${encodeURIComponent(model)}/${op}`;
}

/** Headers the AWS SDK's signer produces for a POST of `body` to `path` on the mock. */
async function sign(mock: MockUpstream, path: string, body: string, options: CallOptions): Promise<Record<string, string>> {
  const signer = new SignatureV4({
    service: options.service ?? 'bedrock',
    region: REGION,
    credentials: options.credentials ?? MOCK_CREDENTIALS,
    sha256: Hash.bind(null, 'sha256'),
  });
  const signed = await signer.sign(
    {
      method: 'POST',
      protocol: 'http:',
      hostname: '127.0.0.1',
      port: mock.port,
      path,
      query: {},
      headers: { host: `127.0.0.1:${mock.port}`, 'content-type': 'application/json' },
      body,
    },
    options.signingDate === undefined ? {} : { signingDate: options.signingDate },
  );
  return signed.headers;
}

/** POSTs `body` (JSON-encoded unless a string) to the mock, signed unless told otherwise. */
async function call(mock: MockUpstream, path: string, body: unknown, options: CallOptions = {}): Promise<Reply> {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  const headers = options.unsigned ?? (await sign(mock, path, options.signBody ?? text, options));
  // undici writes Host from the URL; it equals the signed value, so the signed copy is dropped.
  const { host: _host, ...send } = headers;
  const res = await request(`${mock.url}${path}`, { method: 'POST', headers: { ...send, ...options.extra }, body: text });
  return { status: res.statusCode, headers: res.headers, body: Buffer.from(await res.body.arrayBuffer()) };
}

type Json = Record<string, unknown>;

interface ToolUse {
  toolUseId: string;
  name: string;
  input: Json;
}

interface ConverseResponse {
  output: { message: { role: string; content: Array<{ text?: string; toolUse?: ToolUse }> } };
  stopReason: string;
  usage: Json & { outputTokens: number };
  metrics: { latencyMs: number };
}

/** The union of the stream events' members this file reads. */
interface EventPayload {
  role?: string;
  contentBlockIndex?: number;
  start?: { toolUse: { toolUseId: string; name: string } };
  delta?: { text?: string; toolUse?: { input: string } };
  stopReason?: string;
  usage?: Json;
  metrics?: Json;
  message?: string;
}

interface TitanEmbedding {
  embedding: number[];
  inputTextTokenCount: number;
}

interface CohereEmbedding {
  embeddings: number[][];
  id: string;
  response_type: string;
  texts: string[];
}

interface Decoded {
  headers: Record<string, string>;
  payload: EventPayload;
}

function json<T = Json & { message?: string }>(reply: Reply): T {
  return JSON.parse(reply.body.toString('utf8')) as T;
}

/**
 * Cuts a byte stream into messages by their 4-byte total length and decodes each with the SDK's
 * codec, which checks both CRCs and throws on a mismatch; the stream must end on a boundary.
 */
function decodeStream(bytes: Buffer): Decoded[] {
  const messages: Decoded[] = [];
  let offset = 0;
  while (offset + 4 <= bytes.length) {
    const total = bytes.readUInt32BE(offset);
    const decoded = codec.decode(bytes.subarray(offset, offset + total));
    const headers: Record<string, string> = {};
    for (const [name, header] of Object.entries(decoded.headers)) headers[name] = String(header.value);
    messages.push({ headers, payload: JSON.parse(toUtf8(decoded.body)) as EventPayload });
    offset += total;
  }
  if (offset !== bytes.length) throw new Error(`stream ends inside a message: ${bytes.length - offset} stray bytes`);
  return messages;
}

/** Each message's two CRCs, checked here by hand against node:zlib as well. */
function crcsHold(bytes: Buffer): boolean {
  for (let offset = 0; offset < bytes.length; ) {
    const total = bytes.readUInt32BE(offset);
    const message = bytes.subarray(offset, offset + total);
    if (message.readUInt32BE(8) !== crc32(message.subarray(0, 8))) return false;
    if (message.readUInt32BE(total - 4) !== crc32(message.subarray(0, total - 4))) return false;
    offset += total;
  }
  return true;
}

t.test('SigV4 verifier reproduces AWS test suite vector get-vanilla', async (t) => {
  const request = {
    method: 'GET',
    target: '/',
    rawHeaders: ['Host', 'example.amazonaws.com', 'X-Amz-Date', '20150830T123600Z'],
    body: '',
  };
  const secret = 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY';
  const expected = '5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31';
  const params = { signedHeaders: ['host', 'x-amz-date'], amzDate: '20150830T123600Z', region: 'us-east-1', service: 'service', secretAccessKey: secret };
  t.equal(
    canonicalRequest(request, params.signedHeaders),
    'GET\n/\n\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\nhost;x-amz-date\ne3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
  );
  t.equal(signatureV4(request, params), expected);

  const authorization = `AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=host;x-amz-date, Signature=${expected}`;
  const options = { service: 'service', secrets: new Map([['AKIDEXAMPLE', secret]]), now: Date.UTC(2015, 7, 30, 12, 36) };
  const verified = verifySigV4({ ...request, rawHeaders: [...request.rawHeaders, 'Authorization', authorization] }, options);
  t.same(verified, { ok: true, accessKeyId: 'AKIDEXAMPLE', region: 'us-east-1' });
  const later = verifySigV4({ ...request, rawHeaders: [...request.rawHeaders, 'Authorization', authorization] }, { ...options, now: options.now + 6 * 60_000 });
  t.match(later, { ok: false, error: { code: 'InvalidSignatureException', message: /^Signature expired/ } });
});

t.test('canonical URI encodes each raw segment once more; query is sorted and strictly encoded', async (t) => {
  const canonical = canonicalRequest(
    { method: 'post', target: '/mock/chunks=3/model/a.b-v1%3A0/converse?b=2&a=x%20y&a=1', rawHeaders: ['Host', 'h', 'X-Amz-Date', '  a   b  '], body: '{}' },
    ['host', 'x-amz-date'],
  );
  const [method, uri, query, host, date] = canonical.split('\n');
  t.equal(method, 'POST');
  t.equal(uri, '/mock/chunks%3D3/model/a.b-v1%253A0/converse');
  t.equal(query, 'a=1&a=x%20y&b=2');
  t.equal(host, 'host:h');
  t.equal(date, 'x-amz-date:a b', 'values trimmed, inner runs collapsed');
});

t.test('converse: signed request, text answer, usage and request id', async (t) => {
  const mock = await start(t);
  const reply = await call(mock, modelPath('converse'), CONVERSE);
  t.equal(reply.status, 200, reply.body.toString());
  t.equal(reply.headers['content-type'], 'application/json');
  t.match(reply.headers['x-amzn-requestid'], /^[0-9a-f-]{36}$/);
  t.same(json<ConverseResponse>(reply), {
    output: { message: { role: 'assistant', content: [{ text: EXPECTED_REPLY }] } },
    stopReason: 'end_turn',
    usage: { inputTokens: PROMPT_TOKENS, outputTokens: OUTPUT_TOKENS, totalTokens: PROMPT_TOKENS + OUTPUT_TOKENS },
    metrics: { latencyMs: 0 },
  });
  t.equal(mock.requests[0]?.path, `/model/${MODEL.replace(':', '%3A')}/converse`, 'the model id travels percent-encoded');
});

t.test('a signed request through the directive prefix, with a session token and a Bearer API key', async (t) => {
  const mock = await start(t);
  const prefixed = await call(mock, modelPath('converse', 'delay=1;chunks=2'), CONVERSE);
  t.equal(prefixed.status, 200, 'the prefix is part of what was signed');
  const session = await call(mock, modelPath('converse'), CONVERSE, { credentials: { ...MOCK_CREDENTIALS, sessionToken: 'FwoGZXIvYXdzEMOCK' } });
  t.equal(session.status, 200, 'a signed x-amz-security-token is accepted, whatever its value');
  t.ok(mock.requests.at(-1)?.headers['x-amz-security-token']);
  const bearer = await call(mock, modelPath('converse'), CONVERSE, { unsigned: { authorization: 'Bearer ABSKmockapikey', 'content-type': 'application/json' } });
  t.equal(bearer.status, 200, 'Bedrock API keys are Bearer tokens');
});

t.test('signature failures are 403s with the exception name in x-amzn-errortype', async (t) => {
  const mock = await start(t);
  const path = modelPath('converse');
  const refused = async (reply: Reply, name: string, message: string | RegExp): Promise<void> => {
    t.equal(reply.status, 403, name);
    t.equal(reply.headers['x-amzn-errortype'], `${name}:${AUTH_NS}`);
    t.match(reply.headers['x-amzn-requestid'], /^[0-9a-f-]{36}$/);
    t.match(json(reply).message, message);
  };
  await refused(
    await call(mock, path, CONVERSE, { signBody: JSON.stringify({ ...CONVERSE, inferenceConfig: { maxTokens: 1 } }) }),
    'InvalidSignatureException',
    MISMATCH,
  );
  await refused(await call(mock, path, CONVERSE, { credentials: { ...MOCK_CREDENTIALS, secretAccessKey: 'wrong' } }), 'InvalidSignatureException', MISMATCH);
  await refused(
    await call(mock, path, CONVERSE, { credentials: { ...MOCK_CREDENTIALS, accessKeyId: 'AKIAUNKNOWN000000000' } }),
    'UnrecognizedClientException',
    'The security token included in the request is invalid.',
  );
  await refused(await call(mock, path, CONVERSE, { signingDate: new Date(Date.now() - 10 * 60_000) }), 'InvalidSignatureException', /^Signature expired: \d{8}T\d{6}Z is now earlier than/);
  await refused(await call(mock, path, CONVERSE, { service: 'bedrock-agent' }), 'InvalidSignatureException', "Credential should be scoped to correct service: 'bedrock'.");
  await refused(await call(mock, path, CONVERSE, { extra: { 'x-amz-security-token': 'unsigned' } }), 'InvalidSignatureException', /x-amz-security-token/);
  await refused(await call(mock, path, CONVERSE, { unsigned: { 'content-type': 'application/json' } }), 'MissingAuthenticationTokenException', 'Missing Authentication Token');
  await refused(await call(mock, path, CONVERSE, { unsigned: { authorization: 'Basic Zm9vOmJhcg==' } }), 'IncompleteSignatureException', /requires 'Credential' parameter/);
  // Tampering with the path is caught as well: the signature covers the canonical URI.
  const headers = await sign(mock, modelPath('converse', '', 'amazon.nova-lite-v1:0'), JSON.stringify(CONVERSE), {});
  await refused(await call(mock, path, CONVERSE, { unsigned: headers }), 'InvalidSignatureException', MISMATCH);
  t.equal(mock.requests.length, 9, 'every refusal still reached and was recorded by the mock');
});

t.test('auth comes before directives: status=429 needs a valid signature too', async (t) => {
  const mock = await start(t);
  const unsigned = await call(mock, modelPath('converse', 'status=429'), CONVERSE, { unsigned: {} });
  t.equal(unsigned.status, 403);
  const throttled = await call(mock, modelPath('converse', 'status=429;retry_after=2'), CONVERSE);
  t.equal(throttled.status, 429);
  t.equal(throttled.headers['x-amzn-errortype'], `ThrottlingException:${BEDROCK_NS}`);
  t.equal(throttled.headers['retry-after'], '2');
  t.same(json(throttled), { message: 'Too many requests, please wait before trying again.' });
  for (const [status, name] of [
    [400, 'ValidationException'],
    [403, 'AccessDeniedException'],
    [404, 'ResourceNotFoundException'],
    [408, 'ModelTimeoutException'],
    [424, 'ModelErrorException'],
    [500, 'InternalServerException'],
    [503, 'ServiceUnavailableException'],
  ] as const) {
    const reply = await call(mock, modelPath('converse-stream'), CONVERSE, { extra: { 'x-mock-status': String(status) } });
    t.equal(reply.status, status);
    t.equal(reply.headers['x-amzn-errortype'], `${name}:${BEDROCK_NS}`);
    t.type(json(reply).message, 'string');
  }
  const invalid = await call(mock, modelPath('converse'), '{"messages":');
  t.equal(invalid.status, 400);
  t.equal(invalid.headers['x-amzn-errortype'], `ValidationException:${BEDROCK_NS}`);
  const missing = await call(mock, modelPath('converse'), { system: [] });
  t.equal(missing.status, 400);
  t.match(json(missing).message, /'messages'/);
});

t.test('converse-stream: event order, payloads, CRCs, and the plain call usage', async (t) => {
  const mock = await start(t);
  const plain = json<ConverseResponse>(await call(mock, modelPath('converse'), CONVERSE));
  const reply = await call(mock, modelPath('converse-stream', 'chunks=3'), CONVERSE);
  t.equal(reply.status, 200);
  t.equal(reply.headers['content-type'], 'application/vnd.amazon.eventstream');
  t.match(reply.headers['x-amzn-requestid'], /^[0-9a-f-]{36}$/);
  t.ok(crcsHold(reply.body), 'prelude and message CRCs');
  const events = decodeStream(reply.body);
  t.same(
    events.map((e) => e.headers[':event-type']),
    ['messageStart', 'contentBlockDelta', 'contentBlockDelta', 'contentBlockDelta', 'contentBlockStop', 'messageStop', 'metadata'],
  );
  for (const event of events) {
    t.equal(event.headers[':message-type'], 'event');
    t.equal(event.headers[':content-type'], 'application/json');
  }
  t.same(events[0]?.payload, { role: 'assistant' });
  t.same(events[4]?.payload, { contentBlockIndex: 0 });
  t.same(events[5]?.payload, { stopReason: 'end_turn' });
  const text = events.slice(1, 4).map((e) => {
    t.equal(e.payload.contentBlockIndex, 0);
    return e.payload.delta?.text ?? '';
  });
  t.equal(text.join(''), plain.output.message.content[0]?.text);
  t.same(events[6]?.payload, { usage: plain.usage, metrics: plain.metrics }, 'stream usage equals the plain call');
});

t.test('tool_call=1: a toolUse block plain, and start + input fragments streamed', async (t) => {
  const mock = await start(t);
  const body = { ...CONVERSE, toolConfig: TOOLS };
  const plain = json<ConverseResponse>(await call(mock, modelPath('converse', 'tool_call=1'), body));
  t.equal(plain.stopReason, 'tool_use');
  const block = plain.output.message.content[0]?.toolUse;
  t.match(block?.toolUseId, /^tooluse_/);
  t.equal(block?.name, 'get_weather', 'the first tool is called');
  t.same(block?.input, { location: 'Paris', days: 1 });
  t.equal(plain.usage.outputTokens, Math.ceil(JSON.stringify(block?.input).length / 4));

  const events = decodeStream((await call(mock, modelPath('converse-stream', 'tool_call=1;chunks=4'), body)).body);
  t.same(
    events.map((e) => e.headers[':event-type']),
    ['messageStart', 'contentBlockStart', ...Array(4).fill('contentBlockDelta'), 'contentBlockStop', 'messageStop', 'metadata'],
  );
  t.match(events[1]?.payload, { start: { toolUse: { name: 'get_weather' } }, contentBlockIndex: 0 });
  t.match(events[1]?.payload.start?.toolUse.toolUseId, /^tooluse_/);
  const input = events.slice(2, 6).map((e) => e.payload.delta?.toolUse?.input ?? '').join('');
  t.same(JSON.parse(input), block?.input);
  t.same(events[7]?.payload, { stopReason: 'tool_use' });
  t.same(events[8]?.payload.usage, plain.usage);
});

t.test('error_event ends a Bedrock stream with a modelStreamErrorException message', async (t) => {
  const mock = await start(t);
  const reply = await call(mock, modelPath('converse-stream', 'error_event=1'), CONVERSE);
  t.equal(reply.status, 200, 'the error arrives inside an open stream');
  t.ok(crcsHold(reply.body));
  const events = decodeStream(reply.body);
  t.same(
    events.map((e) => e.headers[':event-type'] ?? e.headers[':exception-type']),
    ['messageStart', 'contentBlockDelta', 'contentBlockDelta', 'modelStreamErrorException'],
  );
  t.same(events[3]?.headers, { ':exception-type': 'modelStreamErrorException', ':content-type': 'application/json', ':message-type': 'exception' });
  t.type(events[3]?.payload.message, 'string');
});

t.test('reset=mid_stream cuts a Bedrock stream after whole messages', async (t) => {
  const mock = await start(t);
  const path = modelPath('converse-stream', 'reset=mid_stream;reset_after=2');
  const headers = await sign(mock, path, JSON.stringify(CONVERSE), {});
  const { host: _host, ...send } = headers;
  const res = await request(`${mock.url}${path}`, { method: 'POST', headers: send, body: JSON.stringify(CONVERSE) });
  t.equal(res.statusCode, 200);
  const received: Buffer[] = [];
  const error = await (async () => {
    for await (const chunk of res.body) received.push(chunk as Buffer);
  })().catch((e: unknown) => e);
  t.ok(error instanceof Error, 'the cut shows as an error');
  const events = decodeStream(Buffer.concat(received));
  t.same(
    events.map((e) => e.headers[':event-type']),
    ['messageStart', 'contentBlockDelta'],
  );
});

t.test('chunk_delay paces Bedrock messages', async (t) => {
  const mock = await start(t);
  const started = Date.now();
  const reply = await call(mock, modelPath('converse-stream', 'chunks=3;chunk_delay=25'), CONVERSE);
  // Seven messages, six gaps.
  t.ok(Date.now() - started >= 6 * 23, `paced: ${Date.now() - started} ms`);
  t.equal(decodeStream(reply.body).length, 7);
});

t.test('an aborted Bedrock stream leaves no pacing timer behind', async (t) => {
  const mock = await start(t);
  const timers = (): number => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
  const before = timers();
  const path = modelPath('converse-stream', 'chunk_delay=1000;chunks=20');
  const { host: _host, ...headers } = await sign(mock, path, JSON.stringify(CONVERSE), {});
  const controller = new AbortController();
  const res = await fetch(`${mock.url}${path}`, { method: 'POST', headers, body: JSON.stringify(CONVERSE), signal: controller.signal });
  const first = await res.body?.getReader().read();
  t.equal(decodeStream(Buffer.from(first?.value ?? []))[0]?.headers[':event-type'], 'messageStart', 'one whole message per write');
  controller.abort();
  await new Promise((resolve) => setTimeout(resolve, 50));
  t.equal(timers(), before, 'the pacing timer died with the connection');
});

t.test('invoke: Titan text embeddings', async (t) => {
  const mock = await start(t);
  const embed = async (inputText: string, extra: Record<string, unknown> = {}, model = 'amazon.titan-embed-text-v2:0'): Promise<Reply> =>
    call(mock, modelPath('invoke', '', model), { inputText, ...extra });
  const reply = await embed('What is the capital of France?');
  t.equal(reply.status, 200);
  t.equal(reply.headers['x-amzn-bedrock-input-token-count'], String(Math.ceil('What is the capital of France?'.length / 4)));
  const body = json<TitanEmbedding>(reply);
  t.same(Object.keys(body).sort(), ['embedding', 'inputTextTokenCount']);
  t.equal(body.embedding.length, 1024);
  t.equal(body.inputTextTokenCount, Math.ceil('What is the capital of France?'.length / 4));
  const small = json<TitanEmbedding>(await embed('What is the capital of France?', { dimensions: 256 }));
  const paraphrase = json<TitanEmbedding>(await embed("Tell me France's capital city", { dimensions: 256 }));
  const unrelated = json<TitanEmbedding>(await embed('How do I bake sourdough bread?', { dimensions: 256 }));
  t.equal(small.embedding.length, 256);
  t.ok(cosine(small.embedding, paraphrase.embedding) > 0.5);
  t.ok(cosine(small.embedding, unrelated.embedding) < 0.2);
  t.same(json<TitanEmbedding>(await embed('What is the capital of France?')).embedding, body.embedding, 'deterministic');
  t.equal(json<TitanEmbedding>(await embed('hello', {}, 'amazon.titan-embed-text-v1')).embedding.length, 1536);
  const bad = await embed('x', { dimensions: 300 });
  t.equal(bad.status, 400);
  t.equal(bad.headers['x-amzn-errortype'], `ValidationException:${BEDROCK_NS}`);
  const missing = await call(mock, modelPath('invoke', '', 'amazon.titan-embed-text-v2:0'), { text: 'x' });
  t.match(json(missing).message, /inputText/);
});

t.test('invoke: Cohere embeddings', async (t) => {
  const mock = await start(t);
  const texts = ['What is the capital of France?', "Tell me France's capital city"];
  const reply = await call(mock, modelPath('invoke', '', 'cohere.embed-english-v3'), { texts, input_type: 'search_document' });
  t.equal(reply.status, 200);
  const body = json<CohereEmbedding>(reply);
  t.equal(body.response_type, 'embeddings_floats');
  t.same(body.texts, texts);
  t.match(body.id, /^[0-9a-f-]{36}$/);
  t.equal(body.embeddings.length, 2);
  t.equal(body.embeddings[0]?.length, 1024);
  t.ok(cosine(body.embeddings[0]!, body.embeddings[1]!) > 0.5);
  const missing = await call(mock, modelPath('invoke', '', 'cohere.embed-english-v3'), { texts });
  t.equal(missing.status, 400);
  t.match(json(missing).message, /input_type/);
  const other = await call(mock, modelPath('invoke', '', 'meta.llama3-8b-instruct-v1:0'), { prompt: 'hi' });
  t.equal(other.status, 400);
});

t.test('cache_read: Bedrock reports cacheReadInputTokens outside inputTokens, plain and streamed', async (t) => {
  const mock = await start(t);
  const usage = {
    inputTokens: PROMPT_TOKENS - 5,
    outputTokens: OUTPUT_TOKENS,
    totalTokens: PROMPT_TOKENS + OUTPUT_TOKENS,
    cacheReadInputTokens: 5,
    cacheWriteInputTokens: 0,
  };
  t.same(json(await call(mock, modelPath('converse', 'cache_read=5'), CONVERSE)).usage, usage, 'path directive');
  t.same(json(await call(mock, modelPath('converse'), CONVERSE, { extra: { 'x-mock-cache-read': '5' } })).usage, usage, 'header directive');
  const events = decodeStream((await call(mock, modelPath('converse-stream', 'cache_read=5'), CONVERSE)).body);
  t.same(events.at(-1)?.payload.usage, usage);
});

t.test('cache_read: Anthropic reports cache_read_input_tokens from the path or a header', async (t) => {
  const mock = await start(t);
  const body = JSON.stringify({ model: 'claude-sonnet-4', max_tokens: 64, system: SYSTEM_TEXT, messages: [{ role: 'user', content: USER_TEXT }] });
  const post = async (prefix: string, headers: Record<string, string> = {}): Promise<Json> => {
    const res = await fetch(`${mock.url}${prefix}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': 'sk-ant-test', 'anthropic-version': '2023-06-01', 'content-type': 'application/json', ...headers },
      body,
    });
    return ((await res.json()) as { usage: Json }).usage;
  };
  const expected = { input_tokens: PROMPT_TOKENS - 7, output_tokens: OUTPUT_TOKENS, cache_read_input_tokens: 7 };
  t.same(await post('/mock/cache_read=7'), expected);
  t.same(await post('', { 'x-mock-cache-read': '7' }), expected);
  t.same(await post(''), { input_tokens: PROMPT_TOKENS, output_tokens: OUTPUT_TOKENS }, 'no cache field by default');
  t.equal(parseDirectives('cache_read=3', []).cacheRead, 3);
  t.equal(parseDirectives('', ['X-Mock-Cache_Read', '4']).cacheRead, 4);
  t.equal(parseDirectives('', []).cacheRead, 0);
});

t.test('encodeMessage frames headers and payload as the SDK codec reads them', async (t) => {
  const message = encodeMessage([[':event-type', 'ünïcode'], ['x', '']], '{"a":"é"}');
  t.equal(message.readUInt32BE(0), message.length);
  const decoded = codec.decode(message);
  t.same(decoded.headers, { ':event-type': { type: 'string', value: 'ünïcode' }, x: { type: 'string', value: '' } });
  t.equal(toUtf8(decoded.body), '{"a":"é"}');
  t.equal(encodeMessage([], '').length, 16, 'sixteen bytes of overhead');
});
