package model

import (
	"fmt"
	"sort"

	"cdcspec/spec"
)

// The configuration matrix (issue 25): every protocol feature combined with
// every fault, each at the smallest bounds that reach the combination, and
// every standard configuration under its own name. `cdcspec check --matrix`
// runs the rows; docs/matrix.md explains them. Rows are data: one table,
// matrixRows. The two axes, matrixFeatures and matrixFaults, say how a
// Config exercises each feature and fault; TestMatrixPairwise fails when a
// feature x fault pair has no row and is not listed in MatrixImpossible.

// MatrixAxis is one value of an axis of the matrix: a protocol feature or a
// fault, and how a Config exercises it.
type MatrixAxis struct {
	Name string
	// In reports whether a configuration exercises it.
	In func(c *Config) bool
	// How says how the model covers it when that is not one Config
	// field (a fault the model has no action for: UnsupportedFaults).
	How string
}

// matrixFeatures is the feature axis: every protocol feature of the issue,
// each barrier kind of BarrierKinds as its own feature.
var matrixFeatures = func() []MatrixAxis {
	out := []MatrixAxis{
		{Name: "span-move", In: func(c *Config) bool { return c.SpanMoves }},
		{Name: "split", In: func(c *Config) bool { return c.Splits > 0 }},
		{Name: "merge", In: func(c *Config) bool { return c.Merges > 0 }},
		{Name: "maintainer-move", In: func(c *Config) bool { return c.MaintMoves > 0 }},
		{Name: "create-table", In: func(c *Config) bool { return c.DDLTables > 0 }},
	}
	for _, k := range BarrierKinds() {
		out = append(out, MatrixAxis{Name: "barrier-" + k, In: func(c *Config) bool { return c.Barrier == k }})
	}
	return append(out,
		// No Config reaches it: the model's upstream commits one blocking
		// DDL (MatrixImpossible says what it waits for).
		MatrixAxis{Name: "two-blocking-ddls", In: func(*Config) bool { return false }},
		MatrixAxis{Name: "pause-resume-remove", In: func(c *Config) bool { return c.ClientOps > 0 }},
		MatrixAxis{Name: "coordinator-failover", In: func(c *Config) bool { return c.CoordFailovers > 0 }},
		MatrixAxis{Name: "fast-fail", In: func(c *Config) bool { return c.FastFails > 0 }},
		MatrixAxis{Name: "sink-error", In: func(c *Config) bool { return c.SinkErrors > 0 }},
		MatrixAxis{Name: "upstream-stall", In: func(c *Config) bool { return c.Stalls > 0 }},
	)
}()

// matrixFaults is the fault axis, by the fault vocabulary's names. A fault
// the model has no action for is covered the way UnsupportedFaults says.
var matrixFaults = []MatrixAxis{
	{Name: string(spec.FaultDropMessages), In: func(c *Config) bool { return c.Drops > 0 }},
	{Name: string(spec.FaultDuplicateMessages), In: func(c *Config) bool { return c.Dups > 0 }},
	// Every row: a message stays in flight while any other action runs.
	{Name: string(spec.FaultDelayMessages), In: func(*Config) bool { return true }, How: UnsupportedFaults[spec.FaultDelayMessages]},
	{Name: string(spec.FaultExpireSession), In: func(c *Config) bool { return c.Crashes > 0 }},
	{Name: string(spec.FaultKillCapture), In: func(c *Config) bool { return c.Crashes > 0 }, How: UnsupportedFaults[spec.FaultKillCapture]},
	{Name: string(spec.FaultRestartCapture), In: func(c *Config) bool { return c.Restarts > 0 }},
	// A partition that cuts n messages needs Drops >= n; the rows lose one.
	{Name: string(spec.FaultPartition), In: func(c *Config) bool { return c.Drops > 0 }, How: UnsupportedFaults[spec.FaultPartition]},
}

// MatrixFeatures lists the feature axis.
func MatrixFeatures() []MatrixAxis { return matrixFeatures }

// MatrixFaults lists the fault axis.
func MatrixFaults() []MatrixAxis { return matrixFaults }

