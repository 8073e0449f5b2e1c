#!/usr/bin/env bash
# Soak of the real runtime: repeated `cdcspec run` with random faults and
# seeds (--faults random:N draws N faults and domain actions with the
# seed). A run passes when it exits 0: nothing lost or out of order, no
# trace violation, every fault applied, no capture panic (cdcspec run
# fails on each). Prints one line per run and a summary; exits 1 if any
# run failed. The logs of a failed run are kept (their path is printed).
#
#   scripts/soak-run.sh                   # SOAK_RUNS=6 runs of 40 s
#   SOAK_RUNS=20 SOAK_SEED=100 SOAK_DURATION=60s SOAK_FAULTS=8 scripts/soak-run.sh
set -uo pipefail
runs=${SOAK_RUNS:-6}
seed=${SOAK_SEED:-$(date +%s)}
duration=${SOAK_DURATION:-40s}
nfaults=${SOAK_FAULTS:-6}
rate=${SOAK_RATE:-3000}
bin=${CDCSPEC:-bin/cdcspec}
if [ ! -x "$bin" ]; then
	echo "soak: $bin is not built (make build)" >&2
	exit 2
fi
failed=0
produced=0
lost=0
start=$(date +%s)
for i in $(seq 0 $((runs - 1))); do
	s=$((seed + i))
	dir=$(mktemp -d "${TMPDIR:-/tmp}/cdcspec-soak-XXXXXX")
	"$bin" run --faults "random:$nfaults" --seed "$s" --duration "$duration" --rate "$rate" --format json \
		--log-dir "$dir" >"$dir/report.json" 2>"$dir/run.stderr"
	rc=$?
	p=$(grep -m1 '"produced":' "$dir/report.json" | tr -dc 0-9)
	l=$(grep -m1 '"lost":' "$dir/report.json" | tr -dc 0-9)
	drew=$(grep -m1 ' drew: ' "$dir/run.stderr" | sed 's/.* drew: //')
	produced=$((produced + ${p:-0}))
	lost=$((lost + ${l:-0}))
	if [ "$rc" -eq 0 ]; then
		echo "soak: run $((i + 1))/$runs seed $s: ok, produced ${p:-?}, lost ${l:-?}; faults $drew"
		rm -rf "$dir"
	else
		failed=$((failed + 1))
		echo "soak: run $((i + 1))/$runs seed $s: FAILED (exit $rc), produced ${p:-?}, lost ${l:-?}; faults $drew; report and logs in $dir"
		grep -A3 '"failures"' "$dir/report.json" | head -4
		tail -2 "$dir/run.stderr"
	fi
done
echo "soak: $runs runs (seeds $seed..$((seed + runs - 1)), $nfaults random faults each, $duration at $rate rows/s) in $(($(date +%s) - start)) s: $failed failed, $produced rows produced and checked, $lost lost"
[ "$failed" -eq 0 ]
