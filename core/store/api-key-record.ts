/**
 * The one way to make a new API key: a fresh raw secret and the record that stores only its hash.
 * Every creator (the admin API, `gateway keys create`, invite acceptance, the bootstrap) uses it,
 * so a field added to keys is added once.
 */
import type { ApiKeyRecord, ApiKeyType } from './records.js';
import { generateApiKey, hashApiKey, maskApiKey } from './api-key-hash.js';
import { nowIso, uuidv7 } from './ids.js';

export interface NewApiKey {
  type: ApiKeyType;
  name: string;
  organisation_id: string;
  workspace_id: string | null;
  user_id?: string | null;
  scopes: string[];
  description?: string | null;
  creation_mode?: ApiKeyRecord['creation_mode'];
  /** Use this secret instead of generating one (the bootstrap's GATEWAY_ADMIN_KEY). */
  raw?: string;
}

/** Returns the record to insert and the raw key, which the caller shows once and forgets. */
export function newApiKey(input: NewApiKey): { record: ApiKeyRecord; raw: string } {
  const raw = input.raw ?? generateApiKey();
  const now = nowIso();
  return {
    raw,
    record: {
      id: uuidv7(),
      name: input.name,
      description: input.description ?? null,
      type: input.type,
      organisation_id: input.organisation_id,
      workspace_id: input.workspace_id,
      user_id: input.user_id ?? null,
      hash: hashApiKey(raw),
      previous_hash: null,
      previous_expires_at: null,
      masked_key: maskApiKey(raw),
      status: 'active',
      scopes: input.scopes,
      defaults: null,
      rate_limits: null,
      usage_limits: null,
      alert_emails: [],
      expires_at: null,
      rotation_policy: null,
      creation_mode: input.creation_mode ?? 'api',
      last_reset_at: null,
      deleted_at: null,
      created_at: now,
      last_updated_at: now,
    },
  };
}
