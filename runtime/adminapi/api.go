// Package adminapi is the capture's HTTP admin API in the shape of TiCDC's
// open API v2 (/api/v2/changefeeds) and a Go client for it.
//
//	POST   /api/v2/changefeeds                      create  {"changefeed_id","start_ts","target_ts"}
//	GET    /api/v2/changefeeds                      list    {"total":n,"items":[...]}
//	GET    /api/v2/changefeeds/{id}                 get
//	POST   /api/v2/changefeeds/{id}/pause           pause (no state check, as TiCDC)
//	POST   /api/v2/changefeeds/{id}/resume          resume  {"overwrite_checkpoint_ts"}
//	DELETE /api/v2/changefeeds/{id}                 remove (a missing changefeed is 200, as TiCDC)
//	POST   /api/v2/changefeeds/{id}/move_table      {"table_id","target_node_id"} (400 ErrNodeIsNotFound: no such live capture)
//	POST   /api/v2/changefeeds/{id}/split_table     {"table_id"}
//	GET    /api/v2/captures                         the capture list with the owner flag
//	GET    /api/v2/health                           200 once the capture runs
//	POST   /api/v2/debug/failpoints                 {"name","on"}: this capture's failpoint (test only)
//	POST   /api/v2/debug/delay                      DelayRule: delay/duplicate/drop inbound messages (test only)
//	POST   /api/v2/debug/changefeeds/{id}/move_maintainer  {"target_node_id"}: start moving the maintainer (test only)
//
// move_maintainer is a debug endpoint: TiCDC has no API that moves a
// maintainer (its coordinator moves maintainers only to balance captures
// or to drain one); here it starts the same MoveMaintainerOperator on the
// owner, which answers when the move has started, not when it is done
// (GET shows maintainer_addr and the operator). 400 ErrNodeIsNotFound: the
// target is not a live capture that answered the coordinator's bootstrap,
// or it already runs the maintainer; 400 ErrAPIInvalidParam (state): the
// changefeed is not replicating or has an operator in flight.
//
// Every capture serves it. Changefeed calls are answered by the owner (the
// coordinator's capture): another capture forwards them to the owner's API
// address, as TiCDC's middleware does. Move and split are answered by the
// capture that runs the changefeed's maintainer; a capture without it
// forwards to the maintainer's capture when it knows it, else it refuses.
//
// Every ts in a request or an answer is a TiDB TSO (physical Unix ms << 18
// | logical), as in TiCDC's API v2: start_ts, overwrite_checkpoint_ts,
// checkpoint_ts, stored_checkpoint_ts; checkpoint_time beside it is its
// physical part in UTC (TSOTime). The runtime counts in ms inside, so a
// request's logical part is dropped (up to 1 ms earlier: rows replayed,
// never skipped), and a non-zero ts whose physical part is 0 is refused.
//
// Errors are {"error_msg": "...", "error_code": "CDC:..."} with TiCDC's codes:
// 400 ErrChangeFeedNotExists / ErrChangeFeedAlreadyExists / ErrAPIInvalidParam,
// 503 ErrNotOwner-style "not ready" answers. A refusal never took effect.
package adminapi

import (
	"context"
	"errors"
	"time"

	"cdcspec/spec"
)

// ChangefeedInfo is the JSON of one changefeed. Every ts is a TiDB TSO
// (physical Unix ms << 18 | logical), as in TiCDC's API v2; the *_time
// fields beside them are the physical part as UTC wall-clock time in
// TiCDC's JSONTime format (TSOTime).
type ChangefeedInfo struct {
	ID             string `json:"id"`
	Namespace      string `json:"namespace"`
	State          string `json:"state"`
	CheckpointTs   uint64 `json:"checkpoint_ts"`
	CheckpointTime string `json:"checkpoint_time"`
	// StoredTs is the checkpoint in etcd (CheckpointTs is the
	// coordinator's, which may be ahead of it).
	StoredTs     uint64        `json:"stored_checkpoint_ts"`
	MaintainerOn string        `json:"maintainer_addr,omitempty"`
	Epoch        uint64        `json:"epoch"`
	Error        *RunningError `json:"error,omitempty"`
	Operator     string        `json:"operator,omitempty"`
	Sched        string        `json:"sched,omitempty"`
}

