package linearizability

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"sort"

	"github.com/anishathalye/porcupine"
)

// OpKind names an operation. Admin operations are the open API v2 calls plus
// OpFault; register operations are writes and reads of the changefeed's
// status key in etcd (/tidb/cdc/<cluster>/<keyspace>/changefeed/status/<name>).
type OpKind string

// Admin API operations (AdminModel).
const (
	OpCreate OpKind = "create" // POST /api/v2/changefeeds
	OpPause  OpKind = "pause"  // POST /api/v2/changefeeds/{id}/pause
	OpResume OpKind = "resume" // POST /api/v2/changefeeds/{id}/resume
	OpRemove OpKind = "remove" // DELETE /api/v2/changefeeds/{id}
	OpGet    OpKind = "get"    // GET /api/v2/changefeeds/{id}
	// OpFault records that the test harness injected an unretryable error
	// into the changefeed at Call. Its effect, at most once, is to turn a
	// running changefeed into failed, or nothing (the error may land while
	// the changefeed is not running, or be retried away). With an Unknown
	// output the effect may land at any time after Call; with a known output
	// (Output{}) the harness vouches that it landed, if at all, by Return,
	// which keeps the search small. Recording faults lets AdminModel stay
	// strict: a changefeed may only fail where a fault was injected.
	OpFault OpKind = "fault"
)

// Checkpoint register operations (CheckpointRegisterModel).
const (
	// OpPut is an exact write of the stored checkpoint: CreateChangefeed
	// (checkpoint = start-ts) and ResumeChangefeed (the overwritten
	// checkpoint). It may lower the value.
	OpPut OpKind = "put"
	// OpAdvance is the coordinator's saveCheckpointTs: the system must keep
	// the stored value at the maximum of everything advanced since the last
	// put (a write of a lower value must not take effect).
	OpAdvance OpKind = "advance"
	// OpDelete is DeleteChangefeed: the status key is gone.
	OpDelete OpKind = "delete"
	// OpLoad reads the stored checkpoint.
	OpLoad OpKind = "load"
)

// ErrCode is the definite error outcome of an operation. A definite error
// means the operation did not take effect; anything that might have taken
// effect must be recorded as Output.Unknown instead.
type ErrCode string

const (
	// CodeNone: success.
	CodeNone ErrCode = ""
	// CodeNotFound mirrors TiCDC's CDC:ErrChangeFeedNotExists.
	CodeNotFound ErrCode = "not-found"
	// CodeAlreadyExists mirrors TiCDC's CDC:ErrChangeFeedAlreadyExists.
	CodeAlreadyExists ErrCode = "already-exists"
	// CodeInvalidState: the operation is not allowed in the changefeed's
	// current state (pause of a changefeed that is not normal/warning; resume
	// of one that is not stopped/failed/finished, TiCDC's IsResumable).
	CodeInvalidState ErrCode = "invalid-state"
	// CodeRejected: refused before it could take effect for a reason unrelated
	// to the changefeed's state (validation error, coordinator not ready).
	// Allowed in every state, never changes it.
	CodeRejected ErrCode = "rejected"
)

var knownErrCodes = map[ErrCode]bool{CodeNone: true, CodeNotFound: true, CodeAlreadyExists: true, CodeInvalidState: true, CodeRejected: true}

// Input is one operation's request. Fields not used by Op are zero.
type Input struct {
	Op         OpKind `json:"op"`
	Changefeed string `json:"cf"`
	// StartTs and TargetTs: OpCreate. TargetTs 0 means none (never finishes).
	StartTs  uint64 `json:"start_ts,omitempty"`
	TargetTs uint64 `json:"target_ts,omitempty"`
	// OverwriteCheckpointTs: OpResume; 0 keeps the checkpoint (TiCDC's
	// resume --overwrite-checkpoint-ts).
	OverwriteCheckpointTs uint64 `json:"overwrite_checkpoint_ts,omitempty"`
	// Ts: OpPut and OpAdvance.
	Ts uint64 `json:"ts,omitempty"`
}

// Output is one operation's observed result.
type Output struct {
	// Unknown: the client does not know whether the operation took effect
	// (timeout, lost connection, an error that is not a definite one). The
	// other fields are ignored. The checker treats the operation as
	// returning at the end of time with any outcome.
	Unknown bool    `json:"unknown,omitempty"`
	Err     ErrCode `json:"err,omitempty"`
	// State and CheckpointTs: OpGet (State is a FeedState, spec.State*);
	// CheckpointTs also for OpLoad.
	State        string `json:"state,omitempty"`
	CheckpointTs uint64 `json:"checkpoint_ts,omitempty"`
}

