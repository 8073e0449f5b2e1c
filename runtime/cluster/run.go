package cluster

import (
	"context"
	"fmt"

	"cdcspec/runtime/adminapi"
	"sort"
	"strings"
	"time"

	"cdcspec/runtime/datacheck"
	"cdcspec/runtime/server"
	"cdcspec/traces"
)

// Faults are the fault names a schedule may use.
var Faults = []string{"kill", "kill-owner", "expire", "kafka", "pause", "move", "split", "create-table", "stall", "move-kill", "freeze", "expire-frozen", "failover-inflight", "kill-maintainer", "delay-block-status", "stale-create", "dup-remove-maintainer", "slow-maintainer-close"}

// DefaultFaults is the default schedule's mix.
var DefaultFaults = []string{"kill", "kafka", "move", "expire", "split", "create-table", "pause", "move-kill"}

// Step is one scheduled fault, at an offset from the start of the fault
// phase.
type Step struct {
	At    time.Duration
	Fault string
	// Dur is how long a timed fault lasts (kafka, stall, pause); 0: default.
	Dur time.Duration
	// AvoidOwner applies to expire.
	AvoidOwner bool
}

// Schedule spreads faults evenly over d.
func Schedule(faults []string, d time.Duration) []Step {
	var out []Step
	gap := d / time.Duration(len(faults)+1)
	for i, f := range faults {
		out = append(out, Step{At: gap * time.Duration(i+1), Fault: f})
	}
	return out
}

// ScenarioNodes is the capture count a scenario needs (0: the default).
func ScenarioNodes(name string) int {
	if name == "seed-3952" {
		return 1
	}
	return 0
}

// Scenario returns a named seed's schedule and whether it needs the
// pre-#4548 raw-watermark reporting.
func Scenario(name string) ([]Step, bool, error) {
	switch name {
	case "seed-5709":
		// pingcap/ticdc#5709: one capture's session expires, its
		// dispatchers are rescheduled (the maintainer's raw watermark drops
		// below the stored checkpoint while the new dispatchers start from
		// it), and Kafka times out meanwhile: the error arrives with a
		// regressed checkpoint.
		//
		// On real processes: a bystander capture (not owner, not the
		// maintainer's host) stalls (SIGSTOP), so its dispatchers' last
		// checkpoints go stale; Kafka starts timing out, freezing the
		// other dispatchers at a later ts; then the stalled capture's
		// session expires: it leaves, the changefeed watermark jumps to the
		// survivors' (stored), and its spans are re-added from their stale
		// checkpoints on sinks that hang, so the error arrives with a
		// reported checkpoint below the stored one.
		return []Step{
			{At: 3 * time.Second, Fault: "split"},
			{At: 5 * time.Second, Fault: "freeze"},
			{At: 7 * time.Second, Fault: "kafka", Dur: 12 * time.Second},
			{At: 9 * time.Second, Fault: "expire-frozen"},
		}, true, nil
	}
	if name == "seed-6202" {
		// pingcap/ticdc#6202: the checkpoint is held below a CREATE TABLE
		// (Kafka times out), the new table's dispatcher is created, then
		// the maintainer's capture dies; the next maintainer bootstraps
		// below the DDL.
		return []Step{
			{At: 4 * time.Second, Fault: "kafka", Dur: 10 * time.Second},
			{At: 4100 * time.Millisecond, Fault: "create-table"},
			{At: 6500 * time.Millisecond, Fault: "kill-maintainer"},
		}, false, nil
	}
	if name == "seed-3952" {
		// pingcap/ticdc#3952: a delayed duplicate RemoveMaintainerRequest
		// re-creates a removal-only maintainer after the stop operator
		// closed the real one; its close is slow; the backoff's add lands
		// on the same capture (ScenarioNodes: 1) and sees it "Working".
		return []Step{
			{At: 4 * time.Second, Fault: "dup-remove-maintainer", Dur: 7 * time.Second},
			{At: 4100 * time.Millisecond, Fault: "kafka", Dur: 5 * time.Second},
			{At: 12 * time.Second, Fault: "slow-maintainer-close", Dur: 30 * time.Second},
		}, false, nil
	}
	if name == "seed-5401" {
		// pingcap/ticdc#5401: the table trigger's NONE report of a CREATE
		// TABLE reaches the maintainer 3 s late.
		return []Step{
			{At: 4 * time.Second, Fault: "delay-block-status", Dur: 3 * time.Second},
			{At: 4100 * time.Millisecond, Fault: "create-table"},
		}, false, nil
	}
	if name == "seed-5083" {
		// pingcap/ticdc#5083: a Create of the previous maintainer
		// generation lands after the next maintainer took over.
		return []Step{{At: 4 * time.Second, Fault: "stale-create", Dur: 20 * time.Second}}, false, nil
	}
	if name == "seed-3411" {
		// pingcap/ticdc#3411: dispatcher operators in flight (held by
		// failpoints) when the maintainer's capture dies.
		return []Step{{At: 4 * time.Second, Fault: "failover-inflight"}}, false, nil
	}
	return nil, false, fmt.Errorf("unknown scenario %q (known: seed-5709, seed-3411, seed-6202, seed-5401, seed-5083, seed-3952)", name)
}

