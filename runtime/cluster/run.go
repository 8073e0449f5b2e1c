package cluster

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"cdcspec/runtime/adminapi"
	"cdcspec/runtime/datacheck"
	"cdcspec/runtime/server"
	"cdcspec/spec"
	"cdcspec/traces"
)

// DefaultFaults is the default schedule's mix, faults of the vocabulary
// and domain actions.
var DefaultFaults = []string{
	string(spec.FaultKillCapture), string(spec.FaultSinkError), string(spec.ActionMoveTable), string(spec.FaultExpireSession),
	string(spec.ActionSplitTable), string(spec.ActionCreateTable), string(spec.ActionPauseChangefeed), string(spec.FaultKillMoveDestination),
}

// DefaultFaultsFor is the default mix for a cluster: DefaultFaults, less
// sink-error with external Kafka (its produce timeouts are injected in the
// embedded kfake).
func DefaultFaultsFor(cfg Config) []string {
	if len(cfg.Kafka) == 0 {
		return DefaultFaults
	}
	var out []string
	for _, f := range DefaultFaults {
		if f != string(spec.FaultSinkError) {
			out = append(out, f)
		}
	}
	return out
}

// Step is one scheduled fault or domain action, at an offset from the
// start of the fault phase.
type Step struct {
	At time.Duration
	// Fault or Action: exactly one is set (Names lists what cdcspec run
	// supports).
	Fault  spec.Fault
	Action spec.Action
	// Dur is how long a timed fault lasts (sink-error, stall-upstream,
	// delay- and duplicate-messages, pause-changefeed); 0: its default.
	Dur time.Duration
	// AvoidOwner applies to expire-session.
	AvoidOwner bool
	// MsgType is the message type of drop-, duplicate- and delay-messages
	// ("": the fault's default, see faultInjectors).
	MsgType string
	// AllStores: the store fault takes every TiKV store down (seed 004),
	// not one.
	AllStores bool
	// SlowReceive: the store fault also switches failpoint
	// KVClientRecvDelay on in every capture until the heal (a CPU-starved
	// receive loop, see runtime/tikv).
	SlowReceive bool
}

// Name is the step's fault or action.
func (s Step) Name() string {
	if s.Fault != "" {
		return string(s.Fault)
	}
	return string(s.Action)
}

// Schedule parses names (faults of the vocabulary and domain actions) and
// spreads them evenly over d.
func Schedule(names []string, d time.Duration) ([]Step, error) {
	var out []Step
	gap := d / time.Duration(len(names)+1)
	for i, n := range names {
		st, err := ParseStep(n)
		if err != nil {
			return nil, err
		}
		st.At = gap * time.Duration(i+1)
		out = append(out, st)
	}
	return out, nil
}

// RunConfig is a whole `cdcspec run`.
type RunConfig struct {
	Cluster  Config
	Duration time.Duration // fault phase (default 60s)
	Steps    []Step        // default Schedule(DefaultFaults, Duration)
	// SettleTimeout bounds waiting for the checkpoint after healing
	// (default 120s: a changefeed restarted by backoff can wait 10-20 s).
	SettleTimeout time.Duration
	// Exact fires every step at its At (scenarios, whose timing is the
	// point). Otherwise a step waits until the previous step's fault window
	// (its Dur, e.g. a pause or a Kafka timeout) has ended and MinGap has
	// passed, so that faults do not mask each other: a Kafka error during
	// a pause never reaches the changefeed's error handling.
	Exact bool
	// MinGap is the least time between two steps when not Exact
	// (default 3 s).
	MinGap time.Duration
	// RetryFor bounds how long a step that cannot be applied (no span
	// could move, the owner key names a capture that just died, the
	// maintainer restarting) is retried (default 20 s). A step still not
	// applied then fails the run.
	RetryFor time.Duration
	// DDLEvery, when > 0, is DDL traffic: during the fault phase the
	// upstream commits a blocking DDL (or syncpoint) of a random kind every
	// DDLEvery (Cluster.CommitBlockDDL), besides the schedule's steps.
	DDLEvery time.Duration
}

