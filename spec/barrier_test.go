package spec

import "testing"

func row(table int64, ts uint64) Event {
	return Event{Kind: DataWritten, Changefeed: cf, Span: Span{Table: table, Start: "r"}, Checkpoint: ts}
}

func flushed(node, id string, table int64, ts uint64) Event {
	return Event{Kind: DataFlushed, Changefeed: cf, Node: node, Dispatcher: id, Span: WholeTable(table), Checkpoint: ts}
}

func dropTable(t int64, ts uint64) Event {
	return Event{Kind: DDLCommitted, Changefeed: cf, Checkpoint: ts, Tables: []int64{0, t}, Dropped: []int64{t}, Influence: InfluenceNormal, Reason: "drop table"}
}

func syncpoint(ts uint64) Event {
	return Event{Kind: DDLCommitted, Changefeed: cf, Checkpoint: ts, Influence: InfluenceAll, SyncPoint: true}
}

func ddlWritten(node, id string, ts uint64, sync bool) Event {
	return Event{Kind: DDLWritten, Changefeed: cf, Node: node, Dispatcher: id, Checkpoint: ts, SyncPoint: sync}
}

func blockStatus(node, id string, table int64, ts uint64, stage string) Event {
	return Event{Kind: BlockStatusReported, Changefeed: cf, Node: node, Dispatcher: id, Span: WholeTable(table), Checkpoint: ts, State: stage}
}

func TestDDLOrderedWithRowsHolds(t *testing.T) {
	expectNone(t, run(t, Config{}, DDLOrderedWithRows,
		created(1, 2), row(1, 101), row(2, 101), dropTable(1, 102), row(2, 103),
		flushed("n1", "d1", 1, 101), flushed("n2", "d2", 2, 101),
		ddlWritten("n1", "trigger", 102, false),
		flushed("n2", "d2", 2, 103)))
}

func TestDDLOrderedWithRowsWrittenBeforeRows(t *testing.T) {
	// #3799's shape: a syncpoint (all tables) written while a table created
	// just before it has an unflushed row.
	vs := run(t, Config{}, DDLOrderedWithRows,
		created(1), row(1, 101),
		Event{Kind: TableCreated, Changefeed: cf, Span: WholeTable(2), Checkpoint: 102}, row(1, 103), row(2, 103),
		syncpoint(104), flushed("n1", "d1", 1, 103),
		ddlWritten("n1", "trigger", 104, true))
	expectViolation(t, vs, "row of table 2 at commitTs 103 was not flushed")
}

func TestDDLOrderedWithRowsRowPastBlockedDDL(t *testing.T) {
	vs := run(t, Config{}, DDLOrderedWithRows,
		created(1, 2), dropTable(1, 102), row(2, 103), row(1, 101),
		flushed("n2", "d2", 2, 103), // table 2 is not blocked by the drop of table 1
		flushed("n1", "d1", 1, 101))
	expectNone(t, vs)
	vs = run(t, Config{}, DDLOrderedWithRows,
		created(1, 2), Event{Kind: DDLCommitted, Changefeed: cf, Checkpoint: 102, Tables: []int64{0, 1, 2}, Influence: InfluenceNormal, Reason: "rename tables"},
		row(2, 103), flushed("n2", "d2", 2, 103))
	expectViolation(t, vs, "flushed the row of table 2 at commitTs 103")
}

func TestDDLOrderedWithRowsExactlyOnce(t *testing.T) {
	trig := disp(DispatcherCreated, "n1", "trigger", WholeTable(0))
	vs := run(t, Config{}, DDLOrderedWithRows,
		created(1), trig, dropTable(1, 102), ddlWritten("n1", "trigger", 102, false), ddlWritten("n2", "d1", 102, false))
	expectViolation(t, vs, "written exactly once")
	// The first writer stopped (moved away, its node died): written again, allowed.
	expectNone(t, run(t, Config{}, DDLOrderedWithRows,
		created(1), trig, dropTable(1, 102), ddlWritten("n1", "trigger", 102, false),
		disp(DispatcherRemoved, "n1", "trigger", Span{}), ddlWritten("n2", "trigger", 102, false)))
	// A resume from below the DDL replays it.
	expectNone(t, run(t, Config{}, DDLOrderedWithRows,
		created(1), dropTable(1, 102), ddlWritten("n1", "trigger", 102, false),
		Event{Kind: ChangefeedResumed, Changefeed: cf, Checkpoint: 101}, ddlWritten("n1", "trigger", 102, false)))
	// A DDL and a syncpoint at the same ts are two events.
	expectNone(t, run(t, Config{}, DDLOrderedWithRows,
		created(1), dropTable(1, 102), syncpoint(102), ddlWritten("n1", "trigger", 102, false), ddlWritten("n1", "trigger", 102, true)))
}

