package spec

import (
	"fmt"
	"strings"
)

// BugID names one catalogue entry. It is the only switch model/ and impl/
// read: both take a BugSet and ask Has(id) at the entry's decision point, so
// one entry is one switch everywhere.
type BugID uint8

// The catalogue's entries. The zero value is not an entry.
const (
	_ BugID = iota
	BugRegressedCheckpointDropsError
	BugAddAcceptsUnbootstrappedMaintainer
	BugRestoredCreateIgnoredForNewTable
	BugInflightOperatorsLostOnFailover
	BugStuckAfterUpstreamFailure
	BugNoEpochFencing
	BugTriggerPassesAddTableDDL
	BugUnchangedWarningNotActedOn
	BugToggleKeepsBaseline
	BugStopReplacesPendingStop
	BugRemoveDuringMoveLeaksDispatchers
	BugRemoveOperatorPassesCheckpoint
	BugWriterNotPassedAfterMove
	BugDBDDLBeforeTableDDLsAcked
	BugFastFailIgnoredWithProgress
	BugFailoverLosesRetrying
	BugWatermarkSeqRejectsLowerCheckpoint
	BugOperatorDoneBeforeWatermark
	BugSplitDoubleAdd
	BugMergeOccupyFinishesEarly
	BugMoveFinalStoppedRejected
	BugCheckpointAdvancesWhileRemoving
	BugStoppedChangefeedLeftOnNode
	BugStopCloseDroppedAfterFailover
	BugRestoredBarrierTableWriter
	BugNewTableScheduledAtSelection
	bugLimit
)

// BugKind says where the behaviour an entry switches back on comes from.
type BugKind uint8

const (
	// KindFixedUpstream: a historical TiCDC bug, fixed upstream; the switch
	// restores the pre-fix logic.
	KindFixedUpstream BugKind = iota + 1
	// KindHead: TiCDC's behaviour at the pinned commit (HeadCommit) that
	// cdcspec's generated tests showed to break a property. cdcspec runs the
	// fixed logic by default; the switch restores HEAD's.
	KindHead
)

func (k BugKind) String() string {
	switch k {
	case KindFixedUpstream:
		return "fixed-upstream"
	case KindHead:
		return "head"
	}
	return fmt.Sprintf("BugKind(%d)", uint8(k))
}

// HeadCommit is the pingcap/ticdc commit that cdcspec's rules cite and that
// KindHead entries were read against.
const HeadCommit = "b813e76f9"

// Bug is one catalogue entry: a behaviour of TiCDC, historical or at HEAD,
// that breaks Property. It can be switched on by name in model/ and impl/,
// where it restores that behaviour at the decision point Where names; the
// checkers must then find a violation of Property (the model: PropertyInModel).
type Bug struct {
	ID   BugID
	Name string // stable interface: CLI flags, scenario files, artifacts
	Kind BugKind
	// Issue is the TiCDC (or tiflow) issue and the fix, if any.
	Issue string
	// Seed is the number of the seed report it came from (000-004), if any.
	// The report's log excerpt, where it had one, is traces/testdata/seedNNN_*.log.
	Seed     string
	Property Property
	// ModelProperty, when set, is the property the model's search reports
	// instead of Property: the model notices the bug at an earlier step
	// than the implementation's checkers can (ModelPropertyWhy says how).
	ModelProperty    Property
	ModelPropertyWhy string
	// Where names TiCDC's decision point that the switch restores.
	Where string
	// Story is the failure in one paragraph, in TiCDC's terms.
	Story string
	// Delivery is the weakest message-delivery assumption under which the
	// checkers find the entry (SPEC.md, "Delivery semantics"); the proptest
	// gate searches under it. DeliveryMessageCenter means TiCDC's own
	// transport can make the story's deliveries.
	Delivery Delivery
	// ModelGap is empty when the model can express the entry; otherwise it
	// names the feature the model needs first.
	ModelGap string
	// ImplGap is empty when the implementation (impl/) can express the
	// entry; otherwise it names the feature impl/ needs first. The
	// simulation's scenarios, the proptest gate and the replay of model
	// counterexamples skip such an entry, saying why.
	ImplGap string
}

