/**
 * The upstream guard end to end, over real sockets (issue 11, items 1 and 8).
 *
 * A TCP recorder (a `net.Server` on 127.0.0.1, port 0, counting connections) stands where the
 * attacker wants the gateway to connect; with `security.custom_hosts` allowing nothing and no
 * loopback, every path the issue found (Azure `resource_name`, Bedrock `aws_region`, by direct-mode
 * headers, inline config and virtual key; a name resolving to loopback) must leave it at zero
 * connections. Connection failures reach the client as the fixed 502 `upstream_unreachable`, with
 * the socket error in the log record only. `host` is never forwarded, whatever the lists say.
 */
import t from 'tap';
import net from 'node:net';
import { request } from 'undici';
import { startGateway, startMock, ADMIN_KEY, type StartedGateway, type Teardown } from './helpers/gateway.js';
import { buildLogRecord, definePlugin, defaultWorkspace, uuidv7, type ProviderAdapter } from '../core/index.js';
import type { HostResolver } from '../core/upstream/connect-guard.js';

const CHAT = { model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] };
const PIPELINE = 'pipeline: [auth, virtual-keys, config-strategy, admin-resources, future-provider]\n';
const NOTHING_ALLOWED = 'security: {custom_hosts: {allow: [], allow_loopback: false}}\n';

interface Recorder {
  port: number;
  /** Connections accepted so far. */
  connections: number;
}

