package proptest

import (
	"os"
	"strconv"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// BenchmarkStateMachine measures the state machine's throughput with every
// fix on and the full action menu: each iteration runs CDCSPEC_BENCH_CHECKS
// (default 100) rapid checks of 100 steps on average from a fixed seed. It
// reports checks/s, steps/s and the projected seconds for 1,000 checks of
// 100 steps (the target is < 60 s on 2 cores). The shadow model is off here
// (TestProtocol runs it); BenchmarkStateMachineShadow measures it on.
//
//	go test ./proptest -run '^$' -bench StateMachine -benchtime 1x
func BenchmarkStateMachine(b *testing.B)       { benchMachine(b, false) }
func BenchmarkStateMachineShadow(b *testing.B) { benchMachine(b, true) }

func benchMachine(b *testing.B, shadow bool) {
	checks := 100
	if v, err := strconv.Atoi(os.Getenv("CDCSPEC_BENCH_CHECKS")); err == nil && v > 0 {
		checks = v
	}
	var steps, runs int
	start := time.Now()
	for i := 0; i < b.N; i++ {
		m := &machine{shadow: shadow, countSteps: &steps}
		tb := &recTB{name: "BenchmarkStateMachine"}
		withRapidFlags(nil, map[string]string{"rapid.seed": strconv.Itoa(1 + i), "rapid.checks": strconv.Itoa(checks),
			"rapid.steps": "100", "rapid.nofailfile": "true", "rapid.shrinktime": "1s"}, func() { rapid.Check(tb, m.prop) })
		if tb.Failed() {
			b.Logf("a check failed (reported by TestProtocol): %s", m.lastFail)
		}
		runs += m.runs
	}
	el := time.Since(start).Seconds()
	b.ReportMetric(float64(runs)/el, "checks/s")
	b.ReportMetric(float64(steps)/el, "steps/s")
	b.ReportMetric(1000*100/(float64(steps)/el), "s/1000x100")
}
