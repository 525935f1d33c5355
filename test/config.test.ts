import t from 'tap';
import path from 'node:path';
import { formatProblem, loadConfigFile, loadConfigText, resolveConfigPath } from '../core/config/load.js';
import type { ConfigProblem } from '../core/config/types.js';
import { standardPlugins } from '../plugins/index.js';

const NO_ENV = {};

/** Problems without the file, which every case shares: what tests care about is where and what. */
function where(problems: ConfigProblem[]): Array<Omit<ConfigProblem, 'file'>> {
  return problems.map(function strip({ file: _file, ...rest }) {
    return rest;
  });
}

t.test('the shipped config files load without problems', async (t) => {
  for (const file of ['config/gateway.yaml', 'config/examples/full.yaml']) {
    const { config, problems } = await loadConfigFile(file, NO_ENV);
    t.same(problems.map(formatProblem), [], file);
    t.ok(config, file);
  }
  const { config } = await loadConfigFile('config/gateway.yaml', NO_ENV);
  t.equal(config?.server.port, 8787);
  t.equal(config?.store.path, './data');
  t.same(config?.security.custom_hosts.allow, ['localhost', '127.0.0.1', '::1']);
  // npm start runs every standard plugin; each must be one the catalog knows.
  const names = config?.pipeline.map((p) => p.name) ?? [];
  t.same(names, ['logging', 'analytics', 'metrics', 'otel', 'realtime', 'auth', 'prompts', 'responses-store', 'virtual-keys', 'config-strategy', 'guardrails', 'mcp-gateway', 'rate-limit', 'usage-limits', 'cache', 'admin-org', 'admin-api-keys', 'admin-resources', 'admin-policies', 'admin-catalog', 'console']);
  for (const name of names) t.ok(standardPlugins[name], `${name} is a standard plugin`);
  t.equal(config?.file, path.resolve('config/gateway.yaml'));
  t.equal(config?.baseDir, path.resolve('config'));
});

t.test('an empty mapping gets every default, the same as examples/full.yaml', async (t) => {
  const { config, problems } = loadConfigText('{}', '<inline>', NO_ENV);
  t.same(problems, []);
  t.same(config, {
    server: {
      host: '0.0.0.0',
      port: 8787,
      body_limit: 10 * 1024 * 1024,
      admin_body_limit: 1024 * 1024,
      workers: 1,
      keep_alive_timeout: 65000,
      headers_timeout: 30000,
      request_timeout: 300000,
      max_header_size: 16384,
      shutdown_grace: 30000,
      stream_ping_interval: 10000,
    },
    store: { path: './data', map_size: 2 ** 34, postgres: null, redis: null },
    audit: { summary_bytes: 8192, retention_days: 90, max_records: 1_000_000 },
    security: { custom_hosts: { allow: ['localhost', '127.0.0.1', '::1'], allow_loopback: true } },
    upstream: { connections: 128, keep_alive_timeout: 60000, connect_timeout: 10000, request_timeout: 600000, stream_idle_timeout: 300000 },
    pipeline: [],
    file: '<inline>',
    baseDir: process.cwd(),
  });
  const full = await loadConfigFile('config/examples/full.yaml', NO_ENV);
  t.same({ ...full.config, file: '<inline>', baseDir: process.cwd() }, config);
});

t.test('sizes, durations, tls paths and pipeline entries are normalised', async (t) => {
  const text = [
    'server:',
    '  body_limit: 512KB',
    '  max_header_size: 8192',
    '  shutdown_grace: 2m',
    '  stream_ping_interval: 0',
    '  keep_alive_timeout: 1.5s',
    '  tls: {cert: certs/a.crt, key: /etc/k.pem}',
    'pipeline:',
    '  - logging',
    '  - auth:',
    '  - cache: {max_entries: 5}',
    '  - ./my/plugin.js: {a: 1}',
  ].join('\n');
  const { config, problems } = loadConfigText(text, '/srv/gw/gateway.yaml', NO_ENV);
  t.same(problems, []);
  t.equal(config?.server.body_limit, 512 * 1024);
  t.equal(config?.server.max_header_size, 8192);
  t.equal(config?.server.shutdown_grace, 120000);
  t.equal(config?.server.stream_ping_interval, 0);
  t.equal(config?.server.keep_alive_timeout, 1500);
  t.same(config?.server.tls, { cert: '/srv/gw/certs/a.crt', key: '/etc/k.pem' });
  t.equal(config?.baseDir, '/srv/gw');
  t.same(config?.pipeline, [
    { name: 'logging', options: {}, path: 'pipeline[0]' },
    { name: 'auth', options: {}, path: 'pipeline[1]' },
    { name: 'cache', options: { max_entries: 5 }, path: 'pipeline[2]' },
    { name: './my/plugin.js', options: { a: 1 }, path: 'pipeline[3]' },
  ]);
});