// Recovery is what one fault (or domain action) did to the changefeed.
type Recovery struct {
	Fault  string `json:"fault"` // Step.Name
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
	// Attempts is how many times the step was tried (retries of a step
	// that could not apply yet).
	Attempts int `json:"attempts"`
	// Path says whether the fault reached the code path it is there for
	// ("" when the runner cannot tell): for sink-error, the changefeed went
	// to warning and back to normal; for pause- and resume-changefeed, it
	// was stopped and came back; for move-maintainer, the maintainer runs
	// on the target; for remove-changefeed, the changefeed was created
	// again from its checkpoint; for kill-owner-capture, another capture
	// became the owner.
	Path string `json:"path,omitempty"`
	// PathReached is Path's verdict (false also when Path is "").
	PathReached bool `json:"path_reached"`
	// PlannedAtMs is when the schedule placed the step (Step.At); Late
	// says why it was applied more than a second after that ("" when on
	// time).
	PlannedAtMs int64  `json:"planned_at_ms"`
	Late        string `json:"late,omitempty"`
	at          int64
}

// Result is the report of a run.
type Result struct {
	Produced   int `json:"produced"`
	Delivered  int `json:"delivered"`
	Lost       int `json:"lost"`
	OutOfOrder int `json:"out_of_order"`
	Duplicates int `json:"duplicates"`
	// FinalCheckpointTs is a TSO (spec.TSO); FinalCheckpointTime its
	// physical part (UTC, TiCDC's JSONTime format).
	FinalCheckpointTs   uint64 `json:"final_checkpoint_ts"`
	FinalCheckpointTime string `json:"final_checkpoint_time"`
	// BlockingDDLs is how many blocking DDLs and syncpoints the upstream
	// committed (steps and DDL traffic); DDLOrderViolations is the data
	// check's count of breaches of its DDL ordering rule
	// (datacheck.BlockDDL).
	BlockingDDLs       int              `json:"blocking_ddls"`
	DDLOrderViolations int              `json:"ddl_order_violations"`
	Findings           []traces.Finding `json:"findings"`
	Violations         int              `json:"violations"`
	Recovery           []Recovery       `json:"recovery"`
	LogDir             string           `json:"log_dir"`
	Topic              string           `json:"topic"`
	Data               datacheck.Report `json:"data"`
	RowsPerSec         float64          `json:"rows_per_sec"`
	Settled            bool             `json:"settled"`
	SettleError        string           `json:"settle_error,omitempty"`
	Restarts           int              `json:"restarts"`
	Etcd               []string         `json:"etcd"`
	Kafka              []string         `json:"kafka"`
	// Captures are the captures registered at the end (admin API
	// addresses change when a capture restarts).
	Captures map[string]string `json:"captures_api"`
	// LagPeakMs and LagAvgMs: checkpoint lag (now - stored checkpoint)
	// from the start of the fault phase until the checkpoint settled (the
	// same samples as every Recovery's LagPeakMs, so no fault's peak
	// exceeds this one).
	LagPeakMs int64 `json:"lag_peak_ms"`
	LagAvgMs  int64 `json:"lag_avg_ms"`
	// HealToSettledMs: from the heal to the checkpoint passing its target
	// (-1: it never did).
	HealToSettledMs int64 `json:"heal_to_settled_ms"`
	// StoreHeals: every time TiKV stores came back, and when the
	// checkpoint passed the resolved ts of that moment.
	StoreHeals []StoreHeal `json:"store_heals,omitempty"`
	// Failures are the reasons the run failed besides the data check,
	// the trace check and settling: it checked no data, or a fault asked
	// for was never applied.
	Failures []string `json:"failures"`
	// Panics: captures whose process panicked (first line each).
	Panics []string `json:"panics"`
	// Interrupted: the run was stopped (SIGINT/SIGTERM) before it ended;
	// the report covers what was checked until then. InterruptedIn is the
	// phase the signal came in (Phase*), Unchecked what could not be
	// checked after it.
	Interrupted   string   `json:"interrupted,omitempty"`
	InterruptedIn string   `json:"interrupted_in,omitempty"`
	Unchecked     []string `json:"unchecked,omitempty"`
	// DataChecked and TraceChecked: the data check read the whole topic,
	// the trace check every log (false only after a signal).
	DataChecked  bool `json:"data_checked"`
	TraceChecked bool `json:"trace_checked"`
	// FaultPhase: the fault phase's planned and actual length (zero when
	// a signal ended it).
	FaultPhase FaultPhase `json:"fault_phase"`
}

