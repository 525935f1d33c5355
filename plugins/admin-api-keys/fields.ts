/**
 * Body fields → record fields, for create and update alike, in two steps so a handler never
 * leaves half a write: {@link checkFields} runs every check a schema cannot express (a future
 * expiry, a pinned config that exists, saved guardrails that exist, exclusive reset options)
 * before anything is written;
 * {@link applyFields} is then pure and cannot fail inside the store transaction.
 */
import { AdminErrors, type GuardrailService, type Records, type Store } from '../../core/index.js';
import { GUARDRAIL_DEFAULTS, type KeyFieldsBody } from './payloads.js';

type ApiKey = Records.ApiKeyRecord;

/** Where a key's fields are checked. */
export interface FieldScope {
  /**
   * The key's workspace (null for an organisation key): a workspace key may pin only a config
   * and name only saved guardrails of its own workspace.
   */
  workspaceId: string | null;
  /** The `guardrails` service, when that plugin is in the pipeline. */
  guardrails: () => GuardrailService | undefined;
}

export function checkFields(store: Store, body: KeyFieldsBody, { workspaceId, guardrails }: FieldScope): void {
  if (typeof body.expires_at === 'string' && Date.parse(body.expires_at) <= Date.now()) {
    throw AdminErrors.invalid('expires_at must be in the future.', 'expires_at');
  }
  const limits = body.usage_limits;
  if (limits && limits.periodic_reset != null && limits.periodic_reset_days != null) {
    throw AdminErrors.invalid('Set usage_limits.periodic_reset or usage_limits.periodic_reset_days, not both.', 'usage_limits.periodic_reset_days');
  }
  const configId = body.defaults?.config_id;
  if (typeof configId === 'string') {
    const config = store.c.configs.get(configId) ?? store.c.configs.getBy('slug', configId);
    if (config === undefined || config.status !== 'active' || (workspaceId !== null && config.workspace_id !== workspaceId)) {
      throw AdminErrors.notFound('The config named by defaults.config_id does not exist.', 'defaults.config_id');
    }
  }
  for (const field of GUARDRAIL_DEFAULTS) {
    const list = body.defaults?.[field];
    if (list === undefined || list.length === 0) continue;
    const param = `defaults.${field}`;
    const service = guardrails();
    // Nothing would apply them: refused rather than stored to do nothing.
    if (service === undefined) throw AdminErrors.invalid(`${param} needs the guardrails plugin in the pipeline.`, param);
    const err = service.validate(list, param, workspaceId ?? undefined);
    if (err !== null) throw err;
  }
}

/** The key with every field the body names applied; fields it leaves out keep their value. */
export function applyFields(key: ApiKey, body: KeyFieldsBody, scopes: string[] | undefined): ApiKey {
  return {
    ...key,
    name: body.name ?? key.name,
    description: body.description === undefined ? key.description : body.description,
    scopes: scopes ?? key.scopes,
    rate_limits: body.rate_limits === undefined ? key.rate_limits : body.rate_limits,
    usage_limits: body.usage_limits === undefined ? key.usage_limits : toUsageLimits(body.usage_limits),
    defaults: body.defaults === undefined ? key.defaults : body.defaults,
    alert_emails: body.alert_emails ?? key.alert_emails,
    expires_at: body.expires_at === undefined ? key.expires_at : body.expires_at,
  };
}

/** The stored shape always has every field, so readers (and the usage-limits plugin) need no guessing. */
function toUsageLimits(input: Partial<Records.UsageLimits> | null): Records.UsageLimits | null {
  if (input === null) return null;
  return {
    credit_limit: input.credit_limit ?? null,
    type: input.type ?? 'cost',
    alert_threshold: input.alert_threshold ?? null,
    periodic_reset: input.periodic_reset ?? null,
    periodic_reset_days: input.periodic_reset_days ?? null,
    next_usage_reset_at: input.next_usage_reset_at ?? null,
  };
}

/**
 * A `last_updated_at` strictly after the previous one. The auth plugin memoizes a key's principal
 * by this stamp, so two writes in the same millisecond must still give two stamps, or a scope
 * change could go unseen.
 */
export function nextStamp(previous: string): string {
  const now = Date.now();
  const before = Date.parse(previous);
  return new Date(Number.isNaN(before) || now > before ? now : before + 1).toISOString();
}
