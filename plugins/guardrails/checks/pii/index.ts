/**
 * `default.pii`: personal data in the text — e-mail addresses, phone numbers, payment cards,
 * IBANs, US SSNs, IP addresses — each found as a span that can be redacted (`[EMAIL]`, …).
 *
 * Every detector is a hand-written scanner that reads each character a bounded number of times
 * (no regex backtracking), validates what it finds (Luhn and card-network ranges, the IBAN
 * checksum and national formats, the SSA's unissued SSN ranges, `node:net` for addresses), and
 * accepts a number only where it stands alone, so that prices, dates, order numbers and version
 * strings are not personal data. Where findings overlap, the most specific one stays:
 *
 *   EMAIL > IBAN > CREDIT_CARD > SSN > IP_ADDRESS > PHONE
 *
 * A span depends only on the text within `maxMatch` (320, the longest e-mail address) of it, so
 * a stream holding back that much sees every finding whole.
 */
import { defineCheck, type Finding } from '../../../../core/index.js';
import { spanVerdict, withoutOverlaps } from '../spans.js';
import { findCards } from './cards.js';
import { findEmails, MAX_EMAIL_LENGTH } from './email.js';
import { findIbans } from './iban.js';
import { findIps } from './ip.js';
import { findPhones } from './phone.js';
import { findSsns } from './ssn.js';
import { spacedSettled } from '../settled.js';

export type PiiCategory = 'email' | 'phone' | 'credit_card' | 'iban' | 'ssn' | 'ip_address';

export interface PiiParams {
  categories?: PiiCategory[];
}

const DETECTORS: Record<PiiCategory, (text: string) => Finding[]> = {
  email: findEmails,
  iban: findIbans,
  credit_card: findCards,
  ssn: findSsns,
  ip_address: findIps,
  phone: findPhones,
};

const ALL = Object.keys(DETECTORS) as PiiCategory[];
const PRIORITY = ['EMAIL', 'IBAN', 'CREDIT_CARD', 'SSN', 'IP_ADDRESS', 'PHONE'];
/** Bound of every detector's span (the e-mail's is the longest; IBAN 42, card 23, IP 45, phone 40). */
export const PII_MAX_MATCH = MAX_EMAIL_LENGTH + 2;

interface Plan {
  run: Array<(text: string) => Finding[]>;
  wanted: ReadonlySet<string>;
}

/** What to run for a parameter's categories, worked out once per (frozen, shared) parameter array. */
const plans = new WeakMap<ReadonlyArray<PiiCategory>, Plan>();

function planOf(categories: ReadonlyArray<PiiCategory>): Plan {
  let plan = plans.get(categories);
  if (plan === undefined) {
    // Detectors of other categories still run when they can claim digits a phone number would:
    // an IBAN or a card is not a phone number, whether or not it is reported.
    const claims = new Set<PiiCategory>(categories);
    if (claims.has('phone')) for (const c of ['iban', 'credit_card', 'ssn', 'ip_address'] as const) claims.add(c);
    plan = { run: ALL.filter((c) => claims.has(c)).map((c) => DETECTORS[c]), wanted: new Set(categories.map((c) => c.toUpperCase())) };
    plans.set(categories, plan);
  }
  return plan;
}

/**
 * The personal data in `text`, left to right, without overlaps.
 *
 * @example
 *   findPii('mail a@b.io or call +44 20 7946 0958')
 *   // [{ start: 5, end: 11, label: 'EMAIL' }, { start: 20, end: 36, label: 'PHONE' }]
 */
export function findPii(text: string, categories: ReadonlyArray<PiiCategory> = ALL): Finding[] {
  const { run, wanted } = planOf(categories);
  const found: Finding[] = [];
  for (const detect of run) {
    const list = detect(text);
    for (let i = 0; i < list.length; i++) found.push(list[i]!);
  }
  if (found.length === 0) return found;
  return withoutOverlaps(found, PRIORITY).filter((f) => wanted.has(f.label));
}

export const pii = defineCheck<PiiParams>({
  id: 'default.pii',
  description: 'Fails when the text holds personal data: e-mail addresses, phone numbers, payment cards (Luhn), IBANs (mod-97), US SSNs, IP addresses. Each is a span that can be redacted.',
  parameters: {
    type: 'object',
    properties: {
      categories: { type: 'array', minItems: 1, uniqueItems: true, items: { type: 'string', enum: ALL } },
    },
    additionalProperties: false,
  },
  find: (text, p) => findPii(text, p.categories ?? ALL),
  maxMatch: () => PII_MAX_MATCH,
  settled: (text) => spacedSettled(text),
  run: (ctx, p) => spanVerdict(findPii(ctx.text, p.categories ?? ALL), 'personal data'),
});
