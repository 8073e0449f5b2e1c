package cluster

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"cdcspec/impl/upstream"
	"cdcspec/runtime/adminapi"
	"cdcspec/runtime/server"
	"cdcspec/spec"
)

// injector fires one step on the running cluster and returns what it hit,
// for the report. A timed fault heals itself in the background.
type injector func(c *Cluster, ctx context.Context, st Step) (target string, err error)

// faultInjectors are the faults of the vocabulary cdcspec run injects
// (`--faults`, scenarios); UnsupportedFaults lists the others.
var faultInjectors = map[spec.Fault]injector{
	spec.FaultKillCapture: func(c *Cluster, _ context.Context, _ Step) (string, error) {
		return c.KillCapture("")
	},
	// kill-owner-capture: coordinator failover; the step waits for a new
	// owner (KillOwner).
	spec.FaultKillOwnerCapture: func(c *Cluster, ctx context.Context, _ Step) (string, error) {
		return c.KillOwner(ctx)
	},
	spec.FaultKillMaintainerCapture: func(c *Cluster, ctx context.Context, _ Step) (string, error) {
		id, err := c.maintainerHost(ctx)
		if err != nil {
			return "", err
		}
		return c.KillCapture(id)
	},
	spec.FaultKillMoveDestination: func(c *Cluster, ctx context.Context, _ Step) (string, error) {
		// Kill the destination while the move runs (the origin may
		// already have removed its dispatcher).
		t, to, err := c.MoveTable(ctx)
		if err != nil {
			return "", err
		}
		time.Sleep(20 * time.Millisecond)
		if _, err := c.KillCapture(to); err != nil {
			return "", err
		}
		return fmt.Sprintf("table %d -> %s (killed)", t, to), nil
	},
	spec.FaultKillMaintainerInflight: func(c *Cluster, ctx context.Context, _ Step) (string, error) {
		return c.FailoverInflight(ctx)
	},
	spec.FaultKillMaintainerStaleCreate: func(c *Cluster, ctx context.Context, st Step) (string, error) {
		return c.StaleCreate(ctx, st.window())
	},
	// kill-capture-during-ddl: a blocking DDL (not a syncpoint) is
	// committed; the maintainer's capture holds its next BlockStatusRequests
	// for 3 s (delay-messages), so the barrier stays open once the
	// dispatchers block; a random capture (the maintainer's among them) is
	// killed 1 s after the upstream's resolved ts passed the DDL. Without
	// the hold the barrier passes within about 100 ms of the last WAITING,
	// and a kill timed from outside mostly lands before or after it.
	spec.FaultKillCaptureDuringDDL: func(c *Cluster, ctx context.Context, _ Step) (string, error) {
		var kinds []string
		for _, k := range server.RuntimeBlockDDLKinds {
			if k != upstream.DDLSyncPoint {
				kinds = append(kinds, k)
			}
		}
		ev, err := c.CommitBlockDDL(kinds[c.intn(len(kinds))])
		if err != nil {
			return "", err
		}
		if _, err := c.maintainerRule(ctx, adminapi.DelayRule{Type: "BlockStatusRequest", Action: "delay", DelayMs: 3000, Count: 1000}); err != nil {
			return "", err
		}
		at := time.UnixMilli(int64(ev.CommitTs) + c.Up.Config().LagMs + 1000)
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(time.Until(at)):
		}
		id, err := c.KillCapture("")
		return fmt.Sprintf("%s at commit-ts %d; killed %s", ev.Query, spec.TSO(ev.CommitTs), id), err
	},
	// move-writer-during-ddl and drop-add-table-status: the barrier's
	// windows of #3974 and #3799 (barrier.go). The first holds the
	// maintainer's HeartBeatResponses for Dur (3 s).
	spec.FaultMoveWriterDuringDDL: func(c *Cluster, ctx context.Context, st Step) (string, error) {
		return c.MoveWriterDuringDDL(ctx, st.window())
	},
	spec.FaultDropAddTableStatus: func(c *Cluster, ctx context.Context, _ Step) (string, error) {
		return c.DropAddTableStatus(ctx)
	},
	spec.FaultExpireSession: func(c *Cluster, _ context.Context, st Step) (string, error) {
		return c.ExpireSession("", st.AvoidOwner)
	},
	spec.FaultFreezeCapture: func(c *Cluster, ctx context.Context, _ Step) (string, error) {
		return c.Freeze(ctx)
	},
	spec.FaultExpireFrozenSession: func(c *Cluster, _ context.Context, _ Step) (string, error) {
		ids, err := c.ExpireFrozen()
		return strings.Join(ids, ","), err
	},
	// Receiver-side rules on the maintainer's capture (or the one that
	// ran it last, when the changefeed is stopping): duplicate-messages
	// replays the next RemoveMaintainerRequest after Dur (10 s),
	// delay-messages holds the next BlockStatusRequests for Dur (3 s), and
	// drop-messages loses every BlockStatusRequest for Dur (3 s).
	spec.FaultDuplicateMessages: func(c *Cluster, ctx context.Context, st Step) (string, error) {
		return c.maintainerRule(ctx, adminapi.DelayRule{Type: st.msgType("RemoveMaintainerRequest"), Action: "dup",
			DelayMs: st.window().Milliseconds(), Count: 1})
	},
	spec.FaultDelayMessages: func(c *Cluster, ctx context.Context, st Step) (string, error) {
		return c.maintainerRule(ctx, adminapi.DelayRule{Type: st.msgType("BlockStatusRequest"), Action: "delay",
			DelayMs: st.window().Milliseconds(), Count: 1000})
	},
	spec.FaultDropMessages: func(c *Cluster, ctx context.Context, st Step) (string, error) {
		return c.maintainerRule(ctx, adminapi.DelayRule{Type: st.msgType("BlockStatusRequest"), Action: "drop",
			Count: 1 << 20, ForMs: st.window().Milliseconds()})
	},
	spec.FaultSinkError: func(c *Cluster, _ context.Context, st Step) (string, error) {
		d := st.window()
		return d.String(), c.KafkaTimeout(d)
	},
	spec.FaultStallUpstream: func(c *Cluster, _ context.Context, st Step) (string, error) {
		d := st.window()
		if err := c.Stall(true); err != nil {
			return "", err
		}
		time.AfterFunc(d, func() { _ = c.Stall(false) })
		return d.String(), nil
	},
	spec.FaultResumeUpstream: func(c *Cluster, _ context.Context, _ Step) (string, error) {
		return "", c.Stall(false)
	},
	spec.FaultBlockCreateDispatcher: func(c *Cluster, ctx context.Context, _ Step) (string, error) {
		return c.failpointOnAny(ctx, "BlockCreateDispatcher")
	},
	spec.FaultSlowCloseDispatcher: func(c *Cluster, ctx context.Context, _ Step) (string, error) {
		return c.failpointOnAny(ctx, "NotReadyToCloseDispatcher")
	},
}

