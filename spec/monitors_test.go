package spec

import (
	"strings"
	"testing"
)

const cf = "default/cf"

func created(tables ...int64) Event {
	return Event{Kind: ChangefeedCreated, Changefeed: cf, Checkpoint: 100, Tables: tables}
}

func status(node string, cp uint64, err string) Event {
	return Event{Kind: StatusReceived, Changefeed: cf, Node: node, Checkpoint: cp, Err: err, BootstrapDone: true, Accepted: true, State: MaintainerWorking}
}

func stored(cp uint64) Event { return Event{Kind: CheckpointStored, Changefeed: cf, Checkpoint: cp} }

func disp(kind Kind, node, id string, span Span) Event {
	return Event{Kind: kind, Changefeed: cf, Node: node, Dispatcher: id, Span: span}
}

func run(t *testing.T, cfg Config, p Property, events ...Event) []Violation {
	t.Helper()
	var out []Violation
	for _, v := range Check(cfg, events) {
		if v.Property == p {
			out = append(out, v)
		}
	}
	return out
}

func expectViolation(t *testing.T, vs []Violation, substr string) {
	t.Helper()
	if len(vs) == 0 {
		t.Fatalf("expected a violation containing %q, got none", substr)
	}
	if !strings.Contains(vs[0].Message, substr) {
		t.Fatalf("violation %q does not contain %q", vs[0].Message, substr)
	}
	if len(vs[0].Evidence) == 0 {
		t.Fatalf("violation without evidence: %v", vs[0])
	}
}

func expectNone(t *testing.T, vs []Violation) {
	t.Helper()
	if len(vs) != 0 {
		t.Fatalf("expected no violation, got %v", vs)
	}
}

// The #5709 story: the stored checkpoint is 200, the maintainer reports 150
// with a Kafka error, the coordinator drops it, the DM re-sends it 5 s later.
func TestErrorNeverDroppedIssue5709(t *testing.T) {
	vs := run(t, Config{}, ErrorNeverDropped,
		created(1), stored(200),
		status("n2", 150, "[CDC:ErrKafkaAsyncSendMessage]kafka async send message failed"),
		status("n2", 150, "[CDC:ErrKafkaAsyncSendMessage]kafka async send message failed"),
	)
	expectViolation(t, vs, "dropped it silently")
	if vs[0].Node != "n2" || vs[0].Changefeed != cf {
		t.Fatalf("coordinates: %+v", vs[0])
	}
}

func TestErrorNeverDroppedHandled(t *testing.T) {
	for name, handling := range map[string]Event{
		"backoff":            {Kind: BackoffErrorSeen, Changefeed: cf},
		"warning":            {Kind: StateChanged, Changefeed: cf, State: StateWarning},
		"already-restarting": {Kind: BackoffIgnored, Changefeed: cf},
		"bootstrap-toggle":   {Kind: BootstrapDoneChanged, Changefeed: cf, BootstrapDone: true},
		"progress":           stored(300),
	} {
		t.Run(name, func(t *testing.T) {
			expectNone(t, run(t, Config{}, ErrorNeverDropped,
				created(1), stored(200), status("n2", 200, "boom"), handling, status("n2", 200, "boom"), Event{Kind: BackoffErrorSeen, Changefeed: cf}))
		})
	}
	// A status that the coordinator rejected (stale epoch, node mismatch) is
	// not the coordinator's to handle.
	rejected := status("n3", 10, "boom")
	rejected.Accepted = false
	expectNone(t, run(t, Config{}, ErrorNeverDropped, created(1), rejected, rejected))
}

