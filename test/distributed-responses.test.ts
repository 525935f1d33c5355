/**
 * Kept Responses in distributed mode: two real `gateway start` hosts on one PostgreSQL and one
 * Valkey. A conversation translated on one host continues on the other, which also reads it back
 * (and its input items); a delete on one is seen by the other.
 */
import t from 'tap';
import OpenAI from 'openai';
import { needServices } from './helpers/services.js';
import { distributedBackends, startHosts } from './helpers/hosts.js';
import { ADMIN_KEY, startMock, type MockUpstream } from './helpers/gateway.js';

t.setTimeout(180_000);

type ApiError = { status: number; error: unknown };

const PIPELINE = 'pipeline: [auth, responses-store, admin-org]\n';

function client(url: string, mock: MockUpstream, key = ADMIN_KEY): OpenAI {
  return new OpenAI({
    baseURL: `${url}/v1`,
    apiKey: 'sk-provider',
    maxRetries: 0,
    timeout: 15_000,
    defaultHeaders: { 'x-gateway-api-key': key, 'x-gateway-provider': 'anthropic', 'x-gateway-custom-host': `${mock.url}/v1` },
  });
}

t.test('a conversation kept on one host continues on another', async (t) => {
  const svc = needServices(t, ['postgres', 'redis']);
  if (!svc) return;
  const backends = await distributedBackends(svc);
  const mock = await startMock(t);
  const [a, b] = await startHosts(t, 2, { backends, yaml: PIPELINE });
  const model = 'claude-sonnet-4';

  const r1 = await client(a!.url, mock).responses.create({ model, input: 'Remember 42' });
  // Another host reads what the first kept (its write commits just after the answer).
  let read: OpenAI.Responses.Response | undefined;
  for (let i = 0; i < 50 && read === undefined; i++) {
    read = await client(b!.url, mock).responses.retrieve(r1.id).catch(() => undefined);
    if (read === undefined) await new Promise((r) => setTimeout(r, 100));
  }
  t.equal(read?.id, r1.id, 'host B reads the response host A kept');
  t.equal(mock.requests.filter((r) => r.path.startsWith('/v1/responses/')).length, 0, 'answered by the gateway, not the provider');

  await client(b!.url, mock).responses.create({ model, previous_response_id: r1.id, input: 'What number?' });
  const sent = JSON.parse(mock.requests.at(-1)!.body.toString()) as { messages: Array<{ role: string; content: unknown }> };
  t.same(
    sent.messages.map((m) => m.role),
    ['user', 'assistant', 'user'],
    'host B sends the conversation host A started',
  );
  t.match(JSON.stringify(sent.messages), /Remember 42.*Mock reply to: Remember 42.*What number\?/);

  const items = await client(b!.url, mock).responses.inputItems.list(r1.id);
  t.equal(items.data.length, 1, 'input_items from the shared store');

  await client(b!.url, mock).responses.delete(r1.id);
  const gone = await client(a!.url, mock).responses.create({ model, previous_response_id: r1.id, input: 'x' }).catch((e: unknown) => e);
  t.equal((gone as ApiError).status, 404, 'a delete on host B is seen by host A');
  t.match((gone as ApiError).error, { code: 'previous_response_not_found' });
});