// OK reports whether the run checked data, applied every fault asked for,
// settled, lost nothing and violated no property.
func (r *Result) OK() bool {
	return r.Data.OK() && r.Violations == 0 && r.Settled && len(r.Failures) == 0 && r.Interrupted == ""
}

// judge fills Failures: a run that produced no row below its final
// checkpoint checked nothing, and a fault that was asked for and never
// applied was not tested.
func (r *Result) judge() {
	r.Failures = []string{}
	if r.Interrupted == "" && r.Produced == 0 {
		r.Failures = append(r.Failures, "no row change was produced below the final checkpoint: the run checked no data")
	}
	for _, p := range r.Panics {
		r.Failures = append(r.Failures, "panic: "+p)
	}
	for _, rc := range r.Recovery {
		if rc.Error != "" {
			r.Failures = append(r.Failures, fmt.Sprintf("fault %s at %.1fs was never applied (%d attempts): %s", rc.Fault, float64(rc.AtMs)/1000, rc.Attempts, rc.Error))
		}
	}
}

// Phases of a run: Result.InterruptedIn names the one a signal ended.
const (
	PhaseStartup = "startup" // preflight, etcd, Kafka, the captures, the changefeed
	PhaseLoad    = "load"    // the fault phase before its first step was applied
	PhaseFaults  = "faults"  // the fault phase from its first step on
	PhaseSettle  = "settle"  // healed, waiting for the checkpoint to pass the heal target
	PhaseCheck   = "check"   // the captures stopped; the data check and the trace check
)

// After a signal (ctx ends), the run stops within these bounds, so that
// `cdcspec run` prints its partial report and exits within 2 s: the
// captures get InterruptGrace to exit on SIGTERM before SIGKILL, and the
// checks of what was written so far stop InterruptBudget after the
// signal (what they could not finish is listed in Result.Unchecked).
const (
	InterruptGrace  = 300 * time.Millisecond
	InterruptBudget = 800 * time.Millisecond
)

// FaultPhase compares the fault phase's planned length (--duration) with
// the time it took. It stretches when steps wait for each other (a step
// waits until the previous step's window and RunConfig.MinGap have passed)
// or are retried until they apply (RunConfig.RetryFor); Why lists the
// steps applied later than planned, and why.
type FaultPhase struct {
	PlannedMs int64    `json:"planned_ms"`
	ActualMs  int64    `json:"actual_ms"`
	Stretched bool     `json:"stretched"`
	Why       []string `json:"why,omitempty"`
}

// stretchSlack is how much later than planned a step or the fault phase
// may end before the report calls it stretched.
const stretchSlack = time.Second

// runState is what the fault phase's goroutine shares with Run, which
// stops waiting for it at a signal.
type runState struct {
	mu    sync.Mutex
	recs  []Recovery
	phase string
}

func (r *runState) setPhase(p string) { r.mu.Lock(); r.phase = p; r.mu.Unlock() }
func (r *runState) add(rc Recovery)   { r.mu.Lock(); r.recs = append(r.recs, rc); r.mu.Unlock() }
func (r *runState) snapshot() ([]Recovery, string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Recovery(nil), r.recs...), r.phase
}

