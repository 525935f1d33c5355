/**
 * `gateway pricing import`, run as operators run it (the built CLI in a child process), with a
 * LiteLLM catalogue excerpt: a dry run writes nothing, an import writes overrides and an audit
 * record, a second import changes nothing, and a gateway already serving the data dir prices its
 * next request with the imported table.
 */
import t from 'tap';
import { copyFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'undici';
import { runCli, startCli, REPO } from './helpers/process.js';
import { ADMIN_KEY, startMock, direct, tempDir, writeFile } from './helpers/gateway.js';

// CLI runs and a gateway process: about 25 s in CI, and slower on a busy machine.
t.setTimeout(180_000);

const FIXTURE = join(REPO, 'test/fixtures/pricing/litellm-excerpt.json');

async function getJson(url: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await request(url, { headers: { 'x-gateway-api-key': ADMIN_KEY } });
  return { status: res.statusCode, body: (await res.body.json()) as Record<string, unknown> };
}

t.test('a LiteLLM catalogue imports as overrides, idempotently, and a running gateway prices with it', async (t) => {
  const mock = await startMock(t);
  const dir = tempDir();
  const data = join(dir, 'data');
  const yaml = writeFile(
    dir,
    'gw.yaml',
    `server: {host: 127.0.0.1, port: 0}\nstore: {path: ${JSON.stringify(data)}}\npipeline: [auth, admin-catalog, {logging: {flush_ms: 20}}]\n`,
  );
  const env = { GATEWAY_ADMIN_KEY: ADMIN_KEY, GATEWAY_DATA_DIR: '', GATEWAY_CONFIG: '' };
  const gw = await startCli(t, ['start', '--config', yaml], env);
  const catalogue = join(dir, 'prices.json');
  copyFileSync(FIXTURE, catalogue);

  const dry = await runCli(['pricing', 'import', catalogue, '--dry-run', '--config', yaml], env);
  t.equal(dry.code, 0, dry.stderr);
  t.match(dry.stdout, /^\+ openai\/gpt-4o-mock-preview in \$3\/M out \$12\/M$/m, 'a model the table lacks is added');
  t.match(dry.stdout, /^\+ vertex-ai\/claude-sonnet-4@20250514 in \$3\/M out \$15\/M$/m, 'LiteLLM routing prefixes are removed');
  t.match(
    dry.stdout,
    /dry run: 2 added, 0 changed, 3 unchanged; skipped 1 of other providers, 2 of other modes, 1 without token prices, 1 with unusable names; nothing written/,
  );
  t.notMatch(dry.stdout, /gpt-4o in|llama-3\.1-8b-instant|text-embedding-3-small/, 'entries equal to the shipped prices are not changes');
  const listed = await getJson(`${gw.url}/v1/model-pricing?provider=openai&page_size=100`);
  t.notOk(JSON.stringify(listed.body).includes('gpt-4o-mock-preview'), 'the dry run wrote nothing');

  const first = await runCli(['pricing', 'import', catalogue, '--config', yaml], env);
  t.equal(first.code, 0, first.stderr);
  t.match(first.stdout, /^2 added, 0 changed, 3 unchanged;/m);

  // The running gateway sees the new table at once (no restart).
  const preview = await getJson(`${gw.url}/v1/model-pricing?provider=openai&page_size=100`);
  const item = (preview.body.data as Array<Record<string, unknown>>).find((p) => p.model === 'gpt-4o-mock-preview');
  t.match(item, { source: 'custom', pay_as_you_go: { request_token: { price: 0.0003 }, response_token: { price: 0.0012 } } });

  const res = await request(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { ...direct(mock), 'content-type': 'application/json', 'x-gateway-api-key': ADMIN_KEY },
    body: JSON.stringify({ model: 'gpt-4o-mock-preview', messages: [{ role: 'user', content: 'hi' }] }),
  });
  t.equal(res.statusCode, 200);
  const answer = (await res.body.json()) as { usage: { prompt_tokens: number; completion_tokens: number } };
  const id = res.headers['x-gateway-request-id'] as string;
  let record: { status: number; body: Record<string, unknown> } = { status: 0, body: {} };
  for (let i = 0; i < 100 && record.status !== 200; i++) {
    record = await getJson(`${gw.url}/v1/logs/${id}`);
    if (record.status !== 200) await new Promise((r) => setTimeout(r, 50));
  }
  t.equal(record.body.priced_as, 'openai/gpt-4o-mock-preview', 'priced by the imported entry, not by its gpt-4o prefix');
  const cents = (answer.usage.prompt_tokens * 3 + answer.usage.completion_tokens * 12) / 1e4;
  t.ok(Math.abs((record.body.cost_cents as number) - cents) < 1e-9, `cost ${String(record.body.cost_cents)} cents`);

  // The same file again changes nothing; a changed price is a change, shown with its old value.
  const again = await runCli(['pricing', 'import', catalogue, '--config', yaml], env);
  t.equal(again.code, 0, again.stderr);
  t.match(again.stdout, /^0 added, 0 changed, 5 unchanged;/m);
  const edited = JSON.parse(readFileSync(catalogue, 'utf8')) as Record<string, Record<string, unknown>>;
  edited['gpt-4o']!.input_cost_per_token = 2e-6;
  writeFile(dir, 'prices.json', JSON.stringify(edited));
  const changed = await runCli(['pricing', 'import', catalogue, '--config', yaml], env);
  t.match(changed.stdout, /^~ openai\/gpt-4o in \$2\/M out \$10\/M \(was in \$2\.5\/M out \$10\/M\)$/m);
  t.match(changed.stdout, /^0 added, 1 changed, 4 unchanged;/m);

  // Each import that wrote something is one audit record; the dry run and the no-op are not.
  const audit = await getJson(`${gw.url}/v1/audit-logs?resource_type=model_pricing`);
  const imports = (audit.body.data as Array<Record<string, unknown>>).filter((a) => a.action === 'import');
  t.equal(imports.length, 2, 'two imports wrote, two audit records');
  t.match(imports.find((a) => String(a.request_body).includes('"added":2')), { method: 'CLI', uri: 'gateway pricing import prices.json', response_status_code: 200 });

  gw.child.kill('SIGTERM');
  t.equal(await gw.exited, 0);
});

t.test('bad input is an error on stderr with exit 1 and writes nothing', async (t) => {
  const dir = tempDir();
  const env = { GATEWAY_ADMIN_KEY: ADMIN_KEY, GATEWAY_DATA_DIR: join(dir, 'data'), GATEWAY_CONFIG: '' };
  const cases: Array<[string[], RegExp]> = [
    [['pricing', 'import'], /needs the catalogue file/],
    [['pricing', 'export', 'x.json'], /unknown subcommand "pricing export"/],
    [['pricing', 'import', join(dir, 'missing.json')], /cannot read .*missing\.json: ENOENT/],
    [['pricing', 'import', writeFile(dir, 'bad.json', '{"gpt-4o": ')], /bad\.json is not JSON/],
    [['pricing', 'import', writeFile(dir, 'list.json', '[1, 2]')], /must be a JSON object of model name/],
    [['pricing', 'import', FIXTURE, '--force'], /unknown argument "--force"/],
  ];
  for (const [args, message] of cases) {
    const res = await runCli(args, env);
    t.equal(res.code, 1, args.join(' '));
    t.match(res.stderr, message);
    t.equal(res.stdout, '');
  }
});
