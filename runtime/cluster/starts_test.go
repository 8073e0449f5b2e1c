package cluster

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"cdcspec/runtime/adminapi"
	"cdcspec/spec"
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
// dispatcher manager of it closes within 5 s. On the way, the other
// changefeed's maintainer moves to the other capture.
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
	_, err = api.Create(ctx, adminapi.CreateRequest{ChangefeedID: "cf-future", StartTs: spec.TSO(uint64(time.Now().Add(time.Hour).UnixMilli()))})
	require.ErrorIs(t, err, adminapi.ErrInvalidParam)
	require.Contains(t, err.Error(), "larger than current tso")

	// Start-ts 1 ms (1970): 56 years of empty time before the first row.
	_, err = api.Create(ctx, adminapi.CreateRequest{ChangefeedID: "cf-old", StartTs: spec.TSO(1)})
	require.NoError(t, err)
	// It catches up: its checkpoint passes the other changefeed's start.
	deadline := time.Now().Add(30 * time.Second)
	for {
		info, err := api.Get(ctx, "cf-old")
		if err == nil && spec.PhysicalMs(info.CheckpointTs) > c.StartTs {
			break
		}
		require.True(t, time.Now().Before(deadline), "cf-old never caught up from ts 1: %+v %v", info, err)
		time.Sleep(200 * time.Millisecond)
	}
	created := logLinesWith(t, c, "new dispatcher created", "default/cf-old")
	require.NotEmpty(t, created, "no capture created a dispatcher of cf-old")

	// A move to a capture that does not exist is refused (TiCDC's
	// ErrNodeIsNotFound), not answered with "moved 0".
	n, err := api.MoveTable(ctx, "cf-old", 1, "no-such-capture")
	require.ErrorIs(t, err, adminapi.ErrNodeNotFound, "moved %d", n)

	// move_maintainer (debug): a target that is no live capture, or the
	// capture already running the maintainer, is refused; a move to the
	// other capture completes (MoveMaintainer waits until the
	// changefeed reports its maintainer there).
	require.ErrorIs(t, api.MoveMaintainer(ctx, "cf-old", "no-such-capture"), adminapi.ErrNodeNotFound)
	host, err := c.maintainerHost(ctx)
	require.NoError(t, err)
	require.ErrorIs(t, api.MoveMaintainer(ctx, c.cfg.Changefeed, host), adminapi.ErrNodeNotFound)
	moved, err := c.MoveMaintainer(ctx)
	require.NoError(t, err)
	p := c.takePath()
	require.NotNil(t, p)
	require.True(t, p.reached, "%s: %s", moved, p.path)
	now, err := c.maintainerHost(ctx)
	require.NoError(t, err)
	require.NotEqual(t, host, now, "%s: %s", moved, p.path)

	// The timer starts before the call: Remove answers once the stop
	// operator finished.
	removed := time.Now()
	require.NoError(t, api.Remove(ctx, "cf-old"))
	waitManagersClosed(t, c, "cf-old", created, removed)
}

// TestUnappliableFaultFailsRun: a fault that cannot apply on this cluster
// (failover-inflight needs 3 captures; there is 1) is retried, then fails
// the run; it is never counted as done.
func TestUnappliableFaultFailsRun(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes, etcd and Kafka; skipped with -short")
	}
	res, err := Run(context.Background(), RunConfig{
		Cluster:  Config{Nodes: 1, Tables: 1, Rate: 200, Binary: binary, LogDir: t.TempDir(), Progress: testLog{t}},
		Steps:    []Step{{At: time.Second, Fault: spec.FaultKillMaintainerInflight}},
		Duration: 3 * time.Second, RetryFor: 2 * time.Second, SettleTimeout: 30 * time.Second,
	})
	require.NoError(t, err)
	require.False(t, res.OK(), "a run whose only fault never applied passed")
	require.Len(t, res.Recovery, 1)
	require.NotEmpty(t, res.Recovery[0].Error)
	require.GreaterOrEqual(t, res.Recovery[0].Attempts, 2, "the fault was not retried")
	require.Len(t, res.Failures, 1, "%v", res.Failures)
	require.Contains(t, res.Failures[0], "fault kill-maintainer-inflight at")
	require.Contains(t, res.Failures[0], "was never applied")
	require.Positive(t, res.Produced, "the data check itself ran")
}

