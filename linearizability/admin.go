package linearizability

import (
	"fmt"
	"hash/fnv"
	"strings"

	"github.com/anishathalye/porcupine"

	"cdcspec/spec"
)

// Model is a porcupine model plus the operation kinds it understands.
type Model struct {
	// Name is stable: fixtures' Expect maps and artifact folders use it.
	Name      string
	porcupine porcupine.Model
	accepts   map[OpKind]bool
}

// Porcupine returns the underlying porcupine model (for callers that want
// porcupine's own API).
func (m Model) Porcupine() porcupine.Model { return m.porcupine }

// Phase is what a client can know about a changefeed's FeedState.
type Phase uint8

const (
	// PhaseAbsent: never created, or removed. Get returns not-found.
	PhaseAbsent Phase = iota
	// PhaseRunning: normal or warning. A client cannot tell them apart in
	// advance: the system flips between them on its own (an error → warning;
	// recovery or a new maintainer's BootstrapDone → normal), so a get may
	// return either at any time.
	PhaseRunning
	// PhaseStopped: paused (stopped).
	PhaseStopped
	// PhaseFailed: an unretryable error or the retry budget stopped it.
	PhaseFailed
	// PhaseFinished: the checkpoint reached target-ts.
	PhaseFinished
)

func (p Phase) String() string {
	switch p {
	case PhaseAbsent:
		return "absent"
	case PhaseRunning:
		return "running"
	case PhaseStopped:
		return spec.StateStopped
	case PhaseFailed:
		return spec.StateFailed
	case PhaseFinished:
		return spec.StateFinished
	}
	return fmt.Sprintf("phase(%d)", uint8(p))
}

// showsAs reports whether a get may return FeedState state in phase p.
func (p Phase) showsAs(state string) bool {
	switch p {
	case PhaseRunning:
		return state == spec.StateNormal || state == spec.StateWarning
	case PhaseStopped:
		return state == spec.StateStopped
	case PhaseFailed:
		return state == spec.StateFailed
	case PhaseFinished:
		return state == spec.StateFinished
	}
	return false
}

// adminState is the client-visible state of one changefeed (one partition).
// It is a comparable value; Step never mutates it.
type adminState struct {
	Phase Phase
	// CheckpointFloor is the lowest checkpoint a get may return: the start-ts
	// after create, the overwritten checkpoint after a resume that overwrote
	// it, and otherwise the highest checkpoint already returned (the
	// checkpoint never reads lower than a value already returned). Zero when
	// absent.
	CheckpointFloor uint64
	// TargetTs from create; 0 means the changefeed never finishes.
	TargetTs uint64
	// Pinned (only with FrozenWhileStopped, only in PhaseStopped): a get
	// already returned CheckpointFloor since the pause, and every get until
	// the next resume must return exactly it.
	Pinned bool
}

func (s adminState) String() string {
	if s.Phase == PhaseAbsent {
		return "absent"
	}
	var b strings.Builder
	if s.Pinned {
		fmt.Fprintf(&b, "%s ckpt=%d", s.Phase, s.CheckpointFloor)
	} else {
		fmt.Fprintf(&b, "%s ckpt>=%d", s.Phase, s.CheckpointFloor)
	}
	if s.TargetTs != 0 {
		fmt.Fprintf(&b, " target=%d", s.TargetTs)
	}
	return b.String()
}

func hashAdminState(st interface{}) uint64 {
	s := st.(adminState)
	h := fnv.New64a()
	var buf [17]byte
	buf[0] = byte(s.Phase)
	if s.Pinned {
		buf[0] |= 0x80
	}
	for i := 0; i < 8; i++ {
		buf[1+i] = byte(s.CheckpointFloor >> (8 * i))
		buf[9+i] = byte(s.TargetTs >> (8 * i))
	}
	_, _ = h.Write(buf[:])
	return h.Sum64()
}