// RunningError is a changefeed error.
type RunningError struct {
	Time    string `json:"time"`
	Addr    string `json:"addr"`
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Capture is one entry of /api/v2/captures.
type Capture struct {
	ID      string `json:"id"`
	Address string `json:"address"`
	APIAddr string `json:"api_address"`
	IsOwner bool   `json:"is_owner"`
}

// FailpointRequest is the body of /api/v2/debug/failpoints.
type FailpointRequest struct {
	Name string `json:"name"`
	On   bool   `json:"on"`
}

// DelayRule is the body of /api/v2/debug/delay: the capture holds the
// next Count inbound messages of Type ("" = any) for DelayMs before handling
// them (Action "delay"), handles them now and again after DelayMs (Action
// "dup"), or loses them (Action "drop", as TiCDC's message center loses
// what is in flight when a stream breaks or a receive queue overflows;
// DelayMs is not used). ForMs > 0 ends the rule ForMs after it was
// installed even if Count is not spent (a stream congested or broken for a
// bounded time). Clear removes every rule first.
type DelayRule struct {
	Type    string `json:"type"`
	Action  string `json:"action"`
	DelayMs int64  `json:"delay_ms"`
	Count   int    `json:"count"`
	ForMs   int64  `json:"for_ms,omitempty"`
	Clear   bool   `json:"clear"`
}

// TSOTime is a TSO's physical part as UTC wall-clock time in TiCDC's
// JSONTime format (pkg/api/util.go:30 at b813e76f9), the format of
// checkpoint_time.
func TSOTime(tso uint64) string {
	return time.UnixMilli(int64(spec.PhysicalMs(tso))).UTC().Format("2006-01-02 15:04:05.000")
}

// CreateRequest is the body of a create; StartTs is a TSO (0: now).
type CreateRequest struct {
	ChangefeedID string `json:"changefeed_id"`
	StartTs      uint64 `json:"start_ts"`
	TargetTs     uint64 `json:"target_ts"`
}

// MoveMaintainerRequest is the body of move_maintainer.
type MoveMaintainerRequest struct {
	TargetNodeID string `json:"target_node_id"`
}

// ResumeRequest is the body of a resume; OverwriteCheckpointTs is a TSO
// (0: keep the checkpoint).
type ResumeRequest struct {
	OverwriteCheckpointTs uint64 `json:"overwrite_checkpoint_ts"`
}

// TableRequest is the body of move_table and split_table.
type TableRequest struct {
	TableID      int64  `json:"table_id"`
	TargetNodeID string `json:"target_node_id"`
}

// Errors a Backend returns; the server maps them to TiCDC's codes.
var (
	ErrNotFound      = errors.New("[CDC:ErrChangeFeedNotExists]changefeed not exists")
	ErrAlreadyExists = errors.New("[CDC:ErrChangeFeedAlreadyExists]changefeed already exists")
	ErrInvalidState  = errors.New("[CDC:ErrAPIInvalidParam]operation not allowed in the changefeed's state")
	ErrInvalidParam  = errors.New("[CDC:ErrAPIInvalidParam]invalid parameter")
	// ErrNotOwner: this capture is not the owner (the server forwards).
	ErrNotOwner = errors.New("[CDC:ErrNotOwner]this capture is not the owner")
	// ErrNotReady: no initialized coordinator yet; nothing happened.
	ErrNotReady = errors.New("[CDC:ErrCoordinatorNotReady]coordinator is not initialized")
	// ErrNoMaintainer: this capture runs no bootstrapped maintainer of
	// the changefeed.
	// ErrNodeNotFound: a move's target is not a live capture (TiCDC's
	// ErrNodeIsNotFound from the maintainer's checkParams).
	ErrNodeNotFound = errors.New("[CDC:ErrNodeIsNotFound]node is not found")
	ErrNoMaintainer = errors.New("[CDC:ErrMaintainerNotFound]no bootstrapped maintainer of the changefeed on this capture")
)

// Backend is what a capture provides to the API. Errors wrap the
// variables above; any other error is an internal error (500, outcome
// unknown).
type Backend interface {
	Create(ctx context.Context, req CreateRequest) (ChangefeedInfo, error)
	List(ctx context.Context) ([]ChangefeedInfo, error)
	Get(ctx context.Context, id string) (ChangefeedInfo, error)
	Pause(ctx context.Context, id string) error
	Resume(ctx context.Context, id string, overwriteCheckpointTs uint64) error
	// Remove returns once the changefeed's stop operator has finished, as
	// TiCDC's Controller.RemoveChangefeed waits for it.
	Remove(ctx context.Context, id string) error
	// MoveMaintainer starts moving the changefeed's maintainer to target
	// (the debug endpoint move_maintainer; answered by the owner).
	MoveMaintainer(ctx context.Context, id, target string) error
	MoveTable(ctx context.Context, id string, table int64, target string) (int, error)
	SplitTable(ctx context.Context, id string, table int64) (int, error)
	Captures(ctx context.Context) ([]Capture, error)
	// SetFailpoint switches a failpoint of this capture (never forwarded):
	// BlockCreateDispatcher, NotReadyToCloseDispatcher.
	SetFailpoint(ctx context.Context, name string, on bool) error
	// AddDelayRule makes this capture delay (or duplicate) the next Count
	// inbound messages of a type (never forwarded); Clear drops every rule.
	AddDelayRule(ctx context.Context, r DelayRule) error
	// OwnerAPIAddr is the owner's API host:port ("" when unknown).
	OwnerAPIAddr() string
	// MaintainerAPIAddr is the API host:port of the capture running the
	// changefeed's maintainer ("" when unknown).
	MaintainerAPIAddr(ctx context.Context, id string) string
}