// Run runs a whole cluster: preflight, start, faults, heal, checks. When
// ctx ends (SIGINT, SIGTERM) in any phase, Run returns within about
// InterruptGrace + InterruptBudget a partial Result (Interrupted and
// InterruptedIn set) of what was checked until then, and no error.
func Run(ctx context.Context, rc RunConfig) (*Result, error) {
	if rc.Duration == 0 {
		rc.Duration = 60 * time.Second
	}
	if rc.SettleTimeout == 0 {
		rc.SettleTimeout = 120 * time.Second
	}
	if rc.MinGap == 0 {
		rc.MinGap = 3 * time.Second
	}
	if rc.RetryFor == 0 {
		rc.RetryFor = 20 * time.Second
	}
	if rc.Steps == nil {
		steps, err := Schedule(DefaultFaultsFor(rc.Cluster), rc.Duration)
		if err != nil {
			return nil, err
		}
		rc.Steps = steps
	}
	if rc.Cluster.Stores == 0 && usesStores(rc.Steps) {
		rc.Cluster.Stores = 3
	}
	for _, s := range rc.Steps {
		if err := s.check(); err != nil {
			return nil, err
		}
	}
	cfg, err := rc.Cluster.withDefaults()
	if err != nil {
		return nil, err
	}
	res := &Result{LogDir: cfg.LogDir, Etcd: cfg.Etcd, Kafka: cfg.Kafka, HealToSettledMs: -1, Recovery: []Recovery{}}
	// Before anything starts: external endpoints that do not answer end
	// the run at once (an error naming the flag and the address).
	if err := Preflight(ctx, cfg.Etcd, cfg.Kafka); err != nil {
		if rc.Cluster.LogDir == "" {
			_ = os.RemoveAll(cfg.LogDir) // the temp dir withDefaults made; nothing ran
			res.LogDir = ""
		}
		if ctx.Err() != nil {
			return res.interruptedAtStartup(ctx), nil
		}
		return nil, err
	}
	c, err := Start(ctx, cfg)
	if err != nil {
		if ctx.Err() != nil {
			return res.interruptedAtStartup(ctx), nil
		}
		return nil, err
	}
	defer c.Close()
	res.Topic, res.Etcd, res.Kafka = c.Topic(), c.Endpoints(), c.Brokers()
	begin := time.Now()
	st := &runState{phase: PhaseLoad}
	if rc.DDLEvery > 0 {
		go c.ddlTraffic(ctx, rc.DDLEvery, begin.Add(rc.Duration))
	}
	// The fault phase runs on its own goroutine: at a signal Run stops
	// waiting for it (an injector may be in the middle of a retry loop)
	// and checks what was written; the goroutine's calls then fail
	// against the stopped cluster.
	done := make(chan struct{})
	go func() {
		defer close(done)
		c.faultPhase(ctx, rc, begin, st)
	}()
	select {
	case <-done:
	case <-ctx.Done():
	}
	if ctx.Err() == nil {
		res.FaultPhase = faultPhaseReport(rc, begin, st)
		if res.FaultPhase.Stretched {
			c.progress("fault phase planned %s took %s: %s", rc.Duration, time.Since(begin).Round(100*time.Millisecond), strings.Join(res.FaultPhase.Why, "; "))
		}
	}
	return c.finish(ctx, res, st, begin, func(ctx context.Context) {
		target := c.Heal()
		healAt := time.Now()
		c.progress("healed; waiting for the checkpoint to pass %s", TsText(target))
		_, err := c.WaitCheckpoint(ctx, target, rc.SettleTimeout)
		res.Settled = err == nil
		if err == nil {
			res.HealToSettledMs = time.Since(healAt).Milliseconds()
		}
		if err != nil && ctx.Err() == nil {
			res.SettleError = err.Error()
			c.progress("%v", err)
		}
	})
}

// interruptedAtStartup is the report of a run a signal ended before its
// changefeed was created: nothing was checked.
func (r *Result) interruptedAtStartup(ctx context.Context) *Result {
	r.Interrupted = context.Cause(ctx).Error()
	r.InterruptedIn = PhaseStartup
	r.Unchecked = []string{"everything: the signal came before the changefeed was created"}
	r.Findings = []traces.Finding{}
	r.judge()
	return r
}