// syncBuffer is a bytes.Buffer safe to read while a process writes it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestRunSignalEachPhase: SIGINT or SIGTERM to cdcspec run in each phase
// (startup, load, faults, settle, check) ends it within 2 s: "interrupted"
// on stderr, a partial report naming the phase on stdout, exit 128 + the
// signal. Each case waits for the progress line that opens its phase and
// signals at once (the check case makes the topic big enough that reading
// it takes seconds, so the signal cuts it).
func TestRunSignalEachPhase(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes, etcd and Kafka; skipped with -short")
	}
	base := []string{"run", "--nodes", "1", "--tables", "1", "--settle-timeout", "60s"}
	for _, c := range []struct {
		phase  string
		sig    syscall.Signal
		args   []string
		marker string        // the progress line (stderr) that opens the phase
		after  time.Duration // then wait this long before signalling
		stdout []string      // also in the report
	}{
		{PhaseStartup, syscall.SIGINT, []string{"--rate", "200", "--duration", "30s", "--faults", "none"}, "logs in", 0,
			[]string{"unchecked:  everything"}},
		{PhaseLoad, syscall.SIGTERM, []string{"--rate", "200", "--duration", "30s", "--faults", "none"}, "changefeed cf-1 created", time.Second,
			[]string{"data:       datacheck", "checkpoint: final "}},
		{PhaseFaults, syscall.SIGINT, []string{"--rate", "200", "--duration", "8s", "--faults", "sink-error"}, "fault sink-error", 0,
			[]string{"sink-error"}},
		{PhaseSettle, syscall.SIGINT, []string{"--rate", "200", "--duration", "3s", "--faults", "sink-error"}, "healed; waiting", 0,
			[]string{"checkpoint: final "}},
		{PhaseCheck, syscall.SIGINT, []string{"--rate", "40000", "--tables", "2", "--duration", "4s", "--faults", "none"}, "checking topic", 0,
			nil},
	} {
		t.Run(c.phase, func(t *testing.T) {
			args := append(append(append([]string{}, base...), c.args...), "--log-dir", t.TempDir())
			cmd := exec.Command(binary, args...)
			var out, errb syncBuffer
			cmd.Stdout, cmd.Stderr = &out, &errb
			require.NoError(t, cmd.Start())
			waited := make(chan error, 1)
			go func() { waited <- cmd.Wait() }()
			deadline := time.Now().Add(60 * time.Second)
			for !strings.Contains(errb.String(), c.marker) {
				require.True(t, time.Now().Before(deadline), "never reached %q: %s", c.marker, errb.String())
				time.Sleep(10 * time.Millisecond)
			}
			time.Sleep(c.after)
			sent := time.Now()
			require.NoError(t, cmd.Process.Signal(c.sig))
			var err error
			select {
			case err = <-waited:
			case <-time.After(10 * time.Second):
				_ = cmd.Process.Kill()
				t.Fatalf("still running 10 s after %v: %s", c.sig, errb.String())
			}
			took := time.Since(sent)
			t.Logf("%v during %s: exited after %s", c.sig, c.phase, took.Round(time.Millisecond))
			require.Less(t, took, 2*time.Second, "stderr %s", errb.String())
			var ee *exec.ExitError
			require.ErrorAs(t, err, &ee, "stdout %s stderr %s", out.String(), errb.String())
			require.Equal(t, 128+int(c.sig), ee.ExitCode(), "stdout %s stderr %s", out.String(), errb.String())
			require.Contains(t, errb.String(), "cdcspec run: interrupted (received "+c.sig.String()+") during "+c.phase)
			require.Contains(t, out.String(), "cdcspec run: INTERRUPTED (received "+c.sig.String()+") during "+c.phase+": partial report")
			for _, w := range c.stdout {
				require.Contains(t, out.String(), w)
			}
			if c.phase == PhaseCheck {
				// On an idle machine the topic read may finish before the
				// signal lands: then the data check's verdict is in the
				// report instead of the cut.
				oneOf := []string{"unchecked:  data: the topic read was cut", "data:       datacheck"}
				found := false
				for _, w := range oneOf {
					found = found || strings.Contains(out.String(), w)
				}
				require.True(t, found, "none of %q in the report: %s", oneOf, out.String())
			}
		})
	}
}