// AdminOptions selects which internal transitions the admin model allows
// between client operations, and two places where TiCDC itself is more
// permissive than cdcspec's admin rules.
type AdminOptions struct {
	// SpontaneousFailure lets a running changefeed become failed at any time.
	// Use it only when failures cannot be recorded as OpFault (a real runtime
	// whose sinks may fail on their own). It blinds the model to "resume
	// from normal succeeded" and "pause returned invalid-state while
	// running": a failure between the last get and the call explains both.
	SpontaneousFailure bool
	// PauseAnyState: pause succeeds from every existing state (stopped,
	// failed and finished become stopped). TiCDC HEAD's
	// Controller.PauseChangefeed has no state check.
	PauseAnyState bool
	// RemoveMissingOK: remove of an absent changefeed succeeds without
	// effect. TiCDC's DeleteChangefeed answers 200 when GetChangefeed says
	// ErrChangeFeedNotExists.
	RemoveMissingOK bool
	// FrozenWhileStopped: a stopped changefeed's checkpoint does not move:
	// the first get after a pause may return anything >= the floor, every
	// later get until a resume must return the same value. Catches a paused
	// changefeed whose maintainer keeps reporting and the coordinator keeps
	// accepting. Caveat: TiCDC sets the state to stopped before it stops
	// accepting statuses (Controller.PauseChangefeed: SetInfo, then
	// StopChangefeed), so a get racing a pause may see stopped with a
	// checkpoint that still moves once; this option flags that window.
	FrozenWhileStopped bool
}

// Name is the model's stable name: "admin" plus a suffix per option, in
// this order: -spontaneous-failure, -pause-any-state, -remove-missing-ok,
// -frozen-while-stopped.
func (o AdminOptions) Name() string {
	name := AdminModelName
	if o.SpontaneousFailure {
		name += "-spontaneous-failure"
	}
	if o.PauseAnyState {
		name += "-pause-any-state"
	}
	if o.RemoveMissingOK {
		name += "-remove-missing-ok"
	}
	if o.FrozenWhileStopped {
		name += "-frozen-while-stopped"
	}
	return name
}

// AdminOptionsTiCDC are the options under which TiCDC HEAD's own admin API
// (pause without a state check, idempotent delete) is expected to pass.
var AdminOptionsTiCDC = AdminOptions{PauseAnyState: true, RemoveMissingOK: true}

// allAdminOptions lists every option combination (for ModelByName).
func allAdminOptions() []AdminOptions {
	var out []AdminOptions
	for i := 0; i < 16; i++ {
		out = append(out, AdminOptions{SpontaneousFailure: i&1 != 0, PauseAnyState: i&2 != 0, RemoveMissingOK: i&4 != 0, FrozenWhileStopped: i&8 != 0})
	}
	return out
}

// AdminModelName and AdminSpontaneousFailureModelName are the stable names of
// the two admin model variants the tests use most.
const (
	AdminModelName                   = "admin"
	AdminSpontaneousFailureModelName = "admin-spontaneous-failure"
	CheckpointRegisterModelName      = "checkpoint-register"
)

// AdminModel is the changefeed admin API model with cdcspec's rules:
// failures only where an OpFault was recorded.
func AdminModel() Model { return NewAdminModel(AdminOptions{}) }

// AdminModelSpontaneousFailure is AdminModel where a running changefeed may
// fail at any time.
func AdminModelSpontaneousFailure() Model {
	return NewAdminModel(AdminOptions{SpontaneousFailure: true})
}

