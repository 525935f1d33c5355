#!/usr/bin/env bash
# How long the gateway's main thread waits for its CPU at one connection, and what runs meanwhile.
#
# A CPU profile sees only the time the main thread runs. At one connection the tail of the latency
# is also time it is runnable and does not run: another thread of the process (V8's compiler and
# GC helpers, the log thread, libuv's pool) or another task holds the shared core. `perf sched`
# records every switch on the machine; bench/lib/sched-report.ts then reports the main thread's
# waits (p50 / p99 / p99.9 / max) and, for the waits of THRESHOLD ms or more, which tasks ran on its
# CPU meanwhile. The gateway runs on CPU 1 with the mock on CPU 0, as in bench/ab.sh; wrk's latency
# at one connection is printed beside each round.
#
#   bench/sched-delay.sh [rounds] [seconds]              # shipped pipeline, 30 s warm-up at -c8
#   PIPE='[]' WARM=90 THRESHOLD=1 bench/sched-delay.sh 3 15
#   CLI=dist-base/cli/main.js FLAGS='--v8-pool-size=1' bench/sched-delay.sh
#
# Needs perf (linux-perf) with scheduler tracepoints, wrk, taskset and root.
set -euo pipefail
cd "$(dirname "$0")/.."
R=${1:-2}
D=${2:-15}
source bench/lib/gateways.sh
chat_load_setup
start G "${CLI:-dist/cli/main.js}" "${PIPE:-$(shipped_pipeline)}" "${ENV:-}" "${FLAGS:-}"
await_listening "$TMP/G/gw.log" "$TMP/mock.log"
URL="http://127.0.0.1:$PORT_G/v1/chat/completions"
echo "gateway pid $PID_G, pipeline ${PIPE:-shipped}; warming up ${WARM:-30} s at 8 connections"
taskset -c 0 wrk -t1 -c8 -d"${WARM:-30}"s -s "$TMP/req.lua" "$URL" > /dev/null

# Threads at a nice of their own are labelled (the log thread runs at 10).
HZ=$(getconf CLK_TCK)
for r in $(seq "$R"); do
  thread_ticks "$PID_G" > "$TMP/t0"
  perf sched record -o "$TMP/sched.data" -- sleep "$D" > /dev/null 2>&1 &
  PERF=$!
  taskset -c 0 wrk -t1 -c1 -d"$D"s --latency -s "$TMP/req.lua" "$URL" > "$TMP/w"
  wait "$PERF"
  thread_ticks "$PID_G" > "$TMP/t1"
  join "$TMP/t0" "$TMP/t1" > "$TMP/threads"   # tid, ticks and nice before, ticks and nice after
  awk -v pid="$PID_G" '$1 != pid && $3 != 0 { print $1, "nice " $3 " thread " $1 }' "$TMP/threads" > "$TMP/labels"
  awk '/^ +50%/{p50=$2} /^ +90%/{p90=$2} /^ +99%/{p99=$2} /Requests\/sec/{rps=$2} END{printf "round %s: wrk at one connection p50 %s, p90 %s, p99 %s, %s req/s\n", r, p50, p90, p99, rps}' r="$r" "$TMP/w"
  awk -v pid="$PID_G" -v hz="$HZ" -v d="$D" '
    { c = ($4 - $2) / hz / d * 100; if ($1 == pid) main = c; else { rest += c; if ($5 != 0) low += c } }
    END { printf "CPU over the round: main thread %.1f %%, other threads %.1f %% (of which at a nice of their own %.1f %%)\n", main, rest, low }' "$TMP/threads"
  perf sched timehist -i "$TMP/sched.data" > "$TMP/timehist" 2> /dev/null
  node dist/bench/lib/sched-report.js "$TMP/timehist" "$PID_G" 1 "${THRESHOLD:-0.5}" "$TMP/labels"
  rm -f "$TMP/sched.data"
done
