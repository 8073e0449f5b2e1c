package cluster

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"cdcspec/runtime/adminapi"
	"cdcspec/runtime/datacheck"
	"cdcspec/runtime/kafkasink"
	"cdcspec/spec"
)

// TestLifecycleNoLoss (CDCSPEC_LONG=1, about 40 s): under load, the
// changefeed's maintainer moves, the changefeed is removed and created
// again from its checkpoint, paused and resumed with an overwritten
// checkpoint, and the owner's capture is killed; every step reaches its
// path and the data check over the whole topic finds nothing lost.
//
// The control: a second changefeed, removed and created again 3 s above
// its checkpoint (a user's mistake), loses rows, and the same data check
// says so: the check sees across a re-creation.
func TestLifecycleNoLoss(t *testing.T) {
	if os.Getenv("CDCSPEC_LONG") == "" {
		t.Skip("set CDCSPEC_LONG=1")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c, err := Start(ctx, Config{Nodes: 3, Tables: 2, Rate: 1000, Seed: 11, Binary: binary, LogDir: t.TempDir(),
		SessionTTL: 3 * time.Second, RestartDelay: 500 * time.Millisecond, Progress: testLog{t}})
	require.NoError(t, err)
	defer c.Close()
	api, _, err := c.OwnerAPI(ctx)
	require.NoError(t, err)
	gapInfo, err := api.Create(ctx, adminapi.CreateRequest{ChangefeedID: "cf-gap"})
	require.NoError(t, err)
	gapStart := spec.PhysicalMs(gapInfo.CheckpointTs)
	_, err = c.WaitCheckpoint(ctx, uint64(time.Now().UnixMilli()), 20*time.Second)
	require.NoError(t, err, "the changefeed never started")

	// The control's first lifetime ends at its checkpoint gapCp, once it
	// has advanced a second past its start.
	var gapCp uint64
	for deadline := time.Now().Add(20 * time.Second); gapCp < gapStart+1000; time.Sleep(100 * time.Millisecond) {
		require.True(t, time.Now().Before(deadline), "cf-gap never advanced from %d (at %d)", gapStart, gapCp)
		if info, err := api.Get(ctx, "cf-gap"); err == nil {
			gapCp = spec.PhysicalMs(info.CheckpointTs)
		}
	}
	require.NoError(t, api.Remove(ctx, "cf-gap"))

	for _, st := range []Step{
		{Action: spec.ActionMoveMaintainer},
		{Action: spec.ActionRemoveChangefeed},
		{Action: spec.ActionResumeChangefeed, Dur: time.Second},
		{Fault: spec.FaultKillOwnerCapture},
	} {
		var r Recovery
		for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(time.Second) {
			if r = c.inject(ctx, st); r.Error == "" || time.Now().After(deadline) {
				break
			}
		}
		require.Empty(t, r.Error, st.Name())
		t.Logf("%s: %s", st.Name(), r.Target)
		if st.Action == spec.ActionResumeChangefeed {
			time.Sleep(st.Dur)
			_, err := c.WaitCheckpoint(ctx, uint64(time.Now().UnixMilli()), 30*time.Second)
			require.NoError(t, err, "not normal again after the resume")
			continue
		}
		require.True(t, r.PathReached, "%s: %s", st.Name(), r.Path)
	}

	// The control's second lifetime starts 3 s above gapCp.
	for time.Now().UnixMilli() < int64(gapCp)+4000 {
		time.Sleep(100 * time.Millisecond)
	}
	_, err = c.API().Create(ctx, adminapi.CreateRequest{ChangefeedID: "cf-gap", StartTs: spec.TSO(gapCp + 3000)})
	require.NoError(t, err)

	target := c.Heal()
	s, err := c.WaitCheckpoint(ctx, target, 60*time.Second)
	require.NoError(t, err, "no recovery after healing (timeline tail %v)", tail(c.Timeline(), 5))
	var gapEnd uint64
	for deadline := time.Now().Add(30 * time.Second); gapEnd < target; time.Sleep(200 * time.Millisecond) {
		info, err := c.API().Get(ctx, "cf-gap")
		if err == nil {
			gapEnd = spec.PhysicalMs(info.CheckpointTs)
		}
		require.True(t, time.Now().Before(deadline), "cf-gap never passed %d (at %d)", target, gapEnd)
	}
	c.StopCaptures()
	now := uint64(time.Now().UnixMilli())

	rep, err := datacheck.Check(ctx, datacheck.Config{Brokers: c.Brokers(), Topic: c.Topic()},
		c.Up.Source(c.StartTs, now), spec.TSO(s.Checkpoint))
	require.NoError(t, err)
	t.Logf("%s: %s", c.cfg.Changefeed, rep.String())
	require.True(t, rep.OK(), "%s %v", rep.String(), rep.Examples)
	require.Zero(t, rep.Lost)
	require.Greater(t, rep.Produced, 10000, "too few rows checked")
	require.Positive(t, rep.Duplicates, "the re-creation and the overwritten checkpoint replayed nothing")

	ctl, err := datacheck.Check(ctx, datacheck.Config{Brokers: c.Brokers(), Topic: kafkasink.TopicName("default/cf-gap")},
		c.Up.Source(gapStart, now), spec.TSO(gapEnd))
	require.NoError(t, err)
	t.Logf("cf-gap: %s", ctl.String())
	require.Positive(t, ctl.Lost, "rows between the removed changefeed's checkpoint and the new start-ts were never written, yet nothing was lost")
}