// NewAdminModel returns the changefeed admin API model, partitioned by
// changefeed ID. It is a nondeterministic model (porcupine's power-set
// construction): between operations the system may take internal
// transitions, and an unknown outcome may or may not have taken effect.
//
// Guarantees checked, per changefeed (TiCDC's FeedState rules, reference
// A.2 and C.1-C.4):
//   - create succeeds only on an absent changefeed (else already-exists);
//   - pause succeeds only from normal/warning (else invalid-state; with
//     PauseAnyState from every existing state);
//   - resume succeeds only from stopped/failed/finished (IsResumable; else
//     invalid-state, TiCDC's ErrChangefeedUpdateRefused);
//   - pause, resume and remove of an absent changefeed fail with not-found
//     (remove succeeds without effect with RemoveMissingOK), and get returns
//     not-found (or state "removed") exactly when absent;
//   - get returns a state consistent with the phase (normal|warning while
//     running), and a checkpoint no lower than the floor (adminState).
//
// Internal transitions allowed between operations: running → finished when
// TargetTs != 0 (the checkpoint is then >= TargetTs); running → failed only
// through an OpFault, or at any time with SpontaneousFailure.
//
// Blind spots: it does not bound the checkpoint from above (a checkpoint
// beyond the upstream's resolved ts is not detected), it does not require
// the checkpoint to stay still while stopped unless FrozenWhileStopped, and
// it cannot see liveness (a changefeed that never advances, or an operation
// that always times out, is linearizable).
func NewAdminModel(opts AdminOptions) Model {
	name := opts.Name()
	nm := porcupine.NondeterministicModel{
		Partition: partitionByChangefeed,
		Init:      func() []interface{} { return []interface{}{adminState{}} },
		Step: func(state, input, output interface{}) []interface{} {
			return adminStep(opts, state.(adminState), input.(Input), output.(Output))
		},
		Hash:                      hashAdminState,
		DescribeOperation:         describeOperation,
		DescribeState:             func(s interface{}) string { return s.(adminState).String() },
		DescribeOperationMetadata: describeMetadata,
	}
	return Model{
		Name:      name,
		porcupine: nm.ToModel(),
		accepts:   map[OpKind]bool{OpCreate: true, OpPause: true, OpResume: true, OpRemove: true, OpGet: true, OpFault: true},
	}
}

// internalSuccessors returns s and every state the system can reach from s
// on its own, without a client operation.
func internalSuccessors(opts AdminOptions, s adminState) []adminState {
	out := []adminState{s}
	if s.Phase != PhaseRunning {
		return out
	}
	if opts.SpontaneousFailure {
		out = append(out, adminState{Phase: PhaseFailed, CheckpointFloor: s.CheckpointFloor, TargetTs: s.TargetTs})
	}
	if s.TargetTs != 0 {
		// Finished is reported once the checkpoint reached target-ts.
		out = append(out, adminState{Phase: PhaseFinished, CheckpointFloor: max(s.CheckpointFloor, s.TargetTs), TargetTs: s.TargetTs})
	}
	return out
}

func adminStep(opts AdminOptions, s adminState, in Input, out Output) []interface{} {
	var next []interface{}
	for _, c := range internalSuccessors(opts, s) {
		for _, n := range applyAdmin(opts, c, in, out) {
			next = append(next, n)
		}
	}
	return next
}

// applyAdmin returns the states after operation in with output out from s,
// or none if the output is impossible.
func applyAdmin(opts AdminOptions, s adminState, in Input, out Output) []adminState {
	switch in.Op {
	case OpGet:
		return applyGet(opts, s, out)
	case OpFault:
		// The output says only when the effect may land (see OpFault): the
		// fault may fail a running changefeed, or do nothing.
		if s.Phase == PhaseRunning {
			return []adminState{s, {Phase: PhaseFailed, CheckpointFloor: s.CheckpointFloor, TargetTs: s.TargetTs}}
		}
		return []adminState{s}
	}
	code, after := expectedMutation(opts, s, in)
	switch {
	case out.Unknown:
		if code == CodeNone {
			return []adminState{s, after}
		}
		return []adminState{s}
	case out.Err == CodeRejected:
		return []adminState{s}
	case out.Err == code:
		return []adminState{after}
	}
	return nil
}

