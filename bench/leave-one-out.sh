#!/usr/bin/env bash
# What each plugin of the shipped pipeline costs a chat completion: for each plugin (or group), a
# bench/ab.sh run of the shipped pipeline (A) against the same pipeline without it (B), both at
# once on one core, and the median B/A of CPU per request over the windows after the first.
# B/A 0.90 means the plugin costs about 10 % of the pipeline's CPU per request; two identical
# pipelines read 0.96–1.03, so anything in that band is below what this can see.
#
#   bench/leave-one-out.sh                                  # every plugin of config/gateway.yaml
#   bench/leave-one-out.sh logging analytics 'admin-org admin-api-keys'   # a quoted list is one group
#   WINDOWS=6 SECONDS_PER=6 bench/leave-one-out.sh metrics  # more windows (default 4 of 6 s)
#
# About 40 s per row. Needs what bench/ab.sh needs (wrk, taskset) and a build (dist/).
set -euo pipefail
cd "$(dirname "$0")/.."
W=${WINDOWS:-4}
S=${SECONDS_PER:-6}
# For shipped_pipeline (the same list bench/ab.sh runs as A).
source bench/lib/gateways.sh
SHIPPED=$(shipped_pipeline)
if [ $# -eq 0 ]; then set -- $(node -e "process.stdout.write(JSON.parse(process.argv[1]).join(' '))" "$SHIPPED"); fi

# The shipped pipeline without the plugins named in $1 (space-separated), as a JSON list.
without() {
  node -e "const all = JSON.parse(process.argv[1]); const drop = process.argv[2].split(' ');
const unknown = drop.filter((p) => !all.includes(p));
if (unknown.length > 0) { console.error('not in the shipped pipeline: ' + unknown.join(', ')); process.exit(2); }
process.stdout.write(JSON.stringify(all.filter((p) => !drop.includes(p))))" "$SHIPPED" "$1"
}

printf '%-40s %-28s %s\n' 'left out' 'B/A per window (after the 1st)' 'median'
for group in "$@"; do
  pipe=$(without "$group")
  ratios=$(PIPE_B="$pipe" bench/ab.sh "$W" "$S" 2>&1 | awk '/^window/ && $2 > 1 {print $NF}')
  if [ -z "$ratios" ]; then
    echo "$group: bench/ab.sh gave no windows (run it alone to see why)" >&2
    exit 1
  fi
  median=$(printf '%s\n' $ratios | sort -n | awk '{v[NR]=$1} END {print (NR % 2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}')
  printf '%-40s %-28s %s\n' "$group" "$(echo $ratios)" "$median"
done