// faultPhase applies rc.Steps from begin on and returns when the phase's
// --duration has passed and every step was tried, or ctx ends.
func (c *Cluster) faultPhase(ctx context.Context, rc RunConfig, begin time.Time, rs *runState) {
	sleep := func(until time.Time) bool {
		if wait := time.Until(until); wait > 0 {
			select {
			case <-ctx.Done():
				return false
			case <-time.After(wait):
			}
		}
		return ctx.Err() == nil
	}
	var free time.Time // when the previous step's window and MinGap have passed
	var prev Step
	for i, st := range rc.Steps {
		at := begin.Add(st.At)
		why := ""
		if !rc.Exact && free.After(at) {
			at = free
			why = fmt.Sprintf("waited for %s's %s window and the %s gap", prev.Name(), prev.window(), rc.MinGap)
		}
		if !sleep(at) {
			return
		}
		// Retry a step that cannot apply yet, at most RetryFor and, for
		// an exact schedule, not past the next step.
		retryEnd := time.Now().Add(rc.RetryFor)
		if rc.Exact && i+1 < len(rc.Steps) {
			if next := begin.Add(rc.Steps[i+1].At); next.Before(retryEnd) {
				retryEnd = next
			}
		}
		var r Recovery
		for attempt := 1; ; attempt++ {
			r = c.inject(ctx, st)
			r.Attempts = attempt
			if r.Error == "" || ctx.Err() != nil || time.Now().Add(time.Second).After(retryEnd) {
				break
			}
			c.progress("fault %s not applied yet (%s); retrying", st.Name(), r.Error)
			if !sleep(time.Now().Add(time.Second)) {
				break
			}
		}
		if ctx.Err() != nil {
			return
		}
		r.AtMs = time.Since(begin).Milliseconds()
		r.PlannedAtMs = st.At.Milliseconds()
		if r.Attempts > 1 {
			why = strings.TrimPrefix(why+fmt.Sprintf("; applied at attempt %d", r.Attempts), "; ")
		}
		if time.Duration(r.AtMs-r.PlannedAtMs)*time.Millisecond > stretchSlack {
			r.Late = why
			if r.Late == "" {
				r.Late = "its injection took that long"
			}
		}
		r.at = time.Now().UnixMilli()
		if r.Error != "" {
			c.progress("fault %s NOT APPLIED after %d attempts: %s", st.Name(), r.Attempts, r.Error)
		} else {
			c.progress("fault %s %s", st.Name(), r.Target)
		}
		rs.add(r)
		rs.setPhase(PhaseFaults)
		free = time.Now().Add(st.window() + rc.MinGap)
		prev = st
	}
	sleep(begin.Add(rc.Duration))
}

// faultPhaseReport compares the fault phase with its plan (called when it
// has ended).
func faultPhaseReport(rc RunConfig, begin time.Time, rs *runState) FaultPhase {
	recs, _ := rs.snapshot()
	fp := FaultPhase{PlannedMs: rc.Duration.Milliseconds(), ActualMs: time.Since(begin).Milliseconds()}
	fp.Stretched = time.Duration(fp.ActualMs-fp.PlannedMs)*time.Millisecond > stretchSlack
	for _, r := range recs {
		if r.Late != "" {
			fp.Why = append(fp.Why, fmt.Sprintf("%s planned at %.1fs, applied at %.1fs (%s)", r.Fault, float64(r.PlannedAtMs)/1000, float64(r.AtMs)/1000, r.Late))
		}
	}
	if fp.Stretched && len(recs) > 0 {
		last := recs[len(recs)-1]
		if end := time.Duration(last.AtMs)*time.Millisecond + rc.MinGap; end > rc.Duration {
			fp.Why = append(fp.Why, fmt.Sprintf("the last step, %s, was applied at %.1fs, after which the phase ends", last.Fault, float64(last.AtMs)/1000))
		}
	}
	return fp
}

