/**
 * The upstream URL guard, table-driven: custom hosts under several policies, every special-use range
 * (as URL hosts and as resolver answers), connect-time verdicts, built URLs and provider field grammar.
 */

import t from 'tap';
import { addressesRefused, checkBuiltUrl, checkCustomHost, checkUpstreamUrl, classifyAddress, OPERATOR_URL_POLICY, type CustomHostPolicy } from '../core/upstream/ssrf.js';
import { checkProviderFields } from '../core/providers/fields.js';

const DEFAULT: CustomHostPolicy = { allow: [], allow_loopback: true };
const NO_LOOPBACK: CustomHostPolicy = { allow: [], allow_loopback: false };
const ALLOW_LIST: CustomHostPolicy = {
  allow: ['10.0.0.5', 'Models.Internal', '::ffff:192.168.1.10', 'fd12::1', '169.254.169.254', 'metadata.google.internal', '127.0.0.1'],
  allow_loopback: false,
};

interface Row {
  url: string;
  policy: CustomHostPolicy;
  allowed: boolean;
  why: string;
}

const allow = (url: string, why: string, policy = DEFAULT): Row => ({ url, policy, allowed: true, why });
const refuse = (url: string, why: string, policy = DEFAULT): Row => ({ url, policy, allowed: false, why });