// RunConfig is a whole `cdcspec run`.
type RunConfig struct {
	Cluster  Config
	Duration time.Duration // fault phase (default 60s)
	Steps    []Step        // default Schedule(DefaultFaults, Duration)
	// SettleTimeout bounds waiting for the checkpoint after healing
	// (default 120s: a changefeed restarted by backoff can wait 10-20 s).
	SettleTimeout time.Duration
}

// Recovery is what one fault did to the changefeed.
type Recovery struct {
	Fault  string `json:"fault"`
	Target string `json:"target,omitempty"`
	AtMs   int64  `json:"at_ms"` // since the fault phase began
	Error  string `json:"error,omitempty"`
	// FaultToWarningMs: fault to the first stored "warning" state (-1: none).
	FaultToWarningMs int64 `json:"fault_to_warning_ms"`
	// WarningToNormalMs: that warning to the next "normal" (-1: none).
	WarningToNormalMs int64 `json:"warning_to_normal_ms"`
	// LagPeakMs: the highest checkpoint lag (now - stored checkpoint) until
	// the next fault.
	LagPeakMs int64 `json:"checkpoint_lag_peak_ms"`
	// LagBelow3sMs: fault to the first time the lag was back under 3 s
	// after exceeding it (-1: it never exceeded 3 s, or never came back).
	LagBelow3sMs int64 `json:"lag_back_under_3s_ms"`
	at           int64
}

// Result is the report of a run.
type Result struct {
	Produced          int              `json:"produced"`
	Delivered         int              `json:"delivered"`
	Lost              int              `json:"lost"`
	OutOfOrder        int              `json:"out_of_order"`
	Duplicates        int              `json:"duplicates"`
	FinalCheckpointTs uint64           `json:"final_checkpoint_ts"`
	Findings          []traces.Finding `json:"findings"`
	Violations        int              `json:"violations"`
	Recovery          []Recovery       `json:"recovery"`
	LogDir            string           `json:"log_dir"`
	Topic             string           `json:"topic"`
	Data              datacheck.Report `json:"data"`
	RowsPerSec        float64          `json:"rows_per_sec"`
	Settled           bool             `json:"settled"`
	SettleError       string           `json:"settle_error,omitempty"`
	Restarts          int              `json:"restarts"`
	// LagPeakMs and LagAvgMs: checkpoint lag (now - stored checkpoint)
	// over the fault phase.
	LagPeakMs int64 `json:"lag_peak_ms"`
	LagAvgMs  int64 `json:"lag_avg_ms"`
}

// OK reports whether nothing was lost and no property was violated.
func (r *Result) OK() bool {
	return r.Data.OK() && r.Violations == 0 && r.Settled
}

