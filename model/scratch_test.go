package model

import (
	"os"
	"testing"
)

func TestScratch(t *testing.T) {
	name := os.Getenv("CFG")
	if name == "" {
		t.Skip()
	}
	cfg, _ := Standard(name)
	if b := os.Getenv("BUG"); b != "" {
		bb, _ := ParseBug(b)
		cfg.Bugs |= bb
	}
	if os.Getenv("NOLIVE") != "" {
		cfg.Liveness = false
	}
	r := Check(cfg, Options{Progress: func(p Progress) { t.Logf("%+v", p) }})
	t.Logf("%s %s distinct=%d trans=%d depth=%d secs=%.1f rate=%.0f", r.Outcome, r.Reason, r.Distinct, r.Transitions, r.Depth, r.Seconds, r.StatesPerSecond())
	if r.Violation != nil {
		t.Log(r.Violation.Story())
	}
}

func BenchmarkScratch(b *testing.B) {
	cfg, _ := Standard("default")
	cfg.Liveness = false
	cfg.MaxStates = 200000
	for i := 0; i < b.N; i++ {
		r := Check(cfg, Options{})
		b.ReportMetric(r.StatesPerSecond(), "states/s")
	}
}

func TestSize(t *testing.T) { t.Logf("state size %d", StateSize) }
