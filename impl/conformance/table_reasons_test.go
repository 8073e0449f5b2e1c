package conformance

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// implementedFeature is a feature impl/ has: where it lives (a file of this
// repository and a declaration in it, so the entry goes stale with the
// code), and phrases by which an n/a reason would call it missing.
type implementedFeature struct {
	name    string
	file    string // relative to this package
	decl    string // a declaration the file must contain
	phrases []string
}

// implementedFeatures is the list TestNotApplicableReasonsAreCurrent
// checks TABLE.md's n/a reasons against: an n/a row may not give the
// absence of one of these as its reason.
var implementedFeatures = []implementedFeature{
	{
		name: "the blocking DDL barrier (WAITING/WRITING/DONE, Write/Pass, syncpoints, DB/All influence)",
		file: "../maintainer/barrier.go", decl: "func (b *Barrier) HandleStatus(",
		phrases: []string{"blocking ddl barrier (waiting/writing/done", "barrier events of blocking ddls are not implemented",
			"impl has only the non-blocking create table path", "the blocking ddl barrier is not implemented"},
	},
	{
		name: "DROP/TRUNCATE-driven span removal (RemoveTasksByTableIDs, removeReplicaSet)",
		file: "../maintainer/operator_controller.go", decl: "func (oc *OperatorController) removeReplicaSet(",
		phrases: []string{"no drop/truncate barrier", "no operator task is removed from outside", "no drop table barrier",
			"removereplicaset (the barrier replacing an operator by a remove for a dropped table) is not implemented"},
	},
	{
		name: "operator finalisation at the operator controller's next poll (Check and PostFinish in separate steps)",
		file: "../maintainer/operator_controller.go", decl: "func (oc *OperatorController) finalizeOperator(",
		phrases: []string{"post-finishes an operator in the same handler call", "simply stops polling while removing"},
	},
	{
		name: "merge (merge and occupy operators, journal restore)",
		file: "../maintainer/operator_merge.go", decl: "type MergeDispatcherOperator struct",
		phrases: []string{"merge is not implemented", "merge operators are not implemented", "merging is not implemented"},
	},
	{
		name: "split (split operator, ReplaceReplicaSet)",
		file: "../maintainer/operator_controller.go", decl: "type SplitDispatcherOperator struct",
		phrases: []string{"split is not implemented", "split operators are not implemented"},
	},
	{
		name: "a split into the parts its caller gives, covering the span or not, with or without the scheduler's callback (Maintainer.SplitSpan)",
		file: "../maintainer/maintainer_controller.go", decl: "func (m *Maintainer) SplitSpan(id core.DispatcherID, parts []spec.Span,",
		phrases: []string{"cuts a span at keys", "parts always cover the span", "parts have no impl counterpart"},
	},
	{
		name: "the coordinator's ChangefeedDB with HEAD's API (add/stop/bind/mark, GetAbsent, GetWaitingSchedulingChangefeeds)",
		file: "../coordinator/changefeed_db.go", decl: "func (db *ChangefeedDB) GetWaitingSchedulingChangefeeds(",
		phrases: []string{"changefeeddb is internal", "changefeeddb bookkeeping accessor"},
	},
	{
		name: "the coordinator's basic and balance schedulers",
		file: "../coordinator/controller.go", decl: "func (c *Coordinator) balanceSchedule(",
		phrases: []string{"cover scheduling", "balance scheduler is not implemented"},
	},
	{
		name: "barrier ACKs and IgnoredBlockStatus (one HeartBeatResponse per BlockStatusRequest)",
		file: "../maintainer/maintainer_controller.go", decl: "func (m *Maintainer) onBlockStatusRequest(",
		phrases: []string{"ignoredblockstatus is not implemented", "the barrier does not ack", "no ack of waiting",
			"temporary ignore is not implemented"},
	},
	{
		name: "a Create's start ts from the span's DDL block state (blockTs-1, SkipDMLAsStartTs, stale barrier)",
		file: "../maintainer/maintainer.go", decl: "SkipDMLAsStartTs: skipDML",
		phrases: []string{"does not consult the span's block state", "skipdmlasstartts is not implemented",
			"block-ts rules of replication_span.go"},
	},
	{
		name: "non-blocking statuses from any replicating dispatcher (drop, then add)",
		file: "../maintainer/barrier.go", decl: "func (b *Barrier) scheduleNonBlocking(",
		phrases: []string{"only the trigger's none status", "non-blocking drops are not implemented"},
	},
	{
		name: "the barrier's pending schedule queue (pendingScheduleEventMap: table changes in commit-ts order, DB/All deferral)",
		file: "../maintainer/barrier.go", decl: "func (b *Barrier) popIfHead(",
		phrases: []string{"pending schedule queue (pendingschedule", "pendingscheduleeventmap is not implemented",
			"the pending schedule queue is not implemented"},
	},
	{
		name: "the fan-out Pass quiet interval (fanoutPassResendQuietInterval)",
		file: "../maintainer/barrier.go", decl: "const fanoutPassResendQuietMs",
		phrases: []string{"quiet interval (fanoutpassresendquietinterval", "the fan-out pass quiet interval is not implemented"},
	},
	{
		name: "the orchestrator's pending-message queue (one queued bootstrap/close request per changefeed and type, epoch and removed upgrades)",
		file: "../dispatcher/dispatcher_orchestrator.go", decl: "func (o *Orchestrator) tryEnqueue(",
		phrases: []string{"pending-message queue (coalescing", "pending message queue is not implemented",
			"handles each message in arrival order"},
	},
	{
		name: "a closed write path refusing the bootstrap's table trigger (no response)",
		file: "../dispatcher/dispatcher_manager.go", decl: "if dm.writePathClosed {",
		phrases: []string{"impl's trigger initialization cannot fail"},
	},
	{
		name: "the maintainer's block-status de-duplication on its event queue (filterBlockStatusEvent; impl/sim's delivery gates with it)",
		file: "../maintainer/block_status_dedupe.go", decl: "func (s *BlockStatusPendingSet) Filter(",
		phrases: []string{"block-status deduplication queue of the blocking barrier is not implemented"},
	},
	{
		name: "the dispatcher manager's block-status sending queue (BlockStatusRequestQueue: WAITING/DONE de-duplication while queued or in flight)",
		file: "../dispatcher/heartbeat_queue.go", decl: "func (q *BlockStatusRequestQueue) Enqueue(",
		phrases: []string{"blockstatusrequestqueue (a request equal", "the dm side also dedupes", "sending queue's de-duplication is not implemented"},
	},
	{
		name: "the span controller's API for its unit tests (add, bind, mark, UpdateStatus, replace, RemoveByTableIDs, the non-replicating minimum, lookups by ID and table)",
		file: "../maintainer/conformance_access.go", decl: "func NewSpanControllerForConformance(",
		phrases: []string{"impl's span controller is internal", "span-controller bookkeeping (task indexes by id/table"},
	},
	{
		name: "HEAD's operator-test environment (setupTestEnvironment: the trigger on node-a, controllers that outlive node-a; hand-made replica sets and operators)",
		file: "../maintainer/conformance_access.go", decl: "func NewTestEnvironmentForConformance(",
		phrases: []string{"a maintainer does not outlive its node", "makes add operators only from its scheduler",
			"no impl input yields an absent [a,b)"},
	},
	{
		name: "schema IDs on spans and the span controller's schema index (GetTasksBySchemaID, GetTaskSizeBySchemaID, UpdateSchemaID, RemoveBySchemaID)",
		file: "../maintainer/span_controller.go", decl: "func (sc *SpanController) UpdateSchemaID(",
		phrases: []string{"schema ids are not modelled", "impl's spans carry no schema id", "has no schema index", "impl has no schema ids"},
	},
	{
		name: "schema-scoped block statuses (a DB event's schema, drop by schema, UpdatedSchemas)",
		file: "../maintainer/barrier.go", decl: "m.ops.RemoveTasksBySchemaID(",
		phrases: []string{"schema-scoped block statuses are not implemented", "a db-influence event covers every table"},
	},
	{
		name: "the barrier's range checker objects (rangechecker: key-range and table-count checkers, AddSubRange, IsFullyCovered, Reset, Detail)",
		file: "../maintainer/rangechecker/range_checker.go", decl: "type RangeChecker interface",
		phrases: []string{"keeps no checker object", "no checker object", "range checker is not implemented",
			"range checkers are not implemented"},
	},
	{
		name: "maintainer move (coordinator move operator, non-cascade remove)",
		file: "../coordinator/operator_controller.go", decl: "type MoveMaintainerOperator struct",
		phrases: []string{"maintainer move is not implemented", "move maintainer is not implemented"},
	},
}

// TestNotApplicableReasonsAreCurrent: no n/a row of TABLE.md gives as its
// reason the absence of a feature impl/ has (implementedFeatures), and every
// entry of that list still points at its declaration.
func TestNotApplicableReasonsAreCurrent(t *testing.T) {
	for _, f := range implementedFeatures {
		data, err := os.ReadFile(filepath.FromSlash(f.file))
		if err != nil {
			t.Errorf("feature %q: %v", f.name, err)
			continue
		}
		if !strings.Contains(string(data), f.decl) {
			t.Errorf("feature %q: %s no longer declares %q: update implementedFeatures", f.name, f.file, f.decl)
		}
	}
	for _, r := range readTable(t) {
		if r.verdict != "n/a" {
			continue
		}
		notes := strings.ToLower(r.notes)
		for _, f := range implementedFeatures {
			for _, p := range f.phrases {
				if strings.Contains(notes, p) {
					t.Errorf("row %s (%s): its n/a reason calls %s missing (%q), but impl has it in %s",
						r.test, r.file, f.name, p, strings.TrimPrefix(f.file, "../"))
				}
			}
		}
	}
}
