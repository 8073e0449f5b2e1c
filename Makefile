# cdcspec: `make run` (the main job on embedded defaults), `make test` (what CI runs).
GO ?= go
PKGS := ./...
BIN := bin/cdcspec

.PHONY: matrix-deepen build run test lint race test-long docs-check numbers bench bench-model bench-mem bench-sim bench-trace bench-trace-stream bench-run bench-run-mem bench-proptest fuzz soak bugs report-test mutate mutate-all oracle bench-delay matrix

build:
	$(GO) build -o $(BIN) ./cmd/cdcspec

# The main job: exhaustive model check of the default configuration, then a
# real 3-capture cluster (embedded etcd, in-process Kafka, capture processes)
# under faults, with the data check and the trace check. A few minutes.
run: build
	./$(BIN) check
	./$(BIN) run --duration 60s

# What CI runs (.ci/run). Under 10 minutes on 2 cores. The rapid property run
# uses a fixed seed here so CI is deterministic; `make test-long` explores
# random seeds (override with RAPID_SEED=0 for a random one).
RAPID_SEED ?= 20261129
test: lint
	RAPID_SEED=$(RAPID_SEED) $(GO) test -count=1 -timeout 9m $(PKGS)

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet $(PKGS)

race:
	$(GO) test -race -count=1 -timeout 30m $(PKGS)

# Longer runs: more rapid checks and steps, a 2000-seed soak, the trace
# cross-check against the implementation's logs, bigger histories.
test-long:
	RAPID_SEED=0 RAPID_CHECKS=1000 RAPID_STEPS=200 $(GO) test -count=1 -timeout 60m ./proptest -run '^TestProtocol$$'
	CDCSPEC_SOAK_SEEDS=2000 $(GO) test -count=1 -timeout 60m ./impl/sim -run TestSoak
	CDCSPEC_XCHECK=1 $(GO) test -count=1 -timeout 30m ./traces/xcheck/
	CDCSPEC_LONG=1 $(GO) test -count=1 -timeout 60m ./linearizability/ ./runtime/cluster/ ./runtime/tikv/
	$(GO) test -count=1 -timeout 60m ./model -long
	$(GO) test -count=1 -timeout 60m ./proptest -run '^TestPlantedBugGate$$' -long

# The commands shown in README.md and docs/ against the real binary,
# Makefile and packages (docs/docs_test.go; part of make test as well).
docs-check:
	$(GO) test -count=1 ./docs

# docs/numbers.md, generated (scripts/numbers.sh lists every row with its
# command): the cheap rows (a few minutes), or every row (about half an hour
# on 2 cores). The bench-* targets below run one group by hand.
numbers: build
	scripts/numbers.sh

bench: build
	scripts/numbers.sh --all

# The configuration matrix (model/matrix.go, docs/matrix.md): every row at
# its stated delay bound (default: unbounded), one after the other, each
# within MATRIX_ROW_TIME and 3 GB; exit 0 only when every row completes
# without a violation. MATRIX_ROWS (a regular expression) picks rows.
# matrix-deepen goes on past each row's stated bound until MATRIX_ROW_TIME
# and reports the largest k that completed (up to MATRIX_ROW_TIME a row).
MATRIX_ROW_TIME ?= 10m
MATRIX_ROWS ?= .
MATRIX_DEEPEN ?=
matrix: build
	./$(BIN) check --matrix --memory 3GB --row-time $(MATRIX_ROW_TIME) --matrix-rows '$(MATRIX_ROWS)'

matrix-deepen: build
	./$(BIN) check --matrix --memory 3GB --row-time $(MATRIX_ROW_TIME) --matrix-rows '$(MATRIX_ROWS)' --row-deepen

