#!/usr/bin/env bash
# Where a request's allocations come from: two gateways at once on one core (as bench/ab.sh), each
# under its own wrk -c16, each sampling every allocation of its main thread over the same window
# (V8's sampling heap profiler, collected objects included: bench/lib/alloc-sampler.ts), then bytes
# per request side by side, by the gateway directory that allocated and by function.
#
# Allocation is paid twice: writing fresh memory on the way in, and young-generation collections on
# the way out. On the shipped pipeline about 35 KB a request, against 26 KB for the core alone.
#
#   bench/alloc.sh                                            # A: the core ([]), B: config/gateway.yaml's pipeline
#   A=dist-base/cli/main.js B=dist/cli/main.js PIPE_A=shipped bench/alloc.sh   # two builds, shipped pipeline
#   PIPE_B='[auth, logging]' ROWS=50 bench/alloc.sh
#
# Needs wrk and taskset; npm run build first.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib/gateways.sh
START_MS=${START_MS:-6000}
WINDOW_MS=${WINDOW_MS:-8000}
core_vs_shipped
ENV_A="${ENV_A:-} ALLOC_OUT=$TMP/A.json ALLOC_START_MS=$START_MS ALLOC_MS=$WINDOW_MS"
ENV_B="${ENV_B:-} ALLOC_OUT=$TMP/B.json ALLOC_START_MS=$START_MS ALLOC_MS=$WINDOW_MS"
FLAGS_A="${FLAGS_A:-} --import ./dist/bench/lib/alloc-sampler.js"
FLAGS_B="${FLAGS_B:-} --import ./dist/bench/lib/alloc-sampler.js"
chat_load_setup

start_ab
await_listening "$TMP/A/gw.log" "$TMP/B/gw.log" "$TMP/mock.log"
# Load from now until past the window's end (it opens START_MS after each process started).
SECS=$(( (START_MS + WINDOW_MS) / 1000 + 2 ))
echo "loading both for $SECS s; window of $WINDOW_MS ms from $START_MS ms"
load_ab "$SECS"
for _ in $(seq 50); do [ -s "$TMP/A.json" ] && [ -s "$TMP/B.json" ] && break; sleep 0.2; done
[ -s "$TMP/A.json" ] && [ -s "$TMP/B.json" ] || { echo "no profile written: see $TMP/{A,B}/gw.log"; tail -5 "$TMP/A/gw.log" "$TMP/B/gw.log"; exit 1; }
node dist/bench/lib/alloc-report.js "$TMP/A.json" "$TMP/B.json" "${ROWS:-30}"