// PropertyInModel is the property the model's search reports for the entry:
// ModelProperty when set, else Property.
func (b Bug) PropertyInModel() Property {
	if b.ModelProperty != "" {
		return b.ModelProperty
	}
	return b.Property
}

// catalogue is the one declaration of every entry, in ID order.
var catalogue = [...]Bug{
	{
		ID: BugRegressedCheckpointDropsError, Name: "regressed-checkpoint-drops-error", Kind: KindFixedUpstream,
		Issue: "pingcap/ticdc#5709 (fixed by #5779)", Seed: "000",
		Property: ErrorNeverDropped, Delivery: DeliveryMessageCenter,
		Where: "coordinator/changefeed/changefeed.go Changefeed.UpdateStatus: a status whose checkpoint is below the stored one is dropped whole, Err included",
		Story: "a capture dies, its dispatchers are rescheduled, the maintainer's reported checkpoint falls below the stored one, a sink error arrives and every 5 s re-send of it is dropped; the changefeed stays normal and never restarts",
	},
	{
		ID: BugAddAcceptsUnbootstrappedMaintainer, Name: "add-accepts-unbootstrapped-maintainer", Kind: KindFixedUpstream,
		Issue: "pingcap/ticdc#3952 (fixed by #3976)", Seed: "001",
		Property: RunningMaintainerBootstrapped, Delivery: DeliveryMessageCenter,
		Where: "coordinator/operator/operator_add.go AddMaintainerOperator.Check: any Working report from the destination finishes the add, BootstrapDone not required",
		Story: "a late cascade remove creates a removal-only maintainer on an empty node; the retry's add targets that node, the manager ignores the add, the removal-only maintainer reports Working and the coordinator marks the changefeed replicating with no real maintainer",
	},
	{
		ID: BugRestoredCreateIgnoredForNewTable, Name: "restored-create-ignored-for-new-table", Kind: KindFixedUpstream,
		Issue: "pingcap/ticdc#6202 (fix PR #6207, open)", Seed: "002",
		Property: AtMostOneDispatcherPerSpan, Delivery: DeliveryMessageCenter,
		Where: "maintainer/maintainer_controller_bootstrap.go handleRemainingWorkingTasks: a working dispatcher of a table missing from the bootstrap snapshot is only logged, not adopted",
		Story: "the old maintainer creates a dispatcher for a table created by DDL and dies before ACKing the DDL; the new maintainer bootstraps below the DDL, ignores the dispatcher, and the re-sent NONE status makes the barrier add a second dispatcher for the same span",
	},
	{
		ID: BugInflightOperatorsLostOnFailover, Name: "inflight-operators-lost-on-failover", Kind: KindFixedUpstream,
		Issue: "pingcap/ticdc#3411 (fixed by #3691)", Seed: "003",
		Property: EverySpanReplicated, Delivery: DeliveryMessageCenter,
		Where: "dispatcher manager journal (currentOperatorMap) and maintainer bootstrap restoreCurrentWorkingOperators, plus the handleStatus fallback: without them a new maintainer rebuilds only from dispatcher snapshots",
		Story: "a move's Remove reaches the origin, the maintainer dies before sending Create to the destination; the new maintainer sees no dispatcher and no operator for the span, which stays replicating with a dead dispatcher, or is never created",
	},
	{
		ID: BugStuckAfterUpstreamFailure, Name: "stuck-after-upstream-failure", Kind: KindFixedUpstream,
		Issue: "pingcap/tiflow#9595 (introduced by tiflow#9519)", Seed: "004",
		Property: CheckpointAdvancesAfterHeal, Delivery: DeliveryMessageCenter,
		Where: "see spec/SPEC.md, section 'Seed 004'",
		Story: "all TiKV nodes fail for a minute; after they recover the changefeed's checkpoint never moves again",
	},
	{
		ID: BugNoEpochFencing, Name: "no-epoch-fencing", Kind: KindFixedUpstream,
		Issue:    "pingcap/ticdc#5083 (fixed by #5434, #5435, #5436)",
		Property: AtMostOneDispatcherPerSpan, Delivery: DeliveryMessageCenter,
		Where: "downstreamadapter/dispatchermanager/helper.go preCheckForSchedulerHandler: without the maintainer epoch a Create from the previous maintainer generation is obeyed",
		Story: "the old maintainer's Create is delayed in transit; the maintainer fails over, the new one re-creates the span elsewhere, then the delayed Create lands and a second dispatcher replicates the same span",
	},
	{
		ID: BugTriggerPassesAddTableDDL, Name: "trigger-passes-add-table-ddl", Kind: KindFixedUpstream,
		Issue:    "pingcap/ticdc#5401 (fixed by #5402)",
		Property: CheckpointNotPastUnflushed, Delivery: DeliveryMessageCenter,
		Where: "table trigger dispatcher checkpoint (addTableCheckpointBlocker): without the blocker the trigger's checkpoint passes a CREATE TABLE before the maintainer ACKs the NONE status",
		Story: "the trigger writes CREATE TABLE at T and reports NONE; before the maintainer schedules the new table, the trigger's watermark moves past T, the global checkpoint passes T, and rows of the new table at or after T are behind the checkpoint but not flushed",
	},
	{
		ID: BugUnchangedWarningNotActedOn, Name: "unchanged-warning-not-acted-on", Kind: KindHead,
		Issue:    "none found (related: #4997, which added the skip)",
		Property: CheckpointAdvancesAfterHeal, Delivery: DeliveryMessageCenter,
		ModelGap: "the model's coordinator does not persist the state and error signature",
		Where:    "coordinator/coordinator.go handleStateChange: isUnchangedRuntimeState returns before acting on a warning whose state and error equal the persisted ones",
		Story:    "a sink error puts the changefeed in warning and the maintainer is restarted; the new maintainer's first status the coordinator accepts is already bootstrapped, so no BootstrapDone toggle passes the changefeed through normal; the DM's re-sent identical error is then skipped before the warning path, nothing stops or restarts the maintainer, and the changefeed stays in warning with its checkpoint frozen until the error budget fails it",
	},
	{
		ID: BugToggleKeepsBaseline, Name: "toggle-keeps-baseline", Kind: KindHead,
		Issue:    "none filed (the same remark was made in an automated review of PR #6255)",
		Property: ErrorNeverDropped, Delivery: DeliveryMessageCenter,
		ModelGap: "",
		Where:    "coordinator/changefeed/changefeed.go Changefeed.UpdateStatus: the BootstrapDone toggle returns before the backoff, whose baseline (lastRetryCheckpointTs) stays below the stored checkpoint",
		Story:    "a status toggles BootstrapDone at a checkpoint above the backoff's baseline and is reported normal; the next status carries a retryable error at the same checkpoint, CheckStatus takes it for progress and raises the baseline, and the error is ignored until the dispatcher manager re-sends it 5 s later",
	},
	{
		ID: BugStopReplacesPendingStop, Name: "stop-replaces-pending-stop", Kind: KindFixedUpstream,
		Issue:    "pingcap/ticdc#6134 (fixed by #6135, after " + HeadCommit + ")",
		Property: CheckpointAdvancesAfterHeal, Delivery: DeliveryMessageCenter,
		ModelProperty:    StoppedStaysStopped,
		ModelPropertyWhy: "the model's lifecycle configuration removes the changefeed while the pause's stop is pending: the remove's stop goes to the coordinator's node, so the Add still in flight to the maintainer's node arrives after the removal and creates a maintainer that schedules, which stopped-stays-stopped reports before any resume; the simulation's scenario resumes, and only the stuck checkpoint shows",
		Where:            "coordinator/operator/operator_controller.go stopChangefeed and pushStopChangefeedOperator: a pause or remove replaces a pending warning stop with a stop aimed at the coordinator's node and the new epoch",
		Story:            "a sink error puts the changefeed in warning: the epoch is bumped and a stop of the old generation is queued; a pause arrives before that stop was delivered and replaces it with a stop of the new epoch sent to the coordinator's node, where a removal-only maintainer closes nothing; the old-generation maintainer keeps running, and after resume its manager rejects every add (\"reject add maintainer request because existing maintainer is still running\")",
	},
	{
		ID: BugRemoveDuringMoveLeaksDispatchers, Name: "remove-during-move-leaks-dispatchers", Kind: KindHead,
		Issue:    "none found (near: #6244, #4827)",
		Property: EverySpanReplicated, Delivery: DeliveryMessageCenter,
		ModelGap: "the status's cascade-closed flag: the model has maintainer moves and changefeed removal, but its status cannot tell the origin's Stopped of a move's non-cascade remove from a stop's, so a configuration may not combine them (model.Config.Validate)",
		Where:    "coordinator/operator/operator_stop.go StopChangefeedOperator.Check: any non-Working status from the stop's node and epoch finishes it, including the origin's Stopped from a move's non-cascade remove (which closed only the table trigger)",
		Story:    "a changefeed is removed while its maintainer moves: the stop takes the move's origin and origin epoch, and the origin's Stopped from the move's non-cascade remove, already in flight, finishes it before any cascade remove is sent; the dispatcher managers are never closed and the removed changefeed's dispatchers keep running (in cdcspec, which keeps a changefeed's ID across a re-create, a new changefeed of the same name adopts them and a table stays unreplicated)",
	},
	{
		ID: BugRemoveOperatorPassesCheckpoint, Name: "remove-operator-passes-checkpoint", Kind: KindHead,
		Issue:    "none found (the dispatcher manager's TODO on a removed dispatcher's checkpoint; near: #4542)",
		Property: CheckpointNotPastUnflushed, Delivery: DeliveryMessageCenter,
		Where: "maintainer/operator/operator_remove.go RemoveDispatcherOperator.BlockTsForward returns false; for a remove restored from the journal at bootstrap (O_Move/O_Split) the span stays replicating until PostFinish marks it absent",
		Story: "a new maintainer restores a move's journaled Remove; the origin's dispatcher closes and its Stopped status finishes the remove operator, which the operator controller post-finishes only at its next poll; in between the node's next heartbeat no longer carries the closed dispatcher, the span still counts as replicating and the remove operator does not hold the checkpoint back, so the global checkpoint passes rows of that span that were never flushed; the re-added dispatcher starts at the committed checkpoint and those rows are lost",
	},
	{
		ID: BugWriterNotPassedAfterMove, Name: "writer-not-passed-after-move", Kind: KindFixedUpstream,
		Issue:    "pingcap/ticdc#3974 (fixed by #3970)",
		Property: BarrierEventuallyPasses, Delivery: DeliveryMessageCenter,
		Where: "maintainer/barrier_event.go BarrierEvent.sendPassAction (and the dispatcher manager's ExcludeDispatcherId): the Pass action skips the writer dispatcher",
		Story: "every dispatcher a blocking DDL influences reported WAITING; the writer wrote the DDL and reported DONE, and the others are told Pass; the writer is moved before its checkpoint passed the DDL, its new incarnation reads the DDL again and reports WAITING, which the selected event only ACKs; Pass is re-sent to everyone but the writer, which stays blocked forever",
	},
	{
		ID: BugDBDDLBeforeTableDDLsAcked, Name: "db-ddl-before-table-ddls-acked", Kind: KindFixedUpstream,
		Issue:    "pingcap/ticdc#3799 (fixed by #3802)",
		Property: DDLOrderedWithRows, Delivery: DeliveryMessageCenter,
		Where: "downstreamadapter/dispatcher/basic_dispatcher.go DealWithBlockEvent (holdBlockEvent, pendingACKCount) and maintainer/barrier.go handleBlockState (pendingEvents): a DB/All block event is reported and acted on while an earlier add-table or drop-table DDL is not yet ACKed",
		Story: "the table trigger writes CREATE TABLE and reports it (NONE) to the maintainer, which has not scheduled the table yet; the trigger reaches a syncpoint (or DB-wide DDL) and reports WAITING at once; the maintainer builds the all-table range checker from its spans, which lack the new table, selects the trigger and it writes the syncpoint while the new table's rows below it are not flushed",
	},
	{
		ID: BugFastFailIgnoredWithProgress, Name: "fast-fail-ignored-with-progress", Kind: KindFixedUpstream,
		Issue:    "pingcap/ticdc#5246 (fixed by #5424)",
		Property: ErrorNeverDropped, Delivery: DeliveryMessageCenter,
		Where: "coordinator/changefeed/backoff.go Backoff.CheckStatus and HandleError: the fast-fail check ran only in HandleError, after the checkpoint-progress return, so a status whose checkpoint passed the baseline had its fast-fail error ignored",
		Story: "a dispatcher hits an unretryable error (a GC error) after the others flushed; the maintainer's next status carries the error with a checkpoint past the backoff's baseline; CheckStatus takes it for progress and returns normal, so the changefeed keeps running past an error that must fail it",
	},
	{
		ID: BugFailoverLosesRetrying, Name: "failover-loses-retrying", Kind: KindFixedUpstream,
		Issue:    "pingcap/ticdc#921 (fixed by #938)",
		Property: CheckpointAdvancesAfterHeal, Delivery: DeliveryMessageCenter,
		ModelGap: "masked at HEAD by the BootstrapDone toggle: a new coordinator builds every changefeed with BootstrapDone false (changefeed.NewChangefeed), so the maintainer's first bootstrapped status reports it normal whether retrying was restored or not; nor does the backoff's give-up by budget tell it (error-stuck-fails): NewBackoff restarts the error-stuck clock (errBackoff.Reset) at every new coordinator whether retrying is restored or not, so without the fix the clock starts at the first error after the bootstrap instead of at the bootstrap, the same number of restarts (impl/coordinator TestFailoverRestartsErrorStuckBudget); the model has coordinator failover, the give-up and the switch (SPEC.md, section 9)",
		Where:    "coordinator/changefeed/changefeed.go NewChangefeed: a changefeed loaded from etcd in warning state gets a backoff with retrying false, so checkpoint progress never declares it recovered",
		Story:    "a sink error puts the changefeed in warning; the owner fails over; the new coordinator reloads it in warning without retrying set; the maintainer recovers and the checkpoint advances, but the backoff never reports it recovered and the changefeed stays in warning",
	},
	{
		ID: BugWatermarkSeqRejectsLowerCheckpoint, Name: "watermark-seq-rejects-lower-checkpoint", Kind: KindFixedUpstream,
		Issue:    "pingcap/ticdc#2943 (fixed by #2945)",
		Property: CheckpointNotPastUnflushed, Delivery: DeliveryMessageCenter,
		Where: "maintainer/maintainer.go onHeartbeatRequest: a node's watermark was taken only if its seq was not lower AND its checkpoint not lower, so a newer heartbeat whose checkpoint fell (a new dispatcher starting below the node's other dispatchers) was rejected",
		Story: "a table's dispatcher is created on a node whose other dispatchers (the table trigger) are already past the new dispatcher's startTs; the node's next watermark, with a higher seq, falls to that startTs and is rejected; the add finishes and the maintainer's checkpoint, computed from the node's stale watermark, passes rows of the new table that were never flushed",
	},
	{
		ID: BugOperatorDoneBeforeWatermark, Name: "operator-done-before-watermark", Kind: KindFixedUpstream,
		Issue:    "pingcap/ticdc#2767 (fixed by #2864)",
		Property: CheckpointNotPastUnflushed, Delivery: DeliveryMessageCenter,
		Where: "maintainer/maintainer.go onHeartbeatRequest: the dispatcher statuses (which finish an add operator) were applied before the same heartbeat's watermark, and calCheckpointTs, on its own goroutine, could run in between",
		Story: "a new dispatcher's Working status finishes its add operator, so the span no longer holds the checkpoint back; before the same heartbeat's watermark (which includes the new dispatcher's startTs) replaces the node's old one, the checkpoint calculation runs and commits a checkpoint past the new dispatcher's startTs",
	},
	{
		ID: BugSplitDoubleAdd, Name: "split-double-add", Kind: KindFixedUpstream,
		Issue:    "pingcap/ticdc#4077 (fixed by #4078)",
		Property: EverySpanReplicated, Delivery: DeliveryMessageCenter,
		Where: "maintainer/operator/operator_split.go SplitDispatcherOperator.PostFinish: the postFinish callback added an AddDispatcherOperator for each new span even when ReplaceReplicaSet had placed them absent (the split target nodes did not match the split result), racing the basic scheduler's add for the same span",
		Story: "the split-balance scheduler splits a span with target nodes, the splitter returns another number of spans, ReplaceReplicaSet places the new spans absent; PostFinish's callback adds each to its target node while the basic scheduler adds the same absent span to another node; two dispatchers replicate the same span (at-most-one-dispatcher-per-span breaks on the way) and nothing removes either, since a status from a node other than the span's is only logged (\"nodeID not match\"), so the span is never replicated by exactly one dispatcher",
	},
	{
		ID: BugMergeOccupyFinishesEarly, Name: "merge-occupy-finishes-early", Kind: KindFixedUpstream,
		Issue:    "pingcap/ticdc#4542 (fixed by #4543)",
		Property: CheckpointAdvancesAfterHeal, Delivery: DeliveryMessageCenter,
		Where: "maintainer/operator/operator_merge.go PostFinish: the occupy operators of the merge's sources were finished first, before the sources were removed from the span controller; a late Stopped of a source in that window met no operator while the span was still tracked, and the \"non-working without operator\" fallback marked it absent after the removal, which put it back into the scheduler's absent set",
		Story: "two adjacent spans on one node are merged; the merged dispatcher works and the merge finishes; its PostFinish releases the occupy operators before it removes the old spans; an old dispatcher's late Stopped finds no operator and the fallback marks the span absent just after the removal: a ghost in the scheduler's absent set that can never be added (\"add operator failed, span not found\") and whose old checkpoint pins the changefeed's",
	},
	{
		ID: BugMoveFinalStoppedRejected, Name: "move-final-stopped-rejected", Kind: KindFixedUpstream,
		Issue:    "pingcap/ticdc#6283 (fixed by #6280, after " + HeadCommit + ")",
		Property: HandoffKeepsCheckpoint, Delivery: DeliveryMessageCenter,
		Where: "coordinator/controller.go handleSingleMaintainerStatus: the origin's final Stopped report of a maintainer move carries the origin's epoch, older than the one the move persisted, and is dropped as stale (\"drop stale maintainer status\") after the move operator took it, so its checkpoint never reaches the changefeed status the target's AddMaintainerRequest is built from",
		Story: "a maintainer move bumps the changefeed's epoch; the origin keeps replicating and its checkpoint passes the stored one, but its statuses now carry the old epoch and are dropped; its final Stopped report, which ends the move's non-cascade remove, is dropped as stale too, so the target maintainer starts from the older stored checkpoint and the changefeed replays what the origin had already flushed",
	},
	{
		ID: BugCheckpointAdvancesWhileRemoving, Name: "checkpoint-advances-while-removing", Kind: KindHead,
		Issue:    "none filed (reachable once #6280, after " + HeadCommit + ", accepts a move origin's final Stopped checkpoint)",
		Property: CheckpointNotPastUnflushed, Delivery: DeliveryMessageCenter,
		ModelGap: "a standard configuration that moves the maintainer while a CREATE TABLE is pending (maintainer-move has no DDL, new-table no maintainer move); the model's switch exists (maintTick)",
		Where:    "maintainer/maintainer.go calCheckpointTs (264-267, 696-733) keeps computing the checkpoint from the bootstrap until Close, also while removing; onBlockStateRequest (1006-1010) ignores the table trigger's NONE status of a CREATE TABLE while removing, and a move's non-cascade remove closes the trigger (tryCloseChangefeed), whose blocked checkpoint then leaves its node's watermark",
		Story:    "a CREATE TABLE commits just before a maintainer move; the origin, already removing, ignores the trigger's NONE status, then closes the trigger for the move; the node's watermark no longer carries the trigger's checkpoint held below the CREATE TABLE, the calculation that keeps running while removing passes it, and the origin's final Stopped report carries that checkpoint; the target bootstraps there, sees the new table in its snapshot and creates its dispatcher at that startTs, so the table's rows between the CREATE TABLE and the checkpoint are never written (impl/sim TestSoak, seed 69, with the switch on)",
	},
	{
		ID: BugStoppedChangefeedLeftOnNode, Name: "stopped-changefeed-left-on-node", Kind: KindFixedUpstream,
		Issue:    "pingcap/ticdc#2968 (fixed by #2967)",
		Property: StoppedStaysStopped, Delivery: DeliveryMessageCenter,
		ModelGap: "the model's coordinator keeps no per-node task list (nodeTasks): its node-removal handling reads the changefeed's own node, which the stop clears; the model shows stopped-stays-stopped with the mutation row stop-clears-node",
		Where:    "coordinator/changefeed/changefeed_db.go StopByChangefeedID: the changefeed's node was cleared before RemoveReplicaWithoutLock, which then removed it from the task list of node \"\" and left it in its old node's (nodeTasks); OnNodeRemoved (coordinator/operator/operator_controller.go:397-410 at " + HeadCommit + ") marks every changefeed GetByNodeID lists absent",
		Story:    "a changefeed is paused and its stop finishes, but it stays listed among its old maintainer node's tasks; that node later leaves, the coordinator's node-removal handling marks the stopped changefeed absent, and the basic scheduler adds a maintainer for it: a paused changefeed gets a maintainer that bootstraps and creates dispatchers (with a resume in between, the issue's story, two maintainers of one changefeed)",
	},
	{
		ID: BugStopCloseDroppedAfterFailover, Name: "stop-close-dropped-after-failover", Kind: KindHead,
		Issue:    "none found (candidate 8, docs/findings/pause-while-maintainer-node-dies.md)",
		Property: StopClosesDispatchers, Delivery: DeliveryMessageCenter,
		ImplGap: "impl/dispatcher's orchestrator fences a close by epoch alone (cdcspec's rule, its default); HEAD's (sender, epoch) rule is not switchable there yet",
		Where:   "downstreamadapter/dispatcherorchestrator/dispatcher_orchestrator.go:668-685 with dispatchermanager/dispatcher_manager_info.go IsMaintainerRequestAllowedBySnapshot: a MaintainerCloseRequest passes only from the manager's maintainer node with its epoch, and any other is ACKed with Success (\"drop stale maintainer close request\") without closing; cdcspec's rule drops only an older epoch's close",
		Story:   "a pause (or remove, or a fast-fail's stop) starts a stop of the maintainer on node B; B dies and the stop is re-targeted to the coordinator's node A with the same epoch (coordinator/operator/operator_stop.go OnNodeRemove); A's removal-only maintainer sends MaintainerCloseRequest to every node, and node C's manager, owned by (B, epoch), ACKs it as stale without closing; the stop finishes and C's dispatchers keep writing for a stopped changefeed",
	},
	{
		ID: BugRestoredBarrierTableWriter, Name: "restored-barrier-table-writer", Kind: KindHead,
		Issue:    "none found (docs/bugs.md, candidate 9)",
		Property: TableSetFollowsDDLs, Delivery: DeliveryMessageCenter,
		ImplGap: "impl/maintainer/barrier.go restore keeps HEAD's rule (a restored event is not marked trigger-related) with no switch for cdcspec's; whether impl's checkBlockedDispatchers then passes the event without scheduling it is not checked yet",
		Where:   "maintainer/barrier.go:197-230 handleBootstrapResponse restores a block event from the table trigger's WAITING without tableTriggerDispatcherRelated (set only in handleBlockState, :444), so barrier_event.go:258-283 onAllDispatcherReportedBlockEvent selects a table's dispatcher to write; after a maintainer failover barrier_event.go:579-604 checkBlockedDispatchers (from resend, :715) finds that table past the DDL and marks the event advanced without scheduleBlockEvent (:310); cdcspec's rule marks the event trigger-related when the trigger's WAITING is restored",
		Story:   "a new maintainer learns the table trigger's WAITING for DROP TABLE t1 only from a bootstrap response, and t1's dispatcher reports WAITING before the trigger re-sends: t1's dispatcher is selected and writes the DROP; the maintainer's node dies before its DONE arrives; the next maintainer starts below the DDL (no ddl_ts: an MQ sink), the re-created trigger reports WAITING, and checkBlockedDispatchers finds t1 past the DDL: the event passes without removing t1's dispatcher (or, for a TRUNCATE, without adding the new table, whose rows are never replicated)",
	},
	{
		ID: BugNewTableScheduledAtSelection, Name: "new-table-scheduled-at-selection", Kind: KindFixedUpstream,
		Issue:    "pingcap/ticdc#3443 (fixed by #3445)",
		Property: DDLOrderedWithRows, Delivery: DeliveryMessageCenter,
		Where: "maintainer/barrier_event.go onAllDispatcherReportedBlockEvent: the block event's table changes (scheduleBlockEvent: the truncated or created table's new span added at the DDL's commitTs) were scheduled when the writer was selected, before the Write action reached it; the fix schedules them on the writer's DONE (maintainer/barrier.go:398-404 handleEventDone, event.needSchedule then tryScheduleEvent :579, at " + HeadCommit + ")",
		Story: "a TRUNCATE TABLE blocks the table and the table trigger; both report WAITING, the maintainer selects the trigger to write and at once adds the new table's span; the new table's dispatcher is created at the DDL's commitTs and flushes its first rows above it while the trigger has not yet received (or executed) its Write action; downstream, the new table's rows precede the TRUNCATE, which then wipes them: data loss",
	},
}

