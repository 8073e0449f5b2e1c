package xcheck

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"cdcspec/impl/core"
	"cdcspec/impl/sim"
	"cdcspec/spec"
	. "cdcspec/traces"
)

// TestImplPausedTriggerClosedInLog: a paused changefeed's table trigger
// dispatcher is closed, and the simulation's combined log must say so in
// a way the log checker can place. The simulation writes one log for all
// its captures, so a line without the capture's node cannot be placed;
// every dispatcher line carries nodeID, and "table trigger event dispatcher
// created" lacked it: the trigger was created on node "" and removed on
// its real node, and stop-closes-dispatchers saw it live for ever (chaos
// seed 27 of TestImplChaosNoFalseViolations).
func TestImplPausedTriggerClosedInLog(t *testing.T) {
	for _, level := range []string{"info", "debug"} {
		var log bytes.Buffer
		s := sim.New(sim.Config{Seed: 27, Nodes: 3, Tables: 3, Log: &log, LogLevel: level})
		require.NoError(t, s.CreateChangefeed("cf1"))
		require.NoError(t, s.CreateChangefeed("cf2"))
		s.RunFor(3000)
		// Two maintainers on two captures: the log names two captures as
		// its own, so a line without nodeID gets no node.
		if s.MaintainerNode("cf1") == s.MaintainerNode("cf2") {
			var other core.NodeID
			for _, n := range s.Captures() {
				if n != s.MaintainerNode("cf1") {
					other = n
				}
			}
			require.NoError(t, s.MoveMaintainer("cf2", other))
			s.RunFor(3000)
		}
		require.NotEqual(t, s.MaintainerNode("cf1"), s.MaintainerNode("cf2"))
		require.NoError(t, s.PauseChangefeed("cf1"))
		s.RunFor(3000)
		s.RunUntilQuiet(30000)
		require.Empty(t, s.Violations(), "the online checker")
		rep, err := Run([]Input{stringInput("paused.log", log.String())}, Options{})
		require.NoError(t, err)
		require.Zero(t, rep.Stats.Unparsed, "%s: unparsed lines", level)
		require.Empty(t, findingsOf(rep, string(spec.StopClosesDispatchers)), "%s log", level)
	}
}
