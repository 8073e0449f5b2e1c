package model

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestLateAddOfResignedCoordinator: an AddMaintainerRequest of a coordinator
// that resigned is handled if it reaches the manager before the new
// coordinator's CoordinatorBootstrapRequest (and its maintainer is in the
// bootstrap answer, so the new coordinator adopts it), and ignored after it
// ("ignore invalid coordinator id", maintainer_manager_maintainers.go:105-123
// at b813e76f9). Before the coordinator had an identity the late Add created
// a maintainer the new coordinator never knew of (README candidate 5).
func TestLateAddOfResignedCoordinator(t *testing.T) {
	cfg := standard["coordinator-failover"]()
	do := func(s State, a Action) State {
		t.Helper()
		require.True(t, enabled(&cfg, &s, a), "action %s not enabled in\n%s", a, s.String())
		n, _ := Step(cfg, s, a)
		return n
	}
	deliver := func(s State, m Msg) State { t.Helper(); return do(s, Action{Kind: ADeliver, Msg: m}) }

	s := Init(&cfg)
	s = do(s, Action{Kind: ACoordSchedule, Node: 0})
	add := Msg{Kind: mAddMaintainer, Src: coordSlot, Dst: 0, Epoch: 2, A: 1}
	s = do(s, Action{Kind: ACoordFailover})
	newCoord := ident(coordSlot, 1)
	require.Equal(t, newCoord, s.coordID())
	require.True(t, s.Coord.Booting)
	req0 := Msg{Kind: mCoordBootReq, Src: newCoord, Dst: 0}
	req1 := Msg{Kind: mCoordBootReq, Src: newCoord, Dst: 1}
	none := Msg{Kind: mCoordBootResp, Src: 1, Dst: newCoord}

	t.Run("after the bootstrap request: ignored", func(t *testing.T) {
		s := deliver(s, req0)
		s = deliver(s, add)
		require.False(t, s.Maint[0].Exists, "the resigned coordinator's Add created a maintainer")
		s = deliver(s, Msg{Kind: mCoordBootResp, Src: 0, Dst: newCoord})
		s = deliver(s, req1)
		s = deliver(s, none)
		require.False(t, s.Coord.Booting)
		require.Equal(t, uint8(replAbsent), s.Coord.Repl)
		require.True(t, enabled(&cfg, &s, Action{Kind: ACoordSchedule, Node: 1}), "the new coordinator schedules the absent changefeed")
	})
	t.Run("before the bootstrap request: in the answer, adopted", func(t *testing.T) {
		s := deliver(s, add)
		require.True(t, s.Maint[0].Exists)
		s = deliver(s, req0)
		s = deliver(s, Msg{Kind: mCoordBootResp, Src: 0, Dst: newCoord, Epoch: 2, A: 1, B: 1})
		s = deliver(s, req1)
		require.True(t, s.Coord.Booting, "n1 has not answered yet")
		require.False(t, enabled(&cfg, &s, Action{Kind: ACoordSchedule, Node: 1}), "an uninitialized coordinator schedules nothing")
		s = deliver(s, none)
		require.False(t, s.Coord.Booting)
		require.Equal(t, uint8(replReplicating), s.Coord.Repl)
		require.Equal(t, uint8(0), s.Coord.Node)
	})
}

// TestLateAddAfterPauseAndFailover: a pause, then a coordinator failover
// while the old coordinator's AddMaintainerRequest is still in flight. The
// manager takes the Add (it has not answered the new coordinator yet), so a
// maintainer that schedules is created after the pause; the stop has not
// finished, though: the pause persisted ProgressStopping
// (coordinator/changefeed/etcd_backend.go:344-378 at b813e76f9) and the new
// coordinator's finishBootstrap stops the reported maintainer again
// (coordinator/controller.go:768-781). stopped-stays-stopped reported the
// creation before its predicate knew of the pending stop (issue 26 triage).
func TestLateAddAfterPauseAndFailover(t *testing.T) {
	cfg := standard["lifecycle"]()
	cfg.ClientOps, cfg.CoordFailovers = 1, 1
	do := func(s State, a Action) State {
		t.Helper()
		require.True(t, enabled(&cfg, &s, a), "action %s not enabled in\n%s", a, s.String())
		n, _ := Step(cfg, s, a)
		return n
	}
	deliver := func(s State, m Msg) State { t.Helper(); return do(s, Action{Kind: ADeliver, Msg: m}) }

	s := Init(&cfg)
	s = do(s, Action{Kind: ACoordSchedule, Node: 0})
	s = do(s, Action{Kind: APause})
	require.Equal(t, uint8(copStop), s.Coord.Op)
	s = do(s, Action{Kind: ACoordFailover})
	require.Equal(t, uint8(progStopping), s.Coord.Prog, "the pause's stop is persisted as pending")
	newCoord := s.coordID()

	prev := s
	s = deliver(s, Msg{Kind: mAddMaintainer, Src: coordSlot, Dst: 0, Epoch: 2, A: 1})
	require.True(t, s.Maint[0].Exists && !s.Maint[0].RemovalOnly, "the old coordinator's Add creates its maintainer")
	require.Empty(t, invStoppedStaysStopped(&cfg, &prev, &s), "a maintainer created while the stop is pending")

	s = deliver(s, Msg{Kind: mCoordBootReq, Src: newCoord, Dst: 0})
	s = deliver(s, Msg{Kind: mCoordBootResp, Src: 0, Dst: newCoord, Epoch: 2, A: 1, B: 1})
	s = deliver(s, Msg{Kind: mCoordBootReq, Src: newCoord, Dst: 1})
	s = deliver(s, Msg{Kind: mCoordBootResp, Src: 1, Dst: newCoord})
	require.False(t, s.Coord.Booting)
	require.Equal(t, uint8(copStop), s.Coord.Op, "finishBootstrap re-issues the stop")
	require.Equal(t, uint8(0), s.Coord.OpNode)
	require.Equal(t, uint8(2), s.Coord.OpEpoch)
}