// MatrixRow is one configuration of the matrix.
type MatrixRow struct {
	Name   string
	Reason string // one line: the combination it reaches, or the bug it once exposed
	// Config is the row's configuration, every catalogued fix on; its
	// DelayBound is the row's stated delay bound (0: it completes
	// unbounded).
	Config Config
}

// MatrixImpossible is a pair of axis values (feature x fault, or two
// features) no row combines, and what the model needs first.
type MatrixImpossible struct {
	A, B   string
	Reason string
}

// matrixImpossible: the pairs no row can combine today. A feature x
// feature entry is a refusal of Config.Validate.
var matrixImpossible = func() []MatrixImpossible {
	var out []MatrixImpossible
	for _, f := range matrixFaults {
		out = append(out, MatrixImpossible{A: "two-blocking-ddls", B: f.Name, Reason: twoDDLsReason})
	}
	for _, k := range BarrierKinds() {
		out = append(out,
			MatrixImpossible{A: "split", B: "barrier-" + k, Reason: splitBarrierReason},
			MatrixImpossible{A: "merge", B: "barrier-" + k, Reason: splitBarrierReason},
		)
	}
	return append(out,
		MatrixImpossible{A: "split", B: "merge", Reason: "impossible until a merge's halves may come from a split: " +
			"merges start pre-split and the three span slots hold the two halves and the merged span"},
		MatrixImpossible{A: "maintainer-move", B: "pause-resume-remove", Reason: "impossible until the model's status carries " +
			"the cascade-closed flag a stop during a maintainer move needs (Config.Validate)"},
	)
}()

const (
	twoDDLsReason = "impossible until the model's upstream commits a sequence of blocking DDLs: State.BlkT is one " +
		"commitTs, each dispatcher's block stage (Disp.Blk) and the maintainer's block event (Maint.Bar) are " +
		"relative to it, and TiCDC's maintainer keys its block events by commitTs (maintainer/barrier.go)"
	splitBarrierReason = "impossible until the barrier's range checker counts spans, not tables: BarEv.Need and " +
		"BarEv.Rep are table masks, and a table's report counts only from its whole replicating span " +
		"(Config.Validate refuses the pair)"
)

// Impossible lists the pairs no row combines, with the reason.
func Impossible() []MatrixImpossible { return matrixImpossible }

// matrixRow builds a row from Base (HEAD's protocol, every fix on): name,
// reason, and the bounds that reach the combination.
func matrixRow(name, reason string, set func(c *Config)) MatrixRow {
	c := Base()
	c.Name, c.TsMax, c.DelayBound = name, 2, MinStatedDelayBound
	if k, ok := rowDelayBounds[name]; ok {
		c.DelayBound = k
	}
	set(&c)
	return MatrixRow{Name: name, Reason: reason, Config: c}
}

// standardRow is a standard configuration as a row under its own name.
// Random walks (Config.Walks) do not apply: a matrix row is searched
// exhaustively.
func standardRow(name, reason string) MatrixRow {
	c, _ := Standard(name) // TestMatrixRows: every standard configuration is a row with its Config
	return MatrixRow{Name: name, Reason: reason, Config: c}
}