// finish settles (settle: heal and wait for the checkpoint), stops the
// captures and runs the data and trace checks over what was written. Once
// ctx ends (a signal, in any of these or before), it heals only what needs
// no network call, stops the captures within InterruptGrace and cuts the
// checks InterruptBudget after the signal: the Result says what it could
// not check.
func (c *Cluster) finish(ctx context.Context, res *Result, rs *runState, begin time.Time, settle func(context.Context)) (*Result, error) {
	// cctx bounds the checks: generous, cut short once ctx ends.
	cctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	var signalPhase atomic.Value
	stopAfter := context.AfterFunc(ctx, func() {
		_, ph := rs.snapshot()
		signalPhase.Store(ph)
		time.AfterFunc(InterruptBudget, cancel)
	})
	defer stopAfter()
	if ctx.Err() == nil {
		rs.setPhase(PhaseSettle)
		settle(ctx)
		// Give the liveness monitors a quiet stretch to judge.
		select {
		case <-ctx.Done():
		case <-time.After(2 * time.Second):
			c.Quiesced()
		}
	}
	interrupted := func() bool { return ctx.Err() != nil }
	if interrupted() {
		c.healLocal()
	}
	s := c.finalFigures(res, rs, begin, interrupted)
	// Stop the captures so the topic is complete and still: every row
	// change written is then in the source below (rows up to now).
	if !interrupted() {
		rs.setPhase(PhaseCheck)
	}
	c.stopCaptures(ctx)
	c.progress("final checkpoint %s; checking topic %s", TsText(s.Checkpoint), c.Topic())
	if err := c.checkData(cctx, res, s, begin, interrupted); err != nil {
		return nil, err
	}
	if err := c.checkTrace(cctx, res, interrupted); err != nil {
		return nil, err
	}
	if interrupted() {
		res.Interrupted = context.Cause(ctx).Error()
		res.InterruptedIn, _ = signalPhase.Load().(string)
		c.progress("interrupted (%s) during %s: stopped the captures; partial report of what was checked", res.Interrupted, res.InterruptedIn)
	}
	res.judge()
	return res, nil
}