const rows: Row[] = [
  // Public
  allow('https://api.openai.com/v1', 'public hostname'),
  allow('http://example.com:8080/v1', 'public hostname with port'),
  allow('https://8.8.8.8/v1', 'public IPv4'),
  allow('https://[2606:4700::1111]/v1', 'public IPv6'),
  allow('https://172.32.0.1', 'just outside 172.16/12'),
  allow('https://100.128.0.1', 'just outside 100.64/10'),
  allow('https://169.255.0.1', 'just outside link-local'),

  // Scheme, credentials, encoding
  refuse('ftp://example.com', 'not http(s)'),
  refuse('file:///etc/passwd', 'file scheme'),
  refuse('gopher://example.com', 'gopher'),
  refuse('example.com/v1', 'not absolute'),
  refuse('', 'empty'),
  refuse('https://user:pass@example.com', 'credentials'),
  refuse('https://user@example.com', 'username only'),
  refuse('https://@example.com', 'empty userinfo'),
  refuse('http://%31%32%37.0.0.1/', 'percent-encoded host'),
  refuse('http://exa%6Dple.com/', 'percent-encoded name'),
  refuse('http://example.com\n.evil/', 'newline'),
  refuse('http://exa\tmple.com/', 'tab stripped by WHATWG'),
  refuse('http://example.com\u0000/', 'NUL'),
  refuse(' http://example.com', 'leading space'),

  // Link-local and metadata: refused even when allow-listed
  refuse('http://169.254.169.254/latest/meta-data', 'AWS metadata'),
  refuse('http://169.254.169.254/', 'metadata, allow-listed', ALLOW_LIST),
  refuse('http://169.254.0.1/', 'link-local'),
  refuse('http://[fe80::1]/', 'IPv6 link-local'),
  refuse('http://[febf::1]/', 'top of fe80::/10'),
  refuse('http://[fd00:ec2::254]/', 'AWS IPv6 metadata'),
  refuse('http://metadata.google.internal/', 'GCP metadata'),
  refuse('http://METADATA.google.internal./', 'GCP metadata, case and trailing dot'),
  refuse('http://metadata.google.internal/', 'GCP metadata, allow-listed', ALLOW_LIST),
  refuse('http://metadata/', 'bare metadata name'),
  refuse('http://100.100.100.200/', 'Alibaba metadata'),
  refuse('http://[::ffff:169.254.169.254]/', 'IPv4-mapped metadata'),
  refuse('http://2852039166/', 'decimal 169.254.169.254'),

  // Loopback
  allow('http://localhost:11434/v1', 'localhost with allow_loopback'),
  allow('http://127.0.0.1:8000', '127.0.0.1 with allow_loopback'),
  allow('http://127.255.255.254', 'top of 127/8'),
  allow('http://[::1]:8080', '::1 with allow_loopback'),
  allow('http://api.localhost', 'RFC 6761 *.localhost'),
  refuse('http://localhost:11434', 'localhost without allow_loopback', NO_LOOPBACK),
  refuse('http://LOCALHOST.', 'localhost spelled oddly', NO_LOOPBACK),
  refuse('http://127.0.0.2', '127/8 without allow_loopback', NO_LOOPBACK),
  refuse('http://[::1]', '::1 without allow_loopback', NO_LOOPBACK),
  refuse('http://[::ffff:127.0.0.1]', 'IPv4-mapped loopback', NO_LOOPBACK),
  allow('http://127.0.0.1', 'loopback allow-listed', ALLOW_LIST),
  refuse('http://localhost', 'other loopback name not allow-listed', ALLOW_LIST),

  // Numeric tricks, canonicalised by WHATWG then classified
  refuse('http://2130706433/', 'decimal 127.0.0.1', NO_LOOPBACK),
  refuse('http://0x7f000001/', 'hex 127.0.0.1', NO_LOOPBACK),
  refuse('http://0177.0.0.1/', 'octal 127.0.0.1', NO_LOOPBACK),
  refuse('http://127.1/', 'short form 127.0.0.1', NO_LOOPBACK),
  refuse('http://0x0a.0.0.1/', 'hex octet 10.0.0.1'),
  refuse('http://167772161/', 'decimal 10.0.0.1'),
  refuse('http://012.0.0.1/', 'octal 10.0.0.1'),

  // Private ranges
  refuse('http://10.0.0.1', '10/8'),
  refuse('http://10.255.255.255', 'top of 10/8'),
  refuse('http://172.16.0.1', '172.16/12'),
  refuse('http://172.31.255.255', 'top of 172.16/12'),
  refuse('http://192.168.1.1', '192.168/16'),
  refuse('http://100.64.0.1', '100.64/10'),
  refuse('http://100.127.255.255', 'top of 100.64/10'),
  refuse('http://0.0.0.0:8080', '0.0.0.0'),
  refuse('http://0/', '0 → 0.0.0.0'),
  refuse('http://[::]', 'IPv6 unspecified'),
  refuse('http://[fc00::1]', 'fc00::/7'),
  refuse('http://[fdff:ffff::1]', 'top of fc00::/7'),
  refuse('http://[::ffff:10.0.0.1]', 'IPv4-mapped 10/8'),
  refuse('http://[::ffff:a00:1]', 'IPv4-mapped 10/8, hex form'),
  refuse('http://[::ffff:192.168.0.1]', 'IPv4-mapped 192.168/16'),
  refuse('http://[64:ff9b::a00:1]', 'NAT64 of 10.0.0.1'),
  refuse('http://224.0.0.1', 'multicast'),
  refuse('http://255.255.255.255', 'broadcast'),

  // Allow list: exact, case-insensitive, canonical
  allow('http://10.0.0.5:8000/v1', 'private IP allow-listed', ALLOW_LIST),
  refuse('http://10.0.0.6:8000/v1', 'neighbouring IP not allow-listed', ALLOW_LIST),
  allow('http://models.internal/v1', 'name allow-listed, case-insensitive', ALLOW_LIST),
  allow('http://MODELS.INTERNAL./v1', 'name allow-listed, trailing dot', ALLOW_LIST),
  allow('http://[::ffff:192.168.1.10]/', 'IPv4-mapped allow-listed', ALLOW_LIST),
  allow('http://[fd12:0:0:0:0:0:0:1]/', 'IPv6 allow-listed, other spelling', ALLOW_LIST),
  allow('http://[fd12::1]/', 'IPv6 allow-listed', ALLOW_LIST),
];

