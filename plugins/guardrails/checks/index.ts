/**
 * The built-in checks (`default.*`): their ids and parameters follow the reference gateway's
 * `default` plugin, so its guardrail configs keep working; each lives in its own file.
 *
 *   spans (redact, stream)          whole text only
 *   ─────────────────────────       ─────────────────────────────────────────────
 *   regexMatch (not)  pii           regexMatch  contains (any, all)  wordCount
 *   contains (none)   secrets       sentenceCount  characterCount  jsonSchema
 *   validUrls                       jsonKeys  modelWhitelist  requiredMetadataKeys
 *                                   alllowercase  alluppercase  endsWith  webhook
 *
 * Every check is pure and linear in the text (patterns from operators run on RE2), except the
 * webhook, which calls out, through the SSRF guard.
 */
import type { CheckDefinition, CustomHostPolicy, HostResolver } from '../../../core/index.js';
import { contains } from './contains.js';
import { characterCount, sentenceCount, wordCount } from './counts.js';
import { endsWith } from './ends-with.js';
import { jsonKeys } from './json-keys.js';
import { jsonSchema } from './json-schema.js';
import { allLowercase, allUppercase } from './letter-case.js';
import { requiredMetadataKeys } from './metadata-keys.js';
import { modelWhitelist } from './model-whitelist.js';
import { pii } from './pii/index.js';
import { regexMatch } from './regex-match.js';
import { secrets } from './secrets/index.js';
import { validUrls } from './valid-urls.js';
import { webhookCheck } from './webhook.js';

export interface BuiltinOptions {
  /** The gateway's custom-host policy: webhook URLs must pass it. */
  hosts: CustomHostPolicy;
  /** Resolves webhook host names at connect time; the OS resolver when absent (tests inject one). */
  resolveHost?: HostResolver;
}

/**
 * Every built-in check, ready to register.
 *
 * @example
 *   for (const check of builtinChecks({ hosts: app.config.security.custom_hosts })) registry.register(check);
 */
export function builtinChecks(options: BuiltinOptions): CheckDefinition<never>[] {
  return [
    regexMatch,
    contains,
    wordCount,
    sentenceCount,
    characterCount,
    jsonSchema,
    jsonKeys,
    validUrls,
    modelWhitelist,
    requiredMetadataKeys,
    allLowercase,
    allUppercase,
    endsWith,
    pii,
    secrets,
    webhookCheck({ hosts: options.hosts, ...(options.resolveHost ? { resolveHost: options.resolveHost } : {}) }),
  ];
}
