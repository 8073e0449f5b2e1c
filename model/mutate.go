package model

import (
	"fmt"
	"strings"

	"cdcspec/spec"
)

// Mutation adequacy (`make mutate`): every guard or fix at the model's
// decision points that cites a TiCDC issue or PR, or implements a rule of
// the protocol reference, can be switched off alone. Each must be caught
// (some named configuration's check exits 1 within the budget) or be
// documented redundant, with the reason, here and in SPEC.md section 10.
// Catalogue entries (spec.Bugs) and features (Feature) are switches of
// their own; a Mutation switches off a guard that has neither.

// Mutation names one guard of the model. The zero value is not a mutation.
type Mutation uint8

// MutSet is a set of guards switched off.
type MutSet uint64

// Has reports whether m is switched off.
func (s MutSet) Has(m Mutation) bool { return s&(1<<m) != 0 }

// With returns s with m switched off.
func (s MutSet) With(m Mutation) MutSet { return s | 1<<m }

// The guards.
const (
	_ Mutation = iota
	MutNeverCommitUnbounded
	MutMissingCaptureHeartbeat
	MutAddHoldsCheckpoint
	MutStartTsClamp
	MutStatusNodeCheck
	MutStatusEpochCheck
	MutAddCheckEpoch
	MutStopCheckEpoch
	MutRemoveEpochCheck
	MutManagerAddReject
	MutBootRespEpochCheck
	MutBootRespMemberCheck
	MutDMBootstrapFence
	MutDMCloseFence
	MutDMAckFence
	MutDMCreateIdempotent
	MutHeartbeatBeforeBootstrap
	MutRemovingNoSchedule
	MutBootstrapOverlapCleanup
	MutNodeRemovedOperators
	MutCoordNodeRemoved
	MutRestartingIgnoresError
	MutCloseWaitsAllAcks
	MutSplitAbortOnOriginRemoved
	MutBootstrapFillsSplitHoles
	MutMoveAddNeedsBootstrapDone
	MutNonCascadeRemoveBeforeBootstrap
	MutMergeAbortOnOriginRemoved
	MutMergeJournalRestore
	MutErrorStuckGiveUp
	mutLimit
)

// MutationKind says what a row of the mutation table switches.
type MutationKind uint8

const (
	MutKindGuard   MutationKind = iota + 1 // a Mutation
	MutKindFeature                         // a Feature switched off
	MutKindBug                             // a catalogue entry switched on
)

// MutationInfo is one row of the mutation table.
type MutationInfo struct {
	Name  string
	Kind  MutationKind
	M     Mutation   // MutKindGuard
	F     Feature    // MutKindFeature
	Bug   spec.BugID // MutKindBug
	Cites string     // TiCDC issue/PR or reference rule
	Where string     // the model's decision point
	// Configs are the standard configurations that catch it, tried in
	// order; empty when Redundant says why nothing can.
	Configs []string
	// Redundant: why no configuration catches it (the rule that makes it
	// so, or the abstraction that hides it).
	Redundant string
	// States: the state budget the row needs when it is above `make
	// mutate`'s default (CDCSPEC_MUTATE_STATES); 0: the default.
	States int
}