func healed(ts uint64) Event { return Event{Kind: FaultsHealed, Changefeed: cf, Checkpoint: ts} }
func quiesced() Event        { return Event{Kind: Quiesced, Changefeed: cf} }

func TestBarrierEventuallyPasses(t *testing.T) {
	t1 := WholeTable(1)
	// #3974's shape: the writer is moved after DONE, reports WAITING again
	// on its new node and never gets Pass.
	vs := run(t, Config{}, BarrierEventuallyPasses,
		created(1), disp(DispatcherCreated, "n1", "d1", t1),
		blockStatus("n1", "d1", 1, 102, StageWaiting), blockStatus("n1", "d1", 1, 102, StageDone),
		disp(DispatcherRemoved, "n1", "d1", Span{}), disp(DispatcherCreated, "n2", "d1", t1),
		blockStatus("n2", "d1", 1, 102, StageWaiting), healed(105), quiesced())
	expectViolation(t, vs, "dispatcher d1 on node n2 is still blocked at the DDL at commitTs 102")

	// Resumed, removed, or its node left: not blocked.
	expectNone(t, run(t, Config{}, BarrierEventuallyPasses,
		created(1), disp(DispatcherCreated, "n1", "d1", t1), disp(DispatcherCreated, "n2", "d2", WholeTable(2)),
		blockStatus("n1", "d1", 1, 102, StageWaiting), blockStatus("n1", "d1", 1, 102, StageDone),
		blockStatus("n2", "d2", 2, 102, StageWaiting), Event{Kind: NodeLeft, Node: "n2"},
		healed(105), quiesced()))
	// A DONE of another event does not resume it.
	vs = run(t, Config{}, BarrierEventuallyPasses,
		created(1), disp(DispatcherCreated, "n1", "d1", t1),
		blockStatus("n1", "d1", 1, 104, StageWaiting), blockStatus("n1", "d1", 1, 102, StageDone),
		healed(105), quiesced())
	expectViolation(t, vs, "still blocked")
	// Not judged before faults heal.
	expectNone(t, run(t, Config{}, BarrierEventuallyPasses,
		created(1), disp(DispatcherCreated, "n1", "d1", t1), blockStatus("n1", "d1", 1, 104, StageWaiting), quiesced()))
}

func TestTableSetFollowsDDLs(t *testing.T) {
	t1, t3 := WholeTable(1), WholeTable(3)
	truncate := Event{Kind: DDLCommitted, Changefeed: cf, Checkpoint: 102, Tables: []int64{0, 1}, Dropped: []int64{1}, Added: []int64{3}, Influence: InfluenceNormal, Reason: "truncate table"}
	base := []Event{created(1), disp(DispatcherCreated, "n1", "d1", t1), disp(DispatcherWorking, "n1", "d1", t1), truncate}

	ok := append(append([]Event(nil), base...), disp(DispatcherRemoved, "n1", "d1", Span{}),
		disp(DispatcherCreated, "n2", "d3", t3), disp(DispatcherWorking, "n2", "d3", t3), healed(105), quiesced())
	expectNone(t, run(t, Config{}, TableSetFollowsDDLs, ok...))
	expectNone(t, run(t, Config{}, EverySpanReplicated, ok...))

	old := append(append([]Event(nil), base...), disp(DispatcherCreated, "n2", "d3", t3), disp(DispatcherWorking, "n2", "d3", t3), healed(105), quiesced())
	expectViolation(t, run(t, Config{}, TableSetFollowsDDLs, old...), "dispatcher d1 on node n1 of table 1, dropped by the DDL at commitTs 102")

	missing := append(append([]Event(nil), base...), disp(DispatcherRemoved, "n1", "d1", Span{}), healed(105), quiesced())
	expectViolation(t, run(t, Config{}, TableSetFollowsDDLs, missing...), "table 3, added by the DDL at commitTs 102 (truncate table, influence normal, blocks tables 0,1), has 0 working dispatchers")

	// A DDL above the heal-time resolved ts is not judged yet.
	expectNone(t, run(t, Config{}, TableSetFollowsDDLs, append(append([]Event(nil), base...), healed(101), quiesced())...))
}
