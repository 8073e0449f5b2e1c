package proptest

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"cdcspec/impl/sim"
	"cdcspec/refinement/drive"
	"cdcspec/spec"
)

// TestOpsAreTheVocabulary: every Op is a fault of the vocabulary or a
// domain action, every fault is an Op or listed in UnsupportedFaults with a
// reason, and the rapid machine has an action for every Op.
func TestOpsAreTheVocabulary(t *testing.T) {
	require.NoError(t, spec.CheckUnsupported("proptest", UnsupportedFaults))
	isOp := map[drive.Op]bool{}
	for _, o := range drive.Ops {
		isOp[o] = true
		assert.True(t, spec.Fault(o).Known() || spec.Action(o).Known(), "op %s is neither a fault nor a domain action", o)
	}
	for _, f := range spec.Faults() {
		_, unsupported := UnsupportedFaults[f]
		assert.NotEqual(t, isOp[drive.Op(f)], unsupported, "%s must be exactly one of: an Op, listed in UnsupportedFaults", f)
	}
	d, err := drive.NewDriver(drive.Setup{Seed: 1, Nodes: 3, Tables: 2}, nil)
	require.NoError(t, err)
	acts := (&machine{ops: drive.Ops}).actions(d) // every Op has an action (the default menu leaves fast-fail-error out)
	for _, o := range drive.Ops {
		assert.Contains(t, acts, string(o), "no rapid action for %s", o)
	}
}

// TestDriverAppliesEveryFault: Driver.Do carries out each fault Op (after
// the steps that make its precondition hold) and the simulation reports it.
func TestDriverAppliesEveryFault(t *testing.T) {
	before := map[drive.Op][]drive.Step{
		drive.OpRestartCapture: {{Op: drive.OpKillCapture, Node: 3}},
		drive.OpResumeUpstream: {{Op: drive.OpStallUpstream}},
	}
	example := map[drive.Op]drive.Step{
		drive.OpKillCapture:    {Op: drive.OpKillCapture, Node: 3},
		drive.OpKillMaintainer: {Op: drive.OpKillMaintainer, Feed: "cf1"},
		drive.OpRestartCapture: {Op: drive.OpRestartCapture},
		drive.OpAddCapture:     {Op: drive.OpAddCapture},
		drive.OpExpireSession:  {Op: drive.OpExpireSession, Node: 3},
		drive.OpDropMessages:   {Op: drive.OpDropMessages, MsgType: "HeartBeatRequest", To: -1, Count: 5},
		drive.OpDupMessages:    {Op: drive.OpDupMessages, MsgType: "HeartBeatRequest", To: 0, Count: 1, DelayMs: 1000},
		drive.OpDelayMessages:  {Op: drive.OpDelayMessages, MsgType: "HeartBeatRequest", To: -1, Count: 5, DelayMs: 1000},
		drive.OpRandomFaults:   {Op: drive.OpRandomFaults, Prob: 5, DelayMs: 100},
		drive.OpPartition:      {Op: drive.OpPartition, Node: 2},
		drive.OpHealNetwork:    {Op: drive.OpHealNetwork},
		drive.OpSinkError:      {Op: drive.OpSinkError, Feed: "cf1", Node: 1},
		drive.OpFastFail:       {Op: drive.OpFastFail, Feed: "cf1", Node: 1},
		drive.OpStallUpstream:  {Op: drive.OpStallUpstream},
		drive.OpResumeUpstream: {Op: drive.OpResumeUpstream},
		drive.OpBlockCreate:    {Op: drive.OpBlockCreate, Node: 1, On: true},
		drive.OpSlowClose:      {Op: drive.OpSlowClose, Node: 1, On: true},
	}
	observedAs := map[drive.Op]spec.Fault{drive.OpKillMaintainer: spec.FaultKillCapture, drive.OpRestartCapture: spec.FaultAddCapture}
	for _, o := range drive.Ops {
		f := spec.Fault(o)
		if !f.Known() {
			continue
		}
		t.Run(string(o), func(t *testing.T) {
			st, ok := example[o]
			require.True(t, ok, "no example step for %s", o)
			d, err := drive.NewDriver(drive.Setup{Seed: 1, Nodes: 4, Tables: 2}, nil)
			require.NoError(t, err)
			require.NoError(t, d.Do(drive.Step{Op: drive.OpCreateChangefeed, Feed: "cf1", Ms: 5000}))
			for _, b := range before[o] {
				require.NoError(t, d.Do(b))
			}
			var seen []string
			d.Sim.Observe(func(s sim.Step) {
				if s.Kind == sim.StepFault {
					seen = append(seen, s.Name)
				}
			})
			err = d.Do(st)
			if o == drive.OpDupMessages {
				// TiCDC's message center never duplicates: the step
				// happens and the simulation refuses the rule.
				require.ErrorContains(t, err, "message-center")
				return
			}
			require.NoError(t, err)
			want := f
			if w, ok := observedAs[o]; ok {
				want = w
			}
			assert.Contains(t, seen, string(want))
		})
	}
}