// UnsupportedFaults are the faults of the vocabulary cdcspec run cannot
// inject, with the reason.
var UnsupportedFaults = map[spec.Fault]string{
	spec.FaultRestartCapture:      "the supervisor restarts every killed or exited capture by itself, after the restart delay",
	spec.FaultAddCapture:          "the cluster's capture processes are fixed at start (--nodes)",
	spec.FaultRandomMessageFaults: "captures talk over real TCP; no random loss or delay is injected",
	spec.FaultPartition:           "every capture runs on one host's loopback; no network partition is injected",
	spec.FaultHealNetwork:         "there is no network fault to heal",
	spec.FaultHeal:                "cdcspec run heals once, after the fault phase (FaultsHealed)",
	spec.FaultFastFailError:       "the Kafka sink has no unretryable error to inject (a GC error needs the upstream's GC safepoint); the simulation and proptest inject it",
}

// actionInjectors are the domain actions a schedule may take.
var actionInjectors = map[spec.Action]injector{
	spec.ActionMoveTable: func(c *Cluster, ctx context.Context, _ Step) (string, error) {
		t, to, err := c.MoveTable(ctx)
		return fmt.Sprintf("table %d -> %s", t, to), err
	},
	spec.ActionSplitTable: func(c *Cluster, ctx context.Context, _ Step) (string, error) {
		t, n, err := c.SplitTable(ctx)
		return fmt.Sprintf("table %d (%d spans)", t, n), err
	},
	// blocking-ddl commits a blocking DDL (or syncpoint) of a random kind
	// of server.RuntimeBlockDDLKinds (CommitBlockDDL).
	spec.ActionBlockingDDL: func(c *Cluster, _ context.Context, _ Step) (string, error) {
		ev, err := c.CommitBlockDDL("")
		return fmt.Sprintf("%s at commit-ts %d", ev.Query, spec.TSO(ev.CommitTs)), err
	},
	spec.ActionCreateTable: func(c *Cluster, _ context.Context, _ Step) (string, error) {
		t, err := c.CreateTable()
		return fmt.Sprintf("table %d", t), err
	},
	// pause-changefeed pauses the changefeed and resumes it after Dur (3 s).
	spec.ActionPauseChangefeed: func(c *Cluster, ctx context.Context, st Step) (string, error) {
		return c.PauseResume(ctx, st.window(), false)
	},
	// resume-changefeed: a resume needs a paused changefeed, so the step
	// pauses it and resumes it after Dur (3 s) with an overwritten
	// checkpoint up to 2 s below the current one (PauseResume).
	spec.ActionResumeChangefeed: func(c *Cluster, ctx context.Context, st Step) (string, error) {
		return c.PauseResume(ctx, st.window(), true)
	},
	// remove-changefeed removes the changefeed and creates it again from
	// its checkpoint (RemoveAndRecreate).
	spec.ActionRemoveChangefeed: func(c *Cluster, ctx context.Context, _ Step) (string, error) {
		return c.RemoveAndRecreate(ctx)
	},
	// move-maintainer moves the maintainer to another capture and waits
	// until it runs there (MoveMaintainer).
	spec.ActionMoveMaintainer: func(c *Cluster, ctx context.Context, _ Step) (string, error) {
		return c.MoveMaintainer(ctx)
	},
}