// Run runs a whole cluster: start, faults, heal, checks.
func Run(ctx context.Context, rc RunConfig) (*Result, error) {
	if rc.Duration == 0 {
		rc.Duration = 60 * time.Second
	}
	if rc.SettleTimeout == 0 {
		rc.SettleTimeout = 120 * time.Second
	}
	if rc.Steps == nil {
		rc.Steps = Schedule(DefaultFaults, rc.Duration)
	}
	for _, s := range rc.Steps {
		if !knownFault(s.Fault) {
			return nil, fmt.Errorf("unknown fault %q (known: %s)", s.Fault, strings.Join(Faults, ", "))
		}
	}
	c, err := Start(ctx, rc.Cluster)
	if err != nil {
		return nil, err
	}
	closed := false
	defer func() {
		if !closed {
			c.Close()
		}
	}()
	res := &Result{LogDir: c.LogDir(), Topic: c.Topic()}
	begin := time.Now()
	var recs []Recovery
	for _, st := range rc.Steps {
		if wait := time.Until(begin.Add(st.At)); wait > 0 {
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(wait):
			}
		}
		r := c.inject(ctx, st)
		r.AtMs = time.Since(begin).Milliseconds()
		r.at = time.Now().UnixMilli()
		if r.Error != "" {
			c.progress("fault %s: %s", st.Fault, r.Error)
		} else {
			c.progress("fault %s %s", st.Fault, r.Target)
		}
		recs = append(recs, r)
	}
	if wait := time.Until(begin.Add(rc.Duration)); wait > 0 {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(wait):
		}
	}
	var lagSum, lagN int64
	for _, smp := range c.Timeline() {
		if smp.At < begin.UnixMilli() {
			continue
		}
		lag := smp.At - int64(smp.Checkpoint)
		res.LagPeakMs = max(res.LagPeakMs, lag)
		lagSum += lag
		lagN++
	}
	if lagN > 0 {
		res.LagAvgMs = lagSum / lagN
	}
	target := c.Heal()
	c.progress("healed; waiting for the checkpoint to pass %d", target)
	s, err := c.WaitCheckpoint(ctx, target, rc.SettleTimeout)
	res.Settled = err == nil
	if err != nil {
		res.SettleError = err.Error()
		c.progress("%v", err)
	}
	// Give the liveness monitors a quiet stretch to judge.
	time.Sleep(2 * time.Second)
	c.Quiesced()
	if s2, ok := c.Stored(); ok {
		s = s2
	}
	res.FinalCheckpointTs = s.Checkpoint
	res.Recovery = recovery(recs, c.Timeline())
	for _, n := range c.Starts() {
		res.Restarts += n - 1
	}
	// Stop the captures so the topic is complete and still: every row
	// change written is then in the source below (rows up to now).
	c.StopCaptures()
	c.progress("final checkpoint %d; checking topic %s", s.Checkpoint, c.Topic())
	rep, err := datacheck.Check(ctx, datacheck.Config{Brokers: c.Brokers(), Topic: c.Topic(), Timeout: 2 * time.Minute},
		c.Up.Source(c.StartTs, uint64(time.Now().UnixMilli())), server.TSO(s.Checkpoint))
	if err != nil {
		return nil, fmt.Errorf("data check: %w", err)
	}
	res.Data = rep
	res.Produced, res.Delivered, res.Lost, res.OutOfOrder, res.Duplicates = rep.Produced, rep.Delivered, rep.Lost, rep.OutOfOrder, rep.Duplicates
	if secs := float64(int64(s.Checkpoint)-int64(c.StartTs)) / 1000; secs > 0 {
		res.RowsPerSec = float64(rep.Produced) / secs
	}
	files := c.LogFiles()
	c.Close()
	closed = true
	c.progress("checking %d logs", len(files))
	inputs, err := traces.ExpandInputs(files, nil)
	if err != nil {
		return nil, fmt.Errorf("trace: %w", err)
	}
	trep, err := traces.Run(inputs, traces.Options{})
	if err != nil {
		return nil, fmt.Errorf("trace: %w", err)
	}
	res.Findings = trep.Findings
	if res.Findings == nil {
		res.Findings = []traces.Finding{}
	}
	res.Violations = trep.Violations()
	return res, nil
}

func knownFault(f string) bool {
	for _, k := range Faults {
		if k == f {
			return true
		}
	}
	return false
}