// rowDelayBounds is the stated delay bound of each row that is not a
// standard configuration (a standard configuration states its own in
// config.go): the largest k whose delay-bounded search completed within
// about 10 s on 2 shared cores at load average ~25 (about 1 s on a quiet
// machine) when it was chosen (`make matrix-deepen` re-measures). A row
// not listed here states MinStatedDelayBound. TestMatrixRows fails on an
// entry that names no row.
var rowDelayBounds = map[string]int{
	"move-loss":                         8,
	"move-dup":                          8,
	"move-restart":                      7,
	"split-loss":                        7,
	"split-dup":                         6,
	"split-restart":                     6,
	"merge-loss":                        6,
	"merge-dup":                         5,
	"merge-restart":                     5,
	"maintainer-move-loss":              6,
	"maintainer-move-dup":               5,
	"maintainer-move-crash":             6,
	"maintainer-move-restart":           6,
	"new-table-loss":                    7,
	"new-table-dup":                     7,
	"new-table-restart":                 6,
	"barrier-normal-loss":               5,
	"barrier-normal-dup":                4,
	"barrier-normal-crash":              4,
	"barrier-normal-restart":            5,
	"barrier-drop-loss":                 6,
	"barrier-drop-dup":                  5,
	"barrier-drop-restart":              7,
	"barrier-truncate-loss":             5,
	"barrier-truncate-dup":              5,
	"barrier-truncate-crash":            7,
	"barrier-truncate-restart":          7,
	"barrier-rename-loss":               5,
	"barrier-rename-dup":                5,
	"barrier-rename-crash":              5,
	"barrier-rename-restart":            5,
	"barrier-db-loss":                   6,
	"barrier-db-dup":                    7,
	"barrier-db-crash":                  8,
	"barrier-db-restart":                7,
	"barrier-syncpoint-loss":            5,
	"barrier-syncpoint-dup":             6,
	"barrier-syncpoint-crash":           5,
	"barrier-syncpoint-restart":         5,
	"client-op-dup":                     5,
	"client-op-restart":                 5,
	"coordinator-failover-loss":         5,
	"coordinator-failover-dup":          5,
	"coordinator-failover-crash":        6,
	"coordinator-failover-restart":      5,
	"fast-fail-loss":                    8,
	"fast-fail-dup":                     8,
	"fast-fail-crash":                   6,
	"fast-fail-restart":                 6,
	"sink-error-loss":                   7,
	"sink-error-dup":                    7,
	"sink-error-crash":                  8,
	"stall-loss":                        7,
	"stall-dup":                         7,
	"stall-crash":                       9,
	"stall-restart":                     7,
	"move-crash-loss":                   8,
	"maintainer-move-crash-loss":        7,
	"split-crash-loss":                  7,
	"scale":                             5,
	"maintainer-move-3-nodes":           5,
	"barrier-3-nodes":                   5,
	"barrier-syncpoint-maintainer-move": 7,
	"client-op-coordinator-failover":    6,
	"maintainer-move-fast-fail":         7,
}

// The fault shapes of the pairwise rows: one of each, the smallest budget.
func withLoss(c *Config)    { c.Drops = 1 }
func withDup(c *Config)     { c.Dups = 1 }
func withCrash(c *Config)   { c.Crashes = 1 }
func withRestart(c *Config) { c.Crashes, c.Restarts = 1, 1 }

// faultRows is a feature's four pairwise rows, NAME-loss, -dup, -crash and
// -restart, leaving out the faults already taken by a standard row.
func faultRows(name, feature string, set func(c *Config), skip ...string) []MatrixRow {
	faults := []struct {
		suffix, what string
		f            func(*Config)
	}{
		{"loss", "one lost message", withLoss},
		{"dup", "one duplicated message", withDup},
		{"crash", "a capture's session expiring", withCrash},
		{"restart", "a capture dying and coming back with a fresh identity", withRestart},
	}
	var out []MatrixRow
next:
	for _, f := range faults {
		for _, s := range skip {
			if s == f.suffix {
				continue next
			}
		}
		out = append(out, matrixRow(name+"-"+f.suffix, feature+" with "+f.what, func(c *Config) { set(c); f.f(c) }))
	}
	return out
}

