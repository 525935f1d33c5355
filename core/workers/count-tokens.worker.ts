/**
 * The pool's task: count one job. piscina loads this file (compiled to JS) in each worker thread
 * and calls its default export.
 */
import { countJob, encoding, type CountJob } from './encodings.js';

// o200k_base serves every current OpenAI model and every unknown one, so nearly every pool needs
// it: load it while the threads start, all in parallel, rather than inside the first task each
// thread happens to get. Other encodings load on first use.
await encoding('o200k_base');

export default function countTokensTask(job: CountJob): Promise<number> {
  return countJob(job);
}