// notDrawn are the injectable steps a random schedule (RandomSchedule)
// does not draw, with the reason: they only make sense in a pair or a
// scenario's setup.
var notDrawn = map[string]string{
	string(spec.FaultFreezeCapture):             "leaves a capture stopped until expire-frozen-session or the heal (scenario seed-5709)",
	string(spec.FaultExpireFrozenSession):       "needs a frozen capture (freeze-capture) first",
	string(spec.FaultResumeUpstream):            "ends a stall-upstream, which heals itself",
	string(spec.FaultKillMaintainerStaleCreate): "holds a Create for 20 s (scenario seed-5083)",
	string(spec.FaultMoveWriterDuringDDL):       "a window for a planted barrier bug (#3974): it needs the changefeed caught up, which a random mix of faults rarely leaves; name it in --faults",
	string(spec.FaultDropAddTableStatus):        "a window for a planted barrier bug (#3799): it needs the changefeed caught up, which a random mix of faults rarely leaves; name it in --faults",
}

// RandomSchedule draws n steps (faults and domain actions cdcspec run
// injects, except notDrawn) with the seed and spreads them over d.
func RandomSchedule(n int, seed uint64, d time.Duration) ([]Step, []string, error) {
	var pool []string
	for _, name := range Names() {
		if _, skip := notDrawn[name]; !skip {
			pool = append(pool, name)
		}
	}
	r := rand.New(rand.NewPCG(seed, 0x736f616b))
	names := make([]string, n)
	for i := range names {
		names[i] = pool[r.IntN(len(pool))]
	}
	steps, err := Schedule(names, d)
	return steps, names, err
}