t.test('custom host table', async (t) => {
  for (const row of rows) {
    const err = checkCustomHost(row.url, row.policy);
    const label = `${JSON.stringify(row.url)}: ${row.why}`;
    if (row.allowed) {
      t.equal(err, null, `allowed: ${label}`, { found: err?.message });
    } else {
      t.match(
        { status: err?.status, code: err?.code, param: err?.param, type: err?.type },
        { status: 400, code: 'invalid_custom_host', param: 'x-gateway-custom-host', type: 'invalid_request_error' },
        `refused: ${label}`,
      );
    }
  }
});

t.test('param can be overridden and messages never echo the URL', async (t) => {
  const err = checkCustomHost('https://user:secret@10.0.0.1/', DEFAULT, 'custom_host');
  t.equal(err?.param, 'custom_host');
  t.notOk(err?.message.includes('secret'));
  const privateErr = checkCustomHost('http://10.0.0.1/', DEFAULT);
  t.match(privateErr?.message, /^x-gateway-custom-host points at a private/);
});

// ── Special-use ranges (RFC 6890 and successors), every one, as URL hosts ──────────────────────

interface RangeRow {
  host: string;
  klass: 'public' | 'loopback' | 'private' | 'forbidden';
  why: string;
}

const RANGES: RangeRow[] = [
  // IPv4
  { host: '0.0.0.0', klass: 'private', why: '0/8 this network' },
  { host: '0.255.255.255', klass: 'private', why: '0/8, top' },
  { host: '10.0.0.1', klass: 'private', why: '10/8' },
  { host: '100.64.0.1', klass: 'private', why: '100.64/10 shared (CGN)' },
  { host: '100.127.255.254', klass: 'private', why: '100.64/10, top' },
  { host: '127.0.0.1', klass: 'loopback', why: '127/8' },
  { host: '127.255.255.254', klass: 'loopback', why: '127/8, top' },
  { host: '169.254.1.1', klass: 'forbidden', why: '169.254/16 link-local' },
  { host: '172.16.0.1', klass: 'private', why: '172.16/12' },
  { host: '172.31.255.254', klass: 'private', why: '172.16/12, top' },
  { host: '192.0.0.1', klass: 'private', why: '192.0.0/24 IETF protocol assignments' },
  { host: '192.0.0.170', klass: 'private', why: '192.0.0/24 NAT64 discovery' },
  { host: '192.0.2.1', klass: 'private', why: '192.0.2/24 TEST-NET-1' },
  { host: '192.88.99.1', klass: 'private', why: '192.88.99/24 6to4 relay' },
  { host: '192.168.1.1', klass: 'private', why: '192.168/16' },
  { host: '198.18.0.1', klass: 'private', why: '198.18/15 benchmarking' },
  { host: '198.19.255.254', klass: 'private', why: '198.18/15, top' },
  { host: '198.51.100.1', klass: 'private', why: '198.51.100/24 TEST-NET-2' },
  { host: '203.0.113.1', klass: 'private', why: '203.0.113/24 TEST-NET-3' },
  { host: '224.0.0.1', klass: 'private', why: '224/4 multicast' },
  { host: '239.255.255.255', klass: 'private', why: '224/4, top' },
  { host: '240.0.0.1', klass: 'private', why: '240/4 reserved' },
  { host: '255.255.255.255', klass: 'private', why: 'limited broadcast' },
  { host: '192.0.1.1', klass: 'public', why: 'between 192.0.0/24 and 192.0.2/24' },
  { host: '198.17.255.255', klass: 'public', why: 'just below 198.18/15' },
  { host: '198.20.0.1', klass: 'public', why: 'just above 198.18/15' },
  { host: '203.0.114.1', klass: 'public', why: 'just above TEST-NET-3' },
  // IPv6
  { host: '[::]', klass: 'private', why: ':: unspecified' },
  { host: '[::1]', klass: 'loopback', why: '::1' },
  { host: '[::127.0.0.1]', klass: 'loopback', why: 'IPv4-compatible loopback, dotted' },
  { host: '[::7f00:1]', klass: 'loopback', why: 'IPv4-compatible loopback, hex' },
  { host: '[::10.0.0.1]', klass: 'private', why: 'IPv4-compatible 10/8' },
  { host: '[::ffff:127.0.0.1]', klass: 'loopback', why: '::ffff:0:0/96 mapped loopback' },
  { host: '[::ffff:169.254.169.254]', klass: 'forbidden', why: 'mapped metadata' },
  { host: '[::ffff:8.8.8.8]', klass: 'public', why: 'mapped public' },
  { host: '[::ffff:0:127.0.0.1]', klass: 'loopback', why: '::ffff:0:0:0/96 translated loopback' },
  { host: '[64:ff9b::127.0.0.1]', klass: 'loopback', why: '64:ff9b::/96 NAT64 of loopback' },
  { host: '[64:ff9b::808:808]', klass: 'public', why: 'NAT64 of a public address' },
  { host: '[64:ff9b:1::1]', klass: 'private', why: '64:ff9b:1::/48 local-use NAT64' },
  { host: '[100::1]', klass: 'private', why: '100::/64 discard-only' },
  { host: '[2001::1]', klass: 'private', why: '2001::/32 Teredo (in 2001::/23)' },
  { host: '[2001:1ff:ffff::1]', klass: 'private', why: '2001::/23, top' },
  { host: '[2001:200::1]', klass: 'public', why: 'just above 2001::/23' },
  { host: '[2001:db8::1]', klass: 'private', why: '2001:db8::/32 documentation' },
  { host: '[2002:7f00:1::1]', klass: 'loopback', why: '2002::/16 6to4 of 127.0.0.1' },
  { host: '[2002:a00:1::1]', klass: 'private', why: '6to4 of 10.0.0.1' },
  { host: '[2002:a9fe:a9fe::1]', klass: 'forbidden', why: '6to4 of 169.254.169.254' },
  { host: '[2002:808:808::1]', klass: 'public', why: '6to4 of 8.8.8.8' },
  { host: '[3fff::1]', klass: 'private', why: '3fff::/20 documentation' },
  { host: '[fc00::1]', klass: 'private', why: 'fc00::/7 unique local' },
  { host: '[fdff:ffff::1]', klass: 'private', why: 'fc00::/7, top' },
  { host: '[fe80::1]', klass: 'forbidden', why: 'fe80::/10 link-local' },
  { host: '[fec0::1]', klass: 'private', why: 'fec0::/10 site-local' },
  { host: '[ff02::1]', klass: 'private', why: 'ff00::/8 multicast' },
  { host: '[4000::1]', klass: 'private', why: 'outside 2000::/3' },
  { host: '[2606:4700::1111]', klass: 'public', why: 'global unicast' },
];

