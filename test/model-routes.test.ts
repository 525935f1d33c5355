/**
 * The five model routes through the official OpenAI SDK, plain and streamed, against the mock
 * upstream over real sockets.
 */
import t from 'tap';
import OpenAI from 'openai';
import { startGateway, startMock, sdk, direct } from './helpers/gateway.js';

t.test('model routes through the OpenAI SDK', async (t) => {
  const mock = await startMock(t);
  const gw = await startGateway(t);
  const client = sdk(gw, mock);

  t.test('chat completions, plain', async (t) => {
    const { data, response } = await client.chat.completions
      .create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hello gateway' }] })
      .withResponse();
    t.equal(data.object, 'chat.completion');
    t.equal(data.choices[0]?.message.content, 'Mock reply to: Hello gateway');
    t.ok(data.usage && data.usage.total_tokens > 0, 'usage is passed through');
    t.equal(response.headers.get('x-gateway-provider'), 'openai');
    t.equal(response.headers.get('x-gateway-last-used-option-index'), 'config');
    t.equal(response.headers.get('x-gateway-retry-attempt-count'), '0');
    t.match(response.headers.get('server-timing'), /^gateway;dur=\d+\.\d+, upstream;dur=\d+\.\d+$/);
    const requestId = response.headers.get('x-gateway-request-id');
    t.match(requestId, /^[0-9a-f-]{36}$/);
    t.equal(response.headers.get('x-gateway-trace-id'), requestId, 'a generated trace id when none was sent');
    const seen = mock.requests.at(-1)!;
    t.equal(seen.path, '/v1/chat/completions');
    t.equal(seen.headers['authorization'], 'Bearer sk-test-provider-key', 'the provider key reaches the upstream');
    t.notOk(Object.keys(seen.headers).some((h) => h.startsWith('x-gateway-')), 'no x-gateway-* header is forwarded');
  });

  t.test('chat completions, streamed with usage', async (t) => {
    const stream = await client.chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'Hello gateway' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let usage: OpenAI.CompletionUsage | null | undefined;
    let chunks = 0;
    for await (const chunk of stream) {
      chunks++;
      text += chunk.choices[0]?.delta.content ?? '';
      if (chunk.usage) usage = chunk.usage;
    }
    t.equal(text, 'Mock reply to: Hello gateway', 'the streamed text equals the plain answer');
    t.ok(chunks >= 5, 'arrives as several chunks');
    const plain = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hello gateway' }] });
    t.same(usage, plain.usage, 'stream usage equals plain usage');
  });

  t.test('completions, plain and streamed', async (t) => {
    const plain = await client.completions.create({ model: 'gpt-3.5-turbo-instruct', prompt: 'Say this is a test' });
    t.equal(plain.object, 'text_completion');
    t.equal(plain.choices[0]?.text, 'Mock completion of: Say this is a test');
    const stream = await client.completions.create({ model: 'gpt-3.5-turbo-instruct', prompt: 'Say this is a test', stream: true });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.text ?? '';
    t.equal(text, plain.choices[0]?.text);
  });

  t.test('embeddings', async (t) => {
    const res = await client.embeddings.create({ model: 'text-embedding-3-small', input: ['a cat sat', 'stock markets fell'], dimensions: 32 });
    t.equal(res.data.length, 2);
    t.equal(res.data[0]?.embedding.length, 32);
    t.ok(res.usage.prompt_tokens > 0);
  });

  t.test('moderations', async (t) => {
    const res = await client.moderations.create({ model: 'omni-moderation-latest', input: 'I will attack the castle' });
    t.equal(res.results[0]?.flagged, true);
    t.equal(res.results[0]?.categories.violence, true);
  });

  t.test('responses, plain and streamed', async (t) => {
    const plain = await client.responses.create({ model: 'gpt-4o-mini', input: 'Write one word' });
    t.equal(plain.object, 'response');
    t.equal(plain.output_text, 'Mock reply to: Write one word');
    const stream = await client.responses.create({ model: 'gpt-4o-mini', input: 'Write one word', stream: true });
    const types: string[] = [];
    let text = '';
    for await (const event of stream) {
      types.push(event.type);
      if (event.type === 'response.output_text.delta') text += event.delta;
    }
    t.equal(types[0], 'response.created');
    t.equal(types.at(-1), 'response.completed');
    t.equal(text, plain.output_text);
  });

  t.test('an upstream error passes through with its status and body', async (t) => {
    const failing = sdk(gw, mock, 'status=429;retry_after=7');
    const err = await failing.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e);
    t.type(err, OpenAI.RateLimitError);
    const e = err as InstanceType<typeof OpenAI.RateLimitError>;
    t.equal(e.status, 429);
    t.equal(e.headers?.get('x-gateway-error-source'), 'upstream');
    t.equal(e.headers?.get('retry-after'), '7', 'upstream headers are kept');
    t.equal(e.code, 'rate_limit_exceeded', 'the upstream error body is unchanged');
  });

  t.test('the caller trace id is echoed', async (t) => {
    const { response } = await sdk(gw, mock, '', { 'x-gateway-trace-id': 'trace-abc-123' })
      .chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'x' }] })
      .withResponse();
    t.equal(response.headers.get('x-gateway-trace-id'), 'trace-abc-123');
    t.not(response.headers.get('x-gateway-request-id'), 'trace-abc-123');
  });

  t.test('the original bytes are forwarded when nothing changed the body', async (t) => {
    // Odd spacing, key order and an unknown field: all must reach the upstream exactly as sent.
    const raw = '{ "model":"gpt-4o-mini",  "messages":[{"role":"user","content":"bytes"}], "vendor_extra": {"x": [1,2,3]} }';
    const res = await fetch(`${gw.url}/v1/chat/completions`, { method: 'POST', headers: { ...direct(mock), 'content-type': 'application/json' }, body: raw });
    t.equal(res.status, 200);
    await res.arrayBuffer();
    t.equal(mock.requests.at(-1)!.body.toString(), raw);
  });
});
