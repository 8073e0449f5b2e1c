package model

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSchedulersPickUndetectedCrashedNode: the coordinator's and the
// maintainer's schedulers choose among NodeManager's alive nodes, which
// list a crashed capture until its etcd key expires (State.schedulable).
// Before, the model's schedulers saw the crash at once, and the per-step
// conformance check left the model when the implementation bound a
// changefeed to a killed capture whose key had not expired yet
// (proptest/testdata/rapid/TestProtocolPerStep, the 2026-12-03 file).
func TestSchedulersPickUndetectedCrashedNode(t *testing.T) {
	cfg := standard["default"]()
	do := func(t *testing.T, s State, a Action) State {
		t.Helper()
		require.True(t, enabled(&cfg, &s, a), "action %s not enabled in\n%s", a, s.String())
		n, _ := Step(cfg, s, a)
		return n
	}

	t.Run("coordinator", func(t *testing.T) {
		s := do(t, Init(&cfg), Action{Kind: ACrash, Node: 1})
		s = do(t, s, Action{Kind: ACoordSchedule, Node: 1})
		require.Equal(t, s.Ident(1), s.Coord.Node, "the add operator targets the crashed node")
		require.Zero(t, s.nmsgs(), "nothing reaches a crashed node")
		require.False(t, coordTickEnabled(&s), "the operator's re-send goes nowhere")
		s = do(t, s, Action{Kind: ADetect, Node: 1})
		require.Equal(t, uint8(replAbsent), s.Coord.Repl, "the node's departure cancels the add")
		require.False(t, enabled(&cfg, &s, Action{Kind: ACoordSchedule, Node: 1}), "a departed node is no target")
		require.True(t, enabled(&cfg, &s, Action{Kind: ACoordSchedule, Node: 0}))
	})

	t.Run("maintainer", func(t *testing.T) {
		// Bootstrap a maintainer on n0 until its span is absent.
		s := do(t, Init(&cfg), Action{Kind: ACoordSchedule, Node: 0})
		absent := func(s *State) bool {
			mt := &s.Maint[0]
			return mt.Bootstrapped && mt.Spans[0].ID != 0 && mt.Spans[0].State == replAbsent
		}
		for i := 0; !absent(&s); i++ {
			require.Less(t, i, 20, "the maintainer never bootstrapped:\n%s", s.String())
			require.NotZero(t, s.nmsgs(), "no message left:\n%s", s.String())
			s = do(t, s, Action{Kind: ADeliver, Msg: s.Net[0]})
		}
		key := s.Maint[0].Spans[0].key()
		s = do(t, s, Action{Kind: ACrash, Node: 1})
		s = do(t, s, Action{Kind: AMaintSchedule, Node: 0, Arg: key, Arg2: 1})
		require.NotEqual(t, uint8(replAbsent), s.Maint[0].Spans[0].State, "the span is scheduled onto the crashed node")
		s = do(t, s, Action{Kind: ADetect, Node: 1})
		require.Equal(t, uint8(replAbsent), s.Maint[0].Spans[0].State, "the node's departure makes the span absent again")
		require.False(t, enabled(&cfg, &s, Action{Kind: AMaintSchedule, Node: 0, Arg: key, Arg2: 1}), "a departed node is no target")
	})
}