var guards = []MutationInfo{
	{Name: "never-commit-unbounded", M: MutNeverCommitUnbounded, Cites: "#4703 (fixed by #4709)", Where: "calculateCheckpoint: a calculation with no bound (MaxUint64) is not committed",
		Redundant: "the calculation always needs the maintainer's own node's watermark, and that node hosts the table trigger, whose checkpoint bounds it; TiCDC's MaxUint64 came from a round where every node's heartbeat had no dispatcher (redo, #4703), which the model's trigger rules out"},
	{Name: "missing-capture-heartbeat", M: MutMissingCaptureHeartbeat, Cites: "A.8 (calculateNewCheckpointTs: \"missing capture heartbeat\")", Where: "calculateCheckpoint: a node with spans and no watermark stops the calculation",
		Redundant: "hidden by the configurations' size: a node with a replicating span and no watermark yet needs a new maintainer that adopts a span on a node other than its own, that is a maintainer failover with a third live node; with two nodes and slot 0 never crashing, every adopted span lives on the new maintainer's own node, whose watermark the calculation always has (a span under an add or move bounds it through its span checkpoint)"},
	{Name: "add-holds-checkpoint", M: MutAddHoldsCheckpoint, Cites: "A.8 (GetMinCheckpointTs over absent, scheduling and operator spans)", Where: "calculateCheckpoint: spans not replicating, or under add/move, bound the checkpoint", Configs: []string{"default"}},
	{Name: "startts-clamp", M: MutStartTsClamp, Cites: "#3846 (fixed by #4548)", Where: "createStartTs: a Create's startTs is clamped to the committed checkpoint",
		Redundant: "no property sees it: without the clamp a rescheduled span starts from its stale span checkpoint, below the committed one, and replays rows the sink already holds; duplicates are allowed, and the reported checkpoint stays the committed one. #3846's harm is a replay of DDLs and redo below the persisted checkpoint, which the model leaves out"},
	{Name: "status-node-check", M: MutStatusNodeCheck, Cites: "A.2 step 3 (\"remote changefeed maintainer nodeID mismatch with local record\")", Where: "coordHandleStatus: a status from a node other than the bound one is ignored",
		Redundant: "status-epoch-check makes it so: the epoch is bumped before every add, so a maintainer on another node than the bound one has another epoch and its status is dropped as stale; the one same-epoch maintainer elsewhere is a removal-only one of a pause or remove, while the changefeed is bound to no node (the mutation keeps the check then)"},
	{Name: "status-epoch-check", M: MutStatusEpochCheck, Cites: "#5434 (\"drop stale maintainer status\")", Where: "coordHandleStatus: a status of another epoch is ignored", Configs: []string{"sink-error", "default"}},
	{Name: "add-check-epoch", M: MutAddCheckEpoch, Cites: "#5435 (AddMaintainerOperator.Check)", Where: "coordHandleStatus: an add finishes only on a status of its epoch", Configs: []string{"sink-error", "default"}},
	{Name: "stop-check-epoch", M: MutStopCheckEpoch, Cites: "#5435 (StopChangefeedOperator.Check)", Where: "coordHandleStatus: a stop finishes only on a non-Working status of its node and epoch", Configs: []string{"sink-error", "lifecycle"}},
	{Name: "remove-epoch-check", M: MutRemoveEpochCheck, Cites: "#5435 (\"drop stale remove maintainer request\")", Where: "managerHandleRemove: a remove of another epoch is dropped", Configs: []string{"sink-error", "lifecycle"}},
	{Name: "manager-add-reject", M: MutManagerAddReject, Cites: "#5435 (handleAddMaintainer: replace only a removed maintainer with a newer epoch)", Where: "managerHandleAdd: an add meets an existing maintainer", Configs: []string{"sink-error", "lifecycle"}},
	{Name: "bootresp-epoch-check", M: MutBootRespEpochCheck, Cites: "#5435 (\"drop stale maintainer response\")", Where: "maintHandleDM: a bootstrap response of another epoch is dropped", Configs: []string{"default", "sink-error"}},
	{Name: "bootresp-member-check", M: MutBootRespMemberCheck, Cites: "A.4 phase 2 (responses only from the bootstrapper's node set)", Where: "maintHandleDM: a response from a node not asked, or gone, is dropped", Configs: []string{"default"}},
	{Name: "dm-bootstrap-fence", M: MutDMBootstrapFence, Cites: "#5436 (\"drop stale maintainer bootstrap request\")", Where: "dmHandleBootstrap: an older owner's bootstrap request is dropped", Configs: []string{"default", "sink-error"}},
	{Name: "dm-close-fence", M: MutDMCloseFence, Cites: "#5436 (close request fence)", Where: "dmHandleClose: an older owner's close request is ACKed and ignored", Configs: []string{"sink-error", "default", "sink-error-restart"}},
	{Name: "dm-ack-fence", M: MutDMAckFence, Cites: "#5436 (heartbeat response fence)", Where: "dmHandleAck: an older owner's ACK is ignored", Configs: []string{"ddl-failover", "new-table"}},
	{Name: "dm-create-idempotent", M: MutDMCreateIdempotent, Cites: "A.9 (a Create of an existing dispatcher is ignored)", Where: "dmHandleSchedule: Create dedup", Configs: []string{"default"}},
	{Name: "heartbeat-before-bootstrap", M: MutHeartbeatBeforeBootstrap, Cites: "A.4 (onHeartbeatRequest: ignored before bootstrap)", Where: "maintHandleDM: watermarks and statuses before the maintainer bootstrapped", Configs: []string{"default", "restart"}},
	{Name: "removing-no-schedule", M: MutRemovingNoSchedule, Cites: "#4827 (fixed by #4828)", Where: "maintHandleDM/handleDispStatus: a removing maintainer neither schedules a new table nor removes unknown dispatchers", Configs: []string{"new-table", "sink-error"}},
	{Name: "bootstrap-overlap-cleanup", M: MutBootstrapOverlapCleanup, Cites: "A.4 phase 3 (an unexpected overlapping dispatcher is removed)", Where: "finishBootstrap: a second dispatcher of a table already adopted", Configs: []string{"move-failover", "default"}},
	{Name: "node-removed-operators", M: MutNodeRemovedOperators, Cites: "C.9 (dispatcher operators' OnNodeRemove)", Where: "maintOnNodeRemoved: operators whose node left", Configs: []string{"default", "move-failover"}},
	{Name: "coord-node-removed", M: MutCoordNodeRemoved, Cites: "C.7 (coordinator OnNodeRemoved: add cancelled, stop re-targeted)", Where: "coordOnNodeRemoved", Configs: []string{"default"}},
	{Name: "error-stuck-give-up", M: MutErrorStuckGiveUp, Cites: "A.2 step 6 (Backoff.HandleError: changefeed-error-stuck-duration)", Where: "handleErrorBudget: a streak that spent the budget fails the changefeed", Configs: []string{"error-stuck"}},
	{Name: "restarting-ignores-error", M: MutRestartingIgnoresError, Cites: "A.2 step 6 (Backoff: isRestarting)", Where: "updateStatus: an error while the restart is under way starts no second restart", Configs: []string{"sink-error"}},
	{Name: "split-abort-on-origin-removed", M: MutSplitAbortOnOriginRemoved, Cites: "operator_split.go OnNodeRemove (the origin left: the split is aborted and PostFinish marks the span absent)", Where: "maintOnNodeRemoved: a split whose origin node left", Configs: []string{"split"}},
	{Name: "bootstrap-fills-split-holes", M: MutBootstrapFillsSplitHoles, Cites: "A.4 phase 3 (the tables of the snapshot not covered by working dispatchers get absent spans: the holes of a split table)", Where: "finishBootstrap: a split table with one half adopted gets the other half absent", Configs: []string{"split"}},
	{Name: "merge-abort-on-origin-removed", M: MutMergeAbortOnOriginRemoved, Cites: "operator_merge.go OnNodeRemove (the origin left: the merge is aborted, PostFinish marks the sources absent and removes the merged span)", Where: "maintOnNodeRemoved: a merge whose origin node left", Configs: []string{"merge"},
		States: 1_000_000}, // the liveness verdict on the depth-15 state comes while level 16 is expanded, past 500,000 states
	{Name: "merge-journal-restore", M: MutMergeJournalRestore, Cites: "#3769 (in-flight merges journaled by the dispatcher manager and restored at bootstrap, #4763)", Where: "finishBootstrap (restoreMerges): a journaled merge is finished or restored instead of adopting its merged and source dispatchers one by one", Configs: []string{"merge"},
		States: 3_500_000}, // caught at depth 19 (a maintainer failover with a merge in flight), after 3.2 M states
	{Name: "close-waits-all-acks", M: MutCloseWaitsAllAcks, Cites: "A.4 (a cascade close is Stopped only when every node ACKed)", Where: "maybeClosed", Configs: []string{"sink-error", "lifecycle"}},
	{Name: "move-add-needs-bootstrap-done", M: MutMoveAddNeedsBootstrapDone, Cites: "#4115 (fixed by #4114: MoveMaintainerOperator.Check needs BootstrapDone)", Where: "coordMoveCheck: the move finishes only on a Working, bootstrapped report of the target with the move's epoch", Configs: []string{"maintainer-move"}},
	{Name: "noncascade-remove-before-bootstrap", M: MutNonCascadeRemoveBeforeBootstrap, Cites: "#4115 (fixed by #4114: a non-cascade remove before bootstrap is ignored)", Where: "managerNonCascadeRemove: a maintainer that has not bootstrapped ignores a move's remove",
		Redundant: "the coordinator moves only a replicating changefeed, and its add finished only on the maintainer's bootstrapped report, so the origin a move's remove reaches has always bootstrapped; TiCDC's #4115 came from a rolling restart's drain moving a maintainer whose bootstrap had not finished after a coordinator failover, which the model's failover (it adopts only reported maintainers, BootstrapDone false) and its configurations do not combine with a move"},
}

