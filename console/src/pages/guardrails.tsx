/**
 * Guardrails: the saved guardrails (`#/guardrails`), a new one (`#/guardrails/new`: a starter
 * word-count check) and one guardrail's editor with its version history and diffs
 * (`#/guardrails/<slug>`), as every versioned resource (versioned.tsx). Delete archives (configs
 * and keys naming it stop resolving it); restore re-activates. The checks' JSON is checked
 * locally as you type (syntax with line and column, the list's shape); the check ids and
 * parameters are checked by the API on save, and its 400 is shown with message, code and path.
 * Header values are write-only (guardrails-headers.tsx).
 */
import { Fragment, type ComponentChildren, type JSX } from 'preact';
import { useState } from 'preact/hooks';
import type { Route } from '../router';
import { Badge } from '../ui';
import { HeaderFields, headerProblems, hideHeaders, withHeaders } from './guardrails-headers';
import { VersionedPage, type BodyState, type Remote, type VersionedItem, type VersionedKind } from './versioned';
import { pretty, useJsonCheck, type Problem } from './versioned-json';

export type GuardrailItem = VersionedItem;

export const GUARDRAIL_HELP: ComponentChildren = (
  <>
    A guardrail is a named list of checks run on requests or answers (word counts, patterns, PII, JSON shape, your own webhook), each with what to
    do when it fails (<code>deny</code>, <code>redact</code>, <code>async</code>). Configs, API keys and workspaces name it by slug in their{' '}
    <code>input_guardrails</code> / <code>output_guardrails</code>.
  </>
);

const STARTER_CHECKS = [{ 'default.wordCount': { min: 1, max: 2000 }, deny: true }];

const MAX_GUARDRAILS = 32;

const CHECK_EXAMPLES: Array<[string, string]> = [
  ['default.wordCount / sentenceCount / characterCount', '{"min": 1, "max": 500}'],
  ['default.regexMatch', '{"rule": "\\\\d{16}", "not": true}'],
  ['default.contains', '{"words": ["secret"], "operator": "none"}'],
  ['default.pii, default.secrets', 'detect personal data or credentials; with "redact": true they are masked'],
  ['default.jsonSchema', '{"schema": {…}} on answers'],
  ['default.modelWhitelist', '{"models": ["gpt-4o-mini"]}'],
  ['default.webhook', `{"webhookURL": "https://…", "headers": {"Authorization": "[secret]"}}`],
];

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The list's shape, as the API's body schema says it (the registry checks the rest on save). */
function checksShape(value: unknown): Problem[] {
  if (!Array.isArray(value)) return [{ path: 'checks', message: 'The checks are a JSON array of guardrail objects: [ {"default.wordCount": {…}, "deny": true} ].', code: 'invalid_type' }];
  if (value.length === 0 || value.length > MAX_GUARDRAILS) return [{ path: 'checks', message: `Between 1 and ${MAX_GUARDRAILS} guardrail objects.`, code: 'invalid_value' }];
  return value.flatMap((g, i): Problem[] =>
    isObject(g) ? [] : [{ path: `checks[${i}]`, message: 'Each entry is an object of check ids and action keys (saved guardrails do not nest).', code: 'invalid_type' }],
  );
}

function CheckHelp(): JSX.Element {
  return (
    <details class="check-help">
      <summary>Checks you can use</summary>
      <dl class="facts">
        {CHECK_EXAMPLES.map(([id, params]) => (
          <Fragment key={id}>
            <dt>
              <code>{id}</code>
            </dt>
            <dd>
              <code>{params}</code>
            </dd>
          </Fragment>
        ))}
      </dl>
      <p class="muted">
        Action keys beside the checks: <code>deny</code>, <code>redact</code>, <code>async</code>, <code>on_error</code> (<code>allow</code> or{' '}
        <code>block</code>), <code>timeout</code>, <code>on_fail</code>, <code>on_success</code>, <code>id</code>, <code>name</code>.
      </p>
    </details>
  );
}

/**
 * The checks' editor state: the text shows each stored header value as `[secret]` (the API's
 * masks kept aside), a password field takes each header's value, and both are checked.
 */
function useChecksBody(stored: unknown, remote: Remote | undefined, deps: unknown[]): BodyState {
  const [{ shown, masks }] = useState(() => hideHeaders(stored as unknown[]));
  const [text, setText] = useState(() => pretty(shown));
  const [typed, setTyped] = useState<Record<string, string>>({});
  const shape = (value: unknown): Problem[] => {
    const problems = checksShape(value);
    return problems.length > 0 ? problems : headerProblems(value, typed, masks);
  };
  const check = useJsonCheck(text, shape, remote, [...deps, typed]);
  return {
    text,
    setText,
    check,
    body: () => withHeaders(check.value as unknown[], typed, masks),
    touched: Object.values(typed).some((v) => v !== ''),
    fields: <HeaderFields checks={check.value} typed={typed} masks={masks} onChange={setTyped} />,
  };
}

const GUARDRAILS: VersionedKind<GuardrailItem> = {
  api: '/v1/guardrails',
  route: '/guardrails',
  scope: 'guardrails',
  one: 'guardrail',
  many: 'guardrails',
  help: GUARDRAIL_HELP,
  bodyKey: 'checks',
  starter: STARTER_CHECKS,
  useBody: useChecksBody,
  shown: (checks) => hideHeaders(checks as unknown[]).shown,
  editor: {
    id: 'guardrail-json',
    label: 'Checks JSON',
    hint: 'A JSON array of guardrail objects. Checked for shape as you type; the gateway checks every check id and parameter when you save.',
    historyLabel: 'Checks (header values hidden)',
    help: <CheckHelp />,
  },
  create: {
    namePlaceholder: 'No card numbers',
    slugPlaceholder: 'no-cards',
    slugHint: 'How configs and keys name it. Left empty: made from the name.',
  },
  list: {
    column: { label: 'Status', render: (g) => <Badge tone={g.status === 'active' ? 'ok' : 'bad'}>{g.status}</Badge> },
    emptyHint: 'Create one with “New guardrail”, then name it in a config’s input_guardrails or output_guardrails.',
    deleteWarning: (g) => `Delete the guardrail “${g.name}”? Configs and keys naming ${g.slug} no longer run it; its versions are kept.`,
  },
};

export function Guardrails({ route }: { route: Route }): JSX.Element {
  return <VersionedPage kind={GUARDRAILS} route={route} />;
}