// inject fires one fault. Timed faults heal themselves in the background.
func (c *Cluster) inject(ctx context.Context, st Step) Recovery {
	r := Recovery{Fault: st.Fault, FaultToWarningMs: -1, WarningToNormalMs: -1, LagBelow3sMs: -1}
	fail := func(err error) Recovery { r.Error = err.Error(); return r }
	dur := func(d time.Duration) time.Duration {
		if st.Dur > 0 {
			return st.Dur
		}
		return d
	}
	switch st.Fault {
	case "kill":
		id, err := c.KillCapture("")
		if err != nil {
			return fail(err)
		}
		r.Target = id
	case "kill-owner":
		id, _, err := c.Etcd.Owner(ctx)
		if err != nil {
			return fail(err)
		}
		if _, err := c.KillCapture(id); err != nil {
			return fail(err)
		}
		r.Target = id
	case "expire":
		id, err := c.ExpireSession("", st.AvoidOwner)
		if err != nil {
			return fail(err)
		}
		r.Target = id
	case "dup-remove-maintainer", "slow-maintainer-close":
		typ, action := "RemoveMaintainerRequest", "dup"
		if st.Fault == "slow-maintainer-close" {
			typ, action = "MaintainerCloseResponse", "delay"
		}
		id, err := c.maintainerHost(ctx)
		if err != nil {
			// The changefeed may be stopping: use the capture that ran it last.
			id = c.lastMaintainer
		}
		if id == "" {
			return fail(fmt.Errorf("no maintainer host: %v", err))
		}
		c.lastMaintainer = id
		count := 1
		if action == "delay" {
			count = 1000
		}
		if err := c.delayRule(ctx, id, adminapi.DelayRule{Type: typ, Action: action, DelayMs: dur(10 * time.Second).Milliseconds(), Count: count}); err != nil {
			return fail(err)
		}
		r.Target = id
	case "delay-block-status":
		id, err := c.DelayBlockStatus(ctx, dur(3*time.Second))
		if err != nil {
			return fail(err)
		}
		r.Target = id
	case "stale-create":
		what, err := c.StaleCreate(ctx, dur(20*time.Second))
		if err != nil {
			return fail(err)
		}
		r.Target = what
	case "kill-maintainer":
		id, err := c.maintainerHost(ctx)
		if err != nil {
			return fail(err)
		}
		if _, err := c.KillCapture(id); err != nil {
			return fail(err)
		}
		r.Target = id
	case "failover-inflight":
		what, err := c.FailoverInflight(ctx)
		if err != nil {
			return fail(err)
		}
		r.Target = what
	case "freeze":
		id, err := c.Freeze(ctx)
		if err != nil {
			return fail(err)
		}
		r.Target = id
	case "expire-frozen":
		ids, err := c.ExpireFrozen()
		if err != nil {
			return fail(err)
		}
		r.Target = strings.Join(ids, ",")
	case "kafka":
		d := dur(5 * time.Second)
		if err := c.KafkaTimeout(d); err != nil {
			return fail(err)
		}
		r.Target = d.String()
	case "stall":
		d := dur(3 * time.Second)
		if err := c.Stall(true); err != nil {
			return fail(err)
		}
		time.AfterFunc(d, func() { _ = c.Stall(false) })
		r.Target = d.String()
	case "pause":
		d := dur(3 * time.Second)
		if err := c.API().Pause(ctx, c.cfg.Changefeed); err != nil {
			return fail(err)
		}
		time.AfterFunc(d, func() {
			for i := 0; i < 50; i++ {
				rctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				err := c.API().Resume(rctx, c.cfg.Changefeed, 0)
				cancel()
				if err == nil || c.ctx.Err() != nil {
					return
				}
				time.Sleep(200 * time.Millisecond)
			}
		})
		r.Target = d.String()
	case "move":
		t, to, err := c.MoveTable(ctx)
		if err != nil {
			return fail(err)
		}
		r.Target = fmt.Sprintf("table %d -> %s", t, to)
	case "move-kill":
		// Kill the destination while the move runs (the origin may already
		// have removed its dispatcher).
		t, to, err := c.MoveTable(ctx)
		if err != nil {
			return fail(err)
		}
		time.Sleep(20 * time.Millisecond)
		if _, err := c.KillCapture(to); err != nil {
			return fail(err)
		}
		r.Target = fmt.Sprintf("table %d -> %s (killed)", t, to)
	case "split":
		t, n, err := c.SplitTable(ctx)
		if err != nil {
			return fail(err)
		}
		r.Target = fmt.Sprintf("table %d (%d spans)", t, n)
	case "create-table":
		t, err := c.CreateTable()
		if err != nil {
			return fail(err)
		}
		r.Target = fmt.Sprintf("table %d", t)
	}
	return r
}

// recovery computes each fault's recovery from the stored-state timeline.
func recovery(recs []Recovery, tl []Sample) []Recovery {
	sort.Slice(tl, func(i, j int) bool { return tl[i].At < tl[j].At })
	for i := range recs {
		r := &recs[i]
		end := int64(1 << 62)
		if i+1 < len(recs) {
			end = recs[i+1].at
		}
		var warnAt int64
		exceeded := false
		prev := ""
		for _, s := range tl {
			if s.At < r.at {
				prev = s.State
				continue
			}
			lag := s.At - int64(s.Checkpoint)
			if s.At < end && lag > r.LagPeakMs {
				r.LagPeakMs = lag
			}
			if lag > 3000 {
				exceeded = true
			} else if exceeded && r.LagBelow3sMs < 0 {
				r.LagBelow3sMs = s.At - r.at
			}
			// A warning this fault caused: a transition into warning
			// before the next fault.
			if s.State == "warning" && prev != "warning" && warnAt == 0 && s.At < end {
				warnAt = s.At
				r.FaultToWarningMs = s.At - r.at
			}
			if warnAt != 0 && s.State == "normal" && r.WarningToNormalMs < 0 {
				r.WarningToNormalMs = s.At - warnAt
			}
			prev = s.State
		}
	}
	return recs
}
