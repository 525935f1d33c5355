/**
 * A log thread that dies on its first batch (test/log-writer.test.ts): the writer must count the
 * batch as lost, never hang a flush on it, and start a new thread for the next batch.
 */
import { parentPort } from 'node:worker_threads';

parentPort?.once('message', () => process.exit(7));