// Bugs is the catalogue, in ID order. Names are stable interface.
func Bugs() []Bug {
	return append([]Bug(nil), catalogue[:]...)
}

// LookupBug returns the catalogue entry with that name.
func LookupBug(name string) (Bug, bool) {
	for _, b := range catalogue {
		if b.Name == name {
			return b, true
		}
	}
	return Bug{}, false
}

// Entry returns the catalogue entry of id.
func (id BugID) Entry() Bug {
	if id == 0 || id >= bugLimit {
		panic(fmt.Sprintf("spec: BugID %d is not in the catalogue", uint8(id)))
	}
	return catalogue[id-1]
}

func (id BugID) String() string {
	if id == 0 || id >= bugLimit {
		return fmt.Sprintf("BugID(%d)", uint8(id))
	}
	return catalogue[id-1].Name
}

// BugSet is the set of catalogue entries switched on. The zero value runs
// cdcspec's fixed protocol.
type BugSet uint64

// Has reports whether id is switched on.
func (s BugSet) Has(id BugID) bool { return s&(1<<id) != 0 }

// With returns s with id switched on.
func (s BugSet) With(id BugID) BugSet { return s | 1<<id }

// Bugs lists the entries switched on, in catalogue order.
func (s BugSet) Bugs() []Bug {
	var out []Bug
	for _, b := range catalogue {
		if s.Has(b.ID) {
			out = append(out, b)
		}
	}
	return out
}

// Names lists the names switched on, in catalogue order.
func (s BugSet) Names() []string {
	var out []string
	for _, b := range s.Bugs() {
		out = append(out, b.Name)
	}
	return out
}

// ParseBugs turns catalogue names into a BugSet. Blank names are skipped; an
// unknown name is an error that lists the known ones.
func ParseBugs(names []string) (BugSet, error) {
	var s BugSet
	for _, n := range names {
		n = strings.TrimSpace(n)
		if n == "" {
			continue
		}
		b, ok := LookupBug(n)
		if !ok {
			return 0, fmt.Errorf("unknown bug %q (known: %s)", n, strings.Join(BugNames(), ", "))
		}
		s = s.With(b.ID)
	}
	return s, nil
}

// BugNames lists every entry's name, in catalogue order.
func BugNames() []string {
	out := make([]string, len(catalogue))
	for i, b := range catalogue {
		out[i] = b.Name
	}
	return out
}
