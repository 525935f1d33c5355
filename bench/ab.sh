#!/usr/bin/env bash
# Simultaneous A/B of two gateway builds (or two pipelines) on one core.
#
# On a shared VM, runs of the same build minutes apart differ by ±30 % (CPU µs per request from
# 200 to 280 in one afternoon), so sequential A/Bs of a 5 % change are noise. Here both gateways
# run at once, pinned to the same CPU, each under its own wrk (-c16) from the other CPU, and the
# report is each process's CPU time (all threads, from /proc) per request over the same windows:
# machine drift hits both alike, and B/A is steady to about ±3 %.
#
#   npm run build && cp -r dist dist-base            # A: the build before a change
#   … change, npm run build …                         # B: dist
#   A=dist-base/cli/main.js B=dist/cli/main.js bench/ab.sh [windows] [seconds]
#   PIPE_B='[logging, auth]' bench/ab.sh              # same build, two pipelines
#   ENV_B='SOME_FLAG=1' bench/ab.sh                   # same build, an environment switch
#   FLAGS_B='--max-semi-space-size=64' bench/ab.sh    # same build, node/V8 flags (NODE_OPTIONS refuses some)
#   THREADS=1 bench/ab.sh                             # also each side's CPU per request by thread
#   A=bare bench/ab.sh                                # the bench's bare proxy against this build (B/A: the gateway's cost ÷ the bare proxy's)
#   REQUEST=config bench/ab.sh                        # requests routed by an inline config instead of direct mode
#   REQUEST=stream bench/ab.sh                        # the same chat completion streamed
#   REQUEST=messages-stream bench/ab.sh               # Anthropic's Messages API streamed, to the Anthropic provider
#
# Needs wrk and taskset. Requests: the default-pipeline bench's chat completion, direct mode with
# the admin key (REQUEST=config: routed by an inline x-gateway-config; REQUEST=stream: streamed;
# REQUEST=messages-stream: a streamed `/v1/messages` call to the mock as the Anthropic provider),
# to a mock upstream started here on the load CPU. The first window includes JIT warm-up: read the
# later ones.
set -euo pipefail
cd "$(dirname "$0")/.."
W=${1:-4}
S=${2:-6}
source bench/lib/gateways.sh
chat_load_setup

start_ab
await_listening "$TMP/A/gw.log" "$TMP/B/gw.log" "$TMP/mock.log"

# The CPU ticks in a thread_ticks snapshot file.
total() { awk '{s += $2} END {print s}' "$1"; }
# µs per request of the main thread, the busiest other thread (the log thread where logging is on)
# and all the rest (V8's GC helpers, libuv's pool), from two ticks snapshots, for $4 requests.
by_thread() {
  join "$2" "$3" | awk -v pid="$1" -v n="$4" -v hz="$HZ" '
    { d = ($4 - $2) * 1e6 / hz / n; if ($1 == pid) main = d; else { rest += d; if (d > top) top = d } }
    END { printf "main %.1f, busiest other %.1f, rest %.1f µs/req", main, top, rest - top }'
}
load_ab 3
HZ=$(getconf CLK_TCK)
for w in $(seq "$W"); do
  thread_ticks "$PID_A" > "$TMP/A/t0"; thread_ticks "$PID_B" > "$TMP/B/t0"
  load_ab "$S"
  thread_ticks "$PID_A" > "$TMP/A/t1"; thread_ticks "$PID_B" > "$TMP/B/t1"
  a0=$(total "$TMP/A/t0"); a1=$(total "$TMP/A/t1"); b0=$(total "$TMP/B/t0"); b1=$(total "$TMP/B/t1")
  na=$(awk '/requests in/ {print $1}' "$TMP/A/w"); nb=$(awk '/requests in/ {print $1}' "$TMP/B/w")
  bad=$(cat "$TMP/A/w" "$TMP/B/w" | grep -c -E 'Non-2xx|Socket errors' || true)
  awk -v a=$((a1 - a0)) -v b=$((b1 - b0)) -v na="$na" -v nb="$nb" -v hz="$HZ" -v bad="$bad" -v w="$w" 'BEGIN {
    ua = a * 1e6 / hz / na; ub = b * 1e6 / hz / nb
    printf "window %d  A %6d req %6.1f µs/req | B %6d req %6.1f µs/req | B/A CPU per request %.3f%s\n", w, na, ua, nb, ub, ub / ua, (bad > 0 ? "  (errors: see wrk output)" : "")
  }'
  if [ -n "${THREADS:-}" ]; then
    echo "          A $(by_thread "$PID_A" "$TMP/A/t0" "$TMP/A/t1" "$na") | B $(by_thread "$PID_B" "$TMP/B/t0" "$TMP/B/t1" "$nb")"
  fi
done