t.test('every special-use range is classified, and each class gets its verdict', async (t) => {
  for (const row of RANGES) {
    const url = `http://${row.host}:8080/v1`;
    const open = checkCustomHost(url, DEFAULT); // loopback allowed
    const closed = checkCustomHost(url, NO_LOOPBACK);
    const label = `${row.host} (${row.why})`;
    if (row.klass === 'public') {
      t.equal(closed, null, `public: ${label}`);
    } else if (row.klass === 'loopback') {
      t.equal(open, null, `loopback allowed by policy: ${label}`);
      t.equal(closed?.code, 'invalid_custom_host', `loopback refused without allow_loopback: ${label}`);
    } else {
      t.equal(open?.code, 'invalid_custom_host', `${row.klass} refused: ${label}`);
    }
    // The address as a resolver writes it (no brackets) gets the same class at connect time.
    const address = row.host.replace(/^\[|\]$/g, '');
    t.equal(classifyAddress(address), row.klass, `connect-time class: ${label}`);
  }
});

t.test('resolver forms: zone ids, garbage and mixed answers', async (t) => {
  t.equal(classifyAddress('fe80::1%eth0'), 'forbidden', 'scoped link-local');
  t.equal(classifyAddress('not-an-address'), 'forbidden', 'unreadable answers fail closed');
  t.equal(classifyAddress('::FFFF:7F00:1'), 'loopback', 'upper-case mapped');
  t.equal(addressesRefused('evil.example', ['127.0.0.1'], NO_LOOPBACK), 'a loopback address');
  t.equal(addressesRefused('evil.example', ['127.0.0.1'], DEFAULT), null, 'loopback allowed by policy');
  t.equal(addressesRefused('evil.example', ['93.184.216.34', '10.0.0.1'], DEFAULT), 'a private or reserved address', 'one bad answer refuses the name');
  t.equal(addressesRefused('evil.example', ['93.184.216.34', '169.254.169.254'], DEFAULT), 'a link-local or cloud metadata address');
  t.equal(addressesRefused('models.internal', ['10.0.0.9'], ALLOW_LIST), null, 'allow-listed by name');
  t.equal(addressesRefused('other.example', ['10.0.0.5'], ALLOW_LIST), null, 'allow-listed by address');
  t.equal(addressesRefused('other.example', ['0:0:0:0:0:ffff:c0a8:10a'], ALLOW_LIST), null, 'allow-listed IPv6 address, other spelling');
  t.equal(addressesRefused('models.internal', ['169.254.169.254'], ALLOW_LIST), 'a link-local or cloud metadata address', 'allow-listed name to metadata: still refused');
  t.equal(addressesRefused('collector', ['10.1.2.3', '127.0.0.1'], OPERATOR_URL_POLICY), null, 'operator policy: private and loopback');
});

