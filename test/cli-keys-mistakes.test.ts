/**
 * `gateway keys create` mistakes: each is a message on stderr, exit code 1 and nothing on stdout
 * (no key made). A file of its own: every case is a CLI process, and they take a while on a busy machine.
 */
import t from 'tap';
import { join } from 'node:path';
import { runCli } from './helpers/process.js';
import { tempDir, writeFile } from './helpers/gateway.js';

// Many CLI runs, each a new Node process: about 30 s in CI, half of tap's 60 s default.
t.setTimeout(180_000);

t.test('mistakes are refused with a message, exit 1, and nothing on stdout', async (t) => {
  const dir = tempDir();
  const yaml = writeFile(dir, 'gw.yaml', `server: {host: 127.0.0.1, port: 0}\nstore: {path: ${JSON.stringify(join(dir, 'data'))}}\npipeline: [auth]\n`);
  const env = { GATEWAY_ADMIN_KEY: '', GATEWAY_DATA_DIR: '', GATEWAY_CONFIG: '' };
  const mistakes: Array<[string[], RegExp]> = [
    [['--type', 'robot', '--name', 'x'], /unknown key type "robot"/],
    [['--type', 'organisation'], /--name is required/],
    [['--name', 'x'], /--type is required/],
    [['--type', 'organisation', '--name', 'x'], /--scopes or --preset is required \(presets: completions, mcp, read-only, admin\)/],
    [['--type', 'organisation', '--name', 'x', '--preset', 'root'], /unknown preset "root"/],
    [['--type', 'organisation', '--name', 'x', '--preset', 'admin', '--scopes', 'configs.read'], /not both/],
    [['--type', 'organisation', '--name', 'x', '--preset', 'mcp'], /"mcp.invoke" cannot be given to organisation-service keys/],
    [['--type', 'organisation', '--name', 'x', '--workspace', 'default', '--preset', 'admin'], /--workspace applies only to workspace keys/],
    [['--type', 'organisation', '--name', 'x', '--scopes', 'logs.write'], /cannot be given to organisation-service keys/],
    [['--type', 'organisation', '--name', 'x', '--scopes', 'configs.fly'], /unknown scope "configs.fly"/],
    [['--type', 'organisation', '--name', 'x', '--colour', 'red'], /unknown argument "--colour"/],
    [['--type', 'workspace-service', '--name', 'x', '--workspace', 'nope', '--preset', 'admin'], /workspace "nope" does not exist/],
  ];
  // The data dir exists (and its bootstrap admin key was printed) before the mistakes.
  const first = await runCli(['keys', 'create', '--type', 'workspace-service', '--name', 'ok', '--preset', 'completions', '--config', yaml], env);
  t.equal(first.code, 0, first.stderr);
  for (const [args, message] of mistakes) {
    const res = await runCli(['keys', 'create', ...args, '--config', yaml], env);
    t.equal(res.code, 1, args.join(' '));
    t.match(res.stderr, message);
    t.equal(res.stdout, '');
  }
  t.equal((await runCli(['keys', 'list', '--config', yaml], env)).code, 1, 'an unknown subcommand is an error');
});
