#!/usr/bin/env bash
# bench-matrix.sh BIN ROW_TIME [ROWS]: runs `BIN check --matrix` (3 GB,
# ROW_TIME per row, the rows matching the regular expression ROWS) and
# prints, per row, the time to complete it at its stated delay bound ("-"
# when it did not complete within ROW_TIME: why), its k ("all": every
# schedule; else the delay bound that completed), its states/s, states and
# depth; then the total. MATRIX_DEEPEN=1 adds --row-deepen: each row goes on
# past its stated bound until ROW_TIME, k is the largest bound that
# completed and "k in" the time of that search.
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
deepen=()
if [ "${MATRIX_DEEPEN:-}" = 1 ]; then deepen=(--row-deepen); fi
"$bin" check --matrix --memory 3GB --row-time "$rowtime" --matrix-rows "$rows" --format json "${deepen[@]}" >"$out" || rc=$?
if [ "$rc" -eq 2 ]; then exit 2; fi
echo "matrix rows: time to complete (row budget $rowtime, 3 GB, $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo ?))"
jq -r '
  ["row", "complete in", "k", "k in", "stated", "states/s", "states", "depth", "verdict"],
  (.rows[] | [.name,
     (if .complete then ((.stated_seconds // .seconds) * 10 | round / 10 | tostring) + " s"
      elif .verdict == "violation" then "violation"
      else "- (" + .why + ")" end),
     (if .exhaustive then "all" elif .complete_up_to_delays then (.complete_up_to_delays | tostring) else "-" end),
     ((.seconds * 10 | round / 10 | tostring) + " s"),
     (if .stated_delay_bound == 0 then "unbounded" else (.stated_delay_bound | tostring) end),
     (.states_per_second | round | tostring),
     (.distinct_states | tostring), (.depth | tostring),
     (.verdict + (if .property then ": " + .property else "" end))])
  | @tsv' "$out" | column -t -s $'\t'
jq -r '"total: \(.rows | length) rows, \(.complete) complete (\(.exhaustive) exhaustive), \(.violations) with a violation, \(.total_seconds * 10 | round / 10) s (matrix exit '"$rc"')"' "$out"
