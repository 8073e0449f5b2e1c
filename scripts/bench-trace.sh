#!/usr/bin/env bash
# bench-trace.sh: trace-checking throughput on a generated TiCDC log, next to
# `grep -c .` on the same file in the same run.
#
#   scripts/bench-trace.sh [SIZE]      # SIZE: 1G (default), 256M, ...
#
# Prints MB/s and lines/s for both, and the checker's peak resident memory.
# The log is generated in a temporary directory and removed afterwards.
set -euo pipefail
SIZE=${1:-1G}
cd "$(dirname "$0")/.."
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
LOG="$TMP/ticdc-bench.log"

go build -o "$TMP/cdcspec" ./cmd/cdcspec
go run ./traces/genlog -size "$SIZE" -o "$LOG" 2>/dev/null
BYTES=$(stat -c %s "$LOG")
cat "$LOG" > /dev/null # warm the page cache for both readers

now() { date +%s.%N; }

t0=$(now)
LINES=$(grep -c . "$LOG")
t1=$(now)
GREP_S=$(echo "$t1 - $t0" | bc -l)

t0=$(now)
set +e
/usr/bin/time -f "%M" -o "$TMP/rss" "$TMP/cdcspec" trace --format json "$LOG" > "$TMP/out.json"
RC=$?
set -e
t1=$(now)
TRACE_S=$(echo "$t1 - $t0" | bc -l)
RSS_KB=$(tail -1 "$TMP/rss")
TLINES=$(grep -m1 '"lines"' "$TMP/out.json" | tr -dc '0-9')

printf 'file:   %s, %d bytes, %d non-empty lines (load: %s)\n' "$SIZE" "$BYTES" "$LINES" "$(cut -d' ' -f1-3 /proc/loadavg)"
printf 'grep -c .:      %7.3f s  %8.1f MB/s  %10.0f lines/s\n' "$GREP_S" "$(echo "$BYTES/1000000/$GREP_S" | bc -l)" "$(echo "$LINES/$GREP_S" | bc -l)"
printf 'cdcspec trace:  %7.3f s  %8.1f MB/s  %10.0f lines/s  peak RSS %d MB  exit %d\n' "$TRACE_S" "$(echo "$BYTES/1000000/$TRACE_S" | bc -l)" "$(echo "$TLINES/$TRACE_S" | bc -l)" "$((RSS_KB/1024))" "$RC"
printf 'ratio trace/grep throughput: %.2f\n' "$(echo "$GREP_S/$TRACE_S" | bc -l)"