t.test('checkUpstreamUrl: its own code, the caller names the param; the operator policy refuses only metadata', async (t) => {
  const refused = checkUpstreamUrl('http://10.0.0.1/mcp', DEFAULT, 'url');
  t.match({ status: refused?.status, code: refused?.code, param: refused?.param }, { status: 400, code: 'invalid_upstream_url', param: 'url' });
  t.equal(checkUpstreamUrl('https://mcp.example.com/sse', DEFAULT, 'url'), null);
  t.equal(checkUpstreamUrl('http://collector:4318/v1/traces', OPERATOR_URL_POLICY, 'endpoint'), null, 'a collector by name');
  t.equal(checkUpstreamUrl('http://10.0.0.7:4318/v1/traces', OPERATOR_URL_POLICY, 'endpoint'), null, 'a collector on a private address');
  t.equal(checkUpstreamUrl('http://127.0.0.1:4318/v1/traces', OPERATOR_URL_POLICY, 'endpoint'), null, 'a collector on loopback');
  t.equal(checkUpstreamUrl('http://169.254.169.254/latest', OPERATOR_URL_POLICY, 'endpoint')?.code, 'invalid_upstream_url', 'metadata refused');
  t.equal(checkUpstreamUrl('http://[fe80::1]:4318/', OPERATOR_URL_POLICY, 'endpoint')?.code, 'invalid_upstream_url', 'link-local refused');
  t.equal(checkUpstreamUrl(new URL('http://u:p@example.com/'), DEFAULT, 'url')?.code, 'invalid_upstream_url', 'a parsed URL with credentials');
});

