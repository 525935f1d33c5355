#!/usr/bin/env bash
# Where a request spends its time after the proxy was idle: streams 100 ms apart, one at a time,
# through a bare proxy and two gateway builds or pipelines, timed inside each process by syscall
# tracepoints (perf, no ptrace):
#
#   read of the request ──(no syscall: the proxy's own code)──▶ write upstream      "request→upstream"
#   read of the upstream's head ──▶ first write to the client                       "head→client"
#
# On a VM whose idle vCPUs halt (README, "How idle CPUs wake"), these run on cold caches and take
# several times their steady-state CPU, so they grow with the code a request runs: this is the
# A/B for changes aimed at the time to the first streamed event. Medians over the streams, in µs;
# the client's time to the first event alongside.
#
#   bench/idle-trace.sh [streams]                       # A: shipped pipeline, B: the core ([]), dist/
#   A=dist-base/cli/main.js B=dist/cli/main.js PIPE_B=A bench/idle-trace.sh 60   # two builds, one pipeline
#   PIPE_B=A FLAGS_B='--max-semi-space-size=1' bench/idle-trace.sh 60   # one build, node/V8 flags (ENV_A/ENV_B: environments)
#
# Needs perf (linux-perf) with syscall tracepoints, taskset and root.
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-40}
A=${A:-dist/cli/main.js}
B=${B:-$A}
source bench/lib/gateways.sh
PIPE_A=${PIPE_A:-$(shipped_pipeline)}
PIPE_B=${PIPE_B:-[]}
[ "$PIPE_B" = A ] && PIPE_B=$PIPE_A
MOCK_PORT=$(port)
BARE_PORT=$(port)
taskset -c 0 node dist/bench/mock-upstream.js --port "$MOCK_PORT" > "$TMP/mock.log" 2>&1 &
PIDS+=($!)
taskset -c 1 node dist/bench/bare-proxy.js --upstream "http://127.0.0.1:$MOCK_PORT" --port "$BARE_PORT" > "$TMP/bare.log" 2>&1 &
PIDS+=($!)
PID_bare=$!

start A "$A" "$PIPE_A" "${ENV_A:-}" "${FLAGS_A:-}"
start B "$B" "$PIPE_B" "${ENV_B:-}" "${FLAGS_B:-}"
await_listening "$TMP/A/gw.log" "$TMP/B/gw.log" "$TMP/mock.log" "$TMP/bare.log"

