/**
 * The `/metrics` body: registries rendered one after another in the text format 0.0.4.
 */
import type { Registry } from 'prom-client';

/**
 * The registries' text, concatenated (each renders with a trailing newline, so the result is one
 * valid document as long as their metric names differ).
 *
 * prom-client 15 writes NaN as `Nan` (lib/util.js); Prometheus reads it (Go's ParseFloat ignores
 * case) but the format spells it `NaN`, and stricter parsers insist. The event-loop delay gauges
 * are NaN whenever no delay was sampled since the last scrape, so this is not a corner case.
 */
export async function renderExposition(registries: ReadonlyArray<Registry>): Promise<string> {
  let text = '';
  for (const r of registries) text += await r.metrics();
  return text.replace(/ Nan$/gm, ' NaN');
}
