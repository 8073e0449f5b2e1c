package sim

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

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
