package spec

// Bug is a catalogued historical TiCDC bug. Each can be switched back on by
// name in model/ and impl/, where it restores TiCDC's pre-fix logic at the same
// decision point; the checkers must then find a violation of Property.
type Bug struct {
	Name     string
	Issue    string // TiCDC (or tiflow) issue, and the fix
	Seed     string // seed report under ../shared/seeds, if any
	Property Property
	// Where names TiCDC's decision point that the bug switches.
	Where string
	// Story is the failure in one paragraph, in TiCDC's terms.
	Story string
	// Delivery is the weakest message-delivery assumption under which the
	// checkers find the bug (SPEC.md, "Delivery semantics"); the proptest
	// gate searches under it. DeliveryMessageCenter means TiCDC's own
	// transport can make the story's deliveries.
	Delivery Delivery
}

// Bugs is the catalogue, in a stable order. Names are stable interface.
func Bugs() []Bug {
	return []Bug{
		{
			Name: "regressed-checkpoint-drops-error", Issue: "pingcap/ticdc#5709 (fixed by #5779)", Seed: "000_8fdab149bc0ab0ac.txt",
			Property: ErrorNeverDropped,
			Where:    "coordinator/changefeed/changefeed.go Changefeed.UpdateStatus: a status whose checkpoint is below the stored one is dropped whole, Err included",
			Story:    "a capture dies, its dispatchers are rescheduled, the maintainer's reported checkpoint falls below the stored one, a sink error arrives and every 5 s re-send of it is dropped; the changefeed stays normal and never restarts",
			Delivery: DeliveryMessageCenter,
		},
		{
			Name: "add-accepts-unbootstrapped-maintainer", Issue: "pingcap/ticdc#3952 (fixed by #3976)", Seed: "001_127eed88a1fba2a2.txt",
			Property: RunningMaintainerBootstrapped,
			Where:    "coordinator/operator/operator_add.go AddMaintainerOperator.Check: any Working report from the destination finishes the add, BootstrapDone not required",
			Story:    "a late cascade remove creates a removal-only maintainer on an empty node; the retry's add targets that node, the manager ignores the add, the removal-only maintainer reports Working and the coordinator marks the changefeed replicating with no real maintainer",
			Delivery: DeliveryMessageCenter,
		},
		{
			Name: "restored-create-ignored-for-new-table", Issue: "pingcap/ticdc#6202 (fix PR #6207, open)", Seed: "002_3d41aa5375485e8e.txt",
			Property: AtMostOneDispatcherPerSpan,
			Where:    "maintainer/maintainer_controller_bootstrap.go handleRemainingWorkingTasks: a working dispatcher of a table missing from the bootstrap snapshot is only logged, not adopted",
			Story:    "the old maintainer creates a dispatcher for a table created by DDL and dies before ACKing the DDL; the new maintainer bootstraps below the DDL, ignores the dispatcher, and the re-sent NONE status makes the barrier add a second dispatcher for the same span",
			Delivery: DeliveryMessageCenter,
		},
		{
			Name: "inflight-operators-lost-on-failover", Issue: "pingcap/ticdc#3411 (fixed by #3691)", Seed: "003_ad69367b7f2abe6b.txt",
			Property: EverySpanReplicated,
			Where:    "dispatcher manager journal (currentOperatorMap) and maintainer bootstrap restoreCurrentWorkingOperators, plus the handleStatus fallback: without them a new maintainer rebuilds only from dispatcher snapshots",
			Story:    "a move's Remove reaches the origin, the maintainer dies before sending Create to the destination; the new maintainer sees no dispatcher and no operator for the span, which stays replicating with a dead dispatcher, or is never created",
			Delivery: DeliveryMessageCenter,
		},
		{
			Name: "stuck-after-upstream-failure", Issue: "pingcap/tiflow#9595 (introduced by tiflow#9519)", Seed: "004_2961d8959c6e0acb.txt",
			Property: CheckpointAdvancesAfterHeal,
			Where:    "see spec/SPEC.md, section 'Seed 004'",
			Story:    "all TiKV nodes fail for a minute; after they recover the changefeed's checkpoint never moves again",
			Delivery: DeliveryMessageCenter,
		},
		{
			Name: "no-epoch-fencing", Issue: "pingcap/ticdc#5083 (fixed by #5434, #5435, #5436)",
			Property: AtMostOneDispatcherPerSpan,
			Where:    "downstreamadapter/dispatchermanager/helper.go preCheckForSchedulerHandler: without the maintainer epoch a Create from the previous maintainer generation is obeyed",
			Story:    "the old maintainer's Create is delayed in transit; the maintainer fails over, the new one re-creates the span elsewhere, then the delayed Create lands and a second dispatcher replicates the same span",
			Delivery: DeliveryMessageCenter,
		},
		{
			Name: "trigger-passes-add-table-ddl", Issue: "pingcap/ticdc#5401 (fixed by #5402)",
			Property: CheckpointNotPastUnflushed,
			Where:    "table trigger dispatcher checkpoint (addTableCheckpointBlocker): without the blocker the trigger's checkpoint passes a CREATE TABLE before the maintainer ACKs the NONE status",
			Story:    "the trigger writes CREATE TABLE at T and reports NONE; before the maintainer schedules the new table, the trigger's watermark moves past T, the global checkpoint passes T, and rows of the new table at or after T are behind the checkpoint but not flushed",
			Delivery: DeliveryMessageCenter,
		},
	}
}

// LookupBug returns the catalogued bug with that name.
func LookupBug(name string) (Bug, bool) {
	for _, b := range Bugs() {
		if b.Name == name {
			return b, true
		}
	}
	return Bug{}, false
}
