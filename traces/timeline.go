package traces

import "cdcspec/spec"

// TimelineEvent is one point of a changefeed's incident timeline: where its
// maintainer runs, its operators, errors, backoff and checkpoint, as the
// logs show them (Options.Timeline). Kind is the spec event kind or the
// symptom's name.
type TimelineEvent struct {
	Time       int64  `json:"time"` // Unix ms
	Changefeed string `json:"changefeed"`
	Node       string `json:"node,omitempty"`
	Origin     string `json:"origin,omitempty"`
	Kind       string `json:"kind"`
	Op         string `json:"op,omitempty"`
	Epoch      uint64 `json:"epoch,omitempty"`
	Checkpoint uint64 `json:"checkpoint,omitempty"`
	State      string `json:"state,omitempty"`
	Err        string `json:"error,omitempty"`
	// RemovalOnly and Reason qualify maintainer and operator events.
	RemovalOnly bool     `json:"removal_only,omitempty"`
	Reason      string   `json:"reason,omitempty"`
	Evidence    Evidence `json:"evidence"`
}

// Bounds of the timeline: it is for a report, not the check, and must not
// make memory grow with the log.
const (
	maxTimeline              = 50_000
	maxTimelinePerChangefeed = 5_000
)

// timelineKinds are the events a timeline shows.
var timelineKinds = map[spec.Kind]bool{
	spec.MaintainerCreated: true, spec.MaintainerBootstrapped: true, spec.MaintainerClosed: true,
	spec.MaintainerBootstrapFailed: true, spec.MaintainerRejectedAdd: true,
	spec.MaintainerOpStarted: true, spec.MaintainerOpFinished: true,
	spec.DispatcherErrorReported: true, spec.SinkError: true,
	spec.BackoffErrorSeen: true, spec.BackoffStarted: true, spec.BackoffRecovered: true, spec.BackoffGaveUp: true,
	spec.StateChanged: true, spec.CheckpointStored: true, spec.ChangefeedCreated: true, spec.ChangefeedResumed: true,
	spec.ChangefeedRemoved: true, spec.NodeLeft: true, spec.NodeJoined: true, spec.CaptureSuicide: true,
}

type timeline struct {
	on      bool
	events  []TimelineEvent
	perCf   map[string]int
	dropped int64
}

func (t *timeline) observe(it *Item) {
	if !t.on {
		return
	}
	e := &it.Event
	kind := ""
	switch {
	case timelineKinds[e.Kind]:
		kind = e.Kind.String()
	case it.Sym == SymBarrierStuck || it.Sym == SymBootstrapFailure || it.Sym == SymPanic || it.Sym == SymInternalError:
		kind = it.Sym.String()
	default:
		return
	}
	if len(t.events) >= maxTimeline || t.perCf[e.Changefeed] >= maxTimelinePerChangefeed {
		t.dropped++
		return
	}
	if t.perCf == nil {
		t.perCf = map[string]int{}
	}
	t.perCf[e.Changefeed]++
	errText := e.Err
	if len(errText) > 300 {
		errText = errText[:300] + "…"
	}
	t.events = append(t.events, TimelineEvent{Time: e.Time, Changefeed: e.Changefeed, Node: e.Node, Origin: e.Origin, Kind: kind,
		Op: string(e.Op), Epoch: e.Epoch, Checkpoint: e.Checkpoint, State: e.State, Err: errText,
		RemovalOnly: e.RemovalOnly, Reason: e.Reason, Evidence: ev(it)})
}