/** Counts TCP connections; answers nothing (a connection at all is the failure). */
async function startRecorder(t: Teardown): Promise<Recorder> {
  const sockets = new Set<net.Socket>();
  const recorder = { port: 0, connections: 0 };
  const server = net.createServer((socket) => {
    recorder.connections++;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  recorder.port = (server.address() as net.AddressInfo).port;
  t.teardown(
    () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  );
  return recorder;
}

/** A provider whose URL is built from a field no grammar knows: what a future adapter might do. */
const futureProvider = definePlugin({
  name: 'future-provider',
  setup(app) {
    const adapter: ProviderAdapter = {
      id: 'future',
      baseUrl: 'https://future.example',
      url: ({ target, upstreamPath, search }) => `https://${String(target.providerOptions?.future_host)}/v1${upstreamPath}${search}`,
      authHeaders: () => ({}),
    };
    app.registerProvider(adapter);
  },
});

/** The log record of each finished request, as the logging plugin would store it. */
function recordProbe(): { plugin: ReturnType<typeof definePlugin>; records: Array<ReturnType<typeof buildLogRecord>> } {
  const records: Array<ReturnType<typeof buildLogRecord>> = [];
  const plugin = definePlugin({
    name: 'record-probe',
    setup: () => ({
      onDone(ctx, outcome) {
        records.push(buildLogRecord(ctx, outcome));
      },
    }),
  });
  return { plugin, records };
}

interface Answer {
  status: number;
  body: { error?: { code?: string; param?: string | null; message?: string } } & Record<string, unknown>;
  text: string;
}

async function call(gw: StartedGateway, method: 'GET' | 'POST' | 'PUT', path: string, headers: Record<string, string>, body?: unknown): Promise<Answer> {
  const res = await request(`${gw.url}${path}`, {
    method,
    headers: { 'x-gateway-api-key': ADMIN_KEY, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.body.text();
  let parsed: Answer['body'] = {};
  try {
    parsed = JSON.parse(text) as Answer['body'];
  } catch {
    /* compared by status */
  }
  return { status: res.statusCode, body: parsed, text };
}

async function guarded(t: Teardown, resolveHost?: HostResolver, policy = NOTHING_ALLOWED, plugins: Record<string, ReturnType<typeof definePlugin>> = {}): Promise<StartedGateway> {
  const pipeline = Object.keys(plugins).length > 0 ? PIPELINE.replace(']', `, ${Object.keys(plugins).join(', ')}]`) : PIPELINE;
  return startGateway(t, {
    yaml: policy + pipeline,
    plugins: { 'future-provider': futureProvider as never, ...(plugins as Record<string, never>) },
    env: { GATEWAY_ADMIN_KEY: ADMIN_KEY },
    resolveHost,
  });
}

t.test('SSRF through provider fields: no connection is ever opened (issue 11 item 1)', async (t) => {
  const rec = await startRecorder(t);
  const gw = await guarded(t);
  const azureField = `127.0.0.1:${rec.port}/`;
  const bedrockField = `x@127.0.0.1:${rec.port}/`;

  const noEcho = (t: { notOk(value: unknown, message: string): unknown }, a: Answer): void => {
    t.notOk(a.text.includes('127.0.0.1'), 'the value is not echoed');
    t.notOk(a.text.includes(String(rec.port)), 'the port is not echoed');
  };

  t.test('azure resource_name by direct-mode header', async (t) => {
    const a = await call(gw, 'POST', '/v1/chat/completions', {
      'x-gateway-provider': 'azure-openai',
      authorization: 'Bearer k',
      'x-gateway-azure-resource-name': azureField,
      'x-gateway-azure-deployment-name': 'd',
    }, CHAT);
    t.equal(a.status, 400);
    t.match(a.body.error, { code: 'invalid_provider_field', param: 'x-gateway-azure-resource-name' });
    noEcho(t, a);
  });

  t.test('azure deployment and api version by direct-mode header', async (t) => {
    const base = { 'x-gateway-provider': 'azure-openai', authorization: 'Bearer k', 'x-gateway-azure-resource-name': 'res' };
    const d = await call(gw, 'POST', '/v1/chat/completions', { ...base, 'x-gateway-azure-deployment-name': '../../x' }, CHAT);
    t.match(d.body.error, { code: 'invalid_provider_field', param: 'x-gateway-azure-deployment-name' });
    const v = await call(gw, 'POST', '/v1/chat/completions', { ...base, 'x-gateway-azure-deployment-name': 'd', 'x-gateway-azure-api-version': '1&x=@' }, CHAT);
    t.match(v.body.error, { code: 'invalid_provider_field', param: 'x-gateway-azure-api-version' });
  });

  t.test('bedrock aws_region by direct-mode header', async (t) => {
    const a = await call(gw, 'POST', '/v1/chat/completions', { 'x-gateway-provider': 'bedrock', authorization: 'Bearer k', 'x-gateway-aws-region': bedrockField }, CHAT);
    t.equal(a.status, 400);
    t.match(a.body.error, { code: 'invalid_provider_field', param: 'x-gateway-aws-region' });
    noEcho(t, a);
  });

  t.test('both by inline config', async (t) => {
    const azure = await call(gw, 'POST', '/v1/chat/completions', {
      'x-gateway-config': JSON.stringify({ provider: 'azure-openai', api_key: 'k', resource_name: azureField, deployment_name: 'd' }),
    }, CHAT);
    t.equal(azure.status, 400);
    t.equal(azure.body.error?.code, 'invalid_provider_field');
    t.match(azure.body.error?.param, /resource_name$/);
    noEcho(t, azure);
    const bedrock = await call(gw, 'POST', '/v1/chat/completions', {
      'x-gateway-config': JSON.stringify({ strategy: { mode: 'fallback' }, targets: [{ provider: 'bedrock', api_key: 'k', aws_region: bedrockField }] }),
    }, CHAT);
    t.equal(bedrock.status, 400);
    t.equal(bedrock.body.error?.code, 'invalid_provider_field');
    t.match(bedrock.body.error?.param, /targets\[0\]\.aws_region$/);
    noEcho(t, bedrock);
  });

  t.test('virtual keys are refused at save time', async (t) => {
    const azure = await call(gw, 'POST', '/v1/virtual-keys', {}, { name: 'az', provider: 'azure-openai', key: 'k', resource_name: azureField });
    t.equal(azure.status, 400);
    t.match(azure.body.error, { code: 'invalid_provider_field', param: 'resource_name' });
    noEcho(t, azure);
    const bedrock = await call(gw, 'POST', '/v1/virtual-keys', {}, { name: 'br', provider: 'bedrock', key: 'k', model_config: { aws_region: bedrockField } });
    t.match(bedrock.body.error, { code: 'invalid_provider_field', param: 'model_config.aws_region' });
    const ok = await call(gw, 'POST', '/v1/virtual-keys', {}, { name: 'good', provider: 'bedrock', key: 'k', aws_region: 'us-east-1' });
    t.equal(ok.status, 200, 'a real region is accepted');
    const update = await call(gw, 'PUT', `/v1/virtual-keys/${String(ok.body.slug)}`, {}, { aws_region: bedrockField });
    t.match(update.body.error, { code: 'invalid_provider_field', param: 'aws_region' });
    const integration = await call(gw, 'POST', '/v1/integrations', {}, { name: 'azi', ai_provider_id: 'azure-openai', key: 'k', configurations: { azure_resource_name: azureField } });
    t.match(integration.body.error, { code: 'invalid_provider_field', param: 'configurations.azure_resource_name' });
  });

  t.test('a virtual key stored before the fix is refused by the adapter and the built-URL guard', async (t) => {
    const ws = defaultWorkspace(gw.store);
    const now = new Date().toISOString();
    for (const [slug, provider, model_config] of [
      ['old-azure', 'azure-openai', { resource_name: azureField, deployment_name: 'd' }],
      ['old-bedrock', 'bedrock', { aws_region: bedrockField }],
    ] as const) {
      gw.store.c.virtualKeys.insert({
        id: uuidv7(), slug, name: slug, note: null, provider, key_sealed: gw.store.secrets.encrypt('k'), masked_key: null,
        custom_host: null, custom_headers_sealed: null, model_config: { ...model_config }, model_config_sealed: null,
        usage_limits: null, rate_limits: [], expires_at: null, status: 'active', workspace_id: ws.id,
        organisation_id: ws.organisation_id, created_at: now, last_updated_at: now,
      });
      const a = await call(gw, 'POST', '/v1/chat/completions', { 'x-gateway-virtual-key': slug }, CHAT);
      t.equal(a.status, 400, `${slug}: refused`);
      t.equal(a.body.error?.code, 'invalid_provider_field', `${slug}: by the field grammar`);
      noEcho(t, a);
    }
  });

  t.test('saved configs are checked at save time', async (t) => {
    const field = await call(gw, 'POST', '/v1/configs', {}, { name: 'bad-region', config: { provider: 'bedrock', aws_region: bedrockField } });
    t.equal(field.status, 400);
    t.match(field.body.error, { code: 'invalid_provider_field', param: 'config.aws_region' });
    const host = await call(gw, 'POST', '/v1/configs', {}, {
      name: 'bad-host',
      config: { strategy: { mode: 'fallback' }, targets: [{ provider: 'openai', custom_host: 'https://example.com' }, { provider: 'openai', custom_host: `http://127.0.0.1:${rec.port}/v1` }] },
    });
    t.match(host.body.error, { code: 'invalid_custom_host', param: 'config.targets[1].custom_host' });
    noEcho(t, host);
    const ok = await call(gw, 'POST', '/v1/configs', {}, { name: 'good', config: { provider: 'azure-openai', resource_name: 'my-res', deployment_name: 'gpt-4o', api_version: '2024-10-21' } });
    t.equal(ok.status, 200, 'a real Azure target is accepted');
  });

  t.test('any adapter: the URL is checked after it is built', async (t) => {
    const a = await call(gw, 'POST', '/v1/chat/completions', { 'x-gateway-config': JSON.stringify({ provider: 'future', api_key: 'k', future_host: `127.0.0.1:${rec.port}` }) }, CHAT);
    t.equal(a.status, 400);
    t.equal(a.body.error?.code, 'invalid_upstream_url');
    noEcho(t, a);
  });

  t.test('no connection reached the recorder', async (t) => {
    t.equal(rec.connections, 0);
  });
});

t.test('connect time: every resolved address is checked (DNS rebinding)', async (t) => {
  const rec = await startRecorder(t);
  const mock = await startMock(t);
  const answers: Record<string, string[]> = {
    'evil.example': ['127.0.0.1'],
    'mixed.example': ['93.184.216.34', '127.0.0.1'],
    'models.internal': ['127.0.0.1'],
  };
  let lookups = 0;
  const resolveHost: HostResolver = async (hostname) => {
    lookups++;
    const list = answers[hostname];
    if (list === undefined) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    return list.map((address) => ({ address, family: net.isIP(address) }));
  };
  const probe = recordProbe();
  const gw = await guarded(t, resolveHost, 'security: {custom_hosts: {allow: [models.internal], allow_loopback: false}}\n', { 'record-probe': probe.plugin as never });

  t.test('a public name resolving to loopback is refused before connecting', async (t) => {
    const a = await call(gw, 'POST', '/v1/chat/completions', { 'x-gateway-provider': 'openai', authorization: 'Bearer k', 'x-gateway-custom-host': `http://evil.example:${rec.port}/v1` }, CHAT);
    t.equal(a.status, 502);
    t.match(a.body.error, { code: 'upstream_unreachable', message: 'The upstream could not be reached.' });
    t.notOk(/evil|127\.0\.0\.1|refused|guard/i.test(a.body.error?.message ?? ''), 'nothing about the address reaches the client');
    t.ok(lookups > 0, 'the name went through the injected resolver');
  });

  t.test('one private answer among public ones refuses the name', async (t) => {
    const a = await call(gw, 'POST', '/v1/chat/completions', { 'x-gateway-provider': 'openai', authorization: 'Bearer k', 'x-gateway-custom-host': `http://mixed.example:${rec.port}/v1` }, CHAT);
    t.equal(a.status, 502);
    t.equal(a.body.error?.code, 'upstream_unreachable');
  });

  t.test('the refusal is in the log record', async (t) => {
    const rec = await waitFor(() => probe.records.find((r) => r.error_detail?.includes('UPSTREAM_ADDRESS_REFUSED')));
    t.ok(rec, 'error_detail names the guard');
    t.match(rec?.error_detail, /loopback/);
  });

  t.test('an allow-listed name resolving to loopback connects', async (t) => {
    const port = new URL(mock.url).port;
    const a = await call(gw, 'POST', '/v1/chat/completions', { 'x-gateway-provider': 'openai', authorization: 'Bearer k', 'x-gateway-custom-host': `http://models.internal:${port}/v1` }, CHAT);
    t.equal(a.status, 200);
    t.equal(mock.requests.at(-1)?.headers.host, `models.internal:${port}`);
  });

  t.test('no connection reached the recorder', async (t) => {
    t.equal(rec.connections, 0);
  });
});

t.test('loopback allowed by policy: a name resolving to loopback connects', async (t) => {
  const mock = await startMock(t);
  const resolveHost: HostResolver = async () => [{ address: '127.0.0.1', family: 4 }];
  const gw = await guarded(t, resolveHost, 'security: {custom_hosts: {allow: [], allow_loopback: true}}\n');
  const a = await call(gw, 'POST', '/v1/chat/completions', { 'x-gateway-provider': 'openai', authorization: 'Bearer k', 'x-gateway-custom-host': `http://local.example:${new URL(mock.url).port}/v1` }, CHAT);
  t.equal(a.status, 200);
});

t.test('connection failures are upstream_unreachable without socket text (no port scanner)', async (t) => {
  const probe = recordProbe();
  const gw = await guarded(t, undefined, '', { 'record-probe': probe.plugin as never });
  const mock = await startMock(t);

  // A port with nothing listening: ECONNREFUSED. Not an ephemeral port closed after use, which a
  // test file running alongside can take in between: a low port no test listens on, checked first.
  const closedPort = await refusingPort();

  // A server that resets every connection: ECONNRESET / socket closed.
  const resetter = net.createServer((socket) => socket.resetAndDestroy());
  await new Promise<void>((resolve) => resetter.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => resetter.close(() => resolve())));
  const resetPort = (resetter.address() as net.AddressInfo).port;

  const cases = [
    { name: 'refused', host: `http://127.0.0.1:${closedPort}/v1`, detail: /ECONNREFUSED/ },
    { name: 'reset', host: `http://127.0.0.1:${resetPort}/v1`, detail: /ECONNRESET|UND_ERR_SOCKET|closed/ },
    // TLS to a plain-HTTP server: OpenSSL's wrong-version (or record) error.
    { name: 'TLS mismatch', host: `https://127.0.0.1:${new URL(mock.url).port}/v1`, detail: /SSL|TLS|ssl/ },
  ];
  const answers: string[] = [];
  for (const c of cases) {
    const a = await call(gw, 'POST', '/v1/chat/completions', { 'x-gateway-provider': 'openai', authorization: 'Bearer k', 'x-gateway-custom-host': c.host }, CHAT);
    t.equal(a.status, 502, `${c.name}: 502`);
    t.match(a.body.error, { code: 'upstream_unreachable', message: 'The upstream could not be reached.' }, `${c.name}: the fixed code and message`);
    t.notOk(/ECONN|ERR_SSL|UND_ERR|EPIPE|socket|SSL|TLS|127\.0\.0\.1|\d{4,5}/.test(a.text), `${c.name}: no socket text, address or port`);
    answers.push(a.text);
  }
  t.equal(new Set(answers).size, 1, 'the three failures are indistinguishable to the client');
  for (const c of cases) {
    const rec = await waitFor(() => probe.records.find((r) => r.error_code === 'upstream_unreachable' && c.detail.test(r.error_detail ?? '')));
    t.ok(rec, `${c.name}: the socket error is in the log record`);
  }
});

t.test('host and hop-by-hop headers are never forwarded (issue 11 item 8)', async (t) => {
  const mock = await startMock(t);
  const gw = await guarded(t, undefined, '');
  const port = new URL(mock.url).port;
  const listed = 'host, connection, keep-alive, te, trailer, upgrade, proxy-authorization, x-gateway-provider, content-length, x-custom';
  const base = { host: 'evil.example', 'x-custom': 'kept', 'proxy-authorization': 'Basic abc', 'x-gateway-forward-headers': listed };

  const direct = await call(gw, 'POST', '/v1/chat/completions', { ...base, 'x-gateway-provider': 'openai', authorization: 'Bearer k', 'x-gateway-custom-host': `${mock.url}/v1` }, CHAT);
  t.equal(direct.status, 200);
  const seen = mock.requests.at(-1)!.headers;
  t.equal(seen.host, `127.0.0.1:${port}`, 'x-gateway-forward-headers: host is ignored');
  t.equal(seen['x-custom'], 'kept', 'an ordinary listed header is forwarded');
  t.equal(seen['proxy-authorization'], undefined, 'hop-by-hop headers are not forwarded');
  t.equal(seen['x-gateway-provider'], undefined, 'x-gateway-* headers are not forwarded');

  const config = { provider: 'openai', api_key: 'k', custom_host: `${mock.url}/v1`, forward_headers: ['host', 'proxy-authorization', 'x-custom'] };
  const viaConfig = await call(gw, 'POST', '/v1/chat/completions', { host: 'evil.example', 'x-custom': 'kept', 'proxy-authorization': 'Basic abc', 'x-gateway-config': JSON.stringify(config) }, CHAT);
  t.equal(viaConfig.status, 200);
  const seen2 = mock.requests.at(-1)!.headers;
  t.equal(seen2.host, `127.0.0.1:${port}`, 'a config forward_headers: [host] is ignored');
  t.equal(seen2['proxy-authorization'], undefined);
  t.equal(seen2['x-custom'], 'kept');
});

/** A loopback port that refuses connections: below the ephemeral range, so no test's listen(0) takes it. */
async function refusingPort(): Promise<number> {
  for (const port of [9, 1, 7, 13, 19, 37]) {
    const refused = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve(false);
      });
      socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code === 'ECONNREFUSED'));
    });
    if (refused) return port;
  }
  throw new Error('every candidate port accepts connections');
}

