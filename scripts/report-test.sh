#!/usr/bin/env bash
# report-test.sh: renders cdcspec's HTML reports and screenshots them in a
# real headless browser (Debian's chromium).
#
#   scripts/report-test.sh            # or: make report-test
#
# 1. `cdcspec trace --format html` on the seed logs (#5709, #3952 as one
#    combined log) -> artifacts/report/seeds.html
# 2. `cdcspec check --bug add-accepts-unbootstrapped-maintainer` and
#    `--bug regressed-checkpoint-drops-error` -> their counterexample.html
#    (message-sequence charts)
# 3. the issue-28 cases, one report each: #5709 (a finding about 30 minutes
#    without a backoff line) -> 5709.html, the duplicate dispatcher of #6202
#    -> duplicate-dispatcher.html
# 4. chromium --headless --screenshot of each -> artifacts/report/*.png, and
#    --dump-dom of the issue-28 cases, checked by report/domcheck: the
#    changefeed's timeline has a lane per capture and dispatcher the
#    evidence names, its window spans the finding (30 minutes for #5709) and
#    every evidence mark lies inside it
#
# chromium is installed with apt-get when it is missing (as root, or with
# sudo); when it cannot be installed the browser step is skipped with the
# reason and the script exits 0 after checking the HTML. The checks: every
# page renders to a non-empty PNG, and the screenshot of the trace report
# is not blank where the timeline is drawn.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=artifacts/report
mkdir -p "$OUT"
go build -o "$OUT/cdcspec" ./cmd/cdcspec

set +e
"$OUT/cdcspec" trace --format html traces/testdata/seed000_5709.log traces/testdata/seed001_3952_combined.log > "$OUT/seeds.html"
rc=$?
set -e
[ $rc -le 1 ] || { echo "report-test: cdcspec trace exited $rc" >&2; exit 1; }
grep -q '<svg class="timeline"' "$OUT/seeds.html" || { echo "report-test: seeds.html has no timeline" >&2; exit 1; }
# the issue-28 cases: NAME LOG CHANGEFEED MIN-WINDOW LANE...
cases=(
  "5709 traces/testdata/seed000_5709.log default/<changefeed> 30m capture:<capture-id> findings"
  "duplicate-dispatcher traces/testdata/planted_duplicate_dispatcher.log default/cf-6202 2s capture:6a3e0b8e-7c1d-4e8a-9c4e-5b2f0d9a0001 dispatcher:154415 dispatcher:693762"
)
for c in "${cases[@]}"; do
  read -r name log _ <<< "$c"
  set +e
  "$OUT/cdcspec" trace --format html "$log" > "$OUT/$name.html"
  rc=$?
  set -e
  [ $rc -le 1 ] || { echo "report-test: cdcspec trace $log exited $rc" >&2; exit 1; }
done
for bug in add-accepts-unbootstrapped-maintainer regressed-checkpoint-drops-error; do
  rm -rf "$OUT/cex-$bug"
  "$OUT/cdcspec" check --bug "$bug" --artifacts "$OUT/cex-$bug" > /dev/null || true
  grep -q '<svg class="msc"' "$OUT/cex-$bug/counterexample.html" || { echo "report-test: no chart for $bug" >&2; exit 1; }
done

browser=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$browser" ]; then
  echo "report-test: chromium is missing; installing it with apt-get"
  if [ "$(id -u)" = 0 ]; then apt-get install -y chromium > "$OUT/apt.log" 2>&1 || true
  elif command -v sudo > /dev/null; then sudo -n apt-get install -y chromium > "$OUT/apt.log" 2>&1 || true
  fi
  browser=$(command -v chromium || true)
fi
if [ -z "$browser" ]; then
  echo "report-test: SKIP browser screenshots: chromium is not installed and apt-get could not install it (see $OUT/apt.log); the HTML checks passed"
  exit 0
fi

shot() { # page.html out.png height
  timeout 120 "$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=1400,"$3" \
    --screenshot="$2" "file://$PWD/$1" > "$OUT/chromium.log" 2>&1
  [ -s "$2" ] || { echo "report-test: no screenshot $2 (see $OUT/chromium.log)" >&2; exit 1; }
}
shot "$OUT/seeds.html" "$OUT/seeds.png" 1400
for bug in add-accepts-unbootstrapped-maintainer regressed-checkpoint-drops-error; do
  shot "$OUT/cex-$bug/counterexample.html" "$OUT/cex-$bug.png" 1300
done
# the timeline region of the trace report must not be blank: count the
# distinct colours of its pixels (the lanes, bars, dots and markers)
colours=$(go run ./report/pngcolours "$OUT/seeds.png" 200 300 1400 1000)
echo "report-test: seeds.png timeline region has $colours distinct colours"
[ "$colours" -ge 8 ] || { echo "report-test: the timeline looks blank" >&2; exit 1; }
go build -o "$OUT/domcheck" ./report/domcheck
for c in "${cases[@]}"; do
  read -r name _ cf min lanes <<< "$c"
  shot "$OUT/$name.html" "$OUT/$name.png" 1100
  timeout 120 "$browser" --headless --no-sandbox --disable-gpu --dump-dom "file://$PWD/$OUT/$name.html" > "$OUT/$name.dom" 2> "$OUT/chromium.log"
  # shellcheck disable=SC2086 # lanes are words
  "$OUT/domcheck" "$OUT/$name.dom" "$cf" "$min" $lanes || { echo "report-test: the $name timeline misses what it must show" >&2; exit 1; }
  colours=$(go run ./report/pngcolours "$OUT/$name.png" 200 300 1200 700)
  echo "report-test: $name.png timeline region has $colours distinct colours"
  [ "$colours" -ge 6 ] || { echo "report-test: the $name timeline looks blank" >&2; exit 1; }
done
echo "report-test: OK; screenshots in $OUT/: $(cd "$OUT" && ls *.png | tr '\n' ' ')"
