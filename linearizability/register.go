package linearizability

import (
	"fmt"
	"hash/fnv"

	"github.com/anishathalye/porcupine"
)

// registerState is the stored checkpoint of one changefeed's status key.
type registerState struct {
	Exists bool
	// Ts is the stored checkpoint: the last put, raised by every later
	// advance (a monotonic max register between puts).
	Ts uint64
}

func (s registerState) String() string {
	if !s.Exists {
		return "no key"
	}
	return fmt.Sprintf("ckpt=%d", s.Ts)
}

func hashRegisterState(st interface{}) uint64 {
	s := st.(registerState)
	h := fnv.New64a()
	var buf [9]byte
	if s.Exists {
		buf[0] = 1
	}
	for i := 0; i < 8; i++ {
		buf[1+i] = byte(s.Ts >> (8 * i))
	}
	_, _ = h.Write(buf[:])
	return h.Sum64()
}

// CheckpointRegisterModel is the stored-checkpoint register in etcd, one per
// changefeed (partitioned by changefeed ID). Record around the system's own
// writes of the status key: OpPut for CreateChangefeed and ResumeChangefeed
// (exact, may lower), OpAdvance for saveCheckpointTs (the coordinator's
// checkpoint report), OpDelete for DeleteChangefeed, and OpLoad for reads.
//
// Guarantee: a load returns exactly the last put raised to the maximum of
// every later advance; a load after a delete finds no key, and an advance of
// a deleted changefeed must not resurrect the key.
//
// What it adds over AdminModel: it sees the store directly, so it catches a
// lower checkpoint written by a stale writer (TiCDC's saveCheckpointTs is a
// blind put guarded only by the in-memory lastSavedCheckpointTs, so an old
// coordinator still running after a failover can write a lower value) even
// when no client get happens to observe it, and a checkpoint write that
// recreates the status key of a removed changefeed. An advance whose
// outcome is unknown may or may not have taken effect. Blind spot: it trusts
// the recorded intents; a write the harness does not record is invisible.
func CheckpointRegisterModel() Model {
	nm := porcupine.NondeterministicModel{
		Partition: partitionByChangefeed,
		Init:      func() []interface{} { return []interface{}{registerState{}} },
		Step: func(state, input, output interface{}) []interface{} {
			return registerStep(state.(registerState), input.(Input), output.(Output))
		},
		Hash:                      hashRegisterState,
		DescribeOperation:         describeOperation,
		DescribeState:             func(s interface{}) string { return s.(registerState).String() },
		DescribeOperationMetadata: describeMetadata,
	}
	return Model{
		Name:      CheckpointRegisterModelName,
		porcupine: nm.ToModel(),
		accepts:   map[OpKind]bool{OpPut: true, OpAdvance: true, OpDelete: true, OpLoad: true},
	}
}

func registerStep(s registerState, in Input, out Output) []interface{} {
	if in.Op == OpLoad {
		switch {
		case out.Unknown || out.Err == CodeRejected:
			return []interface{}{s}
		case !s.Exists && out.Err == CodeNotFound:
			return []interface{}{s}
		case s.Exists && out.Err == CodeNone && out.CheckpointTs == s.Ts:
			return []interface{}{s}
		}
		return nil
	}
	var after registerState
	switch in.Op {
	case OpPut:
		after = registerState{Exists: true, Ts: in.Ts}
	case OpAdvance:
		after = s
		if s.Exists {
			after.Ts = max(s.Ts, in.Ts)
		}
	case OpDelete:
		after = registerState{}
	default:
		return nil
	}
	switch {
	case out.Unknown:
		return []interface{}{s, after}
	case out.Err == CodeRejected:
		return []interface{}{s}
	case out.Err == CodeNone:
		return []interface{}{after}
	}
	return nil
}
