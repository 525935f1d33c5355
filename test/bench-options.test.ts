/**
 * The bench's command line and machine facts: what `--halt-poll-ns` accepts, and how the CPU idle
 * setting is told in a report. (Setting it is left to `npm run bench`: a test does not change the
 * machine's kernel parameters.)
 */
import t from 'tap';
import { parseOptions } from '../bench/lib/options.js';
import { cpuIdleFacts, describeCpuIdle } from '../bench/lib/cpu-idle.js';

t.test('--halt-poll-ns is optional, takes 0 or a positive integer, and refuses anything else', async (t) => {
  const plain = parseOptions([]);
  t.not(plain, 'help');
  t.equal((plain as Exclude<typeof plain, 'help'>).haltPollNs, undefined, 'absent: the machine is left as it is');
  t.equal((parseOptions(['--halt-poll-ns', '200000']) as { haltPollNs?: number }).haltPollNs, 200000);
  t.equal((parseOptions(['--halt-poll-ns', '0']) as { haltPollNs?: number }).haltPollNs, 0, '0 turns polling off');
  for (const bad of ['-5', '1.5', 'lots', '']) t.throws(() => parseOptions([`--halt-poll-ns=${bad}`]), /--halt-poll-ns must be a positive integer/, `refuses ${JSON.stringify(bad)}`);
});

t.test('the CPU idle facts are read from sysfs and told in one line', async (t) => {
  const facts = cpuIdleFacts();
  t.type(facts.driver, 'string');
  t.ok(facts.haltPollNs === null || Number.isInteger(facts.haltPollNs), 'a number where the haltpoll driver has one, else null');
  t.equal(describeCpuIdle({ driver: 'haltpoll', governor: 'haltpoll', haltPollNs: 0 }), 'cpuidle haltpoll/haltpoll, guest_halt_poll_ns 0');
  t.equal(describeCpuIdle({ driver: 'intel_idle', governor: 'menu', haltPollNs: null }), 'cpuidle intel_idle/menu');
});

t.test("--first-warmup: each target's first run warms longer, never less than --warmup", async (t) => {
  const opts = (argv: string[]): { warmup: number; firstWarmup: number } => parseOptions(argv) as { warmup: number; firstWarmup: number };
  t.same(opts([]), { ...opts([]), warmup: 3, firstWarmup: 15 }, 'defaults: 3 s before each run, 15 s before a first');
  t.equal(opts(['--first-warmup', '30']).firstWarmup, 30);
  t.equal(opts(['--warmup', '20']).firstWarmup, 20, 'at least --warmup');
  t.equal(opts(['--quick']).firstWarmup, 3, '--quick keeps the smoke run short');
  t.equal(opts(['--first-warmup', '0', '--warmup', '0']).firstWarmup, 0, 'both off');
  t.throws(() => parseOptions(['--first-warmup', 'long']), /--first-warmup must be a positive number/);
});
