/**
 * The README's examples, as pasted: the quick start's curl call, the OpenAI SDK snippet (run as a
 * script with Node), and the Admin API's common tasks, against the shipped config/gateway.yaml
 * (on a free loopback port) and the mock provider. Only the addresses change (the README's
 * localhost:8787 and 127.0.0.1:9000 become the test's ports).
 */
import t from 'tap';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'undici';
import { REPO } from './helpers/process.js';
import { startGateway, startMock, type StartedGateway, type MockUpstream, type Teardown } from './helpers/gateway.js';

type Json = Record<string, unknown>;

const README = readFileSync(join(REPO, 'README.md'), 'utf8');
const ADMIN = 'gw-admin-change-me';

/** The fenced blocks of a language that follow a heading or a marker text. */
function blockAfter(marker: string, lang: string): string {
  const at = README.indexOf(marker);
  if (at === -1) throw new Error(`README has no "${marker}"`);
  const open = README.indexOf('```' + lang + '\n', at);
  const close = README.indexOf('\n```', open + 4);
  return README.slice(open + lang.length + 4, close);
}

interface Curl {
  method: string;
  url: string;
  headers: Record<string, string>;
  body: string | undefined;
}

/** One `curl` command: -X, -H (with $A / $J expanded), -d, and the URL (quoted or not). */
function parseCurl(line: string, vars: Record<string, string>): Curl {
  const words = [...line.matchAll(/'([^']*)'|"([^"]*)"|(\S+)/g)].map((m) => m[1] ?? m[2] ?? m[3]!).map((w) => w.replace(/\$(\w+)/g, (_, v: string) => vars[v] ?? `$${v}`));
  let method: string | undefined;
  let url = '';
  let body: string | undefined;
  const headers: Record<string, string> = {};
  for (let i = 1; i < words.length; i++) {
    const w = words[i]!;
    if (w === '-X') method = words[++i];
    else if (w === '-H') {
      const h = words[++i]!;
      headers[h.slice(0, h.indexOf(':')).trim().toLowerCase()] = h.slice(h.indexOf(':') + 1).trim();
    } else if (w === '-d') body = words[++i];
    else if (w === '-s' || w === '-N') continue;
    else url = w.startsWith('http') ? w : `http://${w}`;
  }
  return { method: method ?? (body === undefined ? 'GET' : 'POST'), url, headers, body };
}

async function send(c: Curl, gw: StartedGateway, mock: MockUpstream): Promise<{ status: number; body: Json }> {
  const url = c.url.replace('http://localhost:8787', gw.url);
  const headers = { ...c.headers };
  if (headers['x-gateway-custom-host']) headers['x-gateway-custom-host'] = headers['x-gateway-custom-host'].replace('http://127.0.0.1:9000', mock.url);
  const res = await request(url, { method: c.method as 'GET', headers, body: c.body });
  return { status: res.statusCode, body: (await res.body.json()) as Json };
}

async function shippedGateway(t: Teardown): Promise<StartedGateway> {
  const yaml = readFileSync(join(REPO, 'config', 'gateway.yaml'), 'utf8').replace(/^(\s+)host: 0\.0\.0\.0$/m, '$1host: 127.0.0.1').replace(/^(\s+)port: 8787$/m, '$1port: 0');
  return startGateway(t, { yaml, env: { GATEWAY_ADMIN_KEY: ADMIN } });
}

t.test("the quick start's curl call and the OpenAI SDK snippet work as pasted", async (t) => {
  const mock = await startMock(t);
  const gw = await shippedGateway(t);

  const curl = parseCurl(blockAfter('### curl', 'sh').replace(/\\\n\s*/g, ''), {});
  const answer = await send(curl, gw, mock);
  t.equal(answer.status, 200);
  t.match(answer.body, { object: 'chat.completion', choices: [{ message: { content: /Hello/ } }] });

  // The SDK snippet as a script, next to this repository's node_modules (for `openai`).
  const dir = join(REPO, 'test-output');
  mkdirSync(dir, { recursive: true });
  const script = join(dir, `readme-sdk-${process.pid}.mjs`);
  writeFileSync(script, blockAfter('### The OpenAI SDK', 'ts').replace('http://localhost:8787/v1', `${gw.url}/v1`).replace('http://127.0.0.1:9000/v1', `${mock.url}/v1`));
  const env = { ...process.env };
  delete env.OPENAI_API_KEY;
  delete env.GATEWAY_API_KEY;
  // Asynchronously: the gateway runs in this process and must answer while the script waits.
  const run = await promisify(execFile)(process.execPath, [script], { env, encoding: 'utf8', timeout: 30_000 });
  t.equal(run.stderr, '');
  t.match(run.stdout, /Mock reply to: Count to five/, 'the stream printed');
  t.match(run.stdout, /Mock reply to: Hello/, 'the plain answer printed');
});

t.test("the Admin API's common tasks work as pasted", async (t) => {
  const mock = await startMock(t);
  const gw = await shippedGateway(t);
  const block = blockAfter('**Common tasks.**', 'sh');
  const defs = /With `A='([^']+)'` and `J='([^']+)'`/.exec(README);
  t.ok(defs, 'the README defines $A and $J');
  const vars: Record<string, string> = { A: defs![1]!, J: defs![2]! };
  const lines = block.split('\n').filter((l) => l.startsWith('curl '));
  t.ok(lines.length >= 8, `${lines.length} commands`);
  let appKey: string | undefined;
  for (const line of lines) {
    if (line.includes('$ENTITY_ID')) {
      // An entity exists once the budget was charged: one call by an end user with the app's key.
      const call = await request(`${gw.url}/v1/chat/completions`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-gateway-api-key': appKey!,
          'x-gateway-provider': 'openai',
          'x-gateway-custom-host': `${mock.url}/v1`,
          authorization: 'Bearer sk-anything',
          'x-gateway-metadata': JSON.stringify({ _user: 'alice' }),
        },
        body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }),
      });
      t.equal(call.statusCode, 200);
      await call.body.dump();
      let entities: Json[] = [];
      for (let i = 0; i < 100 && entities.length === 0; i++) {
        entities = (await send(parseCurl(`curl -s localhost:8787/v1/policies/usage-limits/${vars.POLICY_ID}/entities -H "$A"`, vars), gw, mock)).body.data as Json[];
        if (entities.length === 0) await new Promise((r) => setTimeout(r, 50));
      }
      t.match(entities, [{ value_key: 'metadata._user:alice' }]);
      vars.ENTITY_ID = encodeURIComponent(entities[0]!.id as string);
    }
    const c = parseCurl(line, vars);
    const res = await send(c, gw, mock);
    t.equal(res.status, 200, `${c.method} ${c.url.replace(/^http:\/\/localhost:8787/, '')}: ${JSON.stringify(res.body).slice(0, 300)}`);
    if (c.url.endsWith('/api-keys/workspace/service')) appKey = res.body.key as string;
    if (c.url.endsWith('/policies/usage-limits')) vars.POLICY_ID = res.body.id as string;
  }
  t.ok(appKey?.startsWith('gw-'), 'the new key came back once');
  t.ok(vars.ENTITY_ID, 'the reset ran on a real entity');
});