func TestErrorNeverDroppedMaintainerWindow(t *testing.T) {
	cfg := Config{ErrorWindow: 60_000, ErrorMinReports: 3}
	report := func(ms int64) Event {
		return Event{Kind: DispatcherErrorReported, Changefeed: cf, Time: ms, Origin: "n1", Err: "kafka"}
	}
	var evs []Event
	for ms := int64(0); ms <= 120_000; ms += 5_000 {
		evs = append(evs, report(ms))
	}
	vs := run(t, cfg, ErrorNeverDropped, evs...)
	expectViolation(t, vs, "13 times over 60s")
	if len(vs) != 1 {
		t.Fatalf("one episode must be reported once, got %d", len(vs))
	}
	// The #3952 shape: the error reaches the backoff right away.
	expectNone(t, run(t, cfg, ErrorNeverDropped, report(0), Event{Kind: BackoffErrorSeen, Changefeed: cf, Time: 100}, report(5000), Event{Kind: BackoffErrorSeen, Changefeed: cf, Time: 5100}))
	// Disabled without a window (the model's configuration).
	expectNone(t, run(t, Config{}, ErrorNeverDropped, evs...))
}

// TestErrorNeverDroppedMaintainerWindowStale: the shape of impl chaos seed
// 8. A move's origin maintainer on n1 stays removing for a minute and keeps
// reporting its dispatchers' error; the coordinator drops its statuses as
// stale (controller.go:617-623 at b813e76f9). Those reports are not the
// coordinator's to act on: each stale drop of n1's status restarts the
// episode of n1's reports, and the new maintainer's report reaching the
// backoff at once is no violation. A drop of another node's status does not
// restart n1's episode.
func TestErrorNeverDroppedMaintainerWindowStale(t *testing.T) {
	cfg := Config{ErrorWindow: 60_000, ErrorMinReports: 2}
	report := func(ms int64) Event {
		return Event{Kind: DispatcherErrorReported, Changefeed: cf, Time: ms, Node: "n1", Origin: "n2", Err: "kafka"}
	}
	stale := func(ms int64, node string) Event {
		return Event{Kind: StatusIgnored, Changefeed: cf, Time: ms, Node: node, Epoch: 1}
	}
	var evs []Event
	for ms := int64(0); ms < 45_000; ms += 5_000 {
		evs = append(evs, report(ms))
	}
	evs = append(evs, stale(45_000, "n1"), report(65_000), Event{Kind: BackoffErrorSeen, Changefeed: cf, Time: 65_200})
	expectNone(t, run(t, cfg, ErrorNeverDropped, evs...))
	// The same reports, with the stale drop of another node's status.
	evs[len(evs)-3] = stale(45_000, "n3")
	expectViolation(t, run(t, cfg, ErrorNeverDropped, evs...), "10 times over 65s")
	// Without the drop: the same violation.
	expectViolation(t, run(t, cfg, ErrorNeverDropped, append(evs[:len(evs)-3:len(evs)-3], report(65_000))...), "10 times over 65s")
}

func TestCheckpointMonotonic(t *testing.T) {
	expectViolation(t, run(t, Config{}, CheckpointMonotonic, created(1), stored(200), stored(150)), "went from 200 to 150")
	expectNone(t, run(t, Config{}, CheckpointMonotonic, created(1), stored(200), stored(200), stored(250)))
	// Resume may overwrite the checkpoint with a lower one.
	expectNone(t, run(t, Config{}, CheckpointMonotonic, created(1), stored(200),
		Event{Kind: ChangefeedResumed, Changefeed: cf, Checkpoint: 120}, stored(130)))
}