// Op is one recorded operation. Call and Return are nanoseconds on the
// recorder's monotonic clock; [Call, Return] is a closed interval. For an
// Unknown output, Return is when the client gave up (kept for the record);
// the checker uses infinity.
type Op struct {
	Client int    `json:"client"`
	Input  Input  `json:"input"`
	Output Output `json:"output"`
	Call   int64  `json:"call"`
	Return int64  `json:"return"`
}

// History is a recorded (or hand-written) history. Fixtures in testdata/ add
// Story (why the verdict is what it is) and Expect (model name → verdict).
type History struct {
	Name   string            `json:"name,omitempty"`
	Story  string            `json:"story,omitempty"`
	Expect map[string]string `json:"expect,omitempty"`
	Ops    []Op              `json:"ops"`
}

// ReadHistory reads a History from a JSON file. Unknown fields are an error,
// so a typo in a fixture does not silently change its meaning.
func ReadHistory(path string) (History, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return History{}, fmt.Errorf("read history: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var h History
	if err := dec.Decode(&h); err != nil {
		return History{}, fmt.Errorf("history %s: %w", path, err)
	}
	return h, nil
}

// WriteHistory writes h as indented JSON.
func WriteHistory(path string, h History) error {
	data, err := json.MarshalIndent(h, "", "  ")
	if err != nil {
		return fmt.Errorf("encode history: %w", err)
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
}

// opMeta is attached to each porcupine operation for the visualization.
type opMeta struct {
	Index   int
	Unknown bool
	GaveUp  int64
}

func (m opMeta) String() string {
	if m.Unknown {
		return fmt.Sprintf("op #%d; outcome unknown (client gave up at %dns; checked as returning at infinity)", m.Index, m.GaveUp)
	}
	return fmt.Sprintf("op #%d", m.Index)
}

// isRead reports whether k never changes state (get, load).
func (k OpKind) isRead() bool { return k == OpGet || k == OpLoad }

// operations converts h to porcupine operations, sorted by call time.
// Unknown outputs get Return = math.MaxInt64, per porcupine's rule for
// operations whose effect may land at any later time. Reads with an unknown
// outcome are dropped: they change nothing and constrain nothing, yet at
// infinity they would overlap every later operation and slow the search.
func (h History) operations() []porcupine.Operation {
	ops := make([]porcupine.Operation, 0, len(h.Ops))
	for i, op := range h.Ops {
		if op.Output.Unknown && op.Input.Op.isRead() {
			continue
		}
		ret := op.Return
		if op.Output.Unknown {
			ret = math.MaxInt64
		}
		ops = append(ops, porcupine.Operation{
			ClientId: op.Client,
			Input:    op.Input,
			Call:     op.Call,
			Output:   op.Output,
			Return:   ret,
			Metadata: opMeta{Index: i, Unknown: op.Output.Unknown, GaveUp: op.Return},
		})
	}
	sort.SliceStable(ops, func(i, j int) bool { return ops[i].Call < ops[j].Call })
	return ops
}

// validate reports the first malformed operation of h for model m, naming
// its index.
func (h History) validate(m Model) error {
	for i, op := range h.Ops {
		where := fmt.Sprintf("history %q op #%d (%s %q)", h.Name, i, op.Input.Op, op.Input.Changefeed)
		if !m.accepts[op.Input.Op] {
			return fmt.Errorf("%s: operation %q is not part of model %s", where, op.Input.Op, m.Name)
		}
		if op.Input.Changefeed == "" {
			return fmt.Errorf("%s: empty changefeed id", where)
		}
		if op.Client < 0 {
			return fmt.Errorf("%s: negative client id %d", where, op.Client)
		}
		if op.Call < 0 {
			return fmt.Errorf("%s: negative call time %d", where, op.Call)
		}
		if !op.Output.Unknown && op.Return < op.Call {
			return fmt.Errorf("%s: return time %d before call time %d", where, op.Return, op.Call)
		}
		if !knownErrCodes[op.Output.Err] {
			return fmt.Errorf("%s: unknown error code %q", where, op.Output.Err)
		}
	}
	return nil
}

// partitionByChangefeed groups operations by changefeed ID, in order of first
// appearance (deterministic).
func partitionByChangefeed(history []porcupine.Operation) [][]porcupine.Operation {
	index := map[string]int{}
	var parts [][]porcupine.Operation
	for _, op := range history {
		cf := op.Input.(Input).Changefeed
		i, ok := index[cf]
		if !ok {
			i = len(parts)
			index[cf] = i
			parts = append(parts, nil)
		}
		parts[i] = append(parts[i], op)
	}
	return parts
}

// unknownCounts returns how many operations have an unknown outcome and are
// checked at infinity, and how many are reads dropped from the check.
func (h History) unknownCounts() (atInfinity, droppedReads int) {
	for _, op := range h.Ops {
		switch {
		case !op.Output.Unknown:
		case op.Input.Op.isRead():
			droppedReads++
		default:
			atInfinity++
		}
	}
	return atInfinity, droppedReads
}
