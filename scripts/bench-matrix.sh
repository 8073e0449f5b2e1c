#!/usr/bin/env bash
# bench-matrix.sh BIN ROW_TIME [ROWS]: runs `BIN check --matrix` (3 GB,
# ROW_TIME per row, the rows matching the regular expression ROWS) and
# prints, per row, the time to complete it ("-" when it did not complete
# within ROW_TIME: why), its states/s, states and depth; then the total.
# The matrix's own exit status (1: a violation, 3: an incomplete row) is
# reported, not passed on: this is a measurement.
set -euo pipefail
bin=${1:?usage: bench-matrix.sh BIN ROW_TIME [ROWS]}
rowtime=${2:?usage: bench-matrix.sh BIN ROW_TIME [ROWS]}
rows=${3:-.}
command -v jq >/dev/null || { echo "bench-matrix.sh: needs jq" >&2; exit 2; }
out=$(mktemp)
trap 'rm -f "$out"' EXIT
rc=0
"$bin" check --matrix --memory 3GB --row-time "$rowtime" --matrix-rows "$rows" --format json >"$out" || rc=$?
if [ "$rc" -eq 2 ]; then exit 2; fi
echo "matrix rows: time to complete (row budget $rowtime, 3 GB, $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo ?))"
jq -r '
  ["row", "complete in", "states/s", "states", "depth", "verdict"],
  (.rows[] | [.name,
     (if .complete then (.seconds * 10 | round / 10 | tostring) + " s"
      elif .verdict == "violation" then "violation"
      else "- (" + .why + ")" end),
     (.states_per_second | round | tostring),
     (.distinct_states | tostring), (.depth | tostring),
     (.verdict + (if .property then ": " + .property else "" end))])
  | @tsv' "$out" | column -t -s $'\t'
jq -r '"total: \(.rows | length) rows, \(.complete) complete, \(.violations) with a violation, \(.total_seconds * 10 | round / 10) s (matrix exit '"$rc"')"' "$out"
