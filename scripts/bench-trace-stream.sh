#!/usr/bin/env bash
# bench-trace-stream.sh: memory of the streaming trace checker's stage two
# (StreamChecker, the per-partition state) as the feed grows (issue 30).
#
#   scripts/bench-trace-stream.sh [SIZE...]   # default: 64M 256M 1G
#
# Runs traces' BenchmarkStreamMemory once per SIZE, each in its own process:
# four captures' generated logs (SIZE in all, made on the fly, never held
# whole) through LineParser, the consumer's JSON message form and one
# StreamChecker, in process, no Kafka. Two feeds per SIZE: interleaved (the
# sources' lines in turn) and quiet (one source silent until the others end,
# so the held items fill to their cap of 65,536). For each: lines, events,
# lines/s, the held items' peak, the peak Go heap (HeapInuse sampled every
# 50,000 lines) and the process's peak RSS. Bounded means the peaks stay flat
# as SIZE grows.
set -euo pipefail
cd "$(dirname "$0")/.."
SIZES=("$@")
[ ${#SIZES[@]} -gt 0 ] || SIZES=(64M 256M 1G)
for s in "${SIZES[@]}"; do
  if ! [[ $s =~ ^[1-9][0-9]*[KMG]?$ ]]; then
    echo "bench-trace-stream.sh: size $s: want a positive size such as 64M or 1G" >&2
    exit 2
  fi
done
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
go test -c -o "$TMP/traces.test" ./traces
printf 'load before: %s\n' "$(cut -d' ' -f1-3 /proc/loadavg)"
for s in "${SIZES[@]}"; do
  for feed in interleaved quiet; do
    /usr/bin/time -f "%M" -o "$TMP/rss" "$TMP/traces.test" -test.run '^$' \
      -test.bench "^BenchmarkStreamMemory\$/^$s\$/^$feed\$" -test.benchtime 1x -stream-sizes "$s" > "$TMP/out"
    printf '%s\t%8d peak-RSS-MB\n' "$(grep '^BenchmarkStreamMemory' "$TMP/out")" "$(( $(tail -1 "$TMP/rss") / 1024 ))"
  done
done
printf 'load after: %s\n' "$(cut -d' ' -f1-3 /proc/loadavg)"