// matrixRows is the matrix, in the order `check --matrix` runs it: the
// standard configurations, then the pairwise rows by feature, then the
// triples.
var matrixRows = func() []MatrixRow {
	rows := []MatrixRow{
		standardRow("default", "a capture may die while the changefeed is created, scheduled and replicating"),
		standardRow("barrier", "syncpoint barrier with one span move and a capture crash"),
		standardRow("barrier-create-syncpoint", "#3799: CREATE TABLE, its rows, then a syncpoint"),
		standardRow("barrier-drop-failover", "DROP TABLE while a capture dies: the dropped table's dispatcher must go"),
		standardRow("barrier-truncate", "TRUNCATE TABLE: no row of the new table written before the DDL"),
		standardRow("barrier-writer-move", "#3974: the writer of a partitioned table's DDL moved after it wrote"),
		standardRow("coordinator-failover", "the owner resigns and a new coordinator bootstraps"),
		standardRow("ddl-failover", "#6202: a DDL-created table, then the maintainer's node dies"),
		standardRow("error-stuck", "two sink errors and a give-up budget of one restart"),
		standardRow("failover-warning", "#921: a coordinator failover while the changefeed is in warning"),
		standardRow("fast-fail", "#5246: an unretryable error with checkpoint progress"),
		standardRow("lifecycle", "pause, resume and remove around a running changefeed"),
		standardRow("lifecycle-drop", "pause, resume and remove with one lost message"),
		standardRow("maintainer-move", "#6283: the coordinator moves the maintainer"),
		standardRow("merge", "#4542: merge of two halves with a capture crash"),
		standardRow("move-failover", "#3411: a span move in flight when the maintainer's node dies"),
		standardRow("new-table", "#5401: a table created by DDL while the changefeed runs"),
		standardRow("regressed-checkpoint", "#5709: no committed checkpoint (before #4548), a crash and a sink error"),
		standardRow("restart", "a capture dies and comes back with a fresh identity"),
		standardRow("sink-error", "the error path: warning, backoff, cascade stop and re-add"),
		standardRow("sink-error-restart", "a sink error's cascade close meets a restarted capture"),
		standardRow("split", "#4077: a split while the scheduler adds absent spans, and a crash"),
		standardRow("stop-failover", "candidate 8: a pause or remove while the maintainer's node dies"),
		standardRow("upstream-outage", "tiflow #9595: the kv client around an all-TiKV outage"),
	}
	moves := func(c *Config) { c.SpanMoves, c.MaxMoves = true, 1 }
	barrier := func(k string, tables int) func(*Config) {
		return func(c *Config) { c.Tables, c.Barrier = tables, k }
	}
	rows = append(rows, faultRows("move", "one span move", moves, "crash")...)
	rows = append(rows, faultRows("split", "one split", func(c *Config) { c.Splits = 1 }, "crash")...)
	rows = append(rows, faultRows("merge", "one merge of pre-split halves", func(c *Config) { c.Merges = 1 }, "crash")...)
	rows = append(rows, faultRows("maintainer-move", "one maintainer move", func(c *Config) { c.MaintMoves = 1 })...)
	rows = append(rows, faultRows("new-table", "a table created by DDL", func(c *Config) { c.Tables, c.DDLTables = 0, 1 }, "crash")...)
	for _, k := range barrierKinds {
		tables := max(k.minTables, 1)
		var skip []string
		if k.name == "drop" {
			skip = []string{"crash"} // the standard barrier-drop-failover
		}
		rows = append(rows, faultRows("barrier-"+k.name, "a "+k.reason+" barrier", barrier(k.name, tables), skip...)...)
	}
	rows = append(rows, faultRows("client-op", "one pause or remove", func(c *Config) { c.ClientOps = 1 }, "loss", "crash")...)
	rows = append(rows, faultRows("coordinator-failover", "one coordinator failover", func(c *Config) { c.CoordFailovers = 1 })...)
	rows = append(rows, faultRows("fast-fail", "one unretryable error", func(c *Config) { c.FastFails = 1 })...)
	rows = append(rows, faultRows("sink-error", "one sink error", func(c *Config) { c.SinkErrors = 1 }, "restart")...)
	rows = append(rows, faultRows("stall", "one upstream stall", func(c *Config) { c.Stalls = 1 })...)
	// Triples where a real bug needed three.
	return append(rows,
		matrixRow("move-crash-loss", "a span move, a crash and a lost message (#3411's shape with a loss)",
			func(c *Config) { moves(c); withCrash(c); withLoss(c) }),
		matrixRow("maintainer-move-crash-loss", "a maintainer move, a crash and a lost message (#6283's shape with a crash)",
			func(c *Config) { c.MaintMoves = 1; withCrash(c); withLoss(c) }),
		matrixRow("split-crash-loss", "a split, a crash and a lost message (#4077's shape with a loss)",
			func(c *Config) { c.Splits = 1; withCrash(c); withLoss(c) }),
		matrixRow("scale", "three nodes, two tables, span moves and a crash (the scale issue's configuration)",
			func(c *Config) { c.Nodes, c.Tables, c.SpanMoves, c.Crashes = 3, 2, true, 1 }),
		// Rows for the mutants of model/ (make mutate-all, SPEC.md 10.1):
		// a third node that dies while the other two keep their roles.
		matrixRow("maintainer-move-3-nodes", "a maintainer move while a third node, neither origin nor target, may die",
			func(c *Config) { c.Nodes, c.MaintMoves, c.Crashes = 3, 1, 1 }),
		matrixRow("barrier-3-nodes", "a syncpoint barrier on three nodes with a crash: the barrier restored from the survivors' reports",
			func(c *Config) { c.Nodes, c.Barrier, c.Crashes = 3, "syncpoint", 1 }),
		// Feature pairs whose off-matrix violations were model artifacts
		// (issue 26's triage, SPEC.md section 7.3): each row keeps its
		// shape searched.
		matrixRow("barrier-syncpoint-maintainer-move", "a maintainer move while a syncpoint waits: the origin's stale bootstrap re-creates its trigger",
			func(c *Config) { c.Barrier, c.MaintMoves = "syncpoint", 1 }),
		matrixRow("client-op-coordinator-failover", "a pause or remove, then a coordinator failover with the old coordinator's Add in flight",
			func(c *Config) { c.ClientOps, c.CoordFailovers = 1, 1 }),
		matrixRow("maintainer-move-fast-fail", "an unretryable error during a maintainer move: the origin's final report fails the changefeed",
			func(c *Config) { c.MaintMoves, c.FastFails = 1, 1 }),
	)
}()

