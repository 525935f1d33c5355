/**
 * Runs a log export through the admin API (create, start, wait, download) and returns its lines.
 */
import { call } from './control-plane.js';

type Json = Record<string, unknown>;

/** The export's `total` as created, and the lines of its file. */
export async function runExport(base: string, key: string, filters: Json, requested: string[]): Promise<{ total: number; lines: Json[] }> {
  const host = { url: `${base}/v1` };
  const made = await call(host, 'POST', '/logs/exports', { filters, requested_data: requested }, key);
  if (made.status !== 200) throw new Error(`creating the export answered ${made.status}: ${JSON.stringify(made.body)}`);
  const { id, total } = made.body as { id: string; total: number };
  await call(host, 'POST', `/logs/exports/${id}/start`, undefined, key);
  let status = '';
  for (let i = 0; i < 250 && status !== 'success'; i++) {
    status = (await call(host, 'GET', `/logs/exports/${id}`, undefined, key)).body.status as string;
    if (status === 'failed') throw new Error('the export failed');
    if (status !== 'success') await new Promise((r) => setTimeout(r, 20));
  }
  // The download is JSONL, not one JSON document: read as text.
  const file = await fetch(`${base}/v1/logs/exports/${id}/download`, { headers: { 'x-gateway-api-key': key } });
  const text = await file.text();
  if (file.status !== 200) throw new Error(`the download answered ${file.status}: ${text}`);
  return { total, lines: text.split('\n').filter((l) => l.length > 0).map((l) => JSON.parse(l) as Json) };
}
