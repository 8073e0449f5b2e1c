package traces

import (
	"fmt"
	"strings"

	"cdcspec/spec"
)

// Verdict results, strongest first. NothingChecked is not a pass: the logs
// gave the checker nothing it could judge (no record it recognises, or no
// record whose timestamp parses, so no window or duration can be measured).
const (
	VerdictViolation      = "violation"
	VerdictSuspect        = "suspect"
	VerdictPass           = "pass"
	VerdictNothingChecked = "nothing-checked"
)

// Verdict is a report's one-line summary, the line a CI gate reads: the
// result, what it counts, and how much of the logs and of the spec the
// checker could speak to.
type Verdict struct {
	Result            string `json:"result"` // VerdictViolation, VerdictSuspect, VerdictPass or VerdictNothingChecked
	Violations        int    `json:"violations"`
	Suspects          int    `json:"suspects"`
	PropertiesJudged  int    `json:"properties_judged"`
	Properties        int    `json:"properties"`
	RecordsRecognised int64  `json:"records_recognised"`
	RecordsTimed      int64  `json:"records_timed"` // records whose timestamp parses
	Records           int64  `json:"records"`
	// Why says, for VerdictNothingChecked, what was missing.
	Why string `json:"why,omitempty"`
}

// Verdict summarises the report. With no timestamp at all, the properties
// judged on the records' order still report what they find; when they find
// nothing the result is NothingChecked, never a pass: the properties that
// measure time were judged on nothing (see timeWindows).
func (r *Report) Verdict() Verdict {
	v := Verdict{Records: r.Stats.Records, RecordsRecognised: r.Coverage.Recognised, RecordsTimed: r.Stats.Timed,
		Properties: len(r.Coverage.Properties)}
	for _, p := range r.Coverage.Properties {
		if p.Judged {
			v.PropertiesJudged++
		}
	}
	for _, f := range r.Findings {
		switch f.Severity {
		case Violation:
			v.Violations++
		case Suspect:
			v.Suspects++
		}
	}
	switch {
	case v.RecordsRecognised == 0:
		v.Result = VerdictNothingChecked
		v.Why = fmt.Sprintf("no record is one the checker recognises: 0 of %d", v.Records)
	case v.Violations > 0:
		v.Result = VerdictViolation
	case v.Suspects > 0:
		v.Result = VerdictSuspect
	case v.RecordsTimed == 0:
		// the properties judged on order alone found nothing, and those
		// that measure time were judged on nothing (timeWindows)
		v.Result = VerdictNothingChecked
		v.Why = fmt.Sprintf("no record's timestamp parses: 0 of %d, so no property that measures time was judged; TiCDC writes [2006/01/02 15:04:05.000 -07:00]", v.Records)
	default:
		v.Result = VerdictPass
	}
	return v
}

// String is the verdict line: "verdict: RESULT: counts".
func (v Verdict) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "verdict: %s: %s, %s; %d of %d properties judged; %d of %d records recognised",
		strings.ToUpper(v.Result), plural(v.Violations, "violation"), plural(v.Suspects, "suspect"),
		v.PropertiesJudged, v.Properties, v.RecordsRecognised, v.Records)
	if v.RecordsTimed < v.Records {
		fmt.Fprintf(&b, ", %d with a valid timestamp", v.RecordsTimed)
	}
	if v.Why != "" {
		fmt.Fprintf(&b, " (%s)", v.Why)
	}
	return b.String()
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// NextStep says where a finding points: the TiCDC component to look at, the
// metric or log to check there, and the catalogued bugs with the finding's
// property (spec.Bugs, read here and nowhere else by the trace report).
type NextStep struct {
	Component string `json:"component"`
	Check     string `json:"check"`
	// Bugs are the catalogue entries that break the finding's property,
	// as "name (issue)".
	Bugs []string `json:"known_bugs,omitempty"`
}

