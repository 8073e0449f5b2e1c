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
	MutStopClearsNode
	MutStatusBootstrapDone
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
	{Name: "status-epoch-check", M: MutStatusEpochCheck, Cites: "#5434 (\"drop stale maintainer status\")", Where: "coordHandleStatus: a status of another epoch is ignored", Configs: []string{"sink-error", "maintainer-move"},
		Redundant: "restarting-ignores-error and the operators' own checks make it harmless: the stale statuses it drops in the configurations are the previous generation's reports during a restart or a move; accepted, their checkpoint is one that generation committed (UpdateStatus never lowers the stored one), their BootstrapDone flip only reports normal, and their error arrives while the restart is under way and is ignored; with both guards off the error starts a second, redundant restart, which no property forbids"},
	{Name: "add-check-epoch", M: MutAddCheckEpoch, Cites: "#5435 (AddMaintainerOperator.Check)", Where: "coordHandleStatus: an add finishes only on a status of its epoch",
		Redundant: "unreachable: an add starts only when no operator runs and the changefeed is absent, so the previous maintainer on any live node was stopped (a stop finishes on its Stopped report, and a node's statuses arrive in order) and the manager rejects an add while a maintainer runs; so no Working report of another epoch comes from the add's node. A coordinator failover does not make one either: an old coordinator's late AddMaintainerRequest is either handled before the node answers the new coordinator's bootstrap (and its maintainer is in the answer) or ignored (\"ignore invalid coordinator id\", managerFromCoordinator); coordinator-failover --liveness=false --mutate add-check-epoch finds nothing in 8.2 M states"},
	{Name: "stop-check-epoch", M: MutStopCheckEpoch, Cites: "#5435 (StopChangefeedOperator.Check)", Where: "coordHandleStatus: a stop finishes only on a non-Working status of its node and epoch", Configs: []string{"lifecycle", "lifecycle-drop"},
		Redundant: "what it lets through is harmless: the non-Working reports of another node or epoch that reach a stop are an already closed maintainer's (the paused one, still reporting Stopped until cleanup, while a remove's stop runs at the coordinator's node; a move's origin, closed by the non-cascade remove, while a restart during the move stops (origin, move epoch)); finishing the stop early only ends the coordinator's re-sends: its RemoveMaintainerRequest is already on the coordinator's ordered channel, ahead of any later request to that node, and what it would close was closed by the earlier stop or is adopted by the next add's bootstrap"},
	{Name: "remove-epoch-check", M: MutRemoveEpochCheck, Cites: "#5435 (\"drop stale remove maintainer request\")", Where: "managerHandleRemove: a remove of another epoch is dropped",
		Redundant: "the maintainer it protects ignores the remove anyway: the only removes of another epoch that reach an existing maintainer in the configurations meet one that is already removing (a move's origin, closed by the move's non-cascade remove, gets the cascade remove of a restart during the move, with the move's epoch), and a removing maintainer ignores every remove; a live maintainer gets removes only with its own epoch, since the coordinator sends a remove with the epoch of the maintainer it stops (the operator's, the bound one's or a reported one's)"},
	{Name: "manager-add-reject", M: MutManagerAddReject, Cites: "#5435 (handleAddMaintainer: replace only a removed maintainer with a newer epoch)", Where: "managerHandleAdd: an add meets an existing maintainer", Configs: []string{"sink-error", "lifecycle"}},
	{Name: "bootresp-epoch-check", M: MutBootRespEpochCheck, Cites: "#5435 (\"drop stale maintainer response\")", Where: "maintHandleDM: a bootstrap response of another epoch is dropped",
		Redundant: "never reached (SPEC.md section 10, probe): a response carries the epoch of the request, so a stale one needs a maintainer of another epoch on the same node that asked the same manager before; a node's maintainer is replaced only once removed, that is after every member ACKed its close, and the manager's close response travels the same ordered channel behind its bootstrap response, so the old response was delivered (to the old maintainer) first; a crashed manager's late response is dropped by bootresp-member-check"},
	{Name: "bootresp-member-check", M: MutBootRespMemberCheck, Cites: "A.4 phase 2 (responses only from the bootstrapper's node set)", Where: "maintHandleDM: a response from a node not asked, or gone, is dropped", Configs: []string{"default"}},
	{Name: "dm-bootstrap-fence", M: MutDMBootstrapFence, Cites: "#5436 (\"drop stale maintainer bootstrap request\")", Where: "dmHandleBootstrap: an older owner's bootstrap request is dropped", Configs: []string{"restart", "default", "sink-error"}},
	{Name: "dm-close-fence", M: MutDMCloseFence, Cites: "#5436 (close request fence)", Where: "dmHandleClose: an older owner's close request is ACKed and ignored", Configs: []string{"sink-error", "default", "sink-error-restart"}},
	{Name: "dm-ack-fence", M: MutDMAckFence, Cites: "#5436 (heartbeat response fence)", Where: "dmHandleAck: an older owner's ACK is ignored",
		Redundant: "not reached within the configurations (SPEC.md section 10, probe): an ACK goes to the maintainer's own node, where the table trigger lives, so the fence matters only for an ACK of the same DDL commitTs that outlives a whole cascade close, re-add and bootstrap on that node and lands after the new trigger reported NONE again; there it would let the trigger pass the DDL before the new maintainer adds the table (#5402's harm). No configuration within the budget reaches it: new-table with a sink error, a duplicate or two client operations, 30,000 to 50,000 walks each, never does"},
	{Name: "dm-create-idempotent", M: MutDMCreateIdempotent, Cites: "A.9 (a Create of an existing dispatcher is ignored)", Where: "dmHandleSchedule: Create dedup", Configs: []string{"default"}},
	{Name: "heartbeat-before-bootstrap", M: MutHeartbeatBeforeBootstrap, Cites: "A.4 (onHeartbeatRequest: ignored before bootstrap)", Where: "maintHandleDM: watermarks and statuses before the maintainer bootstrapped", Configs: []string{"default", "restart"}},
	{Name: "removing-no-schedule", M: MutRemovingNoSchedule, Cites: "#4827 (fixed by #4828)", Where: "maintHandleDM/handleDispStatus: a removing maintainer neither schedules a new table nor removes unknown dispatchers",
		Redundant: "hidden by the model's removing maintainer: it reaches the guard (a NONE status or an unknown Working dispatcher during a cascade close) but never calculates or reports a checkpoint again and runs no scheduler (no schedule action while Removing), so the span it adds is never created; its ACK and its Remove go to managers it is closing itself (or that a newer owner fences). #4827's harm, dispatchers created by a removing maintainer, needs the scheduler the model stops"},
	{Name: "bootstrap-overlap-cleanup", M: MutBootstrapOverlapCleanup, Cites: "A.4 phase 3 (an unexpected overlapping dispatcher is removed)", Where: "finishBootstrap: a second dispatcher of a table already adopted",
		Redundant: "never reached (SPEC.md section 10, probe): a span has at most one live dispatcher at any moment (a move creates the destination only after the origin reported Stopped), so two snapshots overlap only if a dispatcher moved between them by the previous generation's Create; the new maintainer exists only after the previous one stopped (its node died, its cascade close finished, or a move removed it), so every snapshot postdates the origin's close, and a late Create meets a closed manager or the new owner's fence"},
	{Name: "node-removed-operators", M: MutNodeRemovedOperators, Cites: "C.9 (dispatcher operators' OnNodeRemove)", Where: "maintOnNodeRemoved: operators whose node left", Configs: []string{"default", "move-failover"}},
	{Name: "coord-node-removed", M: MutCoordNodeRemoved, Cites: "C.7 (coordinator OnNodeRemoved: add cancelled, stop re-targeted)", Where: "coordOnNodeRemoved", Configs: []string{"default"}},
	{Name: "stop-clears-node", M: MutStopClearsNode, Cites: "C.2 step 3 (StopByChangefeedID clears the node: changefeed_db.go:129; validateMaintainerNode then drops the stopped maintainer's statuses)", Where: "stopChangefeed: a stopped changefeed is bound to no node", Configs: []string{"lifecycle"}},
	{Name: "status-bootstrap-done", M: MutStatusBootstrapDone, Cites: "#3952 (fixed by #3976: AddMaintainerOperator.Check waits for BootstrapDone, operator_add.go:74-77; the maintainer reports it, maintainer.go:397)", Where: "maintTick: a bootstrapped maintainer's status says BootstrapDone", Configs: []string{"default"}},
	{Name: "error-stuck-give-up", M: MutErrorStuckGiveUp, Cites: "A.2 step 6 (Backoff.HandleError: changefeed-error-stuck-duration)", Where: "handleErrorBudget: a streak that spent the budget fails the changefeed", Configs: []string{"error-stuck"}},
	{Name: "restarting-ignores-error", M: MutRestartingIgnoresError, Cites: "A.2 step 6 (Backoff: isRestarting)", Where: "updateStatus: an error while the restart is under way starts no second restart",
		Redundant: "status-epoch-check and the node check make it unreachable: a restart bumps the epoch and unbinds the changefeed, so every report of the old generation is dropped before UpdateStatus; the new maintainer takes errors only once bootstrapped, and its first bootstrapped report finishes the add (StartFinished clears restarting) before UpdateStatus runs; a pause unbinds it too, and resume and a coordinator failover clear it"},
	{Name: "split-abort-on-origin-removed", M: MutSplitAbortOnOriginRemoved, Cites: "operator_split.go OnNodeRemove (the origin left: the split is aborted and PostFinish marks the span absent)", Where: "maintOnNodeRemoved: a split whose origin node left", Configs: []string{"split"}},
	{Name: "bootstrap-fills-split-holes", M: MutBootstrapFillsSplitHoles, Cites: "A.4 phase 3 (the tables of the snapshot not covered by working dispatchers get absent spans: the holes of a split table)", Where: "finishBootstrap: a split table with one half adopted gets the other half absent", Configs: []string{"split"}},
	{Name: "merge-abort-on-origin-removed", M: MutMergeAbortOnOriginRemoved, Cites: "operator_merge.go OnNodeRemove (the origin left: the merge is aborted, PostFinish marks the sources absent and removes the merged span)", Where: "maintOnNodeRemoved: a merge whose origin node left", Configs: []string{"merge"},
		States: 1_000_000}, // the liveness verdict on the depth-15 state comes while level 16 is expanded, past 500,000 states
	{Name: "merge-journal-restore", M: MutMergeJournalRestore, Cites: "#3769 (in-flight merges journaled by the dispatcher manager and restored at bootstrap, #4763)", Where: "finishBootstrap (restoreMerges): a journaled merge is finished or restored instead of adopting its merged and source dispatchers one by one", Configs: []string{"merge"},
		States: 3_500_000}, // caught at depth 19 (a maintainer failover with a merge in flight), after 3.2 M states
	{Name: "close-waits-all-acks", M: MutCloseWaitsAllAcks, Cites: "A.4 (a cascade close is Stopped only when every node ACKed)", Where: "maybeClosed", Configs: []string{"lifecycle-drop"}},
	{Name: "move-add-needs-bootstrap-done", M: MutMoveAddNeedsBootstrapDone, Cites: "#4115 (fixed by #4114: MoveMaintainerOperator.Check needs BootstrapDone)", Where: "coordMoveCheck: the move finishes only on a Working, bootstrapped report of the target with the move's epoch", Configs: []string{"maintainer-move"}},
	{Name: "noncascade-remove-before-bootstrap", M: MutNonCascadeRemoveBeforeBootstrap, Cites: "#4115 (fixed by #4114: a non-cascade remove before bootstrap is ignored)", Where: "managerNonCascadeRemove: a maintainer that has not bootstrapped ignores a move's remove",
		Redundant: "the coordinator moves only a replicating changefeed, and its add finished only on the maintainer's bootstrapped report, so the origin a move's remove reaches has always bootstrapped; TiCDC's #4115 came from a rolling restart's drain moving a maintainer whose bootstrap had not finished after a coordinator failover, which the model's failover (it adopts only reported maintainers, BootstrapDone false) and its configurations do not combine with a move"},
}

// features: each Feature is a fix too.
var featureMutations = []MutationInfo{
	{Name: "feature-epochs", Kind: MutKindFeature, F: FeatEpochs, Cites: "#5434, #5435", Where: "coordinator and manager epoch checks", Configs: []string{"default"}},
	{Name: "feature-dm-fence", Kind: MutKindFeature, F: FeatDMFence, Cites: "#5436", Where: "dispatcher manager owner fence", Configs: []string{"default", "sink-error"}},
	{Name: "feature-committed-checkpoint", Kind: MutKindFeature, F: FeatCommittedCheckpoint, Cites: "#4548", Where: "committed checkpoint and startTs clamp", Configs: []string{"split"},
		Redundant: "#5779's rule and at-least-once make it harmless where the configurations reach it: a raw watermark below the committed checkpoint is reported, and UpdateStatus continues at the stored checkpoint (the regressed report's error still reaches the backoff); an unclamped Create replays rows the sink holds (startts-clamp's reason). The one consumer that would store a lower report, a new coordinator adopting a maintainer's checkpoint, needs a coordinator failover (those configurations hold since the coordinator has an identity; the feature switched off there is not checked yet); regressed-checkpoint runs with the feature off and finds #5709 only with the catalogue entry on"},
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