t.test('schema problems point at the offending node', async (t) => {
  t.test('wrong type', async (t) => {
    const { config, problems } = loadConfigText('server:\n  workers: many\n', 'gw.yaml', NO_ENV);
    t.equal(config, null);
    t.same(where(problems), [{ line: 2, column: 12, path: 'server.workers', message: 'must be an integer, got "many"' }]);
    t.equal(problems[0]?.file, path.resolve('gw.yaml'));
    t.equal(formatProblem(problems[0]!), 'gw.yaml:2:12 server.workers: must be an integer, got "many"');
  });

  t.test('port out of range', async (t) => {
    const { problems } = loadConfigText('# comment\nserver:\n  host: "::"\n  port: 70000\n', 'gw.yaml', NO_ENV);
    t.same(where(problems), [{ line: 4, column: 9, path: 'server.port', message: 'must be <= 65535' }]);
  });

  t.test('unknown key with a suggestion, at the key itself', async (t) => {
    const { problems } = loadConfigText('server:\n  host: 127.0.0.1\n  prot: 80\n', 'gw.yaml', NO_ENV);
    t.same(where(problems), [{ line: 3, column: 3, path: 'server.prot', message: 'unknown key "prot" (did you mean "port"?)' }]);
  });

  t.test('unknown key without a plausible suggestion', async (t) => {
    const { problems } = loadConfigText('colour: blue\n', 'gw.yaml', NO_ENV);
    t.same(where(problems), [{ line: 1, column: 1, path: 'colour', message: 'unknown key "colour"' }]);
  });

  t.test('missing tls.key, at the tls mapping', async (t) => {
    const { problems } = loadConfigText('server:\n  tls:\n    cert: a.pem\n', 'gw.yaml', NO_ENV);
    t.same(where(problems), [{ line: 3, column: 5, path: 'server.tls.key', message: 'missing required key "key"' }]);
  });

  t.test('bad size string', async (t) => {
    const { problems } = loadConfigText('server:\n  body_limit: 10 megs\n', 'gw.yaml', NO_ENV);
    t.same(where(problems), [
      { line: 2, column: 15, path: 'server.body_limit', message: 'must be a number of bytes or a size such as 512kb, 10mb, 1gb, got "10 megs"' },
    ]);
  });

  t.test('a size past 2^53 bytes', async (t) => {
    const { config, problems } = loadConfigText('server:\n  max_header_size: 99999999999gb\n', 'gw.yaml', NO_ENV);
    t.equal(config, null);
    t.same(where(problems), [{ line: 2, column: 20, path: 'server.max_header_size', message: 'size "99999999999gb": is too large' }]);
  });

  t.test('bad duration string', async (t) => {
    const { problems } = loadConfigText('upstream:\n  connect_timeout: soon\n', 'gw.yaml', NO_ENV);
    t.same(where(problems), [
      { line: 2, column: 20, path: 'upstream.connect_timeout', message: 'must be milliseconds or a duration such as 500ms, 30s, 2m, 1h, got "soon"' },
    ]);
  });

  t.test('bad pipeline entries', async (t) => {
    const text = 'pipeline:\n  - 42\n  - cache:\n    max_entries: 5\n  - "bad name": {}\n';
    const { problems } = loadConfigText(text, 'gw.yaml', NO_ENV);
    t.same(where(problems), [
      {
        line: 2,
        column: 5,
        path: 'pipeline[0]',
        message: 'must be a plugin name or a single-key mapping {<plugin>: <options>} (check the indentation of the options), got 42',
      },
      {
        line: 3,
        column: 5,
        path: 'pipeline[1]',
        message: 'must be a plugin name or a single-key mapping {<plugin>: <options>} (check the indentation of the options)',
      },
      {
        line: 5,
        column: 5,
        path: 'pipeline[2]["bad name"]',
        message: 'must be a plugin name such as rate-limit or a path starting with ./, ../ or /, got "bad name"',
      },
    ]);
  });

  t.test('every problem is reported, in file order', async (t) => {
    const { problems } = loadConfigText('store:\n  paht: x\nserver:\n  port: -1\n', 'gw.yaml', NO_ENV);
    t.same(
      problems.map((p) => `${p.line}:${p.column} ${p.path}`),
      ['2:3 store.paht', '4:9 server.port'],
    );
  });
});

