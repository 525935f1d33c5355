# Shared by bench/ab.sh, bench/mcp-ab.sh and bench/idle-trace.sh (sourced, from the project root): fresh keys, a
# temp dir and the processes to stop at exit, free ports, and gateways started on CPU 1.
#
#   start NAME CLI PIPELINE [ENV] [NODE_FLAGS]   → $PORT_NAME, $PID_NAME; config and log in $TMP/NAME
#                                                 (CLI `bare`: the bare proxy in front of $MOCK_PORT, no pipeline)
#   start_ab                                      → gateways A and B of an A/B (bench/ab.sh, bench/mcp-ab.sh)
#   shipped_pipeline                              → config/gateway.yaml's pipeline as JSON (also bench/leave-one-out.sh)
#   chat_load_setup                               → the mock on CPU 0 ($MOCK_PORT) and $TMP/req.lua, the chat completion wrk sends
#                                                 (REQUEST=config: routed by an inline x-gateway-config instead of direct mode; REQUEST=stream: streamed;
#                                                 REQUEST=messages-stream: Anthropic's Messages API streamed, to the mock as the Anthropic provider)
#   await_listening LOG…                         → waits up to 30 s for each, exits saying which did not start
#   core_vs_shipped                               → PIPE_A defaults to the core ([]; `shipped` names the shipped one), PIPE_B to the shipped pipeline
#   load_ab SECONDS                               → both gateways of an A/B under load at once, output in $TMP/{A,B}/w
#   thread_ticks PID                              → "tid ticks nice" per thread of PID (CPU ticks from /proc), sorted for join
ADMIN=gw-bench-admin-key-$(node -e "process.stdout.write(require('crypto').randomBytes(16).toString('hex'))")
MASTER=$(node -e "process.stdout.write(require('crypto').randomBytes(32).toString('hex'))")
TMP=$(mktemp -d)
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$TMP"; }
trap cleanup EXIT

port() { node -e "const s=require('net').createServer().listen(0,'127.0.0.1',()=>{process.stdout.write(String(s.address().port));s.close()})"; }
# The pipeline config/gateway.yaml ships, as JSON.
shipped_pipeline() { node -e "const y=require('yaml');const d=y.parse(require('fs').readFileSync('config/gateway.yaml','utf8'));process.stdout.write(JSON.stringify(d.pipeline))"; }

start() {
  local dir="$TMP/$1" p
  mkdir -p "$dir"
  p=$(port)
  if [ "$2" = bare ]; then
    # The bench's bare proxy (node:http + undici, no features) in front of the mock: it forwards
    # the gateway's headers too, which the mock ignores, so the same requests serve both.
    env ${4:-} taskset -c 1 node ${5:-} dist/bench/bare-proxy.js --upstream "http://127.0.0.1:$MOCK_PORT" --port "$p" > "$dir/gw.log" 2>&1 &
  else
    printf 'server: {host: 127.0.0.1, port: %s}\nstore: {path: %s/data}\nsecurity: {custom_hosts: {allow: [127.0.0.1]}}\npipeline: %s\n' "$p" "$dir" "$3" > "$dir/gw.yaml"
    env GATEWAY_ADMIN_KEY="$ADMIN" GATEWAY_MASTER_KEY="$MASTER" ${4:-} taskset -c 1 node ${5:-} "$2" start --config "$dir/gw.yaml" > "$dir/gw.log" 2>&1 &
  fi
  PIDS+=($!)
  printf -v "PID_$1" '%s' "$!"
  printf -v "PORT_$1" '%s' "$p"
}

thread_ticks() { local t; for t in /proc/$1/task/*; do echo "${t##*/} $(awk '{print $14+$15, $19}' "$t/stat")"; done | sort; }

# A gateway on the shipped pipeline takes about 4 s of CPU to start (module loading, schema
# compilation); two starting at once on one core took more than 10 s.
await_listening() {
  local log
  for log in "$@"; do
    for _ in $(seq 300); do grep -q listening "$log" && break; sleep 0.1; done
    grep -q listening "$log" || { echo "$log: did not start:"; cat "$log"; exit 1; }
  done
}