func TestCheckpointNotPastUnflushed(t *testing.T) {
	row := func(table int64, key string, ts uint64) Event {
		return Event{Kind: DataWritten, Changefeed: cf, Span: Span{Table: table, Start: key}, Checkpoint: ts}
	}
	flush := func(span Span, ts uint64) Event {
		return Event{Kind: DataFlushed, Changefeed: cf, Span: span, Checkpoint: ts}
	}
	expectViolation(t, run(t, Config{}, CheckpointNotPastUnflushed, created(1, 2), row(1, "a", 110), row(2, "b", 120),
		flush(WholeTable(1), 130), stored(125)), "commitTs 120")
	expectNone(t, run(t, Config{}, CheckpointNotPastUnflushed, created(1, 2), row(1, "a", 110), row(2, "b", 120),
		flush(WholeTable(1), 130), stored(119), flush(WholeTable(2), 125), stored(125)))
	// A split span acknowledges only its keys.
	expectViolation(t, run(t, Config{}, CheckpointNotPastUnflushed, created(1), row(1, "a", 110), row(1, "x", 110),
		flush(Span{Table: 1, End: "m"}, 130), stored(120)), `key "x"`)
	// Rows at or below the start checkpoint are not owed.
	expectNone(t, run(t, Config{}, CheckpointNotPastUnflushed, created(1), row(1, "a", 90), stored(120)))
}

func TestAtMostOneDispatcherPerSpan(t *testing.T) {
	t4 := WholeTable(4)
	// #6202: d1 (restored Create) and d2 (barrier AddNewTable) on one span.
	expectViolation(t, run(t, Config{}, AtMostOneDispatcherPerSpan,
		disp(DispatcherCreated, "n1", "d1", t4), disp(DispatcherWorking, "n1", "d1", t4),
		disp(DispatcherCreated, "n1", "d2", t4)), "dispatcher d2 on node n1")
	// Move: remove before add.
	expectNone(t, run(t, Config{}, AtMostOneDispatcherPerSpan,
		disp(DispatcherCreated, "n1", "d1", t4), disp(DispatcherRemoved, "n1", "d1", Span{}),
		disp(DispatcherCreated, "n2", "d2", t4)))
	// Failover: the node died with its dispatchers.
	expectNone(t, run(t, Config{}, AtMostOneDispatcherPerSpan,
		disp(DispatcherCreated, "n1", "d1", t4), Event{Kind: CaptureSuicide, Node: "n1"},
		disp(DispatcherCreated, "n2", "d2", t4)))
	// Split halves do not overlap each other.
	expectNone(t, run(t, Config{}, AtMostOneDispatcherPerSpan,
		disp(DispatcherCreated, "n1", "d1", Span{Table: 4, End: "m"}), disp(DispatcherCreated, "n2", "d2", Span{Table: 4, Start: "m"})))
	// Merge: the merged dispatcher is created before the sources close, and
	// must not work before they are gone.
	merged := disp(DispatcherCreated, "n1", "dm", t4)
	merged.Merge = true
	expectNone(t, run(t, Config{}, AtMostOneDispatcherPerSpan,
		disp(DispatcherCreated, "n1", "d1", Span{Table: 4, End: "m"}), disp(DispatcherCreated, "n1", "d2", Span{Table: 4, Start: "m"}),
		merged, disp(DispatcherRemoved, "n1", "d1", Span{}), disp(DispatcherRemoved, "n1", "d2", Span{}), disp(DispatcherWorking, "n1", "dm", t4)))
	expectViolation(t, run(t, Config{}, AtMostOneDispatcherPerSpan,
		disp(DispatcherCreated, "n1", "d1", Span{Table: 4, End: "m"}), merged, disp(DispatcherWorking, "n1", "dm", t4)), "overlaps live dispatcher d1")
}

func TestRunningMaintainerBootstrapped(t *testing.T) {
	addDone := Event{Kind: MaintainerOpFinished, Changefeed: cf, Op: OpAdd, Node: "n2"}
	removalOnly := Event{Kind: MaintainerCreated, Changefeed: cf, Node: "n2", Checkpoint: 1, RemovalOnly: true}
	// #3952: the add finishes on a removal-only maintainer.
	expectViolation(t, run(t, Config{}, RunningMaintainerBootstrapped, removalOnly, addDone), "removal-only")
	expectViolation(t, run(t, Config{}, RunningMaintainerBootstrapped, addDone), "no maintainer runs there")
	normal := Event{Kind: MaintainerCreated, Changefeed: cf, Node: "n2", Checkpoint: 100, Epoch: 7}
	expectViolation(t, run(t, Config{}, RunningMaintainerBootstrapped, normal, addDone), "never bootstrapped")
	boot := Event{Kind: MaintainerBootstrapped, Changefeed: cf, Node: "n2", Epoch: 7}
	expectNone(t, run(t, Config{}, RunningMaintainerBootstrapped, normal, boot, addDone))
	stale := addDone
	stale.Epoch = 8
	expectViolation(t, run(t, Config{}, RunningMaintainerBootstrapped, normal, boot, stale), "epoch 7")
}

