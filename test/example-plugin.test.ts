/**
 * The README's example plugin, loaded the way users load theirs: by path from the YAML.
 */
import t from 'tap';
import { fileURLToPath } from 'node:url';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO } from './helpers/process.js';
import { startGateway, startMock, sdk, tempDir } from './helpers/gateway.js';
import { loadConfigText } from '../core/config/load.js';
import { createGateway } from '../core/gateway.js';
import { ConfigError } from '../core/plugin-loader.js';
import { createLogger } from '../core/logger.js';

const pluginPath = fileURLToPath(new URL('../examples/plugins/redact.js', import.meta.url));

t.test('redact plugin', async (t) => {
  const mock = await startMock(t);
  const gw = await startGateway(t, {
    yaml: `pipeline:\n  - ${pluginPath}: {patterns: ["\\\\b\\\\d{16}\\\\b"], replacement: "[card]"}\n`,
  });
  const client = sdk(gw, mock);

  const { data, response } = await client.chat.completions
    .create({ model: 'm', messages: [{ role: 'user', content: 'pay with 4111111111111111 now' }] })
    .withResponse();
  const sent = JSON.parse(mock.requests.at(-1)!.body.toString()) as { messages: Array<{ content: string }> };
  t.equal(sent.messages[0]!.content, 'pay with [card] now', 'the provider never sees the number');
  t.equal(response.headers.get('x-redactions'), '1');
  t.equal(data.choices[0]!.message.content, 'Mock reply to: pay with [card] now');

  const clean = '{"model":"m","messages":[{"role":"user","content":"nothing to hide"}]}';
  await fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-gateway-custom-host': `${mock.url}/v1` },
    body: clean,
  }).then((r) => r.arrayBuffer());
  t.equal(mock.requests.at(-1)!.body.toString(), clean, 'untouched bodies are forwarded as the original bytes');
  t.ok(gw.logs.some((l) => l.msg === 'redacted' && l.plugin === 'redact'), 'onDone logged with the plugin name');
});

t.test('redact plugin: bad options fail the boot with the YAML line', async (t) => {
  const text = `server: {port: 0}\npipeline:\n  - ${pluginPath}:\n      patterns: []\n      colour: red\n`;
  const { config, locate } = loadConfigText(text, '/tmp/gw.yaml', {});
  const err = await createGateway(config!, { locate, logger: createLogger({ level: 'silent' }) }).catch((e: unknown) => e);
  t.type(err, ConfigError);
  const problems = (err as ConfigError).problems.map((p) => `${p.line}:${p.column} ${p.path}: ${p.message}`);
  const key = `pipeline[0][${JSON.stringify(pluginPath)}]`;
  t.same(problems, [`4:17 ${key}.patterns: must NOT have fewer than 1 items`, `5:7 ${key}.colour: unknown option "colour"`]);
});

t.test('the example guardrail check: registered by path, denies and redacts, on streams too', async (t) => {
  const checkPath = fileURLToPath(new URL('../examples/plugins/ticket-ids.js', import.meta.url));
  const mock = await startMock(t);
  const gw = await startGateway(t, { yaml: `pipeline:\n  - config-strategy\n  - guardrails\n  - ${checkPath}: {prefixes: [ACME, OPS]}\n` });
  const leaf = { provider: 'openai', custom_host: `${mock.url}/mock/chunks=25/v1` };
  const client = (config: unknown) => sdk(gw, mock, '', { 'x-gateway-config': JSON.stringify(config) });

  const denied = await client({ ...leaf, input_guardrails: [{ 'example.ticketIds': { allow: ['ACME-1'] }, deny: true }] })
    .chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'see OPS-4411' }] })
    .catch((e: unknown) => e as { status: number });
  t.equal((denied as { status: number }).status, 446);
  const allowed = await client({ ...leaf, input_guardrails: [{ 'example.ticketIds': { allow: ['ACME-1'] }, deny: true }] }).chat.completions.create({
    model: 'm',
    messages: [{ role: 'user', content: 'see ACME-1' }],
  });
  t.equal(allowed.choices[0]!.message.content, 'Mock reply to: see ACME-1');

  const stream = await client({ ...leaf, output_guardrails: [{ 'example.ticketIds': {}, redact: true }] }).chat.completions.create({
    model: 'm',
    stream: true,
    messages: [{ role: 'user', content: 'ACME-20991 then OPS-7' }],
  });
  let text = '';
  for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
  t.equal(text, 'Mock reply to: [TICKET] then [TICKET]', 'ids split over many events are redacted');
});

t.test("the README's plugin path works from the YAML where the README puts it (config/)", async (t) => {
  const readme = readFileSync(join(REPO, 'README.md'), 'utf8');
  const block = /```yaml\n# config\/gateway\.yaml\npipeline:\n(\s+- \S+redact\.js: .*)\n```/.exec(readme);
  t.ok(block, 'the plugin guide shows the pipeline entry of config/gateway.yaml');
  const mock = await startMock(t);
  // Loaded as if it were config/gateway.yaml: relative paths resolve against config/.
  const { config, locate, problems } = loadConfigText(`server: {host: 127.0.0.1, port: 0}\nstore: {path: ${JSON.stringify(join(tempDir(), 'data'))}}\npipeline:\n${block![1]}\n`, join(REPO, 'config', 'gateway.yaml'), {});
  t.same(problems, []);
  const gw = await createGateway(config!, { locate, logger: createLogger({ level: 'silent' }) });
  t.teardown(() => gw.close());
  const res = await fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-gateway-provider': 'openai', 'x-gateway-custom-host': `${mock.url}/v1`, authorization: 'Bearer sk-test' },
    body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'card 4111111111111111' }] }),
  });
  t.equal(res.status, 200);
  t.equal(res.headers.get('x-redactions'), '1', 'the example plugin ran');
  await res.arrayBuffer();
});
