/**
 * The README's example plugin, loaded the way users load theirs: by path from the YAML.
 */
import t from 'tap';
import { fileURLToPath } from 'node:url';
import { startGateway, startMock, sdk } from './helpers/gateway.js';
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
