#!/usr/bin/env bash
# Simultaneous A/B of two gateway builds (or pipelines) on MCP `tools/call`, as bench/ab.sh does
# for chat completions: both gateways run at once, pinned to the same CPU, each called by its own
# SDK clients (8 sessions, one call in flight each) from the other CPU, and the report is each
# process's CPU time (all threads) per call over the same windows. Machine drift hits both alike;
# `--only mcp` runs of one build minutes apart differ by ±20 % in CPU per call.
#
#   npm run build && cp -r dist dist-base            # A: the build before a change
#   … change, npm run build …                         # B: dist
#   A=dist-base/cli/main.js B=dist/cli/main.js bench/mcp-ab.sh [windows] [seconds]
#
# The MCP server (the test suite's, test/helpers/mcp-upstream.ts) and the clients run in the
# driver on CPU 0; each gateway registers it as `bench` and is called at `/bench/mcp` with a
# workspace key holding `mcp.invoke`, through the shipped pipeline (every call logged). Before the
# windows, WARM_S seconds (default 25: about 12,000 calls to each gateway here) of unreported calls
# let V8 optimise the gateways' call path, which takes thousands of calls (bench/scenarios/mcp.ts);
# the first window is still worth a look. Needs taskset.
set -euo pipefail
cd "$(dirname "$0")/.."
W=${1:-5}
S=${2:-6}
source bench/lib/gateways.sh
start_ab
await_listening "$TMP/A/gw.log" "$TMP/B/gw.log"

cat > "$TMP/drive.mjs" <<JS
import { Client } from '$PWD/node_modules/@modelcontextprotocol/sdk/dist/esm/client/index.js';
import { StreamableHTTPClientTransport } from '$PWD/node_modules/@modelcontextprotocol/sdk/dist/esm/client/streamableHttp.js';
import { startMcpUpstream } from '$PWD/dist/test/helpers/mcp-upstream.js';
import { cpuMs } from '$PWD/dist/bench/lib/proc-cpu.js';
// The SDK clients' fetch keeps an abort listener per call until GC (see bench/scenarios/mcp.ts).
process.removeAllListeners('warning');
const gateways = [['A', 'http://127.0.0.1:$PORT_A', $PID_A], ['B', 'http://127.0.0.1:$PORT_B', $PID_B]];
const upstream = await startMcpUpstream({ teardown: () => undefined });
const post = async (origin, path, body) => {
  const res = await fetch(origin + path, { method: 'POST', headers: { 'x-gateway-api-key': '$ADMIN', 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const answer = await res.json();
  if (res.status !== 200) throw new Error(path + ' answered ' + res.status + ': ' + JSON.stringify(answer).slice(0, 300));
  return answer;
};
const sessions = [];
for (const [name, origin, pid] of gateways) {
  await post(origin, '/v1/mcp-integrations', { name: 'bench', slug: 'bench-int', url: upstream.url, transport: 'http', auth_type: 'none', workspace_id: 'default' });
  await post(origin, '/v1/mcp-servers', { name: 'bench', slug: 'bench', mcp_integration_id: 'bench-int', workspace_id: 'default' });
  const key = (await post(origin, '/v1/api-keys/workspace/service', { name: 'bench agent', scopes: ['mcp.invoke'], workspace_id: 'default' })).key;
  const clients = [];
  for (let i = 0; i < 8; i++) {
    const c = new Client({ name: 'mcp-ab', version: '1' });
    await c.connect(new StreamableHTTPClientTransport(new URL(origin + '/bench/mcp'), { requestInit: { headers: { authorization: 'Bearer ' + key } } }));
    clients.push(c);
  }
  sessions.push({ name, pid, clients });
}
const run = async (s, ms) => {
  const until = performance.now() + ms;
  let n = 0;
  await Promise.all(s.clients.map(async (c) => {
    while (performance.now() < until) {
      const r = await c.callTool({ name: 'echo', arguments: { text: 'bench' } });
      if (r.isError) throw new Error('tool call failed: ' + JSON.stringify(r).slice(0, 200));
      n++;
    }
  }));
  return n;
};
for (let w = 0; w <= $W; w++) {
  const before = sessions.map((s) => cpuMs(s.pid));
  const calls = await Promise.all(sessions.map((s) => run(s, w === 0 ? ${WARM_S:-25} * 1000 : $S * 1000)));
  const us = sessions.map((s, i) => ((cpuMs(s.pid) - before[i]) * 1000) / calls[i]);
  if (w === 0) { console.log('warm-up: ' + calls.map((n, i) => sessions[i].name + ' ' + n + ' calls').join(', ')); continue; }
  console.log('window ' + w + '  A ' + String(calls[0]).padStart(6) + ' calls ' + us[0].toFixed(1).padStart(7) + ' µs/call | B ' + String(calls[1]).padStart(6) + ' calls ' + us[1].toFixed(1).padStart(7) + ' µs/call | B/A CPU per call ' + (us[1] / us[0]).toFixed(3));
}
for (const s of sessions) for (const c of s.clients) await c.close();
await upstream.close();
process.exit(0);
JS
taskset -c 0 node "$TMP/drive.mjs"
