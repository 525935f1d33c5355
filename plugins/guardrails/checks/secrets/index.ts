/**
 * `default.secrets`: credentials in the text, each a span that can be redacted.
 *
 *   PRIVATE_KEY  PEM private-key blocks                         pem.ts
 *   JWT          signed JSON Web Tokens                          jwt.ts
 *   API_KEY      provider keys by prefix and shape               provider-keys.ts
 *                (OpenAI, Anthropic, AWS, GitHub, Slack, Google, GitLab, Stripe, this gateway)
 *   SECRET       other long random-looking tokens (entropy)      entropy.ts
 *
 * Where findings overlap, the first kind in that list stays (a JWT's parts are high-entropy
 * too). Spans are at most {@link MAX_PEM_LENGTH} characters, a whole key block; a longer token is
 * reported in pieces. `data` names the providers of the keys found, never the keys.
 */
import { defineCheck, type Finding } from '../../../../core/index.js';
import { pieces, spanVerdict, withoutOverlaps } from '../spans.js';
import { findHighEntropy } from './entropy.js';
import { findJwts } from './jwt.js';
import { MAX_PEM_LENGTH, findPrivateKeys } from './pem.js';
import { findProviderKeys, keyProvider } from './provider-keys.js';
import { tokenSettled } from '../settled.js';

export interface SecretsParams {
  min_entropy?: number;
  min_length?: number;
}

const PRIORITY = ['PRIVATE_KEY', 'JWT', 'API_KEY', 'SECRET'];
export const SECRETS_MAX_MATCH = MAX_PEM_LENGTH;

/**
 * The secrets in `text`, left to right, without overlaps.
 *
 * @example
 *   findSecrets('key: AKIAIOSFODNN7EXAMPLE') // [{ start: 5, end: 25, label: 'API_KEY' }]
 */
export function findSecrets(text: string, p: SecretsParams = {}): Finding[] {
  const found = [
    ...findPrivateKeys(text),
    ...findJwts(text),
    ...findProviderKeys(text),
    ...findHighEntropy(text, { minEntropy: p.min_entropy ?? 4.0, minLength: p.min_length ?? 24 }),
  ];
  return withoutOverlaps(found, PRIORITY).flatMap((f) =>
    f.end - f.start > SECRETS_MAX_MATCH ? pieces(f.start, f.end, SECRETS_MAX_MATCH, f.label) : [f],
  );
}

export const secrets = defineCheck<SecretsParams>({
  id: 'default.secrets',
  description: 'Fails when the text holds credentials: PEM private keys, JWTs, provider API keys (OpenAI, Anthropic, AWS, GitHub, Slack, Google, GitLab, Stripe, gateway keys) and other long high-entropy tokens (hex hashes and identifiers excluded). Each is a span that can be redacted.',
  parameters: {
    type: 'object',
    properties: {
      min_entropy: { type: 'number', minimum: 0, maximum: 8 },
      min_length: { type: 'integer', minimum: 8, maximum: 1024 },
    },
    additionalProperties: false,
  },
  find: (text, p) => findSecrets(text, p),
  maxMatch: () => SECRETS_MAX_MATCH,
  settled: (text) => tokenSettled(text),
  run(ctx, p) {
    const found = findSecrets(ctx.text, p);
    const result = spanVerdict(found, 'secrets');
    const providers = new Set<string>();
    for (const f of found) {
      if (f.label !== 'API_KEY') continue;
      const provider = keyProvider(ctx.text.slice(f.start, f.end));
      if (provider !== null) providers.add(provider);
    }
    if (providers.size > 0) result.data = { ...result.data, providers: [...providers].sort() };
    return result;
  },
});
