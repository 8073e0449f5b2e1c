#!/usr/bin/env bash
# numbers.sh: runs cdcspec's benchmarks and writes docs/numbers.md, each
# figure with the command that produced it, the date and the machine's load.
# docs/numbers.md is generated: edit this script, never the page.
#
#   scripts/numbers.sh           # the cheap rows (a few minutes on 2 cores)
#   scripts/numbers.sh --all     # every row (about half an hour on 2 cores)
#   scripts/numbers.sh --only model-default,sim   # some rows, by name
#   OUT=/tmp/numbers.md scripts/numbers.sh        # write elsewhere
#
# `make numbers` runs the cheap rows, `make bench` every row. A row that is
# not run keeps its section from the page as it was (with its own date), or
# else is listed as skipped with the command that runs it. A row whose
# command fails keeps its output's tail and the exit status: a failed
# measurement is shown, never left out.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-docs/numbers.md}
ALL=0
ONLY=""
while [ $# -gt 0 ]; do
	case $1 in
	--all) ALL=1 ;;
	--only) ONLY=$2; shift ;;
	--only=*) ONLY=${1#--only=} ;;
	-h | --help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "numbers.sh: unknown argument $1 (known: --all, --only NAME,...)" >&2; exit 2 ;;
	esac
	shift
done

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
go build -o bin/cdcspec ./cmd/cdcspec || exit 1

# The rows, fields separated by ~: name, tier (cheap, or expensive: --all
# only), what, target (-: none), command, filter (an extended regexp of the output lines to keep; empty:
# keep the last 15 lines). One row per figure; the command is run from the
# repository root with bash -c and is printed as it ran.
ROWS=$(
	cat <<'EOF'
model-default~cheap~Model checker, default configuration, liveness on~1,000,000 distinct states/s on 2 cores~bin/cdcspec check --format json~"(result|distinct_states|transitions|depth|seconds|states_per_second|collision_probability)"
model-bench~cheap~Model checker per state, with liveness and safety only (go test benchmark, one full check each)~1,000,000 distinct states/s on 2 cores~go test ./model -run '^$' -bench 'BenchmarkCheckDefault(Safety)?$' -benchtime 1x~^Benchmark
sim~cheap~Simulation speed: handled messages per second on one core~100,000 msgs/s per core~go test ./impl/sim -run '^$' -bench . -cpu 1~^Benchmark
trace-small~cheap~Trace checking of a generated 128 MB TiCDC HEAD log (the 1 GB row is expensive)~500 MB/s; RSS < 100 MB; concatenated within 1.5x of sorted~scripts/bench-trace.sh 128M~
trace-kafka~cheap~Streaming trace check through Kafka (kfake in-process, segments on disk): four captures' 4 MB generated logs, one message per line, stage one and one stage-two instance; raw lines/s end to end and the peak Go heap~-~go test ./traces/kafkastream -run '^$' -bench KafkaEndToEnd -benchtime 1x~^Benchmark
trace-stream-mem~expensive~Streaming trace check's stage two (StreamChecker, a partition's state) in process, no Kafka: four captures' generated logs of 64 MB, 256 MB and 1 GB in all through LineParser and the consumer's JSON form, the sources interleaved or one quiet until the others end; peak Go heap and RSS per feed size~memory per partition bounded: peaks flat from 64 MB to 1 GB~scripts/bench-trace-stream.sh 64M 256M 1G~
sink~cheap~Kafka sink alone (sarama to kfake, in-order acks)~-~go test ./runtime/kafkasink -run '^$' -bench SinkThroughput -benchtime 300000x~^Benchmark
datacheck-mem~cheap~The data check's heap per produced row change~-~go test ./runtime/datacheck -run '^$' -bench AnalyzerMemory -benchtime 1x~^Benchmark
proptest~cheap~Property-based tests: state machine steps per second~1,000 checks x 100 steps in < 60 s~go test ./proptest -run '^$' -bench StateMachine -benchtime 1x~^Benchmark
linearizability~cheap~Linearizability check of about 10,000-operation admin API histories~-~go test ./linearizability -run '^$' -bench CheckRef~^Benchmark
trace-1g~expensive~Trace checking of a generated 1 GB TiCDC HEAD log~500 MB/s; RSS < 100 MB; concatenated within 1.5x of sorted~scripts/bench-trace.sh 1G~
trace-parse~expensive~Trace parser and checker on one and two cores~-~go test ./traces -run '^$' -bench . -benchtime 5x~^Benchmark
run-default~expensive~Default cdcspec run (what make run runs)~-~bin/cdcspec run --duration 60s~^(cdcspec run|data: |throughput|healed|trace: )
run-100k~expensive~End to end through Kafka at 100,000 rows/s~100,000 rows/s on 2 cores~bin/cdcspec run --rate 100000 --faults none --duration 10s~^(cdcspec run|data: |throughput|healed)
run-sink-error~expensive~Recovery after a Kafka timeout~lag < 3 s within 15 s of healing~bin/cdcspec run --rate 10000 --faults sink-error --duration 30s~^(cdcspec run|throughput|healed| *sink-error)
run-mem~expensive~Peak memory of a 60 s run at 50,000 rows/s, run process and captures~< 1 GB~scripts/peak-rss.sh bin/cdcspec run --rate 50000 --duration 60s~^(cdcspec run|data: |throughput|peak-rss)
model-mem~expensive~Peak memory of the model checker's tests~< 2 GB~scripts/peak-rss.sh go test -count=1 ./model ./search ./cmd/cdcspec~^(ok|FAIL|peak-rss)
model-3node~expensive~Three nodes, two tables, moves and a crash under a 2 GB budget, stopped at 2 M states~peak RSS under the budget~scripts/peak-rss.sh bin/cdcspec check --nodes 3 --tables 2 --moves --crashes 1 --memory 2GB --max-states 2000000~(stopped|distinct states|peak-rss)
make-test~expensive~make test, wall time and peak memory~< 10 minutes; < 3 GB~scripts/peak-rss.sh make test~^(ok|FAIL|---|peak-rss)
EOF
)