// finalFigures sets the run's figures that need no check: the checkpoint
// lag since begin, the store heals, the captures' API addresses, the final
// checkpoint (the stored one, or after a signal the last sampled),
// recoveries and restarts. It returns the final checkpoint's sample.
func (c *Cluster) finalFigures(res *Result, rs *runState, begin time.Time, interrupted func() bool) Sample {
	recs, _ := rs.snapshot()
	tl := c.Timeline()
	var lagSum, lagN int64
	for _, smp := range tl {
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
	res.StoreHeals = c.storeHeals(begin)
	res.Captures = map[string]string{}
	for id, v := range c.Members() {
		res.Captures[id] = v.APIAddr
	}
	var s Sample
	ok := false
	if !interrupted() {
		s, ok = c.Stored()
	}
	if !ok && len(tl) > 0 {
		s = tl[len(tl)-1]
	}
	res.FinalCheckpointTs = spec.TSO(s.Checkpoint)
	res.FinalCheckpointTime = adminapi.TSOTime(res.FinalCheckpointTs)
	res.Recovery = recovery(recs, tl)
	for _, n := range c.Starts() {
		res.Restarts += n - 1
	}
	return s
}

// checkData reads the topic and checks it against the upstream's rows up
// to now (datacheck), up to the final checkpoint s. It runs on its own
// goroutine: after a signal it is cut when cctx ends even in the middle of
// a batch (the goroutine then fails against the closed broker), and the
// cut is reported in res.Unchecked rather than as an error.
func (c *Cluster) checkData(cctx context.Context, res *Result, s Sample, begin time.Time, interrupted func() bool) error {
	// Reading the topic takes about 10 s per million messages on a busy
	// machine: allow 2 min plus 30 s per million rows of the run.
	rows := c.cfg.Rate * float64(time.Since(begin)+30*time.Second) / float64(time.Second)
	readTimeout := 2*time.Minute + time.Duration(rows/1e6*30)*time.Second
	res.BlockingDDLs = len(c.Up.BlockEvents())
	type dataOut struct {
		rep datacheck.Report
		err error
	}
	dc := make(chan dataOut, 1)
	src := c.Up.Source(c.StartTs, uint64(time.Now().UnixMilli()))
	go func() {
		rep, err := datacheck.Check(cctx, datacheck.Config{Brokers: c.Brokers(), Topic: c.Topic(), Timeout: readTimeout, DDLs: server.BlockDDLs(c.Up)},
			src, res.FinalCheckpointTs)
		dc <- dataOut{rep, err}
	}()
	var d dataOut
	select {
	case d = <-dc:
	case <-cctx.Done():
		d.err = context.Cause(cctx)
	}
	switch {
	case d.err != nil && interrupted():
		res.Unchecked = append(res.Unchecked, fmt.Sprintf("data: the topic read was cut %s after the signal (%v)", InterruptBudget, d.err))
	case d.err != nil:
		return fmt.Errorf("data check: %w", d.err)
	default:
		rep := d.rep
		res.DataChecked = true
		res.Data = rep
		res.Produced, res.Delivered, res.Lost, res.OutOfOrder, res.Duplicates = rep.Produced, rep.Delivered, rep.Lost, rep.OutOfOrder, rep.Duplicates
		res.DDLOrderViolations = rep.DDLOrderViolations
		if secs := float64(int64(s.Checkpoint)-int64(c.StartTs)) / 1000; secs > 0 {
			res.RowsPerSec = float64(rep.Produced) / secs
		}
	}
	return nil
}

// checkTrace runs the trace check over the captures' logs and records the
// panics; like checkData it is cut when cctx ends, and after a signal a
// failure is reported in res.Unchecked rather than as an error.
func (c *Cluster) checkTrace(cctx context.Context, res *Result, interrupted func() bool) error {
	files := c.LogFiles()
	res.Panics = append([]string{}, c.Panics()...)
	res.Findings = []traces.Finding{}
	c.progress("checking %d logs", len(files))
	type traceOut struct {
		rep *traces.Report
		err error
	}
	tc := make(chan traceOut, 1)
	go func() {
		inputs, err := traces.ExpandInputs(files, nil)
		if err != nil {
			tc <- traceOut{err: err}
			return
		}
		trep, err := traces.Run(inputs, traces.Options{})
		tc <- traceOut{trep, err}
	}()
	select {
	case out := <-tc:
		switch {
		case out.err != nil && interrupted():
			res.Unchecked = append(res.Unchecked, fmt.Sprintf("trace: %v", out.err))
		case out.err != nil:
			return fmt.Errorf("trace: %w", out.err)
		default:
			res.TraceChecked = true
			if out.rep.Findings != nil {
				res.Findings = out.rep.Findings
			}
			res.Violations = out.rep.Violations()
		}
	case <-cctx.Done():
		res.Unchecked = append(res.Unchecked, fmt.Sprintf("trace: the log check was cut %s after the signal", InterruptBudget))
	}
	return nil
}

// ddlTraffic commits a blocking DDL every `every` until `until` or ctx
// ends; a failed commit is reported and the traffic goes on.
func (c *Cluster) ddlTraffic(ctx context.Context, every time.Duration, until time.Time) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			if now.After(until) {
				return
			}
			if ev, err := c.CommitBlockDDL(""); err != nil {
				c.progress("DDL traffic: %v", err)
			} else {
				c.progress("DDL traffic: %s at commit-ts %d", ev.Query, spec.TSO(ev.CommitTs))
			}
		}
	}
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
		var warnAt, stoppedAt, backAt int64
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
			if s.State == spec.StateStopped && s.At < end && stoppedAt == 0 {
				stoppedAt = s.At
			}
			if stoppedAt != 0 && s.State == spec.StateNormal && backAt == 0 {
				backAt = s.At
			}
			prev = s.State
		}
		switch {
		case r.Error != "":
		case r.Fault == string(spec.FaultSinkError):
			r.PathReached = r.FaultToWarningMs >= 0 && r.WarningToNormalMs >= 0
			r.Path = "changefeed warning and back to normal"
			if !r.PathReached {
				r.Path = "no warning followed by normal before the next fault (the produce errors never reached the changefeed's error handling)"
			}
		case r.Fault == string(spec.ActionPauseChangefeed), r.Fault == string(spec.ActionResumeChangefeed):
			r.PathReached = stoppedAt != 0 && backAt != 0
			r.Path = "changefeed stopped and resumed to normal"
			if !r.PathReached {
				r.Path = "the stored state never went stopped and back to normal"
			}
		}
	}
	return recs
}

// TsText shows a ts of the runtime (ms) as a TiCDC engineer reads one: the
// TSO, then its physical part as UTC time.
func TsText(ms uint64) string {
	tso := spec.TSO(ms)
	return fmt.Sprintf("%d (%s UTC)", tso, adminapi.TSOTime(tso))
}
