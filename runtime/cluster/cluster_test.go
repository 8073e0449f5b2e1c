package cluster

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"cdcspec/linearizability"
	"cdcspec/runtime/datacheck"
	"cdcspec/spec"
)

// binary is the cdcspec binary TestMain builds (the captures are child
// processes of it).
var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "cdcspec-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	binary = filepath.Join(dir, "cdcspec")
	out, err := exec.Command("go", "build", "-o", binary, "cdcspec/cmd/cdcspec").CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "building cdcspec: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(2)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

type testLog struct{ t *testing.T }

func (l testLog) Write(p []byte) (int, error) {
	l.t.Log(string(p[:len(p)-1]))
	return len(p), nil
}

// TestFaultsNoLoss: three capture processes; one is killed while a table
// moves to it, another loses its etcd session, Kafka times out for 3 s;
// after healing the checkpoint passes the heal point, nothing is lost and
// per-key order holds.
func TestFaultsNoLoss(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes, etcd and Kafka; skipped with -short")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 85*time.Second)
	defer cancel()
	c, err := Start(ctx, Config{Nodes: 3, Tables: 3, Rate: 1500, Seed: 7, Binary: binary, LogDir: t.TempDir(),
		SessionTTL: 3 * time.Second, KafkaTimeout: time.Second, RestartDelay: 500 * time.Millisecond, Progress: testLog{t}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.WaitCheckpoint(ctx, uint64(time.Now().UnixMilli()), 20*time.Second); err != nil {
		t.Fatalf("changefeed never started: %v", err)
	}
	// Kill the destination of a move while it runs.
	table, to, err := c.MoveTable(ctx)
	if err != nil {
		t.Fatalf("move: %v", err)
	}
	if _, err := c.KillCapture(to); err != nil {
		t.Fatalf("kill %s mid-move of table %d: %v", to, table, err)
	}
	time.Sleep(3 * time.Second)
	expired, err := c.ExpireSession("", true)
	if err != nil {
		t.Fatalf("expire: %v", err)
	}
	time.Sleep(2 * time.Second)
	if err := c.KafkaTimeout(3 * time.Second); err != nil {
		t.Fatal(err)
	}
	time.Sleep(4 * time.Second)
	target := c.Heal()
	s, err := c.WaitCheckpoint(ctx, target, 50*time.Second)
	if err != nil {
		t.Fatalf("no recovery after healing: %v (timeline tail %v)", err, tail(c.Timeline(), 5))
	}
	starts := c.Starts()
	restarts := 0
	for _, n := range starts {
		restarts += n - 1
	}
	if restarts < 2 {
		t.Errorf("expected the killed capture and the expired one (%s) to restart, starts per slot %v", expired, starts)
	}
	c.StopCaptures()
	rep, err := datacheck.Check(ctx, datacheck.Config{Brokers: c.Brokers(), Topic: c.Topic()},
		c.Up.Source(c.StartTs, uint64(time.Now().UnixMilli())), spec.TSO(s.Checkpoint))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s", rep.String())
	if !rep.OK() || rep.Lost != 0 {
		t.Fatalf("data check failed: %s %v", rep.String(), rep.Examples)
	}
	if rep.Produced < 1000 {
		t.Fatalf("only %d rows produced below the checkpoint; the run did not replicate", rep.Produced)
	}
}

func tail(s []Sample, n int) []Sample {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// TestAdminAPILinearizable runs porcupine's admin model (TiCDC's options)
// over concurrent API clients against the real runtime.
func TestAdminAPILinearizable(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes; skipped with -short")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c, err := Start(ctx, Config{Nodes: 2, Tables: 1, Rate: -1, Binary: binary, LogDir: t.TempDir(), Changefeed: "main", Progress: testLog{t}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	api, _, err := c.OwnerAPI(ctx)
	if err != nil {
		t.Fatal(err)
	}
	h, err := linearizability.RunClients(ctx, LinClient{API: api}, 3, 20, 5)
	if err != nil {
		t.Fatal(err)
	}
	outcomes := map[string]int{}
	for _, op := range h.Ops {
		k := string(op.Input.Op) + ":" + string(op.Output.Err)
		if op.Output.Unknown {
			k = string(op.Input.Op) + ":unknown"
		}
		outcomes[k]++
	}
	t.Logf("outcomes: %v", outcomes)
	if outcomes["get:"] == 0 || outcomes["create:"] == 0 {
		t.Fatalf("the workload never created or read a changefeed: %v", outcomes)
	}
	res, err := linearizability.Check(linearizability.NewAdminModel(linearizability.AdminOptionsTiCDC), h, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Ok() {
		t.Fatalf("admin API history not linearizable: %s", res.String())
	}
}

// TestScenarioSeed5709 (CDCSPEC_LONG=1, ~2.5 min): the seed's schedule on
// real processes is clean with every fix on, and with
// regressed-checkpoint-drops-error the trace check reports
// error-never-dropped.
func TestScenarioSeed5709(t *testing.T) {
	if os.Getenv("CDCSPEC_LONG") == "" {
		t.Skip("set CDCSPEC_LONG=1")
	}
	sc, err := LoadScenario("seed-5709")
	if err != nil {
		t.Fatal(err)
	}
	steps, legacy := sc.Steps, sc.RawWatermark
	for _, bug := range []string{"", "regressed-checkpoint-drops-error"} {
		cfg := Config{Binary: binary, LogDir: t.TempDir(), LegacyRawWatermark: legacy, Progress: testLog{t}}
		if bug != "" {
			cfg.Bugs = []string{bug}
		}
		res, err := Run(context.Background(), RunConfig{Cluster: cfg, Steps: steps, Duration: 25 * time.Second, SettleTimeout: 40 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, f := range res.Findings {
			found = found || (f.Property == "error-never-dropped" && f.Severity == "violation")
		}
		if bug == "" && (!res.OK() || res.Lost != 0) {
			t.Errorf("fixed run: ok=%v lost=%d violations=%d settle=%q", res.OK(), res.Lost, res.Violations, res.SettleError)
		}
		if bug != "" && (!found || res.OK()) {
			t.Errorf("with %s: error-never-dropped found=%v, ok=%v (findings %+v)", bug, found, res.OK(), res.Findings)
		}
	}
}