t.test('file-level problems', async (t) => {
  t.test('YAML syntax error', async (t) => {
    // An unquoted `: ` inside a value, the usual slip with URLs and messages.
    const { config, problems } = loadConfigText('server:\n  port: 8787\n  host: a: b\nstore: {}\n', 'gw.yaml', NO_ENV);
    t.equal(config, null);
    t.same(where(problems), [{ line: 3, column: 9, path: '', message: 'Nested mappings are not allowed in compact mappings' }]);
    t.equal(formatProblem(problems[0]!), 'gw.yaml:3:9: Nested mappings are not allowed in compact mappings');
  });

  t.test('duplicate keys', async (t) => {
    const { problems } = loadConfigText('server:\n  port: 1\n  port: 2\n', 'gw.yaml', NO_ENV);
    t.match(where(problems), [{ line: 3, column: 3, path: '' }]);
  });

  t.test('empty file', async (t) => {
    const { problems } = loadConfigText('# nothing\n', 'gw.yaml', NO_ENV);
    t.match(where(problems), [{ line: 0, column: 0, message: /empty/ }]);
  });

  t.test('top level not a mapping', async (t) => {
    const { problems } = loadConfigText('\n- server\n', 'gw.yaml', NO_ENV);
    t.match(where(problems), [{ line: 2, column: 1, message: /must be a mapping/ }]);
  });

  t.test('missing file', async (t) => {
    const { config, problems } = await loadConfigFile('does/not/exist.yaml', NO_ENV);
    t.equal(config, null);
    t.match(problems, [{ file: path.resolve('does/not/exist.yaml'), line: 0, message: /ENOENT/ }]);
  });
});

t.test('${VAR} interpolation', async (t) => {
  t.test('substitution and defaults', async (t) => {
    // `${` cannot appear unquoted inside a YAML flow mapping `{…}`, hence block style throughout.
    const text = [
      'server:',
      '  host: ${HOST}',
      '  port: ${PORT:-8787}',
      'store:',
      '  path: "${DATA:-/var/lib}/gw"',
      'pipeline:',
      '  - cache:',
      '      namespace: "${NS:-}"',
      '      on: ${FLAG:-true}',
      '      price: "$${literal}"',
      '      eur: a$$b',
    ].join('\n');
    const { config, problems } = loadConfigText(text, 'gw.yaml', { HOST: '127.0.0.1', DATA: '' });
    t.same(problems, []);
    t.equal(config?.server.host, '127.0.0.1');
    t.equal(config?.server.port, 8787, 'a plain scalar that is one expression is re-typed');
    t.equal(config?.store.path, '/var/lib/gw', ':- also applies to an empty variable');
    t.same(config?.pipeline[0]?.options, { namespace: '', on: true, price: '${literal}', eur: 'a$$b' });
  });

  t.test('typed re-parse only for a whole plain scalar', async (t) => {
    const text = 'pipeline:\n  - x:\n      a: ${N}\n      b: "${N}"\n      c: ${N}s\n      d: ${TEXT}\n      e: ${MAP}\n';
    const { config, problems } = loadConfigText(text, 'gw.yaml', { N: '42', TEXT: '1 # not a comment', MAP: 'a: b' });
    t.same(problems, []);
    t.same(config?.pipeline[0]?.options, { a: 42, b: '42', c: '42s', d: '1 # not a comment', e: 'a: b' });
  });

  t.test('an environment value cannot bypass the schema', async (t) => {
    const { problems } = loadConfigText('server:\n  port: ${PORT}\n', 'gw.yaml', { PORT: 'http' });
    t.same(where(problems), [{ line: 2, column: 9, path: 'server.port', message: 'must be an integer, got "http"' }]);
  });

  t.test('unset variable without default', async (t) => {
    const { config, problems } = loadConfigText('store:\n  path: ./data\n  # x\nserver:\n    host: "h-${NOPE}"\n', 'gw.yaml', NO_ENV);
    t.equal(config, null);
    t.same(where(problems), [{ line: 5, column: 11, path: 'server.host', message: 'environment variable NOPE is not set' }]);
  });

  t.test('malformed expressions', async (t) => {
    const { problems } = loadConfigText('server:\n  host: ${1X}\nstore:\n  path: ${OPEN\n', 'gw.yaml', NO_ENV);
    t.match(where(problems), [
      { line: 2, column: 9, path: 'server.host', message: /not a valid expression/ },
      { line: 4, column: 9, path: 'store.path', message: /unterminated/ },
    ]);
  });
});

