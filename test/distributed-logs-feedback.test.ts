/**
 * Feedback, custom logs and export jobs in distributed mode: written through one host, read
 * through the others (the feedback graph, an export filtered on feedback, a custom log by id).
 */
import t from 'tap';
import { needServices } from './helpers/services.js';
import { distributedBackends, startHosts, type Host } from './helpers/hosts.js';
import { startMock } from './helpers/gateway.js';
import { admin, chat, pipelineYaml, until, type Json } from './helpers/distributed-logs.js';

t.test('feedback and custom logs written through one host are read through the others', async (t) => {
  const svc = needServices(t, ['postgres', 'redis']);
  if (!svc) return;
  const backends = await distributedBackends(svc);
  const mock = await startMock(t);
  const hosts = await startHosts(t, 3, { backends, yaml: `${pipelineYaml()}  - admin-api-keys\n` });
  const [a, b, c] = hosts as [Host, Host, Host];
  // A workspace key of A's default workspace (feedback and custom logs are written with one).
  const made = await admin(a, 'POST', '/v1/api-keys/workspace/service', { name: 'team', scopes: ['feedback.write', 'logs.write', 'logs.view', 'logs.list'] });
  t.equal(made.status, 200, made.text);
  const as = async (method: string, path: string, body: unknown): Promise<{ status: number; body: Json }> => {
    const res = await fetch(`${a.url}${path}`, { method, headers: { 'x-gateway-api-key': made.body.key, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    return { status: res.status, body: await res.json() };
  };

  const traced = await chat(a, mock, { 'x-gateway-trace-id': 'trace-rated', 'x-gateway-metadata': '{"run":"feedback"}' });
  await chat(b, mock, { 'x-gateway-trace-id': 'trace-unrated', 'x-gateway-metadata': '{"run":"feedback"}' });
  const start = Date.now();
  const fb = await as('POST', '/v1/feedback', { trace_id: 'trace-rated', value: 8, weight: 0.5 });
  t.equal(fb.status, 200);
  const updated = await as('PUT', `/v1/feedback/${fb.body.feedback_ids[0]}`, { value: 9 });
  t.equal(updated.status, 200, 'updated through A (read back from PostgreSQL)');
  const custom = await as('POST', '/v1/logs', { request: { url: 'https://example.test/v1/x', body: { q: 1 } }, response: { status: 201, body: { ok: true } }, metadata: { run: 'feedback' } });
  t.equal(custom.status, 200);
  const customId = custom.body.log_ids[0] as string;

  // The custom log, through B.
  const got = await admin(b, 'GET', `/v1/logs/${customId}`);
  t.equal(got.status, 200, 'a custom log written through A is read through B');
  t.equal(got.body.status, 201);
  t.equal(got.body.source, 'plugin');

  // The feedback graph through C counts it; an export through C filters on it.
  const range = new URLSearchParams({ time_of_generation_min: new Date(start - 60_000).toISOString(), time_of_generation_max: new Date(Date.now() + 60_000).toISOString() });
  const graph = await admin(c, 'GET', `/v1/analytics/graphs/feedbacks?${range}`);
  t.equal(graph.status, 200);
  t.equal(graph.body.summary.total, 1, 'feedback given through A is counted through C');
  await until(() => admin(c, 'GET', '/v1/logs?metadata=' + encodeURIComponent('{"run":"feedback"}')), (r) => r.body?.total === 3);
  const created = await admin(c, 'POST', '/v1/logs/exports', { filters: { weighted_feedback_min: 4 }, requested_data: ['id', 'trace_id'] });
  t.equal(created.status, 200);
  t.equal(created.body.total, 1, 'only the rated trace (9 × 0.5 = 4.5)');
  await admin(c, 'POST', `/v1/logs/exports/${created.body.id}/start`);
  await until(() => admin(b, 'GET', `/v1/logs/exports/${created.body.id}`), (r) => r.body?.status === 'success');
  const file = await admin(b, 'GET', `/v1/logs/exports/${created.body.id}/download`);
  t.same(file.text.trim().split('\n').map((l) => JSON.parse(l)), [{ id: traced.id, trace_id: 'trace-rated' }], 'downloaded through B');
  // A finished export cannot be cancelled, whichever host is asked: the same 409.
  const cancel = await admin(a, 'POST', `/v1/logs/exports/${created.body.id}/cancel`);
  t.equal(cancel.status, 409);
  t.equal(cancel.body.error.code, 'export_state_conflict');
});
