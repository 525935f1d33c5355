#!/usr/bin/env bash
# Where the CPU goes, two gateways side by side: both at once on one core (as bench/ab.sh), each
# under its own wrk -c16, both profiled by one `perf record` over the same window, then samples per
# 1,000 requests by thread, by owner (core, plugins, undici, Node, libraries), by plugin and by
# function, with B − A (bench/lib/perf-report.ts). Profiling both in one window is what makes the
# difference readable on a shared VM: two identical gateways read within about 1 % of each other,
# where two runs minutes apart differ by 30 %.
#
#   bench/perf-ab.sh                                             # A: the core ([]), B: config/gateway.yaml's pipeline
#   A=bare PIPE_B='[]' bench/perf-ab.sh                          # the core against the bare proxy
#   A=dist-base/cli/main.js B=dist/cli/main.js PIPE_A=shipped bench/perf-ab.sh   # two builds
#   WARM=40 SECONDS_PER=15 ROWS=60 KEEP=/tmp/p bench/perf-ab.sh   # longer; keep perf.data and the script
#
# The warm-up (WARM seconds, default 30) must outlast V8's optimising compiler: with two gateways
# sharing a core it runs for 10–15 s. perf's sampling about doubles every cost; compare sides, not
# absolute numbers. Needs perf, wrk, taskset and root; npm run build first.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib/gateways.sh
WARM=${WARM:-30}
S=${SECONDS_PER:-12}
core_vs_shipped
# Names for JIT-compiled functions (perf reads /tmp/perf-PID.map), and frames for interpreted ones.
FLAGS_A="${FLAGS_A:-} --perf-basic-prof-only-functions --interpreted-frames-native-stack"
FLAGS_B="${FLAGS_B:-} --perf-basic-prof-only-functions --interpreted-frames-native-stack"
chat_load_setup
start_ab
await_listening "$TMP/A/gw.log" "$TMP/B/gw.log" "$TMP/mock.log"
echo "warming both for $WARM s, then $S s profiled"
load_ab "$WARM"
# perf spans the load with a little idle on each side; requests are counted over the load alone.
perf record -F "${FREQ:-2000}" -g -p "$PID_A,$PID_B" -o "$TMP/perf.data" -- sleep "$((S + 1))" 2> "$TMP/perf.log" &
P=$!
sleep 0.3
load_ab "$S"
wait "$P" || { cat "$TMP/perf.log"; exit 1; }
na=$(awk '/requests in/ {print $1}' "$TMP/A/w"); nb=$(awk '/requests in/ {print $1}' "$TMP/B/w")
perf script -F comm,pid,tid,ip,sym -i "$TMP/perf.data" > "$TMP/perf.txt" 2> /dev/null
node dist/bench/lib/perf-report.js "$TMP/perf.txt" "$PID_A" "$na" "$PID_B" "$nb" "${ROWS:-40}"
if [ -n "${KEEP:-}" ]; then mkdir -p "$KEEP" && cp "$TMP/perf.data" "$TMP/perf.txt" "$KEEP/" && echo "kept in $KEEP"; fi