func TestSingleMaintainerGeneration(t *testing.T) {
	m1 := Event{Kind: MaintainerCreated, Changefeed: cf, Node: "n1", Epoch: 1}
	b1 := Event{Kind: MaintainerBootstrapped, Changefeed: cf, Node: "n1", Epoch: 1}
	m2 := Event{Kind: MaintainerCreated, Changefeed: cf, Node: "n2", Epoch: 2}
	b2 := Event{Kind: MaintainerBootstrapped, Changefeed: cf, Node: "n2", Epoch: 2}
	expectViolation(t, run(t, Config{}, SingleMaintainerGeneration, m1, b1, m2, b2), "still runs")
	expectNone(t, run(t, Config{}, SingleMaintainerGeneration, m1, b1, Event{Kind: MaintainerClosed, Changefeed: cf, Node: "n1"}, m2, b2))
	expectNone(t, run(t, Config{}, SingleMaintainerGeneration, m1, b1, Event{Kind: NodeLeft, Node: "n1"}, m2, b2))
}

func TestEverySpanReplicated(t *testing.T) {
	heal := Event{Kind: FaultsHealed, Checkpoint: 100}
	quiet := Event{Kind: Quiesced}
	t1 := WholeTable(1)
	// #3411: table 2's dispatcher was removed by a move whose Create was lost.
	expectViolation(t, run(t, Config{}, EverySpanReplicated, created(1, 2),
		disp(DispatcherCreated, "n1", "d1", t1), disp(DispatcherWorking, "n1", "d1", t1),
		disp(DispatcherCreated, "n1", "d2", WholeTable(2)), disp(DispatcherRemoved, "n1", "d2", Span{}), heal, quiet), "table 2 has no working dispatcher")
	lo, hi := Span{Table: 1, End: "m"}, Span{Table: 1, Start: "m"}
	expectNone(t, run(t, Config{}, EverySpanReplicated, created(1),
		disp(DispatcherCreated, "n1", "a", lo), disp(DispatcherWorking, "n1", "a", lo),
		disp(DispatcherCreated, "n2", "b", hi), disp(DispatcherWorking, "n2", "b", hi), heal, quiet))
	expectViolation(t, run(t, Config{}, EverySpanReplicated, created(1),
		disp(DispatcherCreated, "n1", "a", lo), disp(DispatcherWorking, "n1", "a", lo), heal, quiet), `keys from "m" to the end`)
	expectViolation(t, run(t, Config{}, EverySpanReplicated, created(1),
		disp(DispatcherCreated, "n1", "a", t1), disp(DispatcherWorking, "n1", "a", t1),
		disp(DispatcherCreated, "n2", "b", hi), disp(DispatcherWorking, "n2", "b", hi), heal, quiet), "overlapping")
	// A table created by DDL must be replicated too.
	expectViolation(t, run(t, Config{}, EverySpanReplicated, created(1),
		disp(DispatcherCreated, "n1", "a", t1), disp(DispatcherWorking, "n1", "a", t1),
		Event{Kind: TableCreated, Span: WholeTable(5), Checkpoint: 150}, heal, quiet), "table 5")
	// A paused changefeed is not expected to replicate.
	expectNone(t, run(t, Config{}, EverySpanReplicated, created(1), Event{Kind: StateChanged, Changefeed: cf, State: StateStopped}, heal, quiet))
}