# The driver: unpaused streams first, then N rounds of one 100 ms stream per target. Every request
# carries an ~800-byte `x-pad` header, so the proxies' reads of requests are told apart from their
# reads of the upstream's events. Warm and timed requests have the same shape (a field only the
# timed ones carried made V8 throw away the optimised code of the request path, which this then
# measured), and there are enough warm ones (WARM, default 3000) for V8 to optimise the functions a
# request runs once: at 500, the request handler's were still baseline code.
cat > "$TMP/drive.mjs" <<JS
import { existsSync, writeFileSync } from 'node:fs';
import { createStreamClient } from '$PWD/dist/bench/lib/sse-timing.js';
import { createTarget } from '$PWD/dist/bench/lib/targets.js';
const mock = 'http://127.0.0.1:$MOCK_PORT';
const targets = [['bare', 'http://127.0.0.1:$BARE_PORT'], ['A', 'http://127.0.0.1:$PORT_A'], ['B', 'http://127.0.0.1:$PORT_B']];
const request = (name, origin, directives) => {
  const r = createTarget(name === 'bare' ? 'bare' : 'gateway', origin, 0, mock).chatRequest({ stream: true, directives });
  r.headers['x-gateway-api-key'] = '$ADMIN';
  r.headers['x-pad'] = 'u'.repeat(800);
  return r;
};
const WARM = ${WARM:-3000};
const client = createStreamClient();
for (const [name, origin] of targets) for (let i = 0; i < WARM; i++) await client.stream(origin, request(name, origin, 'chunks=20;chunk_delay=0'), 10000);
// Warm: perf starts now. The timed streams come from this same process on the same connections: a
// new driver process would time them with a client not yet optimised (its first events read about
// 0.5 ms later), and the proxies would see a new connection after the warm one closed, which
// deoptimises their stream code (fields Node's sockets change on close) for the streams timed.
writeFileSync('$TMP/warmed', '');
while (!existsSync('$TMP/go')) await new Promise((r) => setTimeout(r, 50));
const ttfb = targets.map(() => []);
for (let i = 0; i < $N; i++) for (const [k, [name, origin]] of targets.entries()) ttfb[k].push((await client.stream(origin, request(name, origin, 'chunks=20;chunk_delay=5'), 10000)).ttfbMs);
const med = (a) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)];
console.log(targets.map(([name], k) => name + ' ' + (med(ttfb[k]) * 1000).toFixed(0)).join(' '));
client.close();
JS
taskset -c 0 node "$TMP/drive.mjs" > "$TMP/first.txt" &
DRIVER=$!
until [ -e "$TMP/warmed" ]; do kill -0 "$DRIVER" 2>/dev/null || { echo "the driver failed"; exit 1; }; sleep 0.2; done
perf record -q -e syscalls:sys_exit_read,syscalls:sys_enter_writev,syscalls:sys_enter_write -p "$PID_bare,$PID_A,$PID_B" -o "$TMP/perf.data" > "$TMP/perf.log" 2>&1 &
PERF=$!
sleep 1
touch "$TMP/go"
wait "$DRIVER"
FIRST=$(cat "$TMP/first.txt")
kill -INT "$PERF"; wait "$PERF" 2>/dev/null || true

echo "A: $A ${ENV_A:-} ${FLAGS_A:-} pipeline $PIPE_A"
echo "B: $B ${ENV_B:-} ${FLAGS_B:-} pipeline $PIPE_B"
echo "$N streams per target, medians in µs"
perf script -i "$TMP/perf.data" -F pid,time,event,trace 2>/dev/null | node -e '
const [bare, a, b] = process.argv.slice(1, 4);
const first = Object.fromEntries(process.argv[4].split(" ").reduce((acc, w, i, all) => (i % 2 === 0 ? [...acc, [w, all[i + 1]]] : acc), []));
const state = {}, up = {}, head = {}, t0 = {}, t2 = {};
for (const line of require("fs").readFileSync(0, "utf8").split("\n")) {
  const m = /^\s*(\d+)\s+([\d.]+):\s+syscalls:(\w+):\s*(\S*)/.exec(line);
  if (m === null) continue;
  const [, pid, time, ev, arg] = m; const t = Number(time);
  const s = state[pid] ?? 0;
  if (ev === "sys_exit_read" && Number(arg) >= 900) { t0[pid] = t; state[pid] = 1; }
  else if (s === 1 && ev.startsWith("sys_enter_write")) { (up[pid] ??= []).push((t - t0[pid]) * 1e6); state[pid] = 2; }
  else if (s === 2 && ev === "sys_exit_read") { t2[pid] = t; state[pid] = 3; }
  else if (s === 3 && ev.startsWith("sys_enter_write")) { (head[pid] ??= []).push((t - t2[pid]) * 1e6); state[pid] = 0; }
}
const med = (v) => (v === undefined || v.length === 0 ? "-" : [...v].sort((x, y) => x - y)[Math.floor(v.length / 2)].toFixed(0));
console.log(["target", "request→upstream", "head→client", "client first event", "streams"].join("\t"));
for (const [name, pid] of [["bare", bare], ["A", a], ["B", b]]) console.log([name, med(up[pid]), med(head[pid]), first[name], (head[pid] ?? []).length].join("\t"));
' "$PID_bare" "$PID_A" "$PID_B" "$FIRST" | column -t -s $'\t'