// TestBacklogRemoveCutsWrite (CDCSPEC_LONG=1, about 50 s): a changefeed
// created with 40 s of rows behind it at 50,000 rows/s has writes of many
// seconds in flight (waited out, the dispatcher managers closed about 5 s
// after the remove with 20 s of backlog); removed one second after its dispatchers started,
// every capture's dispatcher manager of it closes within 5 s: the removing
// dispatchers' writes are cut (core.SinkCancel), not waited out.
func TestBacklogRemoveCutsWrite(t *testing.T) {
	if os.Getenv("CDCSPEC_LONG") == "" {
		t.Skip("set CDCSPEC_LONG=1")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c, err := Start(ctx, Config{Nodes: 2, Tables: 2, Rate: 50000, Seed: 5, Binary: binary, LogDir: t.TempDir(), Progress: testLog{t}})
	require.NoError(t, err)
	defer c.Close()
	api, _, err := c.OwnerAPI(ctx)
	require.NoError(t, err)
	time.Sleep(40 * time.Second) // the backlog: about two million rows
	_, err = api.Create(ctx, adminapi.CreateRequest{ChangefeedID: "cf-backlog", StartTs: spec.TSO(c.StartTs)})
	require.NoError(t, err)
	deadline := time.Now().Add(30 * time.Second)
	var created map[string]int
	for {
		created = logLinesWith(t, c, "new dispatcher created", "default/cf-backlog")
		if len(created) == 2 {
			break
		}
		require.True(t, time.Now().Before(deadline), "dispatchers of cf-backlog not created on both captures: %v", created)
		time.Sleep(200 * time.Millisecond)
	}
	time.Sleep(time.Second)
	info, err := api.Get(ctx, "cf-backlog")
	require.NoError(t, err)
	require.Less(t, spec.PhysicalMs(info.CheckpointTs), c.StartTs+30_000, "the backlog was written already: nothing was in flight to cut")
	removed := time.Now() // before the call: Remove answers once the stop operator finished
	require.NoError(t, api.Remove(ctx, "cf-backlog"))
	waitManagersClosed(t, c, "cf-backlog", created, removed)
}

// waitManagersClosed waits until every capture whose log created a
// dispatcher of changefeed cf (created: log file -> lines) has logged its
// dispatcher manager closed, failing 5 s after removed.
func waitManagersClosed(t *testing.T, c *Cluster, cf string, created map[string]int, removed time.Time) {
	t.Helper()
	for {
		closed := logLinesWith(t, c, "event dispatcher manager closed", "default/"+cf)
		var missing []string
		for f := range created {
			if closed[f] == 0 {
				missing = append(missing, f)
			}
		}
		if len(missing) == 0 {
			t.Logf("every dispatcher manager of %s closed %s after the remove", cf, time.Since(removed).Round(time.Millisecond))
			return
		}
		require.Less(t, time.Since(removed), 5*time.Second, "dispatcher managers of %s still open 5 s after the remove in %v", cf, missing)
		time.Sleep(100 * time.Millisecond)
	}
}