func TestCheckpointAdvancesAfterHeal(t *testing.T) {
	heal := Event{Kind: FaultsHealed, Checkpoint: 300}
	quiet := Event{Kind: Quiesced}
	expectViolation(t, run(t, Config{}, CheckpointAdvancesAfterHeal, created(1), stored(200), heal, stored(250), quiet), "stored checkpoint is 250, below the upstream resolved ts 300")
	expectNone(t, run(t, Config{}, CheckpointAdvancesAfterHeal, created(1), stored(200), heal, stored(300), quiet))
	expectNone(t, run(t, Config{}, CheckpointAdvancesAfterHeal, created(1), stored(200), Event{Kind: StateChanged, Changefeed: cf, State: StateFailed}, heal, quiet))
}

func TestSpanParseRoundTrip(t *testing.T) {
	for _, s := range []Span{WholeTable(12), {Table: 3, Start: "a", End: "m"}, {Table: 3, Start: "m"}} {
		got, err := ParseSpan(s.String())
		if err != nil || got != s {
			t.Fatalf("ParseSpan(%q) = %v, %v", s.String(), got, err)
		}
	}
	for _, bad := range []string{"", "x1", "t", "tz", "t1[a", "t1[a)"} {
		if _, err := ParseSpan(bad); err == nil {
			t.Fatalf("ParseSpan(%q): expected an error", bad)
		}
	}
}

func TestCatalogueConsistent(t *testing.T) {
	seen := map[Kind]bool{}
	for _, l := range LogLines() {
		if seen[l.Kind] && l.Kind != DispatcherOpStarted && l.Kind != DispatcherOpFinished {
			t.Fatalf("kind %v has two canonical lines", l.Kind)
		}
		seen[l.Kind] = true
	}
	for _, k := range Kinds() {
		if !seen[k] {
			t.Errorf("kind %v has no canonical log line", k)
		}
		if back, ok := ParseKind(k.String()); !ok || back != k {
			t.Errorf("ParseKind(%q) = %v", k.String(), back)
		}
	}
	for _, b := range Bugs() {
		if _, ok := PropertyInfo(b.Property); !ok {
			t.Errorf("bug %s names unknown property %s", b.Name, b.Property)
		}
	}
	if len(NewMonitors(Config{})) != len(Properties()) {
		t.Fatal("every property needs exactly one monitor")
	}
	for i, m := range NewMonitors(Config{}) {
		if m.Property() != Properties()[i].Name {
			t.Errorf("monitor %d is %s, want %s", i, m.Property(), Properties()[i].Name)
		}
	}
}

func TestRunningMaintainerBootstrappedIgnoresCanceledOperators(t *testing.T) {
	canceled := Event{Kind: MaintainerOpFinished, Changefeed: cf, Op: OpAdd, Node: "n2", Reason: "canceled"}
	expectNone(t, run(t, Config{}, RunningMaintainerBootstrapped, canceled))
}

// A move keeps the dispatcher ID: a delayed Create that lands on the origin
// after the move makes the same ID live on two nodes.
func TestAtMostOneDispatcherPerSpanSameIDTwoNodes(t *testing.T) {
	t4 := WholeTable(4)
	expectViolation(t, run(t, Config{}, AtMostOneDispatcherPerSpan,
		disp(DispatcherCreated, "n2", "d1", t4), disp(DispatcherCreated, "n1", "d1", t4)), "dispatcher d1 on node n1")
	// Removing one copy must not hide the other from every-span-replicated.
	expectNone(t, run(t, Config{}, EverySpanReplicated, created(4),
		disp(DispatcherCreated, "n2", "d1", t4), disp(DispatcherWorking, "n2", "d1", t4),
		disp(DispatcherCreated, "n1", "d1", t4), disp(DispatcherRemoved, "n1", "d1", Span{}),
		Event{Kind: FaultsHealed, Checkpoint: 100}, Event{Kind: Quiesced}))
}
