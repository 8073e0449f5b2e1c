package linearizability

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
)

// refCheckTimeout bounds each porcupine check in these tests; Unknown fails.
const refCheckTimeout = 10 * time.Second

// runRef drives ref with workload w from concurrent clients while its system
// goroutine runs, optionally injecting recorded faults, and returns the
// history.
func runRef(t testing.TB, ref *refAdmin, w Workload, faults bool) History {
	t.Helper()
	rec := NewRecorder()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go ref.runSystem(ctx, &wg)
	if faults {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(w.Seed, 1<<32))
			for ctx.Err() == nil {
				time.Sleep(time.Duration(500+rng.IntN(1500)) * time.Microsecond)
				cf := fmt.Sprintf("cf-%d", rng.IntN(w.Changefeeds))
				// The effect lands inside the recorded window.
				call := rec.Begin(w.Clients, Input{Op: OpFault, Changefeed: cf})
				ref.failIfRunning(cf)
				call.Return(Output{})
			}
		}()
	}
	if err := RunClientsWith(context.Background(), ref, rec, w); err != nil {
		t.Fatal(err)
	}
	cancel()
	wg.Wait()
	return rec.History(t.Name())
}

func countUnknown(h History) (unknown, faults int) {
	for _, op := range h.Ops {
		if op.Input.Op == OpFault {
			faults++
		} else if op.Output.Unknown && !op.Input.Op.isRead() {
			unknown++
		}
	}
	return unknown, faults
}

// TestRefAdminLinearizable: the correct reference, driven by 8 concurrent
// clients with lost replies and recorded faults, is linearizable under both
// admin models.
func TestRefAdminLinearizable(t *testing.T) {
	for seed := uint64(1); seed <= 3; seed++ {
		t.Run(fmt.Sprintf("seed%d", seed), func(t *testing.T) {
			w := DefaultWorkload(8, 150, seed)
			if seed == 3 {
				w.TargetTs = 700 // let changefeeds finish
			}
			h := runRef(t, newRefAdmin(refBugs{}, true), w, true)
			unknown, faults := countUnknown(h)
			t.Log(historyStats(h))
			for _, m := range []Model{AdminModel(), AdminModelSpontaneousFailure(), NewAdminModel(AdminOptions{FrozenWhileStopped: true})} {
				res, err := CheckWith(m, h, CheckOptions{Timeout: refCheckTimeout, Log: testLog{t}})
				if err != nil {
					t.Fatal(err)
				}
				t.Logf("%s (unknown outcomes: %d, faults: %d)", res, unknown, faults)
				if !res.Ok() {
					t.Fatalf("correct reference judged %s", res)
				}
			}
		})
	}
}

// TestRunClients exercises the brief's signature on the reference.
func TestRunClients(t *testing.T) {
	ref := newRefAdmin(refBugs{}, false)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go ref.runSystem(ctx, &wg)
	h, err := RunClients(context.Background(), ref, 4, 100, 42)
	cancel()
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Ops) != 400 {
		t.Fatalf("history has %d ops, want 400", len(h.Ops))
	}
	kinds := map[OpKind]int{}
	for _, op := range h.Ops {
		kinds[op.Input.Op]++
	}
	for _, k := range []OpKind{OpCreate, OpPause, OpResume, OpRemove, OpGet} {
		if kinds[k] == 0 {
			t.Errorf("workload never issued %s", k)
		}
	}
	res, err := Check(AdminModel(), h, refCheckTimeout)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Ok() {
		t.Fatalf("correct reference judged %s", res)
	}
	if _, err := RunClients(context.Background(), ref, 0, 1, 1); err == nil {
		t.Error("RunClients accepted 0 clients")
	}
}

// TestPlantedBugsCaught: each planted bug in the reference is found as
// Illegal by the named model within a few attempts, and the failing check
// writes porcupine's HTML (kept under $CDCSPEC_ARTIFACTS when set).
func TestPlantedBugsCaught(t *testing.T) {
	frozen := NewAdminModel(AdminOptions{FrozenWhileStopped: true})
	cases := []struct {
		name  string
		bugs  refBugs
		model Model
	}{
		{"stale-checkpoint-read", refBugs{staleRead: true}, AdminModel()},
		{"resume-from-running", refBugs{resumeFromRunning: true}, AdminModel()},
		{"async-remove", refBugs{asyncRemove: true}, AdminModel()},
		{"stopped-keeps-advancing", refBugs{stoppedKeepsAdvancing: true}, frozen},
	}
	const attempts = 5
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for attempt := 1; attempt <= attempts; attempt++ {
				w := DefaultWorkload(8, 150, uint64(attempt))
				h := runRef(t, newRefAdmin(tc.bugs, true), w, false)
				res, err := CheckWith(tc.model, h, CheckOptions{Timeout: refCheckTimeout, Name: "planted-" + tc.name, ArtifactRoot: expectedFailureRoot(t), Log: testLog{t}})
				if err != nil {
					t.Fatal(err)
				}
				t.Logf("attempt %d: %s", attempt, res)
				if res.Verdict == porcupine.Illegal {
					assertArtifacts(t, res.ArtifactDir)
					return
				}
				if res.ArtifactDir != "" && res.Verdict == porcupine.Ok {
					t.Fatalf("Ok check wrote artifacts")
				}
			}
			t.Fatalf("planted bug %s not caught in %d attempts", tc.name, attempts)
		})
	}
}