// Names lists what a schedule may name: the faults cdcspec run injects, in
// the vocabulary's order, then its domain actions.
func Names() []string {
	var out []string
	for _, f := range spec.Faults() {
		if _, ok := faultInjectors[f]; ok {
			out = append(out, string(f))
		}
	}
	for _, a := range spec.Actions() {
		if _, ok := actionInjectors[a]; ok {
			out = append(out, string(a))
		}
	}
	return out
}

// ParseStep resolves one schedule name; the error says why a fault of the
// vocabulary cannot be injected, or lists the names it knows.
func ParseStep(name string) (Step, error) {
	st := Step{Fault: spec.Fault(name)}
	if !st.Fault.Known() {
		st = Step{Action: spec.Action(name)}
	}
	return st, st.check()
}

func (st Step) check() error {
	if st.Fault != "" {
		if why, ok := UnsupportedFaults[st.Fault]; ok {
			return fmt.Errorf("fault %s: cdcspec run cannot inject it: %s", st.Fault, why)
		}
		if _, ok := faultInjectors[st.Fault]; ok {
			return nil
		}
	} else if _, ok := actionInjectors[st.Action]; ok {
		return nil
	}
	return fmt.Errorf("unknown fault %q (known: %s)", st.Name(), strings.Join(Names(), ", "))
}

// defaultWindows are the default durations of the timed steps (Step.Dur
// overrides them).
var defaultWindows = map[string]time.Duration{
	string(spec.FaultSinkError):                 5 * time.Second,
	string(spec.FaultStallUpstream):             3 * time.Second,
	string(spec.FaultDelayMessages):             3 * time.Second,
	string(spec.FaultDuplicateMessages):         10 * time.Second,
	string(spec.FaultDropMessages):              3 * time.Second,
	string(spec.FaultMoveWriterDuringDDL):       3 * time.Second,
	string(spec.FaultKillMaintainerStaleCreate): 20 * time.Second,
	string(spec.ActionPauseChangefeed):          3 * time.Second,
	string(spec.ActionResumeChangefeed):         3 * time.Second,
	string(spec.FaultStore):                     5 * time.Second,
}

// window is how long the step's fault lasts: Dur, or its default (0 for
// an instant step such as kill-capture or move-table).
func (st Step) window() time.Duration {
	if st.Dur > 0 {
		return st.Dur
	}
	return defaultWindows[st.Name()]
}

func (st Step) msgType(def string) string {
	if st.MsgType != "" {
		return st.MsgType
	}
	return def
}

// inject fires one step.
func (c *Cluster) inject(ctx context.Context, st Step) Recovery {
	r := Recovery{Fault: st.Name(), FaultToWarningMs: -1, WarningToNormalMs: -1, LagBelow3sMs: -1}
	in, ok := faultInjectors[st.Fault]
	if st.Fault == "" {
		in, ok = actionInjectors[st.Action]
	}
	if !ok {
		r.Error = st.check().Error()
		return r
	}
	c.takePath()
	target, err := in(c, ctx, st)
	if err != nil {
		r.Error = err.Error()
		return r
	}
	r.Target = target
	if p := c.takePath(); p != nil {
		r.Path, r.PathReached = p.path, p.reached
	}
	return r
}

// maintainerRule installs an inbound message rule on the changefeed's
// maintainer host, or on the capture a rule went to last when the
// changefeed is stopping.
func (c *Cluster) maintainerRule(ctx context.Context, rule adminapi.DelayRule) (string, error) {
	id, err := c.maintainerHost(ctx)
	if err != nil {
		id = c.lastMaintainer
	}
	if id == "" {
		return "", fmt.Errorf("no maintainer host: %v", err)
	}
	c.lastMaintainer = id
	if err := c.delayRule(ctx, id, rule); err != nil {
		return "", err
	}
	return id, nil
}

// failpointOnAny switches a failpoint on a random running capture (until
// the heal).
func (c *Cluster) failpointOnAny(ctx context.Context, name string) (string, error) {
	_, id, err := c.pickSlot(false)
	if err != nil {
		return "", err
	}
	return id, c.setFailpoint(ctx, id, name, true)
}