# The default configuration exhaustively, with liveness and safety only,
# then the same through the CLI; then the time to complete each matrix row
# at its stated delay bound k (the figure that matters; "-" for a row that
# did not complete within MATRIX_ROW_TIME) with its k, next to its
# states/s. MATRIX_DEEPEN=1: each row goes on past its stated bound until
# MATRIX_ROW_TIME, and k is the largest that completed.
bench-model: build
	$(GO) test ./model -run '^$$' -bench 'BenchmarkCheckDefault(Safety)?$$' -benchtime 1x | tee bench-model.out
	@awk '/^BenchmarkCheckDefault-/ {l=$$(NF-1)} /^BenchmarkCheckDefaultSafety-/ {s=$$(NF-1)} \
	  END {printf "default configuration: %s states/s with liveness | %s states/s safety only\n", l, s}' bench-model.out
	@rm -f bench-model.out
	./$(BIN) check --format json | grep -E '"(distinct_states|seconds|states_per_second|collision_probability)"'
	MATRIX_DEEPEN=$(MATRIX_DEEPEN) scripts/bench-matrix.sh ./$(BIN) $(MATRIX_ROW_TIME) '$(MATRIX_ROWS)'

# The largest delay bound that completes in 10 minutes (docs/reduction.md)
# for the configurations that do not complete unreduced: each line a
# search of the deepening, then the result. About an hour on 2 cores.
DELAY_BUDGET ?= 10m
bench-delay: build
	@for c in lifecycle sink-error barrier barrier-create-syncpoint move-failover; do \
	  ./$(BIN) check --config $$c --delay-budget $(DELAY_BUDGET) --memory 3GB | grep -E '^(config|delay|result|distinct|memory)'; \
	done
	@./$(BIN) check --nodes 3 --tables 2 --moves --crashes 1 --delay-budget $(DELAY_BUDGET) --memory 3GB | grep -E '^(config|delay|result|distinct|memory)'

# Peak memory of the model checker's tests, summed over the go command and
# the test binary (the target: under 2 GB, so that make test stays under 3 GB).
# Then a three-node run under a 2 GB budget, stopped at 2 M states: its
# peak stays under the budget (the frontier spills to disk).
bench-mem: build
	scripts/peak-rss.sh $(GO) test -count=1 ./model ./search ./cmd/cdcspec
	-scripts/peak-rss.sh ./$(BIN) check --nodes 3 --tables 2 --moves --crashes 1 --memory 2GB --max-states 2000000

bench-sim:
	$(GO) test -run '^$$' -bench . -cpu 1 ./impl/sim

bench-trace: build
	scripts/bench-trace.sh 1G
	$(GO) test ./traces -run '^$$' -bench . -benchtime 5x

bench-trace-stream:
	nice -n 10 scripts/bench-trace-stream.sh 64M 256M 1G

bench-proptest:
	$(GO) test ./proptest -run '^$$' -bench StateMachine -benchtime 1x
	$(GO) test ./linearizability -run '^$$' -bench CheckRef

bench-run: build
	$(GO) test -run '^$$' -bench 'SinkThroughput' -benchtime 300000x ./runtime/kafkasink/
	$(GO) test -run '^$$' -bench 'TimeoutRecovery' -benchtime 2x ./runtime/kafkasink/
	./$(BIN) run --rate 100000 --faults none --duration 10s
	./$(BIN) run --rate 10000 --faults sink-error --duration 30s

# Peak memory of a 60 s run at 50,000 rows/s, summed over the run process
# and its captures (the target: under 1 GB), and the data check's bytes
# per produced row change.
bench-run-mem: build
	$(GO) test ./runtime/datacheck -run '^$$' -bench AnalyzerMemory -benchtime 1x
	scripts/peak-rss.sh ./$(BIN) run --rate 50000 --duration 60s || \
	  echo "bench-run-mem: the run itself failed (exit $$?; on a loaded machine the pipeline may not keep up with 50,000 rows/s); the memory figure above stands"

# Fuzz the trace parser and the capture's inbound surfaces: transport
# frames, the codec, admin API request bodies (FUZZTIME each). Minimizing a
# new interesting input (not a crasher) runs tens of thousands of executions
# and shows as 0 execs/s; FuzzRequestBodies caps it at 5 s (Go's default: 60 s).
FUZZTIME ?= 30s
fuzz:
	$(GO) test ./traces -run '^$$' -fuzz=FuzzParse -fuzztime=70s
	$(GO) test ./runtime/codec -run '^$$' -fuzz=FuzzDecode -fuzztime=$(FUZZTIME)
	$(GO) test ./runtime/transport -run '^$$' -fuzz=FuzzReadFrame -fuzztime=$(FUZZTIME)
	$(GO) test ./runtime/adminapi -run '^$$' -fuzz=FuzzRequestBodies -fuzztime=$(FUZZTIME) -fuzzminimizetime=5s

