/**
 * The guardrails pool's task: one built-in check on one large text, off the event loop. piscina
 * loads this file (compiled to JS) in each worker thread and calls its default export.
 */
import { OPERATOR_URL_POLICY, type CheckContext, type CheckDefinition, type CheckResult, type Finding } from '../../core/index.js';
import { builtinChecks } from './checks/index.js';

export interface PoolTask {
  op: 'find' | 'run';
  id: string;
  params: unknown;
  text: string;
  /** For `run`: what the check sees besides the text (no signal: nothing here waits on the network). */
  ctx?: Omit<CheckContext, 'text' | 'signal'>;
}

const checks = new Map<string, CheckDefinition<unknown>>();
for (const c of builtinChecks({ hosts: OPERATOR_URL_POLICY })) checks.set(c.id, c as unknown as CheckDefinition<unknown>);

export default async function checkTask(task: PoolTask): Promise<Finding[] | null | CheckResult> {
  const check = checks.get(task.id);
  if (check === undefined) throw new Error(`no built-in check ${task.id} in the worker`);
  if (task.op === 'find') return check.find!(task.text, task.params);
  const ctx: CheckContext = { ...task.ctx!, text: task.text, signal: new AbortController().signal };
  return check.run!(ctx, task.params);
}