t.test('checkBuiltUrl: the URL an adapter put together, including the issue’s two URLs', async (t) => {
  // What the Azure and Bedrock adapters built from the field values before the grammar check.
  const azure = new URL('https://127.0.0.1:9300/.openai.azure.com/openai/deployments/d/chat/completions?api-version=1');
  const bedrock = new URL('https://bedrock-runtime.x@127.0.0.1:9300/.amazonaws.com/model/m/converse');
  const nothing: CustomHostPolicy = { allow: [], allow_loopback: false };
  t.equal(checkBuiltUrl(azure, nothing)?.code, 'invalid_upstream_url', 'azure: loopback host refused');
  t.equal(checkBuiltUrl(bedrock, nothing)?.code, 'invalid_upstream_url', 'bedrock: userinfo refused');
  t.equal(checkBuiltUrl(bedrock, DEFAULT)?.code, 'invalid_upstream_url', 'userinfo refused whatever the policy');
  t.equal(checkBuiltUrl(new URL('https://myres.openai.azure.com/openai/v1/chat/completions'), nothing), null, 'a real Azure URL');
  t.notOk(checkBuiltUrl(azure, nothing)?.message.includes('9300'), 'the message does not echo the URL');
});

// ── Provider field grammar ────────────────────────────────────────────────────────────────────

const FIELD_ROWS: Array<{ field: string; value: unknown; ok: boolean }> = [
  { field: 'resource_name', value: 'my-resource', ok: true },
  { field: 'resource_name', value: 'MyResource01', ok: true },
  { field: 'resource_name', value: '127.0.0.1:9300/', ok: false },
  { field: 'resource_name', value: 'a.b', ok: false },
  { field: 'resource_name', value: 'evil.com#', ok: false },
  { field: 'resource_name', value: '-leading', ok: false },
  { field: 'resource_name', value: 'a'.repeat(64), ok: false },
  { field: 'azure_resource_name', value: 'x@y', ok: false },
  { field: 'deployment_name', value: 'gpt-4o_mini.2024', ok: true },
  { field: 'deployment_name', value: '..', ok: false },
  { field: 'deployment_name', value: 'a/b', ok: false },
  { field: 'deployment_id', value: 'a?b', ok: false },
  { field: 'api_version', value: '2024-10-21', ok: true },
  { field: 'api_version', value: '2024-05-01-preview', ok: true },
  { field: 'api_version', value: 'v1', ok: true },
  { field: 'api_version', value: '1&x=y', ok: false },
  { field: 'aws_region', value: 'us-east-1', ok: true },
  { field: 'aws_region', value: 'us-gov-west-1', ok: true },
  { field: 'aws_region', value: 'x@127.0.0.1:9300/', ok: false },
  { field: 'aws_region', value: 'US-EAST-1', ok: false },
  { field: 'aws_region', value: 'a'.repeat(33), ok: false },
  { field: 'aws_region', value: 42, ok: false },
  { field: 'vertex_region', value: 'europe-west4', ok: true },
  { field: 'vertex_region', value: 'evil.com/', ok: false },
  { field: 'vertex_project_id', value: 'example.com:my-project', ok: true },
  { field: 'vertex_project_id', value: 'p/../x', ok: false },
  { field: 'aws_secret_access_key', value: 'any/thing+goes=', ok: true },
  { field: 'resource_name', value: '', ok: true }, // empty is "absent": the adapter says it is missing
];

t.test('provider field grammar', async (t) => {
  for (const row of FIELD_ROWS) {
    const err = checkProviderFields({ [row.field]: row.value }, (f) => `x-gateway-${f.replace(/_/g, '-')}`);
    const label = `${row.field} = ${JSON.stringify(row.value)}`;
    if (row.ok) t.equal(err, null, `accepted: ${label}`);
    else {
      t.match({ status: err?.status, code: err?.code, param: err?.param }, { status: 400, code: 'invalid_provider_field', param: `x-gateway-${row.field.replace(/_/g, '-')}` }, `refused: ${label}`);
      if (typeof row.value === 'string') t.notOk(err?.message.includes(row.value), `the value is not echoed: ${label}`);
    }
  }
  const nested = checkProviderFields({ deployment_config: [{ deployment_name: 'ok', api_version: '2024-10-21' }, { deployment_name: 'a/../b', api_version: '1' }] }, (f) => f);
  t.equal(nested?.param, 'deployment_config[1].deployment_name', 'deployment_config entries are checked');
});
