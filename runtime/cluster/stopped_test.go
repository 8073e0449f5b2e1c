package cluster

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"cdcspec/spec"
	"cdcspec/traces"
)

// TestStoppedChangefeedLeftOnNode: on real processes, the changefeed is
// paused and its stop finishes; then the capture that ran its maintainer
// dies. With stopped-changefeed-left-on-node (pingcap/ticdc#2968) the
// coordinator still lists the paused changefeed among that capture's tasks,
// marks it absent when the capture leaves and adds a maintainer for it: the
// trace check of the capture logs reports stopped-stays-stopped, and no
// other property. With the fix the same run reports nothing.
func TestStoppedChangefeedLeftOnNode(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes, etcd and Kafka; skipped with -short")
	}
	for _, bug := range []string{"stopped-changefeed-left-on-node", ""} {
		name := bug
		if name == "" {
			name = "fixed"
		}
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
			defer cancel()
			cfg := Config{Nodes: 3, Tables: 2, Seed: 5, Binary: binary, LogDir: t.TempDir(),
				SessionTTL: 2 * time.Second, Progress: testLog{t}}
			if bug != "" {
				cfg.Bugs = []string{bug}
			}
			c, err := Start(ctx, cfg)
			require.NoError(t, err)
			defer c.Close()
			_, err = c.WaitCheckpoint(ctx, uint64(time.Now().UnixMilli()), 20*time.Second)
			require.NoError(t, err, "the changefeed never started")

			// The maintainer must not run on the owner's capture: killing
			// the owner starts a new coordinator, which loads the stopped
			// changefeed afresh.
			_, owner, err := c.OwnerAPI(ctx)
			require.NoError(t, err)
			host, err := c.maintainerHost(ctx)
			require.NoError(t, err)
			for deadline := time.Now().Add(30 * time.Second); host == owner; time.Sleep(time.Second) {
				require.True(t, time.Now().Before(deadline), "the maintainer stays on the owner %s", owner)
				r := c.inject(ctx, Step{Action: spec.ActionMoveMaintainer})
				t.Logf("move-maintainer: %s %s", r.Target, r.Error)
				time.Sleep(2 * time.Second)
				if h, err := c.maintainerHost(ctx); err == nil {
					host = h
				}
			}

			api, _, err := c.OwnerAPI(ctx)
			require.NoError(t, err)
			require.NoError(t, api.Pause(ctx, c.cfg.Changefeed))
			for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(200 * time.Millisecond) {
				require.True(t, time.Now().Before(deadline), "the stop never finished")
				if info, err := api.Get(ctx, c.cfg.Changefeed); err == nil && info.State == spec.StateStopped && info.MaintainerOn == "" {
					break
				}
			}
			time.Sleep(time.Second) // the stop operator's last report
			_, err = c.KillCapture(host)
			require.NoError(t, err)
			time.Sleep(cfg.SessionTTL + 6*time.Second) // the others see it leave; a revived maintainer bootstraps

			inputs, err := traces.ExpandInputs(c.LogFiles(), nil)
			require.NoError(t, err)
			rep, err := traces.Run(inputs, traces.Options{})
			require.NoError(t, err)
			violated := map[string]bool{}
			for _, f := range rep.Findings {
				if f.Severity == traces.Violation {
					violated[f.Property] = true
				}
			}
			if bug == "" {
				require.Empty(t, violated, "fixed run")
				return
			}
			require.Equal(t, map[string]bool{string(spec.StoppedStaysStopped): true}, violated,
				"with %s only stopped-stays-stopped fires", bug)
		})
	}
}
