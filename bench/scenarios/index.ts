/**
 * Every scenario, in running order. Memory runs last so its "after load" follows all the load.
 * A new scenario (cache hit, full governance pipeline) is a file here and one entry below.
 */
import type { Scenario } from '../lib/scenario.js';
import { h2c } from './h2c.js';
import { latencyC1 } from './latency-c1.js';
import { memory } from './memory.js';
import { streaming } from './streaming.js';
import { throughput } from './throughput.js';

export const scenarios: readonly Scenario[] = [throughput, latencyC1, streaming, h2c, memory];
