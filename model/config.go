package model

import (
	"fmt"
	"sort"
	"strings"

	"cdcspec/search"
	"cdcspec/spec"
)

// Changefeed is the name of the model's one changefeed.
const Changefeed = "default/cf"

// Feature is a protocol fix that can be switched off to reach an older TiCDC.
type Feature uint16

// Features. Each names the TiCDC PR that introduced it. The catalogued bugs
// (spec.Bugs) are switched separately, by name, in Config.Bugs.
const (
	// FeatEpochs: the maintainer epoch in the coordinator and the manager
	// (#5434, #5435): statuses and operator checks need the current epoch, a
	// remove needs the maintainer's epoch, bootstrap responses are checked,
	// and the manager replaces only a fully stopped maintainer with a newer
	// epoch. Off: the epoch is only in the coordinator's memory and an Add
	// for a changefeed that already has a local maintainer is a silent no-op.
	FeatEpochs Feature = 1 << iota
	// FeatDMFence: dispatcher managers fence control requests by the owner
	// (maintainer node, epoch) (#5436). The Schedule part of the fence is
	// the catalogued bug no-epoch-fencing.
	FeatDMFence
	// FeatCommittedCheckpoint: the maintainer reports a monotonic committed
	// checkpoint and clamps every Create's startTs to it (#4548). Off: the raw
	// watermark is reported and may go down.
	FeatCommittedCheckpoint

	featAll = FeatEpochs | FeatDMFence | FeatCommittedCheckpoint
)

var featureNames = []struct {
	f    Feature
	name string
}{
	{FeatEpochs, "epochs"},
	{FeatDMFence, "dm-fence"},
	{FeatCommittedCheckpoint, "committed-checkpoint"},
}

// FeatureNames lists every feature name.
func FeatureNames() []string {
	out := make([]string, len(featureNames))
	for i, f := range featureNames {
		out[i] = f.name
	}
	return out
}

// ParseFeature returns the feature with that name.
func ParseFeature(name string) (Feature, bool) {
	for _, f := range featureNames {
		if f.name == name {
			return f.f, true
		}
	}
	return 0, false
}

