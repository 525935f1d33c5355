/** SSRF guard for custom upstream hosts: a table of allowed and refused URLs under several policies. */

import t from 'tap';
import { checkCustomHost, type CustomHostPolicy } from '../core/upstream/ssrf.js';

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
