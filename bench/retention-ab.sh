#!/usr/bin/env bash
# Log retention under saturating load, two builds at once on one core (as bench/ab.sh): both run
# the shipped pipeline with the logging plugin's `max_records` lowered to MAX (default 20000),
# each under its own wrk -c16 from the other CPU, so both fill their store past the bound within a
# minute and their once-a-minute sweeps then race the writes. Every S seconds it prints each
# side's record count (GET /v1/logs: LMDB's entry count), requests served, and its log thread's
# CPU share: a side whose count climbs minute after minute cannot keep its store at the bound.
#
#   A=dist-base/cli/main.js B=dist/cli/main.js bench/retention-ab.sh [windows] [seconds]
#   MAX=50000 bench/retention-ab.sh 12 30
#   SOLO=1 A=dist/cli/main.js bench/retention-ab.sh 8 30   # A alone on the core, under wrk -c32
#
# Needs wrk and taskset.
set -euo pipefail
cd "$(dirname "$0")/.."
W=${1:-10}
S=${2:-30}
MAX=${MAX:-20000}
source bench/lib/gateways.sh
chat_load_setup

PIPE=$(shipped_pipeline | MAX=$MAX node -e "
const p = JSON.parse(require('fs').readFileSync(0, 'utf8'));
process.stdout.write(JSON.stringify(p.map((e) => (e === 'logging' ? { logging: { max_records: Number(process.env.MAX) } } : e))));")
if [ -n "${SOLO:-}" ]; then
  SIDES=(A)
  CONNS=32
  start A "${A:-dist/cli/main.js}" "$PIPE"
  await_listening "$TMP/A/gw.log" "$TMP/mock.log"
else
  SIDES=(A B)
  CONNS=16
  PIPE_A=$PIPE start_ab
  await_listening "$TMP/A/gw.log" "$TMP/B/gw.log" "$TMP/mock.log"
fi

records() { curl -s -H "x-gateway-api-key: $ADMIN" "http://127.0.0.1:$1/v1/logs?page_size=1" | node -e "process.stdout.write(String(JSON.parse(require('fs').readFileSync(0,'utf8')).total))"; }
# The log thread: the busiest thread at nice 10 (log-thread.ts), its CPU ticks.
log_ticks() { thread_ticks "$1" | awk '$3 == 10 { if ($2 > t) t = $2 } END { print t + 0 }'; }
HZ=$(getconf CLK_TCK)
share() { awk -v d=$(($2 - $1)) -v hz="$HZ" -v s="$S" 'BEGIN { printf "%7.1f%%", d * 100 / hz / s }'; }
served() { awk '/requests in/ { print $1 }' "$1" 2>/dev/null || echo 0; }

declare -A WRK TICKS
for side in "${SIDES[@]}"; do
  port=PORT_$side
  taskset -c 0 wrk -t1 -c"$CONNS" -d$((W * S + 5))s -s "$TMP/req.lua" "http://127.0.0.1:${!port}/v1/chat/completions" > "$TMP/$side/w" 2>&1 &
  WRK[$side]=$!
done
echo "max_records $MAX; every ${S}s: records in the store, log thread's share of the core"
printf '%6s' s
for side in "${SIDES[@]}"; do printf '  %10s %8s' "$side:records" "$side:log"; done
echo
for side in "${SIDES[@]}"; do pid=PID_$side; TICKS[$side]=$(log_ticks "${!pid}"); done
for w in $(seq "$W"); do
  sleep "$S"
  printf '%6s' $((w * S))
  for side in "${SIDES[@]}"; do
    pid=PID_$side port=PORT_$side
    now=$(log_ticks "${!pid}")
    printf '  %10s %s' "$(records "${!port}")" "$(share "${TICKS[$side]}" "$now")"
    TICKS[$side]=$now
  done
  echo
done
for side in "${SIDES[@]}"; do wait "${WRK[$side]}"; echo "$side served $(served "$TMP/$side/w") requests"; done