func (f Feature) String() string {
	var parts []string
	for _, n := range featureNames {
		if f&n.f != 0 {
			parts = append(parts, n.name)
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ",")
}

// Config bounds and parameterizes the model. The search's own bounds
// (workers, states, depth, liveness on or off) are search.Bounds.
type Config struct {
	Name string `json:"name"`

	Nodes     int   `json:"nodes"`      // node slots, 2..MaxNodes; slot 0 hosts the coordinator and never crashes
	Tables    int   `json:"tables"`     // tables at changefeed creation, 1..MaxTables
	DDLTables int   `json:"ddl_tables"` // tables a DDL may create while everything runs
	TsMax     uint8 `json:"ts_max"`     // upstream resolved ts range is 1..TsMax

	// Fault budgets.
	Crashes    int `json:"crashes"`     // capture suicides (slots 1..Nodes-1)
	Restarts   int `json:"restarts"`    // restarts of a crashed slot with a fresh identity
	Drops      int `json:"drops"`       // messages lost
	Dups       int `json:"dups"`        // messages delivered twice
	SinkErrors int `json:"sink_errors"` // retryable sink errors
	Stalls     int `json:"stalls"`      // upstream stalls (all TiKV down)
	FastFails  int `json:"fast_fails"`  // unretryable dispatcher errors (fault fast-fail-error)
	// ClientOps: pause, resume and remove requests of a client (API), in all.
	ClientOps int `json:"client_ops"`
	// CoordFailovers: the coordinator's node resigns and a new coordinator
	// bootstraps (lifecycle.go).
	CoordFailovers int `json:"coord_failovers"`
	// MaintMoves: the coordinator moves the maintainer to another node
	// (balance or drain: movemaintainer.go), in all.
	MaintMoves int `json:"maint_moves,omitempty"`
	// ErrorStuckRestarts is the backoff's give-up budget (lifecycle.go
	// handleErrorBudget): restarts per streak of errors without checkpoint
	// progress; 0: the backoff never gives up by budget.
	ErrorStuckRestarts int `json:"error_stuck_restarts,omitempty"`

	SpanMoves bool `json:"span_moves"` // the maintainer may move spans between nodes (balance)
	// Splits bounds the split operators (split.go): each splits a whole
	// replicating span into two halves. Not with a Barrier (the barrier
	// tracks whole tables).
	Splits int `json:"splits,omitempty"`
	// Merges bounds the merge operators (merge.go): each merges the two
	// replicating halves of a table on one node into its whole span. With
	// Merges > 0 the maintainer creates every table's spans pre-split in two
	// halves (AddNewTable with the table split at creation). Not with
	// Splits or a Barrier.
	Merges int `json:"merges,omitempty"`
	// Barrier names the one blocking DDL the upstream may commit (barrier.go,
	// BarrierKinds): "" for none.
	Barrier string `json:"barrier,omitempty"`
	// MaxMoves bounds the balance moves when SpanMoves (0: unbounded).
	MaxMoves int `json:"max_moves,omitempty"`
	// Walks > 0 marks a configuration too big to explore exhaustively in
	// minutes: `cdcspec check` runs Walks seeded random walks of WalkDepth
	// steps instead (unless told --simulate=false), which can find a
	// violation but never prove there is none.
	Walks     int  `json:"walks,omitempty"`
	WalkDepth int  `json:"walk_depth,omitempty"`
	Puller    bool `json:"puller"` // model the upstream kv client (seed 004)
	// DelayBound is the configuration's stated delay bound, part of its
	// definition (docs/reduction.md): 0, the configuration completes
	// unbounded (every schedule); k >= MinStatedDelayBound, `cdcspec check`
	// and the matrix explore every schedule within k delays of the default
	// scheduler, and "complete up to k delays" is the configuration's
	// completion. StatedBounds applies it.
	DelayBound int `json:"stated_delay_bound,omitempty"`

	Features Feature     `json:"-"`
	Bugs     spec.BugSet `json:"-"` // catalogue entries switched on (spec.Bugs)
	// Mutations: guards switched off (mutate.go; `make mutate`).
	Mutations MutSet `json:"-"`
}

// Validate reports the first bound outside the model's fixed layout.
// Bounds of a configuration's fault budgets and upstream ts range
// (Validate; check's flags name them).
const (
	MaxFaultBudget = 7
	MinTs, MaxTs   = 2, 9
)

func (c *Config) Validate() error {
	switch {
	case c.Nodes < 2 || c.Nodes > MaxNodes:
		return fmt.Errorf("config %q: nodes must be 2..%d, got %d", c.Name, MaxNodes, c.Nodes)
	case c.Tables < 0 || c.DDLTables < 0 || c.Tables+c.DDLTables < 1 || c.Tables+c.DDLTables > MaxTables:
		return fmt.Errorf("config %q: tables (%d) + ddl tables (%d) must be 1..%d, none negative", c.Name, c.Tables, c.DDLTables, MaxTables)
	case c.TsMax < MinTs || c.TsMax > MaxTs:
		return fmt.Errorf("config %q: ts range must be %d..%d, got %d", c.Name, MinTs, MaxTs, c.TsMax)
	case c.Crashes < 0 || c.Restarts < 0 || c.Drops < 0 || c.Dups < 0 || c.SinkErrors < 0 || c.Stalls < 0 ||
		c.FastFails < 0 || c.ClientOps < 0 || c.CoordFailovers < 0 || c.MaintMoves < 0:
		return fmt.Errorf("config %q: fault budgets must be >= 0", c.Name)
	case max(c.Crashes, c.Restarts, c.Drops, c.Dups, c.SinkErrors, c.Stalls, c.FastFails, c.ClientOps, c.CoordFailovers, c.MaintMoves) > MaxFaultBudget:
		return fmt.Errorf("config %q: fault budgets must be <= %d", c.Name, MaxFaultBudget)
	case c.ErrorStuckRestarts < 0 || c.ErrorStuckRestarts > 7:
		return fmt.Errorf("config %q: error-stuck restarts must be 0..7, got %d", c.Name, c.ErrorStuckRestarts)
	case c.MaxMoves < 0 || c.MaxMoves > 7:
		return fmt.Errorf("config %q: max moves must be 0..7, got %d", c.Name, c.MaxMoves)
	case c.MaxMoves > 0 && !c.SpanMoves:
		return fmt.Errorf("config %q: max moves (%d) bounds span moves, which are off (moves=false)", c.Name, c.MaxMoves)
	case c.Splits < 0 || c.Splits > MaxTables:
		return fmt.Errorf("config %q: splits must be 0..%d, got %d", c.Name, MaxTables, c.Splits)
	case c.Splits > 0 && c.Barrier != "":
		return fmt.Errorf("config %q: splits and barrier %q cannot be combined (the barrier tracks whole tables)", c.Name, c.Barrier)
	case c.Splits > 0 && c.Tables+c.DDLTables+c.Splits > MaxSpans:
		return fmt.Errorf("config %q: tables (%d) + ddl tables (%d) + splits (%d) must be <= %d span slots", c.Name, c.Tables, c.DDLTables, c.Splits, MaxSpans)
	case c.Merges < 0 || c.Merges > 1:
		return fmt.Errorf("config %q: merges must be 0..1, got %d", c.Name, c.Merges)
	case c.Merges > 0 && (c.Splits > 0 || c.Barrier != ""):
		return fmt.Errorf("config %q: merges cannot be combined with splits or a barrier (the tables start pre-split; the barrier tracks whole tables)", c.Name)
	case c.Merges > 0 && c.Tables+c.DDLTables != 1:
		return fmt.Errorf("config %q: merges need exactly one table (two halves and the merged span fill the %d span slots), got tables (%d) + ddl tables (%d)", c.Name, MaxSpans, c.Tables, c.DDLTables)
	case c.DelayBound != 0 && (c.DelayBound < MinStatedDelayBound || c.DelayBound > search.MaxDelayBound):
		return fmt.Errorf("config %q: stated delay bound must be 0 (unbounded) or %d..%d, got %d", c.Name, MinStatedDelayBound, search.MaxDelayBound, c.DelayBound)
	case c.MaintMoves > 0 && c.ClientOps > 0:
		// A pause or remove during a move stops the origin with the
		// origin's epoch; HEAD's stop then finishes on the origin's Stopped
		// of the move's non-cascade remove, and cdcspec's rule needs the
		// status's cascade-closed flag, which the model's status lacks
		// (catalogue entry remove-during-move-leaks-dispatchers).
		return fmt.Errorf("config %q: maint moves and client ops cannot be combined: the model's status lacks the cascade-closed flag a stop during a move needs", c.Name)
	}
	return validateBarrier(c)
}

// MinStatedDelayBound is the smallest delay bound a configuration may
// state (issue 25): two faults or decisions, each anywhere, or one and a
// reordering.
const MinStatedDelayBound = 2

// StatedBounds returns b with the configuration's stated delay bound: a
// delay-bounded search when DelayBound > 0, b unchanged when it is 0. It is
// the one place the stated bound meets search.Bounds.
func (c *Config) StatedBounds(b search.Bounds) search.Bounds {
	if c.DelayBound > 0 {
		b.DelayBounded, b.DelayBound = true, c.DelayBound
	}
	return b
}

func (c *Config) has(f Feature) bool     { return c.Features&f != 0 }
func (c *Config) bug(id spec.BugID) bool { return c.Bugs.Has(id) }

// String is a one-line summary of the bounds.
func (c *Config) String() string {
	s := fmt.Sprintf("%s: nodes=%d tables=%d ddl=%d ts=1..%d crashes=%d restarts=%d drops=%d dups=%d sink-errors=%d stalls=%d moves=%v puller=%v features=%s",
		c.Name, c.Nodes, c.Tables, c.DDLTables, c.TsMax, c.Crashes, c.Restarts, c.Drops, c.Dups, c.SinkErrors, c.Stalls, c.SpanMoves, c.Puller, c.Features)
	if c.Barrier != "" {
		s += " barrier=" + c.Barrier
	}
	if c.MaxMoves > 0 {
		s += fmt.Sprintf(" max-moves=%d", c.MaxMoves)
	}
	if c.Splits > 0 {
		s += fmt.Sprintf(" splits=%d", c.Splits)
	}
	if c.Merges > 0 {
		s += fmt.Sprintf(" merges=%d", c.Merges)
	}
	if c.FastFails > 0 || c.ClientOps > 0 || c.CoordFailovers > 0 {
		s += fmt.Sprintf(" fast-fails=%d client-ops=%d coord-failovers=%d", c.FastFails, c.ClientOps, c.CoordFailovers)
	}
	if c.MaintMoves > 0 {
		s += fmt.Sprintf(" maint-moves=%d", c.MaintMoves)
	}
	if c.ErrorStuckRestarts > 0 {
		s += fmt.Sprintf(" error-stuck-restarts=%d", c.ErrorStuckRestarts)
	}

	if ms := c.Mutations.Names(); len(ms) > 0 {
		s += " mutations=" + strings.Join(ms, ",")
	}
	if bs := c.Bugs.Names(); len(bs) > 0 {
		s += " bugs=" + strings.Join(bs, ",")
	}
	return s
}

// Base is the shape every standard configuration starts from: HEAD's
// protocol (every feature on, no bug), two nodes, one table.
func Base() Config {
	return Config{
		Name: "base", Nodes: 2, Tables: 1, TsMax: 3,
		Features: featAll,
	}
}

// standard configurations, by name. "default" is what `cdcspec check` runs;
// the others are the smallest shapes that expose one catalogued bug each.
var standard = map[string]func() Config{
	// A capture may die at any point while the changefeed is created,
	// bootstrapped, scheduled and replicating.
	"default": func() Config {
		c := Base()
		c.Name = "default"
		c.TsMax, c.Crashes = 2, 1
		return c
	},
	// #5709: a node dies, its span is rescheduled from a stale checkpoint,
	// the raw watermark (no committed checkpoint, before #4548) falls below
	// the stored checkpoint, and a sink error arrives.
	"regressed-checkpoint": func() Config {
		c := Base()
		c.Name = "regressed-checkpoint"
		c.DelayBound = 9 // its catalogued bug needs 9 delays
		c.TsMax, c.Crashes, c.SinkErrors = 2, 1, 1
		c.Features &^= FeatCommittedCheckpoint
		return c
	},
	// #6202: a table created by DDL gets its dispatcher, then the maintainer
	// node dies before the trigger's NONE status is ACKed.
	"ddl-failover": func() Config {
		c := Base()
		c.Name = "ddl-failover"
		c.DelayBound = 11
		c.Tables, c.DDLTables, c.TsMax, c.Crashes = 0, 1, 2, 1
		return c
	},
	// #5401: a table created by DDL while the changefeed runs.
	"new-table": func() Config {
		c := Base()
		c.Name = "new-table"
		c.DelayBound = 8
		c.Tables, c.DDLTables, c.TsMax = 0, 1, 3
		return c
	},
	// #3411: a span move in flight when the maintainer node dies.
	"move-failover": func() Config {
		c := Base()
		c.Name = "move-failover"
		c.DelayBound = 8
		c.TsMax, c.Crashes, c.SpanMoves = 2, 1, true
		return c
	},
	// tiflow #9595: the upstream kv client around an all-TiKV outage.
	"upstream-outage": func() Config {
		c := Base()
		c.Name = "upstream-outage"
		c.DelayBound = 6
		c.TsMax, c.Stalls, c.Puller = 2, 1, true
		return c
	},
	// The blocking DDL barrier (barrier.go): a syncpoint (an all-influence
	// barrier: the table trigger and t1) while t1 may move once and a capture
	// may die.
	"barrier": func() Config {
		c := Base()
		c.Name = "barrier"
		c.DelayBound = 8
		c.Tables, c.TsMax, c.Crashes, c.SpanMoves, c.MaxMoves, c.Barrier = 1, 2, 1, true, 1, "syncpoint"
		return c
	},
	// A capture dies and comes back with a fresh identity while the
	// changefeed runs: the maintainer bootstraps the new node, late messages
	// of the old incarnation still arrive. Random walks (Config.Walks): the
	// exhaustive search passes 4,000,000 states at depth 24 without an end.
	"restart": func() Config {
		c := Base()
		c.Name = "restart"
		c.DelayBound = 8
		c.TsMax, c.Crashes, c.Restarts = 2, 1, 1
		c.Walks, c.WalkDepth = 30000, 100
		return c
	},
	// restart with a sink error: the warning's cascade close meets a node
	// that died and came back.
	"sink-error-restart": func() Config {
		c := Base()
		c.Name = "sink-error-restart"
		c.DelayBound = 7
		c.TsMax, c.Crashes, c.Restarts, c.SinkErrors = 2, 1, 1, 1
		c.Walks, c.WalkDepth = 30000, 100
		return c
	},
	// #3974: the writer of a partitioned table's DDL is moved after it wrote.
	"barrier-writer-move": func() Config {
		c := Base()
		c.Name = "barrier-writer-move"
		c.DelayBound = 7
		c.Tables, c.TsMax, c.SpanMoves, c.MaxMoves, c.Barrier = 2, 2, true, 1, "normal"
		c.Walks, c.WalkDepth = 20000, 120 // two tables: millions of states by depth 18
		return c
	},
	// A TRUNCATE TABLE: table 1 is dropped and its new ID, table 2, is
	// created by the DDL; no row of table 2 may reach the sink before the
	// DDL is written (ddl-ordered-with-rows). Random walks: the exhaustive
	// search does not reach a created table's rows above the DDL within
	// 300,000 states.
	"barrier-truncate": func() Config {
		c := Base()
		c.Name = "barrier-truncate"
		c.DelayBound = 9
		c.Tables, c.TsMax, c.Barrier = 1, 3, "truncate"
		c.Walks, c.WalkDepth = 20000, 80
		return c
	},
	// A DROP TABLE while a capture may die: the dropped table's dispatcher
	// must go across a maintainer failover (restored-barrier-table-writer).
	"barrier-drop-failover": func() Config {
		c := Base()
		c.Name = "barrier-drop-failover"
		c.DelayBound = 9
		c.Tables, c.TsMax, c.Crashes, c.Barrier = 1, 2, 1, "drop"
		return c
	},
	// #3799: a CREATE TABLE, rows of the new table, then a syncpoint.
	"barrier-create-syncpoint": func() Config {
		c := Base()
		c.Name = "barrier-create-syncpoint"
		c.DelayBound = 7
		c.Tables, c.DDLTables, c.TsMax, c.Barrier = 0, 1, 4, "syncpoint"
		return c
	},
	// #5246: an unretryable error reaches the coordinator with checkpoint
	// progress.
	"fast-fail": func() Config {
		c := Base()
		c.Name = "fast-fail"
		c.DelayBound = 10
		c.TsMax, c.FastFails = 2, 1
		return c
	},
	// Pause, resume (keeping or overwriting the checkpoint) and remove as
	// client requests around a running changefeed.
	"lifecycle": func() Config {
		c := Base()
		c.Name = "lifecycle"
		c.DelayBound = 7
		c.TsMax, c.ClientOps = 2, 2
		return c
	},
	// lifecycle with one message lost (the message center may drop any,
	// SPEC.md section 8): a lost MaintainerCloseRequest must be re-sent
	// until every node ACKed, or a paused changefeed keeps dispatchers
	// (stop-closes-dispatchers; mutation close-waits-all-acks).
	"lifecycle-drop": func() Config {
		c := Base()
		c.Name = "lifecycle-drop"
		c.DelayBound = 6
		c.TsMax, c.ClientOps, c.Drops = 2, 2, 1
		return c
	},
	// A coordinator failover (the owner resigns) around a running
	// changefeed: the new coordinator's bootstrap over messages, and the
	// managers' coordinator identity (lifecycle.go). Clean with every fix
	// on (16.8 M states, about 12 min on 2 loaded cores).
	"coordinator-failover": func() Config {
		c := Base()
		c.Name = "coordinator-failover"
		c.DelayBound = 9
		c.TsMax, c.CoordFailovers = 2, 1
		return c
	},
	// Candidate 8 (docs/findings/pause-while-maintainer-node-dies.md): a
	// pause or remove while the maintainer's node dies; the stop is
	// re-targeted to the coordinator's node and its close must reach every
	// manager (stop-close-dropped-after-failover).
	"stop-failover": func() Config {
		c := Base()
		c.Name = "stop-failover"
		c.DelayBound = 6
		c.TsMax, c.ClientOps, c.Crashes = 2, 1, 1
		return c
	},
	// #6283: the coordinator moves the maintainer (balance) while the
	// changefeed replicates.
	"maintainer-move": func() Config {
		c := Base()
		c.Name = "maintainer-move"
		c.DelayBound = 7
		c.TsMax, c.MaintMoves = 2, 1
		return c
	},
	// #921: a coordinator failover while the changefeed is in warning.
	"failover-warning": func() Config {
		c := Base()
		c.Name = "failover-warning"
		c.DelayBound = 9
		c.TsMax, c.SinkErrors, c.CoordFailovers = 2, 1, 1
		return c
	},
	// error-stuck-fails: two sink errors and a budget of one restart; the
	// second error of a streak without checkpoint progress fails the
	// changefeed. Random walks: two error paths are too deep for the
	// breadth-first search.
	"error-stuck": func() Config {
		c := Base()
		c.Name = "error-stuck"
		c.DelayBound = 11
		c.TsMax, c.SinkErrors, c.ErrorStuckRestarts = 2, 2, 1
		c.Walks, c.WalkDepth = 30000, 100
		return c
	},
	// #4077: a replicating span is split (with or without target nodes,
	// aligned with the split result or not) while the basic scheduler adds
	// absent spans, and a capture may die.
	"split": func() Config {
		c := Base()
		c.Name = "split"
		c.DelayBound = 7
		c.TsMax, c.Splits, c.Crashes = 2, 1, 1
		return c
	},
	// #4542: the table starts pre-split in two halves; the maintainer may
	// merge them when both replicate on one node (occupy operators,
	// MergeDispatcherRequest, the merge journal), and a capture may die
	// (the merge's origin, or the maintainer's node: the merge is restored
	// from the journal at bootstrap).
	"merge": func() Config {
		c := Base()
		c.Name = "merge"
		c.DelayBound = 6
		c.TsMax, c.Merges, c.Crashes = 2, 1, 1
		return c
	},
	// The error path end to end: a sink error, warning, backoff, cascade
	// stop and re-add (bigger; not part of the quick test suite).
	"sink-error": func() Config {
		c := Base()
		c.Name = "sink-error"
		c.DelayBound = 9
		c.TsMax, c.SinkErrors = 2, 1
		return c
	},
}

// Standard returns a standard configuration by name.
func Standard(name string) (Config, bool) {
	f, ok := standard[name]
	if !ok {
		return Config{}, false
	}
	return f(), true
}

// StandardNames lists the standard configurations, "default" first.
func StandardNames() []string {
	var out []string
	for n := range standard {
		if n != "default" {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return append([]string{"default"}, out...)
}

// bugConfig is the standard configuration that exposes each catalogue entry
// the model expresses; entries not listed are exposed by "default".
var bugConfig = map[spec.BugID]string{
	spec.BugRegressedCheckpointDropsError:    "regressed-checkpoint",
	spec.BugRestoredCreateIgnoredForNewTable: "ddl-failover",
	spec.BugTriggerPassesAddTableDDL:         "new-table",
	spec.BugInflightOperatorsLostOnFailover:  "move-failover",
	spec.BugRemoveOperatorPassesCheckpoint:   "move-failover",
	spec.BugStuckAfterUpstreamFailure:        "upstream-outage",
	spec.BugToggleKeepsBaseline:              "sink-error",
	spec.BugWriterNotPassedAfterMove:         "barrier-writer-move",
	spec.BugDBDDLBeforeTableDDLsAcked:        "barrier-create-syncpoint",
	spec.BugFastFailIgnoredWithProgress:      "fast-fail",
	spec.BugFailoverLosesRetrying:            "failover-warning",
	spec.BugSplitDoubleAdd:                   "split",
	spec.BugMergeOccupyFinishesEarly:         "merge",
	spec.BugMoveFinalStoppedRejected:         "maintainer-move",
	spec.BugStopCloseDroppedAfterFailover:    "stop-failover",
	spec.BugRestoredBarrierTableWriter:       "barrier-drop-failover",
	spec.BugNewTableScheduledAtSelection:     "barrier-truncate",
	spec.BugStopReplacesPendingStop:          "lifecycle",
}

// BugConfig names the standard configuration that exposes a catalogue entry,
// or "" when the model cannot express it (its spec.Bug.ModelGap says why).
func BugConfig(name string) string {
	b, ok := spec.LookupBug(name)
	if !ok || b.ModelGap != "" {
		return ""
	}
	if c, ok := bugConfig[b.ID]; ok {
		return c
	}
	return "default"
}

// CheckBugCatalogue verifies that every catalogue entry is either exposed by
// a standard configuration or names the model feature it is waiting for.
func CheckBugCatalogue() error {
	for _, b := range spec.Bugs() {
		c := BugConfig(b.Name)
		switch {
		case b.ModelGap != "":
		case c == "":
			return fmt.Errorf("catalogue entry %q has no model configuration and no ModelGap", b.Name)
		default:
			if _, ok := Standard(c); !ok {
				return fmt.Errorf("catalogue entry %q: configuration %q is not standard", b.Name, c)
			}
		}
	}
	return nil
}