// nextSteps is, per finding property, where to look next. related is the
// spec property whose catalogued bugs a log-only finding may be the symptom
// of (empty: the finding's own property, if it is the spec's).
var nextSteps = map[string]struct {
	component, check string
	related          spec.Property
}{
	string(spec.ErrorNeverDropped): {"coordinator: the changefeed's backoff (coordinator/changefeed/backoff.go)",
		`the changefeed's state and error (cdc cli changefeed query; metric ticdc_owner_changefeed_error_info) and the coordinator's "changefeed maintainer report an error" lines after the maintainer's "dispatcher report an error"`, ""},
	string(spec.CheckpointMonotonic): {"coordinator: the stored changefeed status (coordinator/changefeed/changefeed.go)",
		`metric ticdc_owner_checkpoint_ts for a drop, and "changefeed status changed" lines around it`, ""},
	string(spec.CheckpointNotPastUnflushed): {"maintainer: the checkpoint calculation (maintainer/maintainer.go)",
		"metric ticdc_maintainer_checkpoint_ts against ticdc_dispatchermanager_checkpoint_ts per capture, and the downstream's rows below the checkpoint", ""},
	string(spec.AtMostOneDispatcherPerSpan): {"maintainer: the span controller and its bootstrap (maintainer/maintainer_controller_bootstrap.go)",
		`metric ticdc_dispatchermanager_table_dispatcher_count summed over captures against the tables, and "new dispatcher created" lines for the span`, ""},
	string(spec.RunningMaintainerBootstrapped): {"coordinator: the maintainer operators (coordinator/operator/)",
		`metric ticdc_changefeed_maintainer_counter per capture, and "changefeed maintainer bootstrapped" on the capture the coordinator marked replicating`, ""},
	string(spec.SingleMaintainerGeneration): {"coordinator: maintainer scheduling and epochs (coordinator/operator/)",
		`metric ticdc_changefeed_maintainer_counter (more than one per changefeed), and "changefeed maintainer bootstrapped" lines on two captures`, ""},
	PropOperatorStuck: {"coordinator or maintainer: the operator controller (operator_controller.go)",
		`metrics ticdc_coordinator_finish_operators_duration_seconds and ticdc_maintainer_total_operator_count, and the "operator is still in running queue" lines`, spec.EverySpanReplicated},
	PropCheckpointStuck: {"maintainer: the checkpoint calculation and its blockers (maintainer/maintainer.go)",
		`metric ticdc_owner_checkpoint_ts_lag, and "checkpointTs can not be advanced" lines`, spec.CheckpointAdvancesAfterHeal},
	PropBootstrapFailed: {"maintainer: bootstrap (maintainer/maintainer.go)",
		`"maintainer bootstrap failed" lines and the capture's panics; metric ticdc_changefeed_maintainer_counter`, spec.RunningMaintainerBootstrapped},
	PropCaptureSuicide: {"capture: its etcd session (server/)",
		`the capture's "session is disconnected" line and etcd's health; the rescheduling after it ("maintainer node changed")`, ""},
	PropInternalError: {"maintainer (an error raised inside it)",
		`the "an error occurred in maintainer" line's error`, ""},
	PropSendFailed: {"message center: the capture-to-capture stream",
		"the receiving capture's liveness and the network between the captures", ""},
	PropCapturePanic: {"capture: the panicking goroutine",
		"the panic's stack in the capture's stderr log", ""},
	PropImpossibleValue: {"the component that logged the value",
		"the logged value against the changefeed's start-ts and checkpoint (cdc cli changefeed query)", ""},
	PropBarrierStuck: {"maintainer: the barrier of blocking DDLs and syncpoints (maintainer/barrier.go)",
		`metric ticdc_dispatchermanager_block_statuses_chan_len, and the dispatchers' WAITING block statuses for the event's commitTs`, spec.BarrierEventuallyPasses},
	string(spec.TableSetFollowsDDLs): {"maintainer: DDL scheduling (maintainer/barrier.go)",
		`the maintainer's "add new table" and "remove table" lines for the DDL`, ""},
}

// nextStep returns where the finding points, or nil for an Info finding or a
// property with no entry.
func nextStep(f *Finding) *NextStep {
	if f.Severity == Info {
		return nil
	}
	n, ok := nextSteps[f.Property]
	if !ok {
		return nil
	}
	prop := n.related
	if prop == "" {
		prop = spec.Property(f.Property)
	}
	s := &NextStep{Component: n.component, Check: n.check}
	for _, b := range spec.Bugs() {
		if b.Property == prop {
			s.Bugs = append(s.Bugs, fmt.Sprintf("%s (%s)", b.Name, b.Issue))
		}
	}
	return s
}