/** Waits for `find` to return something (onDone runs just after the client has its answer), at most 2 s. */
async function waitFor<T>(find: () => T | undefined): Promise<T | undefined> {
  for (let i = 0; i < 100; i++) {
    const found = find();
    if (found !== undefined) return found;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return undefined;
}

t.test('MCP integration URLs are checked at save time', async (t) => {
  const gw = await startGateway(t, { yaml: NOTHING_ALLOWED + 'pipeline: [auth, admin-catalog]\n', env: { GATEWAY_ADMIN_KEY: ADMIN_KEY } });
  const body = (url: string): Record<string, unknown> => ({ name: 'srv', url, auth_type: 'none', transport: 'http' });
  for (const url of ['http://169.254.169.254/latest/meta-data', 'http://127.0.0.1:9300/mcp', 'http://10.0.0.1/mcp', 'http://[::ffff:127.0.0.1]/mcp']) {
    const a = await call(gw, 'POST', '/v1/mcp-integrations', {}, body(url));
    t.equal(a.status, 400, `refused: ${url}`);
    t.match(a.body.error, { code: 'invalid_upstream_url', param: 'url' });
  }
  const ok = await call(gw, 'POST', '/v1/mcp-integrations', {}, body('https://mcp.example.com/mcp'));
  t.equal(ok.status, 200, 'a public MCP server is accepted');
  const update = await call(gw, 'PUT', `/v1/mcp-integrations/${String(ok.body.id)}`, {}, { url: 'http://169.254.169.254/' });
  t.match(update.body.error, { code: 'invalid_upstream_url', param: 'url' }, 'and on update');
});

t.test('the OTel endpoint is checked at boot: metadata refused, a collector on the operator’s network accepted', async (t) => {
  await t.rejects(startGateway(t, { yaml: 'pipeline:\n  - otel: {endpoint: "http://169.254.169.254/v1/traces"}\n' }), /endpoint points at a link-local or cloud metadata address/);
  const gw = await startGateway(t, { yaml: 'pipeline:\n  - otel: {endpoint: "http://127.0.0.1:4318/v1/traces", flush_ms: 60000}\n' });
  t.ok(gw.url, 'a loopback collector boots');
});

t.test('the semantic cache embeddings URL is checked at boot', async (t) => {
  await t.rejects(
    startGateway(t, { yaml: 'pipeline:\n  - cache: {semantic: {embeddings_url: "http://[fd00:ec2::254]/v1/embeddings", model: m, threshold: 0.9}}\n' }),
    /semantic\.embeddings_url points at a link-local or cloud metadata address/,
  );
});