// features: each Feature is a fix too.
var featureMutations = []MutationInfo{
	{Name: "feature-epochs", Kind: MutKindFeature, F: FeatEpochs, Cites: "#5434, #5435", Where: "coordinator and manager epoch checks", Configs: []string{"default"}},
	{Name: "feature-dm-fence", Kind: MutKindFeature, F: FeatDMFence, Cites: "#5436", Where: "dispatcher manager owner fence", Configs: []string{"default", "sink-error"}},
	{Name: "feature-committed-checkpoint", Kind: MutKindFeature, F: FeatCommittedCheckpoint, Cites: "#4548", Where: "committed checkpoint and startTs clamp", Configs: []string{"move-failover", "regressed-checkpoint"}},
}

// Mutations is the whole table: guards, features, then every catalogue
// entry the model expresses (caught by its own configuration, `cdcspec
// bugs`).
func Mutations() []MutationInfo {
	var out []MutationInfo
	for _, g := range guards {
		g.Kind = MutKindGuard
		out = append(out, g)
	}
	out = append(out, featureMutations...)
	for _, b := range spec.Bugs() {
		row := MutationInfo{Name: "bug-" + b.Name, Kind: MutKindBug, Bug: b.ID, Cites: b.Issue, Where: b.Where}
		if c := BugConfig(b.Name); c != "" {
			row.Configs = []string{c}
		} else {
			row.Redundant = "the model cannot express it: " + b.ModelGap
		}
		out = append(out, row)
	}
	return out
}

// Apply switches the row's guard, feature or bug in cfg.
func (mi MutationInfo) Apply(cfg *Config) {
	switch mi.Kind {
	case MutKindGuard:
		cfg.Mutations = cfg.Mutations.With(mi.M)
	case MutKindFeature:
		cfg.Features &^= mi.F
	case MutKindBug:
		cfg.Bugs = cfg.Bugs.With(mi.Bug)
	}
}

// ParseMutation returns the guard with that name.
func ParseMutation(name string) (Mutation, error) {
	for _, g := range guards {
		if g.Name == name {
			return g.M, nil
		}
	}
	names := make([]string, len(guards))
	for i, g := range guards {
		names[i] = g.Name
	}
	return 0, fmt.Errorf("unknown mutation %q (known: %s)", name, strings.Join(names, ", "))
}

func (c *Config) mut(m Mutation) bool { return c.Mutations.Has(m) }

// Names lists the guards switched off, in table order.
func (s MutSet) Names() []string {
	var out []string
	for _, g := range guards {
		if s.Has(g.M) {
			out = append(out, g.Name)
		}
	}
	return out
}
