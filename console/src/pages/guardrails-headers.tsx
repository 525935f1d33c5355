/**
 * Header values of guardrail checks (a webhook's `Authorization`) are secrets: write-only. The
 * API shows them masked; the editor never shows even the mask, only `[secret]`, and each header
 * gets a password field. On save a typed value is sent; an untouched stored header sends back the
 * API's mask, which the API reads as "keep the stored value".
 */
import type { JSX } from 'preact';
import { Field } from '../ui';
import type { Problem } from './versioned-json';

/** What the editor shows in place of a header value. */
export const SECRET = '[secret]';

export interface HeaderSpot {
  /** `0\u0000default.webhook\u0000Authorization` */
  key: string;
  index: number;
  checkId: string;
  name: string;
  value: unknown;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

const spotKey = (index: number, checkId: string, name: string): string => `${index}\u0000${checkId}\u0000${name}`;

/** Every header of every check in a list of guardrail objects. */
export function headerSpots(list: unknown): HeaderSpot[] {
  const out: HeaderSpot[] = [];
  if (!Array.isArray(list)) return out;
  list.forEach((guardrail, index) => {
    if (!isObject(guardrail)) return;
    for (const [checkId, params] of Object.entries(guardrail)) {
      if (!isObject(params) || !isObject(params.headers)) continue;
      for (const [name, value] of Object.entries(params.headers)) out.push({ key: spotKey(index, checkId, name), index, checkId, name, value });
    }
  });
  return out;
}

/**
 * The API's checks made fit for the editor: each header value replaced by {@link SECRET}, and
 * the masks the API gave, by spot, to send back for headers left unchanged.
 */
export function hideHeaders(checks: unknown[]): { shown: unknown[]; masks: Map<string, string> } {
  const shown = structuredClone(checks);
  const masks = new Map<string, string>();
  for (const spot of headerSpots(shown)) {
    if (typeof spot.value === 'string') masks.set(spot.key, spot.value);
    const headers = ((shown[spot.index] as Record<string, Record<string, unknown>>)[spot.checkId]!.headers as Record<string, unknown>);
    headers[spot.name] = SECRET;
  }
  return { shown, masks };
}

/**
 * The checks to send: each header's typed value, else (still `[secret]`) the stored mask. Only
 * called once {@link headerProblems} found nothing.
 */
export function withHeaders(checks: unknown[], typed: Record<string, string>, masks: Map<string, string>): unknown[] {
  const out = structuredClone(checks);
  for (const spot of headerSpots(out)) {
    const headers = (out[spot.index] as Record<string, Record<string, unknown>>)[spot.checkId]!.headers as Record<string, unknown>;
    const value = typed[spot.key];
    if (value !== undefined && value !== '') headers[spot.name] = value;
    else if (spot.value === SECRET && masks.has(spot.key)) headers[spot.name] = masks.get(spot.key);
  }
  return out;
}

/** A `[secret]` header with nothing typed and nothing stored has no value to send. */
export function headerProblems(checks: unknown, typed: Record<string, string>, masks: Map<string, string>): Problem[] {
  return headerSpots(checks)
    .filter((s) => s.value === SECRET && (typed[s.key] ?? '') === '' && !masks.has(s.key))
    .map((s) => ({
      path: `checks[${s.index}]["${s.checkId}"].headers.${s.name}`,
      message: `Type the value of the header ${s.name} in its field below the editor.`,
      code: 'missing_value',
    }));
}

/** A password field for each header found in the editor's JSON. */
export function HeaderFields(props: { checks: unknown; typed: Record<string, string>; masks: Map<string, string>; onChange: (typed: Record<string, string>) => void }): JSX.Element | null {
  const spots = headerSpots(props.checks);
  if (spots.length === 0) return null;
  return (
    <fieldset class="secret-headers">
      <legend>Header values (write-only)</legend>
      <p class="muted">
        Header values are credentials: they are never shown. Write <code>"{SECRET}"</code> as the value in the JSON and type the value here. A stored
        header left empty keeps its value.
      </p>
      {spots.map((s) => (
        <Field key={s.key} label={`${s.name} header of ${s.checkId} (guardrail ${s.index + 1})`} hint={props.masks.has(s.key) ? 'Stored: leave empty to keep it.' : undefined}>
          {(id) => (
            <input
              id={id}
              type="password"
              autoComplete="new-password"
              value={props.typed[s.key] ?? ''}
              placeholder={props.masks.has(s.key) ? 'unchanged' : 'value'}
              onInput={(e) => props.onChange({ ...props.typed, [s.key]: (e.currentTarget as HTMLInputElement).value })}
            />
          )}
        </Field>
      ))}
    </fieldset>
  );
}