// expectedMutation is the sequential specification of the mutating admin
// calls: the only definite outcome the call may have from s, and the state
// after it (s itself when the outcome is an error).
func expectedMutation(opts AdminOptions, s adminState, in Input) (ErrCode, adminState) {
	switch in.Op {
	case OpCreate:
		if s.Phase != PhaseAbsent {
			return CodeAlreadyExists, s
		}
		return CodeNone, adminState{Phase: PhaseRunning, CheckpointFloor: in.StartTs, TargetTs: in.TargetTs}
	case OpPause:
		switch s.Phase {
		case PhaseAbsent:
			return CodeNotFound, s
		case PhaseRunning:
			return CodeNone, adminState{Phase: PhaseStopped, CheckpointFloor: s.CheckpointFloor, TargetTs: s.TargetTs}
		}
		if opts.PauseAnyState {
			if s.Phase == PhaseStopped {
				return CodeNone, s // already stopped: the checkpoint stays pinned
			}
			return CodeNone, adminState{Phase: PhaseStopped, CheckpointFloor: s.CheckpointFloor, TargetTs: s.TargetTs}
		}
		return CodeInvalidState, s
	case OpResume:
		switch s.Phase {
		case PhaseAbsent:
			return CodeNotFound, s
		case PhaseStopped, PhaseFailed, PhaseFinished:
			floor := s.CheckpointFloor
			if in.OverwriteCheckpointTs != 0 {
				// The overwrite replaces the checkpoint, possibly lowering it.
				floor = in.OverwriteCheckpointTs
			}
			return CodeNone, adminState{Phase: PhaseRunning, CheckpointFloor: floor, TargetTs: s.TargetTs}
		}
		return CodeInvalidState, s
	case OpRemove:
		if s.Phase == PhaseAbsent {
			if opts.RemoveMissingOK {
				return CodeNone, s
			}
			return CodeNotFound, s
		}
		return CodeNone, adminState{}
	}
	// Unreachable for validated histories; an unknown kind matches nothing.
	return ErrCode("unsupported-op"), s
}

func applyGet(opts AdminOptions, s adminState, out Output) []adminState {
	if out.Unknown || out.Err == CodeRejected {
		return []adminState{s}
	}
	if s.Phase == PhaseAbsent {
		if out.Err == CodeNotFound || (out.Err == CodeNone && out.State == spec.StateRemoved) {
			return []adminState{s}
		}
		return nil
	}
	if out.Err != CodeNone || !s.Phase.showsAs(out.State) || out.CheckpointTs < s.CheckpointFloor {
		return nil
	}
	if s.Pinned && out.CheckpointTs != s.CheckpointFloor {
		return nil
	}
	pin := opts.FrozenWhileStopped && s.Phase == PhaseStopped
	return []adminState{{Phase: s.Phase, CheckpointFloor: out.CheckpointTs, TargetTs: s.TargetTs, Pinned: pin}}
}

func describeOperation(input, output interface{}) string {
	in, out := input.(Input), output.(Output)
	var args string
	switch in.Op {
	case OpCreate:
		args = fmt.Sprintf("start=%d", in.StartTs)
		if in.TargetTs != 0 {
			args += fmt.Sprintf(",target=%d", in.TargetTs)
		}
	case OpResume:
		if in.OverwriteCheckpointTs != 0 {
			args = fmt.Sprintf("overwrite=%d", in.OverwriteCheckpointTs)
		}
	case OpPut, OpAdvance:
		args = fmt.Sprintf("%d", in.Ts)
	}
	return fmt.Sprintf("%s(%s) -> %s", in.Op, args, describeOutput(in, out))
}

func describeOutput(in Input, out Output) string {
	switch {
	case in.Op == OpFault:
		return "may fail"
	case out.Unknown:
		return "unknown"
	case out.Err != CodeNone:
		return string(out.Err)
	case in.Op == OpGet:
		return fmt.Sprintf("%s@%d", out.State, out.CheckpointTs)
	case in.Op == OpLoad:
		return fmt.Sprintf("%d", out.CheckpointTs)
	}
	return "ok"
}

func describeMetadata(m interface{}) string {
	if m == nil {
		return ""
	}
	return fmt.Sprint(m)
}
