/**
 * The Responses API's `prompt` field when it names no prompt stored in this gateway: it goes to
 * the provider untouched, and `input` may then be left out, as OpenAI allows (the provider's
 * prompt template supplies it). Without either, the call is still a 400 naming `input`.
 */
import t from 'tap';
import { request } from 'undici';
import { ADMIN_KEY, direct, startGateway, startMock } from './helpers/gateway.js';

t.test('a Responses call with a provider-side prompt and no input', async (t) => {
  const mock = await startMock(t);
  const gw = await startGateway(t, { yaml: 'pipeline: [auth]\n', env: { GATEWAY_ADMIN_KEY: ADMIN_KEY } });
  const send = async (body: Record<string, unknown>): Promise<{ status: number; body: Record<string, any> }> => { // eslint-disable-line @typescript-eslint/no-explicit-any
    const res = await request(`${gw.url}/v1/responses`, {
      method: 'POST',
      headers: { ...direct(mock), 'x-gateway-api-key': ADMIN_KEY, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: res.statusCode, body: (await res.body.json()) as Record<string, any> }; // eslint-disable-line @typescript-eslint/no-explicit-any
  };
  const prompt = { id: 'pmpt_68ab12', version: '3', variables: { customer: 'Ada', plan: { tier: 'pro' } } };
  const answered = await send({ model: 'gpt-4o', prompt });
  t.equal(answered.status, 200, 'accepted without input');
  const forwarded = mock.requests.at(-1)!;
  t.match(forwarded.path, /\/v1\/responses$/);
  const sent = JSON.parse(forwarded.body.toString('utf8')) as Record<string, unknown>;
  t.same(sent.prompt, prompt, 'the prompt reaches the provider untouched');
  t.notOk('input' in sent, 'and no input is made up');

  const missing = await send({ model: 'gpt-4o' });
  t.equal(missing.status, 400);
  t.match(missing.body.error, { code: 'missing_required_parameter', param: 'input' });
});