# Soak of the real runtime: SOAK_RUNS runs of `cdcspec run --faults
# random:N` with consecutive seeds (scripts/soak-run.sh lists the knobs).
soak: build
	scripts/soak-run.sh

# The detection matrix: which checker finds each catalogued bug, how fast,
# and how short the counterexample is.
bugs: build
	scripts/bugs.sh

# HTML reports rendered and screenshotted in headless chromium (installed
# with apt-get if missing; skipped with the reason if it cannot be).
# Screenshots: artifacts/report/*.png.
report-test:
	scripts/report-test.sh

# Mutation adequacy: every guard or fix of the model's decision points that
# cites a TiCDC issue or a reference rule, switched off alone, checked in its
# named configurations within a state budget (CDCSPEC_MUTATE_STATES); each
# must be caught or documented redundant (model/mutate.go, SPEC.md section 10).
# Prints the score and the table. About 30-60 minutes on 2 cores.
# The delay-bound oracle (docs/reduction.md): every standard configuration
# and every mutation row, unreduced and by deepening delay-bounded searches;
# a violation within a delay bound must replay and must not contradict a
# complete unreduced search, and every violation the unreduced search finds
# the delay searches must find (same property). Prints the table.
CDCSPEC_ORACLE_STATES ?= 500000
CDCSPEC_ORACLE_TIME ?= 60s
oracle:
	CDCSPEC_ORACLE=1 CDCSPEC_ORACLE_STATES=$(CDCSPEC_ORACLE_STATES) CDCSPEC_ORACLE_TIME=$(CDCSPEC_ORACLE_TIME) \
	  $(GO) test -count=1 -timeout 180m ./model -run '^TestDelayBoundOracle$$' -v

CDCSPEC_MUTATE_STATES ?= 500000
mutate:
	CDCSPEC_MUTATE=1 CDCSPEC_MUTATE_STATES=$(CDCSPEC_MUTATE_STATES) $(GO) test -count=1 -timeout 120m ./model -run '^TestMutations$$' -v

# Mechanical mutation testing of the model (issue 26 section 3; tools/mutate,
# cmd/mutate-model; docs/mutation.md): every condition of model/'s ifs
# negated or dropped, every timestamp or epoch comparison shifted (< and <=),
# every state update or send skipped, outside the scope table
# (mutate-model list --scope). One build of a mutant schema, then each mutant
# meets its killers until one kills it, ordered by kills so far: every matrix
# row by the delay-bounded search to 2 delays, the standard configurations to
# 4, a few deeper searches (deepKillers: the three-node rows to 4, merge to
# 6), the walks of the configurations that name walks (200), and last
# refine@3 (three impl/sim runs followed step by step by the mutant model).
# Prints two scores (the searches alone; the searches or the refinement),
# the survivors (reached or never reached) and the equivalent; writes
# artifacts/mutate-all[-i-of-n].json. SHARD=i/n runs every n-th mutant.
# MUTATE_ALL_PARALLEL mutants at once; more arguments: MUTATE_ALL_FLAGS
# (mutate-model run -h), e.g. --complete default@all for equivalence evidence.
# CDCSPEC_MUTATE_ALL_STATES: the state budget of a bare ROW given in
# --killers (sN). SPEC.md 10.1 has the score and the times.
SHARD ?=
CDCSPEC_MUTATE_ALL_STATES ?= 20000
MUTATE_ALL_PARALLEL ?= 2
MUTATE_ALL_FLAGS ?=
mutate-all:
	$(GO) run ./cmd/mutate-model run --max-states $(CDCSPEC_MUTATE_ALL_STATES) --parallel $(MUTATE_ALL_PARALLEL) $(if $(SHARD),--shard $(SHARD)) \
	  --json artifacts/mutate-all$(if $(SHARD),-$(subst /,-of-,$(SHARD))).json $(MUTATE_ALL_FLAGS)