// TestStoppedKeepsAdvancingIsInvisibleToDefaultModel pins a blind spot:
// the default admin model accepts a stopped changefeed whose checkpoint
// keeps moving (it is still monotonic); only FrozenWhileStopped sees it.
func TestStoppedKeepsAdvancingIsInvisibleToDefaultModel(t *testing.T) {
	h := runRef(t, newRefAdmin(refBugs{stoppedKeepsAdvancing: true}, false), DefaultWorkload(8, 150, 1), false)
	res, err := CheckWith(AdminModel(), h, CheckOptions{Timeout: refCheckTimeout, Artifacts: ArtifactsNever})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Ok() {
		t.Fatalf("default model judged %s; expected it to be blind to this bug", res)
	}
}

// TestCheckUnknownIsFailure: a history porcupine cannot decide within the
// timeout is reported as inconclusive, not Ok, and leaves artifacts.
func TestCheckUnknownIsFailure(t *testing.T) {
	// 60 fully concurrent unknown-outcome advances of distinct values, then
	// a load of a value nobody wrote: proving illegality means exhausting
	// the orderings of the advances, far beyond 50 ms.
	h := History{Name: "undecidable-in-time"}
	h.Ops = append(h.Ops, Op{Input: Input{Op: OpPut, Changefeed: "cf", Ts: 1}, Call: 0, Return: 1})
	for i := 0; i < 60; i++ {
		h.Ops = append(h.Ops, Op{Client: 1 + i, Input: Input{Op: OpAdvance, Changefeed: "cf", Ts: uint64(10 + i)}, Call: 2, Return: 1000})
	}
	for i := 0; i < 60; i++ {
		h.Ops = append(h.Ops, Op{Client: 1 + i, Input: Input{Op: OpLoad, Changefeed: "cf"}, Output: Output{CheckpointTs: uint64(10 + (i*7)%60)}, Call: 3, Return: 1000})
	}
	h.Ops = append(h.Ops, Op{Input: Input{Op: OpLoad, Changefeed: "cf"}, Output: Output{CheckpointTs: 5}, Call: 2000, Return: 2001})
	res, err := CheckWith(CheckpointRegisterModel(), h, CheckOptions{Timeout: 50 * time.Millisecond, VisualizeTimeout: 50 * time.Millisecond, ArtifactRoot: t.TempDir(), Log: testLog{t}})
	if err != nil {
		t.Fatal(err)
	}
	t.Log(res)
	if res.Verdict != porcupine.Unknown {
		t.Fatalf("got %s, want Unknown (timeout)", res.Verdict)
	}
	if res.Ok() {
		t.Fatal("Unknown counted as Ok")
	}
	if got := res.Message; len(got) < 24 || got[:24] != "inconclusive: timeout af" {
		t.Fatalf("message %q does not start with \"inconclusive: timeout\"", got)
	}
	assertArtifacts(t, res.ArtifactDir)
}