# previous NAME prints NAME's section of the page as it was before this run
# (empty if it has none), so a row not run keeps its last measurement with
# the date it was taken.
previous() {
	[ -f "$OUT" ] || return 0
	awk -v tag="\`$1\`:" '
		/^## / { if (keep) exit; head = $0; next }
		head != "" && index($0, tag) == 1 { keep = 1; print head; print ""; head = "" }
		head != "" && $0 != "" { head = "" }
		keep { print }
	' "$OUT"
}

if [ -n "$ONLY" ]; then
	for n in ${ONLY//,/ }; do
		if ! grep -q "^$n~" <<< "$ROWS"; then
			echo "numbers.sh: unknown row $n (known: $(cut -d~ -f1 <<< "$ROWS" | tr '\n' ' '))" >&2
			exit 2
		fi
	done
fi

selected() { # name tier
	if [ -n "$ONLY" ]; then
		case ",$ONLY," in *",$1,"*) return 0 ;; *) return 1 ;; esac
	fi
	[ "$2" = cheap ] || [ "$ALL" = 1 ]
}

load() { cut -d' ' -f1-3 /proc/loadavg; }

{
	echo "# Numbers"
	echo
	echo "Generated by \`scripts/numbers.sh\` on $(date -u '+%Y-%m-%d %H:%M UTC'): do not edit by hand, run"
	echo "\`make numbers\` (the cheap rows, a few minutes) or \`make bench\` (every row, about half an hour)."
	echo "Machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.1f GB", $2/1048576}' /proc/meminfo), $(go version | cut -d' ' -f3-),"
	echo "load average $(load) at the start. The machine may be shared: wall-clock figures move with its load, so each"
	echo "row gives the load average before and after it ran. Targets come from the project's issues."
	echo
} > "$TMP/head.md"
: > "$TMP/rows.md"
: > "$TMP/skipped.md"
: > "$TMP/kept.md"

while IFS='~' read -r name tier what target cmd filter; do
	[ -n "$name" ] || continue
	if ! selected "$name" "$tier"; then
		previous "$name" > "$TMP/prev"
		if [ -s "$TMP/prev" ]; then
			cat "$TMP/prev" >> "$TMP/rows.md"
			echo "| \`$name\` | kept from an earlier run: $what |" >> "$TMP/kept.md"
		else
			echo "| \`$name\` | $what | \`$cmd\` |" >> "$TMP/skipped.md"
		fi
		continue
	fi
	echo "numbers.sh: $name: $cmd" >&2
	before=$(load)
	t0=$(date +%s)
	bash -c "$cmd" > "$TMP/out" 2>&1
	rc=$?
	secs=$(( $(date +%s) - t0 ))
	after=$(load)
	if [ -n "$filter" ] && [ $rc -eq 0 ]; then
		grep -E -- "$filter" "$TMP/out" | tail -40 > "$TMP/keep"
		[ -s "$TMP/keep" ] || tail -15 "$TMP/out" > "$TMP/keep"
	else
		tail -15 "$TMP/out" > "$TMP/keep"
	fi
	{
		echo "## $what"
		echo
		echo "\`$name\`: \`$cmd\`; $(date -u '+%Y-%m-%d %H:%M UTC'), ${secs} s, exit $rc; load average $before before, $after after."
		[ "$target" != "-" ] && echo "Target: $target."
		echo
		echo '```text'
		cat "$TMP/keep"
		echo '```'
		echo
	} >> "$TMP/rows.md"
done <<< "$ROWS"

{
	cat "$TMP/head.md" "$TMP/rows.md"
	if [ -s "$TMP/kept.md" ]; then
		echo "## Rows kept from an earlier run"
		echo
		echo "Not run this time; each section above gives the date it was measured."
		echo
		echo "| name | what |"
		echo "|---|---|"
		cat "$TMP/kept.md"
		echo
	fi
	if [ -s "$TMP/skipped.md" ]; then
		echo "## Not run this time"
		echo
		echo "Run one with \`scripts/numbers.sh --only NAME\`, or all with \`make bench\`."
		echo
		echo "| name | what | command |"
		echo "|---|---|---|"
		cat "$TMP/skipped.md"
	fi
} > "$OUT"
echo "numbers.sh: wrote $OUT" >&2
