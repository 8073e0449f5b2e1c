package cluster

import (
	"bufio"
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"cdcspec/runtime/adminapi"
)

// logLinesWith counts, per capture log, the lines holding every one of
// parts.
func logLinesWith(t *testing.T, c *Cluster, parts ...string) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, f := range c.LogFiles() {
		fh, err := os.Open(f)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(fh)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
	line:
		for sc.Scan() {
			for _, p := range parts {
				if !strings.Contains(sc.Text(), p) {
					continue line
				}
			}
			out[f]++
		}
		fh.Close()
	}
	return out
}

// TestOldStartTsRemoveReleasesDispatcherManagers: a changefeed created at ts 1,
// decades before the upstream's first row, catches up (the sink skips the
// empty time instead of walking it), and once removed every capture's
// dispatcher manager of it closes within 5 s.
func TestOldStartTsRemoveReleasesDispatcherManagers(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes, etcd and Kafka; skipped with -short")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 80*time.Second)
	defer cancel()
	c, err := Start(ctx, Config{Nodes: 2, Tables: 2, Rate: 400, Seed: 3, Binary: binary, LogDir: t.TempDir(), Progress: testLog{t}})
	require.NoError(t, err)
	defer c.Close()
	api, _, err := c.OwnerAPI(ctx)
	require.NoError(t, err)

	// A start-ts in the future is refused, as TiCDC refuses it.
	_, err = api.Create(ctx, adminapi.CreateRequest{ChangefeedID: "cf-future", StartTs: uint64(time.Now().Add(time.Hour).UnixMilli())})
	require.ErrorIs(t, err, adminapi.ErrInvalidParam)
	require.Contains(t, err.Error(), "larger than current tso")

	// Start-ts 1 ms (1970): 56 years of empty time before the first row.
	_, err = api.Create(ctx, adminapi.CreateRequest{ChangefeedID: "cf-old", StartTs: 1})
	require.NoError(t, err)
	// It catches up: its checkpoint passes the other changefeed's start.
	deadline := time.Now().Add(30 * time.Second)
	for {
		info, err := api.Get(ctx, "cf-old")
		if err == nil && info.CheckpointTs > c.StartTs {
			break
		}
		require.True(t, time.Now().Before(deadline), "cf-old never caught up from ts 1: %+v %v", info, err)
		time.Sleep(200 * time.Millisecond)
	}
	created := logLinesWith(t, c, "new dispatcher created", "default/cf-old")
	require.NotEmpty(t, created, "no capture created a dispatcher of cf-old")

	require.NoError(t, api.Remove(ctx, "cf-old"))
	removed := time.Now()
	for {
		closed := logLinesWith(t, c, "event dispatcher manager closed", "default/cf-old")
		missing := []string{}
		for f := range created {
			if closed[f] == 0 {
				missing = append(missing, f)
			}
		}
		if len(missing) == 0 {
			t.Logf("every dispatcher manager of cf-old closed %s after the remove", time.Since(removed).Round(time.Millisecond))
			return
		}
		require.Less(t, time.Since(removed), 5*time.Second, "dispatcher managers of cf-old still open 5 s after the remove in %v", missing)
		time.Sleep(100 * time.Millisecond)
	}
}
