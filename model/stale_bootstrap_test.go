package model

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// The triage of issue 26's off-matrix violations (SPEC.md section 7.3):
// `cdcspec check --config barrier --crashes 0 --moves=false --max-moves 0
// --maint-moves 1` found barrier-eventually-passes broken. The moved-away
// maintainer's re-sent MaintainerBootstrapRequest to its own node, still in
// flight when the move's non-cascade remove closed the table trigger,
// creates the trigger again; HEAD does that too. The model's dispatcher
// manager then answered the target maintainer's bootstrap (no trigger ID for
// that node) as if nothing were wrong, so the target bootstrapped while the
// stray trigger waited at the syncpoint forever. HEAD's orchestrator refuses
// that bootstrap with an error (dispatcher_orchestrator.go:402-425, 464-496
// at b813e76f9), and the error restarts the changefeed.

// staleBootstrapState is n1's dispatcher manager owned by the maintainer on
// n1 at epoch 2, and the target maintainer on n0 at epoch 3 waiting for
// both nodes' bootstrap answers.
func staleBootstrapState(t *testing.T, cfg *Config, withTrigger bool) State {
	t.Helper()
	s := Init(cfg)
	n0, n1 := s.Ident(0), s.Ident(1)
	s.DMs[1] = DM{Exists: true, Owner: n1, OwnerEpoch: 2}
	if withTrigger {
		d := s.newDisp()
		require.NotNil(t, d)
		*d = Disp{ID: 1, Node: 1, Table: 0, St: dWorking, StartTs: 1, Ckpt: 1}
	}
	mt := &s.Maint[0]
	*mt = Maint{Exists: true, Epoch: 3, StartTs: 1, TriggerID: 3, Bootstrapper: 0b11}
	for i := range mt.WM {
		mt.WM[i] = none
	}
	for i := range mt.Boot {
		mt.Boot[i].TrigCkpt = none
	}
	require.Equal(t, n0, s.Ident(0))
	return s
}

// bootResponses lists the MaintainerBootstrapResponses in flight to dst.
func bootResponses(s *State, dst uint8) []Msg {
	var out []Msg
	for i := 0; i < s.nmsgs(); i++ {
		if m := s.Net[i]; m.Kind == mBootResp && m.Dst == dst {
			out = append(out, m)
		}
	}
	return out
}

func barrierWithMaintainerMove() Config {
	cfg := standard["barrier"]()
	cfg.Crashes, cfg.SpanMoves, cfg.MaxMoves, cfg.MaintMoves = 0, false, 0, 1
	return cfg
}

// TestStaleBootstrapRecreatesTrigger: the old maintainer's re-sent request
// (its own node, its own epoch, its trigger ID) after the trigger closed
// passes the owner fence (canUpdateMaintainerLocked: the same owner and
// epoch) and ensure creates the trigger again
// (dispatcher_orchestrator.go:269-318 at b813e76f9). A step HEAD takes.
func TestStaleBootstrapRecreatesTrigger(t *testing.T) {
	cfg := barrierWithMaintainerMove()
	s := staleBootstrapState(t, &cfg, false)
	n1 := s.Ident(1)
	dmHandleBootstrap(&cfg, &s, Msg{Kind: mBootReq, Src: n1, Dst: n1, Epoch: 2, A: 1, B: 1}, nil)
	require.NotNil(t, s.dispOn(1, 1), "the re-sent bootstrap request creates the trigger again")
	resp := bootResponses(&s, n1)
	require.Len(t, resp, 1)
	require.Equal(t, uint8(0), resp[0].A, "an ordinary answer")
}

// TestBootstrapRefusedWhileTriggerPresent: the target maintainer's request
// to a node that is not its own carries no trigger ID; a manager that still
// has a trigger answers with an error and keeps its owner
// (validateBootstrapNoTableTriggerDispatcher), and so it does for another
// trigger ID (validateBootstrapTableTriggerDispatcherID). The maintainer
// takes the error into its next status and leaves the node unanswered
// (onMaintainerBootstrapResponse, maintainer.go:1025-1042).
func TestBootstrapRefusedWhileTriggerPresent(t *testing.T) {
	cfg := barrierWithMaintainerMove()
	for _, tc := range []struct {
		name    string
		trigger uint8
	}{{"nil trigger", 0}, {"another trigger", 3}} {
		t.Run(tc.name, func(t *testing.T) {
			s := staleBootstrapState(t, &cfg, true)
			n0, n1 := s.Ident(0), s.Ident(1)
			dmHandleBootstrap(&cfg, &s, Msg{Kind: mBootReq, Src: n0, Dst: n1, Epoch: 3, A: 1, B: tc.trigger}, nil)
			require.Equal(t, n1, s.DMs[1].Owner, "a refused bootstrap does not take the manager")
			require.Equal(t, uint8(2), s.DMs[1].OwnerEpoch)
			require.NotNil(t, s.dispOn(1, 1), "the old trigger stays")
			resp := bootResponses(&s, n0)
			require.Len(t, resp, 1)
			require.Equal(t, uint8(bootRespErr), resp[0].A)

			maintHandleDM(&cfg, &s, resp[0], nil)
			mt := &s.Maint[0]
			require.Equal(t, uint8(1+1), mt.Err, "the error is in the next status, from n1")
			require.False(t, mt.ErrFast, "a retryable error")
			require.Zero(t, mt.Answered&0b10, "n1 stays unanswered")
			require.False(t, mt.Bootstrapped)
		})
	}
	t.Run("no trigger: answered", func(t *testing.T) {
		s := staleBootstrapState(t, &cfg, false)
		n0, n1 := s.Ident(0), s.Ident(1)
		dmHandleBootstrap(&cfg, &s, Msg{Kind: mBootReq, Src: n0, Dst: n1, Epoch: 3, A: 1}, nil)
		require.Equal(t, n0, s.DMs[1].Owner)
		resp := bootResponses(&s, n0)
		require.Len(t, resp, 1)
		require.Equal(t, uint8(0), resp[0].A)
	})
}
