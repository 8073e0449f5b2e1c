package model

import (
	"testing"

	"github.com/stretchr/testify/require"

	"cdcspec/search"
)

// TestMergeValidate: a merge configuration has one table, no split and no
// barrier, and at most one merge; each refusal names the configuration.
func TestMergeValidate(t *testing.T) {
	base, ok := Standard("merge")
	require.True(t, ok)
	require.NoError(t, base.Validate())
	for _, tc := range []struct {
		edit func(c *Config)
		want string
	}{
		{func(c *Config) { c.Merges = 2 }, "merges must be 0..1"},
		{func(c *Config) { c.Splits = 1 }, "merges cannot be combined with splits or a barrier"},
		{func(c *Config) { c.Barrier = "syncpoint" }, "merges cannot be combined with splits or a barrier"},
		{func(c *Config) { c.Tables = 2 }, "merges need exactly one table"},
	} {
		c := base
		tc.edit(&c)
		err := c.Validate()
		require.ErrorContains(t, err, tc.want)
		require.ErrorContains(t, err, `config "merge"`)
	}
}

// mergeSnapshot is a maintainer on slot 0 about to finish its bootstrap
// with node 0's snapshot: a journaled merge of table 1 into d4 (status
// merged), its sources d2 and d3 still in the dispatcher map.
func mergeSnapshot(merged uint8) (Config, State) {
	cfg, _ := Standard("merge")
	s := Init(&cfg)
	s.NextID = 5
	mt := &s.Maint[0]
	*mt = Maint{Exists: true, Epoch: 2, StartTs: 1, Committed: 1, Reported: 1, TriggerID: 1, Bootstrapper: 1, Answered: 1}
	for i := range mt.WM {
		mt.WM[i] = none
	}
	for i := range mt.Boot {
		mt.Boot[i].TrigCkpt = none
	}
	mt.Boot[0] = Snapshot{TrigCkpt: 1,
		D: [MaxSnap]SnapDisp{{ID: 2, Table: 1, Status: dWorking, Ckpt: 2, Part: partLeft}, {ID: 3, Table: 1, Status: dWorking, Ckpt: 1, Part: partRight},
			{ID: 4, Table: 1, Status: merged, Ckpt: 1}},
		J: [MaxJrnl]Journal{{ID: 4, Table: 1, Action: schedMerge}}}
	return cfg, s
}

// TestMergeRestoredAtBootstrap: restoreCurrentMergeOperators (#3769). A
// merge whose merged dispatcher is still Initializing is restored with
// occupy operators on its sources; one whose merged dispatcher works is
// finished (the sources are dropped); without the restore
// (merge-journal-restore) the sources and the merged dispatcher are adopted
// one by one and the overlapping one is removed.
func TestMergeRestoredAtBootstrap(t *testing.T) {
	cfg, s := mergeSnapshot(dInit)
	finishBootstrap(&cfg, &s, 0, nil)
	mt := &s.Maint[0]
	require.True(t, mt.Bootstrapped)
	m := mt.spanByID(4)
	require.NotNil(t, m)
	require.Equal(t, uint8(mopMerge), m.Op)
	require.Equal(t, uint8(replScheduling), m.State)
	for _, id := range []uint8{2, 3} {
		src := mt.spanByID(id)
		require.NotNil(t, src, "source d%d", id)
		require.Equal(t, uint8(mopOccupy), src.Op)
	}
	require.Equal(t, 1, countKind(&s, mMerge), "the restored merge sends its request again")

	cfg, s = mergeSnapshot(dWorking)
	finishBootstrap(&cfg, &s, 0, nil)
	mt = &s.Maint[0]
	m = mt.spanByID(4)
	require.NotNil(t, m)
	require.Equal(t, uint8(replReplicating), m.State)
	require.Equal(t, uint8(mopNone), m.Op)
	require.Nil(t, mt.spanByID(2))
	require.Nil(t, mt.spanByID(3))

	cfg, s = mergeSnapshot(dInit)
	cfg.Mutations = cfg.Mutations.With(MutMergeJournalRestore)
	finishBootstrap(&cfg, &s, 0, nil)
	mt = &s.Maint[0]
	require.NotNil(t, mt.spanByID(2))
	require.NotNil(t, mt.spanByID(3))
	require.Nil(t, mt.spanByID(4), "the merged dispatcher overlaps the adopted sources")
	require.Equal(t, 1, countKind(&s, mSchedule), "and gets a Remove")
}

func countKind(s *State, kind uint8) int {
	n := 0
	for i := 0; i < s.nmsgs(); i++ {
		if s.Net[i].Kind == kind {
			n++
		}
	}
	return n
}

// TestMergePinnedStateCount pins the merge configuration's distinct states
// to a depth bound (safety only), as TestPinnedStateCounts does for the
// others.
func TestMergePinnedStateCount(t *testing.T) {
	if raceEnabled {
		t.Skip("pins are for the non-race build")
	}
	cfg, _ := Standard("merge")
	r, err := Check(cfg, search.Bounds{SafetyOnly: true, MaxDepth: 14}, nil)
	require.NoError(t, err)
	require.Equal(t, int64(203424), r.Distinct)
}
