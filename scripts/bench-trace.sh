#!/usr/bin/env bash
# bench-trace.sh: trace-checking throughput and peak memory on generated
# TiCDC HEAD logs, next to `grep -c .` on the same bytes in the same run.
#
#   scripts/bench-trace.sh [SIZE]        # SIZE: 1G (default), 256M, ...
#   STORM=1 scripts/bench-trace.sh 1G    # also a SIZE log where every one of
#                                        # 1000 changefeeds is in an error storm
#
# Three inputs of SIZE bytes each:
#   sorted        one capture's log, in time order
#   concatenated  four captures' logs over the same hour, concatenated
#                 (`cat a.log b.log c.log d.log | cdcspec trace -`): the
#                 time jumps back at every file boundary
#   files         the same four logs given as files (merged by time)
#   rotated       the sorted log split into 100 files, given as files (a
#                 capture's rotated logs: merged by time, one or two files
#                 parsed at a time)
# For each: wall time, MB/s, lines/s, CPU seconds (user+sys; on a shared
# machine MB per CPU-second is the figure load distorts least), cores (CPU
# seconds / wall seconds: the parallel speedup over one core the run got;
# at most 2 on 2 cores, less when other processes hold them) and peak RSS
# of `cdcspec trace`, and `grep -c .` on the same bytes. The logs are generated in a temporary
# directory and removed afterwards.
set -euo pipefail
SIZE=${1:-1G}
cd "$(dirname "$0")/.."
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

go build -o "$TMP/cdcspec" ./cmd/cdcspec
go build -o "$TMP/genlog" ./traces/genlog
bytes_of() { numfmt --from=iec "$1"; }
QUARTER=$(( $(bytes_of "$SIZE") / 4 ))
"$TMP/genlog" -size "$SIZE" -o "$TMP/sorted.log" 2>/dev/null
for i in 1 2 3 4; do "$TMP/genlog" -size "$QUARTER" -seed "$i" -o "$TMP/part$i.log" 2>/dev/null; done
cat "$TMP"/part{1,2,3,4}.log > "$TMP/concat.log"
mkdir "$TMP/rotated" && split -n l/100 -d -a 3 "$TMP/sorted.log" "$TMP/rotated/cdc-"
if [ "${STORM:-}" = 1 ]; then
  "$TMP/genlog" -size "$SIZE" -storm -changefeeds 1000 -o "$TMP/storm.log" 2>/dev/null
fi

now() { date +%s.%N; }
printf 'load before: %s; sizes: %s\n' "$(cut -d' ' -f1-3 /proc/loadavg)" "$SIZE"
printf '%-13s %10s %9s %8s %11s %7s %9s %5s %7s   %s\n' input bytes "trace s" "MB/s" "lines/s" "CPU s" "MB/CPU-s" cores "RSS MB" "grep -c . (same bytes)"

bench() { # name, stdin-file or "", args...
  local name=$1 in=$2; shift 2
  local files=("$@") bytes lines t0 t1 gs ts rss rc
  if [ -n "$in" ]; then bytes=$(stat -c %s "$in"); else bytes=$(cat "${files[@]}" | wc -c); fi
  cat "${in:-${files[@]}}" "${files[@]}" > /dev/null 2>&1 || true # warm the page cache
  t0=$(now); if [ -n "$in" ]; then lines=$(grep -c . "$in"); else lines=$(cat "${files[@]}" | grep -c .); fi; t1=$(now)
  gs=$(echo "$t1 - $t0" | bc -l)
  t0=$(now)
  set +e
  if [ -n "$in" ]; then
    /usr/bin/time -f "%M %U %S" -o "$TMP/rss" "$TMP/cdcspec" trace --format json - < "$in" > "$TMP/out.json"
  else
    /usr/bin/time -f "%M %U %S" -o "$TMP/rss" "$TMP/cdcspec" trace --format json "${files[@]}" > "$TMP/out.json"
  fi
  rc=$?
  set -e
  t1=$(now)
  ts=$(echo "$t1 - $t0" | bc -l)
  read -r rsskb us ss < <(tail -1 "$TMP/rss")
  rss=$(( rsskb / 1024 ))
  cpu=$(echo "$us + $ss" | bc -l)
  printf '%-13s %10d %9.3f %8.1f %11.0f %7.2f %9.1f %5.2f %7d   %.3f s, %.1f MB/s (trace/grep time %.1fx) exit %d\n' \
    "$name" "$bytes" "$ts" "$(echo "$bytes/1000000/$ts" | bc -l)" "$(echo "$lines/$ts" | bc -l)" "$cpu" "$(echo "$bytes/1000000/$cpu" | bc -l)" "$(echo "$cpu/$ts" | bc -l)" "$rss" \
    "$gs" "$(echo "$bytes/1000000/$gs" | bc -l)" "$(echo "$ts/$gs" | bc -l)" "$rc"
  echo "$ts" > "$TMP/t.$name"
}
bench sorted "$TMP/sorted.log"
bench concatenated "$TMP/concat.log"
bench files "" "$TMP"/part{1,2,3,4}.log
bench rotated "" "$TMP"/rotated/cdc-*
if [ "${STORM:-}" = 1 ]; then
  bench storm "$TMP/storm.log"
  printf 'storm findings: %s\n' "$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(len(r["findings"]), "aggregated findings, counts summing to", sum(f["count"] for f in r["findings"]))' "$TMP/out.json" 2>/dev/null || echo '?')"
fi
printf 'concatenated / sorted time: %.2f (target <= 1.5)\n' "$(echo "$(cat "$TMP/t.concatenated") / $(cat "$TMP/t.sorted")" | bc -l)"
printf 'load after: %s\n' "$(cut -d' ' -f1-3 /proc/loadavg)"