// TestCheckRejectsBadInput: no timeout, zero model, wrong operation kinds,
// empty changefeed and inverted intervals are errors naming the problem.
func TestCheckRejectsBadInput(t *testing.T) {
	good := History{Name: "h", Ops: []Op{{Input: Input{Op: OpGet, Changefeed: "cf"}, Output: Output{Err: CodeNotFound}, Call: 1, Return: 2}}}
	if _, err := Check(AdminModel(), good, 0); err == nil {
		t.Error("check without timeout accepted")
	}
	if _, err := Check(Model{}, good, time.Second); err == nil {
		t.Error("zero model accepted")
	}
	bad := []History{
		{Name: "wrong-kind", Ops: []Op{{Input: Input{Op: OpLoad, Changefeed: "cf"}, Call: 1, Return: 2}}},
		{Name: "no-cf", Ops: []Op{{Input: Input{Op: OpGet}, Call: 1, Return: 2}}},
		{Name: "inverted", Ops: []Op{{Input: Input{Op: OpGet, Changefeed: "cf"}, Call: 5, Return: 2}}},
		{Name: "bad-code", Ops: []Op{{Input: Input{Op: OpGet, Changefeed: "cf"}, Output: Output{Err: "boom"}, Call: 1, Return: 2}}},
	}
	for _, h := range bad {
		if _, err := Check(AdminModel(), h, time.Second); err == nil {
			t.Errorf("history %s accepted", h.Name)
		} else {
			t.Logf("%s: %v", h.Name, err)
		}
	}
	if _, err := ReadHistory("testdata/does-not-exist.json"); err == nil {
		t.Error("missing file accepted")
	}
	f := t.TempDir() + "/typo.json"
	if err := os.WriteFile(f, []byte(`{"ops":[{"inptu":{}}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadHistory(f); err == nil {
		t.Error("unknown JSON field accepted")
	}
}

// expectedFailureRoot is where tests that expect a failing check put its
// artifacts: $CDCSPEC_ARTIFACTS/linearizability when set (to keep and open
// them), else a temporary folder, so that every `make test` does not pile up
// folders under artifacts/. Unexpected failures use the default root.
func expectedFailureRoot(t testing.TB) string {
	if os.Getenv(ArtifactsEnv) != "" {
		return DefaultArtifactRoot()
	}
	return t.TempDir()
}

// historyStats summarises a history for test logs: how often each kind of
// call succeeded, and how much same-changefeed overlap the checker faced.
func historyStats(h History) string {
	ok := map[OpKind]int{}
	total := map[OpKind]int{}
	byCF := map[string][]Op{}
	for _, op := range h.Ops {
		total[op.Input.Op]++
		if !op.Output.Unknown && op.Output.Err == CodeNone {
			ok[op.Input.Op]++
		}
		byCF[op.Input.Changefeed] = append(byCF[op.Input.Changefeed], op)
	}
	maxOverlap, sumOverlap, n := 0, 0, 0
	for _, ops := range byCF {
		for i, a := range ops {
			if a.Output.Unknown {
				continue
			}
			c := 0
			for j, b := range ops {
				if i != j && b.Call <= a.Return && (b.Output.Unknown || b.Return >= a.Call) {
					c++
				}
			}
			maxOverlap = max(maxOverlap, c)
			sumOverlap += c
			n++
		}
	}
	s := ""
	for _, k := range []OpKind{OpCreate, OpPause, OpResume, OpRemove, OpGet} {
		s += fmt.Sprintf("%s %d/%d ok, ", k, ok[k], total[k])
	}
	return s + fmt.Sprintf("same-changefeed overlap per op: mean %.1f, max %d", float64(sumOverlap)/float64(max(n, 1)), maxOverlap)
}

// TestRefAdminSoak (CDCSPEC_LONG=1): more seeds and bigger histories on the
// correct reference, every check Ok within its timeout.
func TestRefAdminSoak(t *testing.T) {
	if os.Getenv("CDCSPEC_LONG") == "" {
		t.Skip("set CDCSPEC_LONG=1 (make test-long)")
	}
	for seed := uint64(100); seed < 120; seed++ {
		for _, shape := range []struct{ clients, ops, cfs int }{{8, 500, 3}, {16, 300, 6}, {32, 150, 12}} {
			w := DefaultWorkload(shape.clients, shape.ops, seed)
			w.Changefeeds = shape.cfs
			h := runRef(t, newRefAdmin(refBugs{}, true), w, true)
			res, err := CheckWith(AdminModel(), h, CheckOptions{Timeout: time.Minute, Log: testLog{t}})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("seed %d, %d clients x %d ops over %d changefeeds: %s; %s", seed, shape.clients, shape.ops, shape.cfs, res, historyStats(h))
			if !res.Ok() {
				t.Fatalf("correct reference judged %s", res)
			}
		}
	}
}

// BenchmarkCheckRefHistory measures Check on recorded histories of the
// correct reference (lossy, with faults): go test -run '^$' -bench CheckRef ./linearizability/
func BenchmarkCheckRefHistory(b *testing.B) {
	for _, shape := range []struct{ clients, ops, cfs int }{{8, 150, 3}, {8, 1250, 3}, {16, 625, 3}, {16, 625, 6}, {32, 300, 8}, {32, 300, 12}} {
		b.Run(fmt.Sprintf("clients%d-ops%d-cfs%d", shape.clients, shape.ops, shape.cfs), func(b *testing.B) {
			w := DefaultWorkload(shape.clients, shape.ops, 1)
			w.Changefeeds = shape.cfs
			h := runRef(b, newRefAdmin(refBugs{}, true), w, true)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				res, err := CheckWith(AdminModel(), h, CheckOptions{Timeout: time.Minute, Artifacts: ArtifactsNever})
				if err != nil || !res.Ok() {
					b.Fatalf("%v %v", res, err)
				}
			}
			b.ReportMetric(float64(len(h.Ops)), "ops/history")
		})
	}
}