t.test('environment overrides win over the YAML', async (t) => {
  const text = 'server:\n  host: 0.0.0.0\n  port: 9000\nstore:\n  path: ./yaml-data\n';
  const env = { GATEWAY_HOST: '127.0.0.1', GATEWAY_PORT: '0', GATEWAY_DATA_DIR: '/tmp/gw' };
  const { config, problems } = loadConfigText(text, 'gw.yaml', env);
  t.same(problems, []);
  t.equal(config?.server.host, '127.0.0.1');
  t.equal(config?.server.port, 0, 'port 0 is allowed from the environment');
  t.equal(config?.store.path, '/tmp/gw');

  const unset = loadConfigText(text, 'gw.yaml', { GATEWAY_PORT: '' });
  t.equal(unset.config?.server.port, 9000, 'an empty variable counts as unset');

  for (const bad of ['http', '65536', '-1', '80.5']) {
    const { config, problems } = loadConfigText(text, 'gw.yaml', { GATEWAY_PORT: bad });
    t.equal(config, null, bad);
    t.same(problems, [{ file: 'env', line: 0, column: 0, path: 'GATEWAY_PORT', message: `must be an integer from 0 to 65535, got "${bad}"` }]);
    t.equal(formatProblem(problems[0]!), `env GATEWAY_PORT: must be an integer from 0 to 65535, got "${bad}"`);
  }
});

t.test('resolveConfigPath: explicit, then GATEWAY_CONFIG, then ./config/gateway.yaml', async (t) => {
  const env = { GATEWAY_CONFIG: 'from-env.yaml' };
  t.equal(resolveConfigPath('explicit.yaml', env), path.resolve('explicit.yaml'));
  t.equal(resolveConfigPath('/abs/gw.yaml', env), '/abs/gw.yaml');
  t.equal(resolveConfigPath(undefined, env), path.resolve('from-env.yaml'));
  t.equal(resolveConfigPath(undefined, {}), path.join(process.cwd(), 'config', 'gateway.yaml'));
  t.equal(resolveConfigPath(undefined, { GATEWAY_CONFIG: '' }), path.join(process.cwd(), 'config', 'gateway.yaml'));
});

t.test('locate() finds nested pipeline options, else the nearest ancestor', async (t) => {
  const text = ['server:', '  port: 8787', 'pipeline:', '  - logging', '  - auth', '  - cache:', '      max_entries: -1', '      ttl: 5'].join('\n');
  const { config, locate } = loadConfigText(text, 'gw.yaml', NO_ENV);
  t.ok(config);
  t.same(locate(['pipeline', 2, 'cache', 'max_entries']), { line: 7, column: 20 });
  t.same(locate(['pipeline', '2', 'cache', 'ttl']), { line: 8, column: 12 }, 'a string index works too');
  t.same(locate(['pipeline', 2, 'cache', 'missing', 'deeper']), { line: 7, column: 7 }, 'missing key: the options mapping');
  t.same(locate(['pipeline', 9]), { line: 4, column: 3 }, 'missing index: the sequence');
  t.same(locate(['server', 'port']), { line: 2, column: 9 });
  t.same(locate([]), { line: 1, column: 1 });
});
