package model

import (
	"encoding/json"
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
	if v := os.Getenv("TS"); v != "" {
		cfg.TsMax = v[0] - '0'
	}
	if v := os.Getenv("DDL"); v != "" {
		cfg.DDLTables = int(v[0] - '0')
	}
	if v := os.Getenv("CRASH"); v != "" {
		cfg.Crashes = int(v[0] - '0')
	}
	if v := os.Getenv("SINK"); v != "" {
		cfg.SinkErrors = int(v[0] - '0')
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

func TestScratchReplay(t *testing.T) {
	f := os.Getenv("REPLAY")
	if f == "" {
		t.Skip()
	}
	data, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	var j struct {
		Violation struct {
			Steps []struct {
				Action Action `json:"action"`
			} `json:"steps"`
		} `json:"violation"`
	}
	if err := json.Unmarshal(data, &j); err != nil {
		t.Fatal(err)
	}
	var acts []Action
	for _, s := range j.Violation.Steps {
		if s.Action.Kind != aNone {
			acts = append(acts, s.Action)
		}
	}
	cfg, _ := Standard(os.Getenv("CFG"))
	if b := os.Getenv("BUG"); b != "" {
		bb, _ := ParseBug(b)
		cfg.Bugs |= bb
	}
	states, _, err := Replay(cfg, acts)
	t.Logf("replayed %d, err %v", len(states)-1, err)
	t.Log(states[len(states)-1].String())
}
