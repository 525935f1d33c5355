/**
 * Runs a log export through the admin API (create, start, wait, download) and returns its lines.
 */
import { request } from 'undici';

type Json = Record<string, unknown>;

async function call(base: string, key: string, method: 'GET' | 'POST', path: string, body?: unknown): Promise<{ status: number; text: string }> {
  const res = await request(`${base}/v1${path}`, {
    method,
    headers: { 'x-gateway-api-key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.statusCode, text: await res.body.text() };
}

/** The export's `total` as created, and the lines of its file. */
export async function runExport(base: string, key: string, filters: Json, requested: string[]): Promise<{ total: number; lines: Json[] }> {
  const made = await call(base, key, 'POST', '/logs/exports', { filters, requested_data: requested });
  if (made.status !== 200) throw new Error(`creating the export answered ${made.status}: ${made.text}`);
  const { id, total } = JSON.parse(made.text) as { id: string; total: number };
  await call(base, key, 'POST', `/logs/exports/${id}/start`);
  let status = '';
  for (let i = 0; i < 250 && status !== 'success'; i++) {
    status = (JSON.parse((await call(base, key, 'GET', `/logs/exports/${id}`)).text) as { status: string }).status;
    if (status === 'failed') throw new Error('the export failed');
    if (status !== 'success') await new Promise((r) => setTimeout(r, 20));
  }
  const file = await call(base, key, 'GET', `/logs/exports/${id}/download`);
  if (file.status !== 200) throw new Error(`the download answered ${file.status}: ${file.text}`);
  return { total, lines: file.text.split('\n').filter((l) => l.length > 0).map((l) => JSON.parse(l) as Json) };
}