# Both sides of an A/B: builds A and B (default dist/, B defaults to A), their pipelines (default
# the shipped one, B's to A's), environments ENV_A/ENV_B and node flags FLAGS_A/FLAGS_B; says what
# each side runs. Wait for them with await_listening "$TMP/A/gw.log" "$TMP/B/gw.log".
start_ab() {
  A=${A:-dist/cli/main.js}
  # B defaults to A's build; against the bare proxy, to this build.
  if [ "$A" = bare ]; then B=${B:-dist/cli/main.js}; else B=${B:-$A}; fi
  PIPE_A=${PIPE_A:-$(shipped_pipeline)}
  PIPE_B=${PIPE_B:-$PIPE_A}
  start A "$A" "$PIPE_A" "${ENV_A:-}" "${FLAGS_A:-}"
  start B "$B" "$PIPE_B" "${ENV_B:-}" "${FLAGS_B:-}"
  local side
  for side in A B; do
    local cli=${!side} env=ENV_$side flags=FLAGS_$side pipe=PIPE_$side
    if [ "$cli" = bare ]; then echo "$side: the bare proxy ${!env:-} ${!flags:-}"; else echo "$side: $cli ${!env:-} ${!flags:-} pipeline ${!pipe}"; fi
  done
}

# The mock upstream on the load CPU, and the wrk script of the default-pipeline bench's chat
# completion: direct mode with the admin key, to that mock (bench/ab.sh, bench/alloc.sh).
chat_load_setup() {
  MOCK_PORT=$(port)
  taskset -c 0 node dist/bench/mock-upstream.js --port "$MOCK_PORT" > "$TMP/mock.log" 2>&1 &
  PIDS+=($!)
  # The gateway target's chat completion (bench/lib/targets.ts) with the admin key, in the script
  # bench/lib/wrk.ts writes: the headers in one order in every wrk run, as a client sends them.
  MOCK_PORT=$MOCK_PORT ADMIN=$ADMIN REQUEST=${REQUEST:-} node --input-type=module -e "
import { createTarget } from './dist/bench/lib/targets.js';
import { wrkScript } from './dist/bench/lib/wrk.js';
const upstream = 'http://127.0.0.1:' + process.env.MOCK_PORT;
// REQUEST=stream: the same chat completion streamed (the mock's default stream, back to back).
const chat = createTarget('gateway', '', 0, upstream).chatRequest({ stream: process.env.REQUEST === 'stream' });
let headers = { ...chat.headers, 'x-gateway-api-key': process.env.ADMIN };
let body = chat.body;
if (process.env.REQUEST === 'config') {
  // Routed by an inline config, as a client of config-strategy sends it, instead of direct mode.
  const config = { provider: 'openai', api_key: 'sk-bench', custom_host: upstream + '/v1' };
  headers = { 'content-type': 'application/json', 'x-gateway-config': JSON.stringify(config), 'x-gateway-api-key': process.env.ADMIN };
} else if (process.env.REQUEST === 'messages-stream') {
  // Anthropic's Messages API streamed, passed through to the mock as the Anthropic provider.
  body = JSON.stringify({ model: 'claude-sonnet-4-5', max_tokens: 256, stream: true, messages: [{ role: 'user', content: 'Say hello in a short sentence.' }] });
  headers = { 'content-type': 'application/json', 'x-api-key': 'sk-bench', 'anthropic-version': '2023-06-01', 'x-gateway-provider': 'anthropic', 'x-gateway-custom-host': upstream + '/v1', 'x-gateway-api-key': process.env.ADMIN };
} else if (process.env.REQUEST && process.env.REQUEST !== 'stream') {
  throw new Error('REQUEST: config, stream, messages-stream, or unset for direct mode');
}
const request = { ...chat, headers, body };
process.stdout.write(wrkScript({ origin: '', request, connections: 1, durationSec: 1 }));
" > "$TMP/req.lua"
  # wrk takes the path from the URL it is given (/v1/chat/completions everywhere here): this one overrides it.
  if [ "${REQUEST:-}" = messages-stream ]; then echo 'wrk.path = "/v1/messages"' >> "$TMP/req.lua"; fi
}

# The pipelines of the tools that set the core (A) against the shipped pipeline (B) by default
# (bench/alloc.sh, bench/perf-ab.sh); PIPE_A=shipped puts the shipped pipeline on both sides.
core_vs_shipped() {
  if [ "${PIPE_A:-[]}" = shipped ]; then PIPE_A=$(shipped_pipeline); fi
  PIPE_A=${PIPE_A:-[]}
  PIPE_B=${PIPE_B:-$(shipped_pipeline)}
}

# Both gateways of an A/B under load at once for $1 seconds, each by its own wrk -c16 from the
# load CPU, with chat_load_setup's request; wrk's output in $TMP/A/w and $TMP/B/w.
load_ab() {
  taskset -c 0 wrk -t1 -c16 -d"$1"s -s "$TMP/req.lua" "http://127.0.0.1:$PORT_A/v1/chat/completions" > "$TMP/A/w" 2>&1 &
  local w=$!
  taskset -c 0 wrk -t1 -c16 -d"$1"s -s "$TMP/req.lua" "http://127.0.0.1:$PORT_B/v1/chat/completions" > "$TMP/B/w" 2>&1
  wait "$w"
}