// Matrix returns the rows of the configuration matrix, in the order `cdcspec
// check --matrix` runs them.
func Matrix() []MatrixRow {
	out := make([]MatrixRow, len(matrixRows))
	copy(out, matrixRows)
	return out
}

// MatrixCell is one feature x fault pair of the matrix: the rows that
// cover it, or why none can.
type MatrixCell struct {
	Feature    string   `json:"feature"`
	Fault      string   `json:"fault"`
	Rows       []string `json:"rows,omitempty"`
	Impossible string   `json:"impossible,omitempty"`
}

// MatrixCells lists every feature x fault pair, features in axis order,
// then faults in axis order.
func MatrixCells() []MatrixCell {
	why := map[[2]string]string{}
	for _, p := range matrixImpossible {
		why[[2]string{p.A, p.B}] = p.Reason
		why[[2]string{p.B, p.A}] = p.Reason
	}
	var out []MatrixCell
	for _, f := range matrixFeatures {
		for _, x := range matrixFaults {
			c := MatrixCell{Feature: f.Name, Fault: x.Name, Impossible: why[[2]string{f.Name, x.Name}]}
			for i := range matrixRows {
				if f.In(&matrixRows[i].Config) && x.In(&matrixRows[i].Config) {
					c.Rows = append(c.Rows, matrixRows[i].Name)
				}
			}
			out = append(out, c)
		}
	}
	return out
}

// MatrixGap is a feature x fault pair that no row covers and no
// MatrixImpossible entry explains, or an impossible entry a row covers.
type MatrixGap struct {
	Feature, Fault string
	Covered        bool // covered by a row although listed as impossible
}

func (g MatrixGap) String() string {
	if g.Covered {
		return fmt.Sprintf("%s x %s is listed as impossible but a row covers it", g.Feature, g.Fault)
	}
	return fmt.Sprintf("%s x %s has no row and no impossible entry", g.Feature, g.Fault)
}

// MatrixGaps checks the pairwise coverage of the feature x fault table over
// rows: every pair has a row or an impossible entry, never both.
func MatrixGaps(rows []MatrixRow, impossible []MatrixImpossible) []MatrixGap {
	listed := map[[2]string]bool{}
	for _, p := range impossible {
		listed[[2]string{p.A, p.B}] = true
		listed[[2]string{p.B, p.A}] = true
	}
	var gaps []MatrixGap
	for _, f := range matrixFeatures {
		for _, x := range matrixFaults {
			covered := false
			for i := range rows {
				if f.In(&rows[i].Config) && x.In(&rows[i].Config) {
					covered = true
					break
				}
			}
			if covered == listed[[2]string{f.Name, x.Name}] {
				gaps = append(gaps, MatrixGap{Feature: f.Name, Fault: x.Name, Covered: covered})
			}
		}
	}
	sort.Slice(gaps, func(i, j int) bool {
		if gaps[i].Feature != gaps[j].Feature {
			return gaps[i].Feature < gaps[j].Feature
		}
		return gaps[i].Fault < gaps[j].Fault
	})
	return gaps
}
