package sim

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"cdcspec/spec"
)

// runRecorded runs one soak-style seed with the full debug log.
func runRecorded(seed uint64) (string, []spec.Event) {
	var log bytes.Buffer
	s := New(Config{Seed: seed, Log: &log, LogLevel: "debug", RecordEvents: true})
	r := rand.New(rand.NewPCG(seed, 1))
	_ = s.CreateChangefeed("cf1")
	s.RunFor(2000)
	c, _ := newChaos(s, r, []string{"cf1"}, nil)
	for i := 0; i < 15; i++ {
		_, _ = c.step()
		s.RunFor(1000)
	}
	s.Heal()
	s.RunUntilQuiet(60_000)
	return log.String(), s.Events()
}

// TestDeterministic: the same seed gives the same run byte for byte,
// log included; a different seed gives a different one.
func TestDeterministic(t *testing.T) {
	a, ea := runRecorded(42)
	b, eb := runRecorded(42)
	if a != b {
		al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
		for i := range al {
			if i >= len(bl) || al[i] != bl[i] {
				t.Fatalf("same seed, different logs at line %d:\n%s\n%s", i+1, al[i], bl[min(i, len(bl)-1)])
			}
		}
		t.Fatalf("same seed, logs differ in length: %d vs %d lines", len(al), len(bl))
	}
	if len(ea) != len(eb) {
		t.Fatalf("same seed, %d vs %d events", len(ea), len(eb))
	}
	if len(a) < 10_000 || len(ea) < 100 {
		t.Fatalf("run too small to mean anything: %d log bytes, %d events", len(a), len(ea))
	}
	c, _ := runRecorded(43)
	if a == c {
		t.Fatal("different seeds gave identical logs")
	}
}

// TestEveryEventLogsItsCanonicalLine: each event kind the simulation emits
// appears in the log with its spec.LogLines file and message.
func TestEveryEventLogsItsCanonicalLine(t *testing.T) {
	log, events := runRecorded(7)
	lines := map[spec.Kind]spec.LogLine{}
	for _, l := range spec.LogLines() {
		lines[l.Kind] = l
	}
	seen := map[spec.Kind]bool{}
	for _, e := range events {
		seen[e.Kind] = true
	}
	if len(seen) < 15 {
		t.Fatalf("only %d event kinds in the run", len(seen))
	}
	for k := range seen {
		l, ok := lines[k]
		if !ok {
			t.Errorf("event kind %s has no canonical log line in spec.LogLines", k)
			continue
		}
		want := "[" + l.File + ":"
		msg := l.Message
		if strings.ContainsAny(msg, " \"[]=\\") {
			msg = `"` + strings.ReplaceAll(msg, `"`, `\"`) + `"`
		}
		found := false
		for _, line := range strings.Split(log, "\n") {
			if strings.Contains(line, want) && strings.Contains(line, "["+msg+"]") {
				found = true
				break
			}
		}
		if !found {
			t.Errorf("event kind %s: no log line with %s and message %s", k, want, msg)
		}
	}
}

// TestEveryBugHasScenario: each catalogue entry is switched on by a
// scenario, in the simulation's testdata or in the conformance suite's
// (impl/conformance/testdata, where an entry's decision point is driven
// component by component), whose output shows the failure next to the
// fixed run.
func TestEveryBugHasScenario(t *testing.T) {
	var all string
	for _, dir := range []string{"testdata", "../conformance/testdata"} {
		entries, err := os.ReadDir(dir)
		require.NoError(t, err)
		for _, e := range entries {
			b, err := os.ReadFile(filepath.Join(dir, e.Name()))
			require.NoError(t, err)
			all += string(b)
		}
	}
	for _, b := range spec.Bugs() {
		if b.ImplGap != "" {
			t.Logf("catalogue entry %s: the implementation cannot express it yet: %s", b.Name, b.ImplGap)
			continue
		}
		assert.Contains(t, all, "bugs="+b.Name, "catalogue entry %s (%s) has no scenario", b.Name, b.Issue)
	}
}

// BenchmarkSimulation measures handled messages per second (one core): a
// three-capture cluster with two changefeeds and six tables under light
// message faults. Logging is off (events still go to the monitors); the
// _log variant encodes the full debug log.
func BenchmarkSimulation(b *testing.B) {
	bench(b, nil)
}

func BenchmarkSimulationWithLog(b *testing.B) {
	var buf bytes.Buffer
	bench(b, &buf)
}

func bench(b *testing.B, log *bytes.Buffer) {
	b.ReportAllocs()
	var msgs uint64
	for i := 0; i < b.N; i++ {
		cfg := Config{Seed: uint64(i), Nodes: 3, Tables: 6}
		if log != nil {
			log.Reset()
			cfg.Log, cfg.LogLevel = log, "debug"
		}
		s := New(cfg)
		_ = s.CreateChangefeed("cf1")
		_ = s.CreateChangefeed("cf2")
		s.SetFaults(Faults{DropProb: 0.01, DupProb: 0.01, DelayMinMs: 1, DelayMaxMs: 20})
		s.RunFor(60_000)
		msgs += s.Delivered
	}
	b.ReportMetric(float64(msgs)/b.Elapsed().Seconds(), "msgs/s")
	b.ReportMetric(float64(msgs)/float64(b.N), "msgs/run")
}
