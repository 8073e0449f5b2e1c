package proptest

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"cdcspec/impl/sim"
	"cdcspec/spec"
)

// TestOpsAreTheVocabulary: every Op is a fault of the vocabulary or a
// domain action, every fault is an Op or listed in UnsupportedFaults with a
// reason, and the rapid machine has an action for every Op.
func TestOpsAreTheVocabulary(t *testing.T) {
	require.NoError(t, spec.CheckUnsupported("proptest", UnsupportedFaults))
	isOp := map[Op]bool{}
	for _, o := range Ops {
		isOp[o] = true
		assert.True(t, spec.Fault(o).Known() || spec.Action(o).Known(), "op %s is neither a fault nor a domain action", o)
	}
	for _, f := range spec.Faults() {
		_, unsupported := UnsupportedFaults[f]
		assert.NotEqual(t, isOp[Op(f)], unsupported, "%s must be exactly one of: an Op, listed in UnsupportedFaults", f)
	}
	d, err := NewDriver(Setup{Seed: 1, Nodes: 3, Tables: 2}, nil)
	require.NoError(t, err)
	acts := (&machine{ops: Ops}).actions(d) // every Op has an action (the default menu leaves fast-fail-error out)
	for _, o := range Ops {
		assert.Contains(t, acts, string(o), "no rapid action for %s", o)
	}
}

// TestDriverAppliesEveryFault: Driver.Do carries out each fault Op (after
// the steps that make its precondition hold) and the simulation reports it.
func TestDriverAppliesEveryFault(t *testing.T) {
	before := map[Op][]Step{
		OpRestartCapture: {{Op: OpKillCapture, Node: 3}},
		OpResumeUpstream: {{Op: OpStallUpstream}},
	}
	example := map[Op]Step{
		OpKillCapture:    {Op: OpKillCapture, Node: 3},
		OpKillMaintainer: {Op: OpKillMaintainer, Feed: "cf1"},
		OpRestartCapture: {Op: OpRestartCapture},
		OpAddCapture:     {Op: OpAddCapture},
		OpExpireSession:  {Op: OpExpireSession, Node: 3},
		OpDropMessages:   {Op: OpDropMessages, MsgType: "HeartBeatRequest", To: -1, Count: 5},
		OpDupMessages:    {Op: OpDupMessages, MsgType: "HeartBeatRequest", To: 0, Count: 1, DelayMs: 1000},
		OpDelayMessages:  {Op: OpDelayMessages, MsgType: "HeartBeatRequest", To: -1, Count: 5, DelayMs: 1000},
		OpRandomFaults:   {Op: OpRandomFaults, Prob: 5, DelayMs: 100},
		OpPartition:      {Op: OpPartition, Node: 2},
		OpHealNetwork:    {Op: OpHealNetwork},
		OpSinkError:      {Op: OpSinkError, Feed: "cf1", Node: 1},
		OpFastFail:       {Op: OpFastFail, Feed: "cf1", Node: 1},
		OpStallUpstream:  {Op: OpStallUpstream},
		OpResumeUpstream: {Op: OpResumeUpstream},
		OpBlockCreate:    {Op: OpBlockCreate, Node: 1, On: true},
		OpSlowClose:      {Op: OpSlowClose, Node: 1, On: true},
	}
	observedAs := map[Op]spec.Fault{OpKillMaintainer: spec.FaultKillCapture, OpRestartCapture: spec.FaultAddCapture}
	for _, o := range Ops {
		f := spec.Fault(o)
		if !f.Known() {
			continue
		}
		t.Run(string(o), func(t *testing.T) {
			st, ok := example[o]
			require.True(t, ok, "no example step for %s", o)
			d, err := NewDriver(Setup{Seed: 1, Nodes: 4, Tables: 2}, nil)
			require.NoError(t, err)
			require.NoError(t, d.Do(Step{Op: OpCreateChangefeed, Feed: "cf1", Ms: 5000}))
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
			if o == OpDupMessages {
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
