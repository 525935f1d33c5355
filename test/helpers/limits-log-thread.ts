/**
 * A log thread that reports the heap limits it was started with (test/log-writer.test.ts) through
 * the thread's log channel, and answers each batch as written (it writes nothing).
 */
import { parentPort, resourceLimits } from 'node:worker_threads';
import type { ToLogThread } from '../../plugins/logging/log-thread.js';

const port = parentPort!;
port.postMessage({ type: 'log', level: 'warn', msg: 'thread limits', fields: { young_mb: resourceLimits.maxYoungGenerationSizeMb ?? null } });
port.on('message', (message: ToLogThread) => {
  if (message.type === 'write') port.postMessage({ type: 'written', seq: message.seq, failed: 0 });
  else if (message.type === 'close') port.postMessage({ type: 'closed' });
});
