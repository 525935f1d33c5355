/**
 * Every scenario, in running order. Memory runs last so its "after load" follows all the load.
 * A new scenario is a file here and one entry below; one that needs the governance gateway sets
 * `needsGovernance` and run.ts starts it.
 */
import type { Scenario } from '../lib/scenario.js';
import { analytics } from './analytics.js';
import { cacheHit } from './cache-hit.js';
import { defaultPipeline } from './default-pipeline.js';
import { dialects } from './dialects.js';
import { distributed } from './distributed.js';
import { eventLoop } from './event-loop.js';
import { governance } from './governance.js';
import { guardrails } from './guardrails.js';
import { http2 } from './http2.js';
import { latencyC1 } from './latency-c1.js';
import { logs } from './logs.js';
import { mcp } from './mcp.js';
import { promptRender } from './prompt-render.js';
import { memory } from './memory.js';
import { soak } from './soak.js';
import { startup } from './startup.js';
import { streaming } from './streaming.js';
import { throughput } from './throughput.js';

export const scenarios: readonly Scenario[] = [throughput, latencyC1, streaming, http2, dialects, governance, defaultPipeline, guardrails, mcp, promptRender, startup, distributed, cacheHit, eventLoop, analytics, logs, soak, memory];
