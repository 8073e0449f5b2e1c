package adminapi

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// fakeBackend is an in-memory owner (or, with owner set, a non-owner that
// forwards there).
type fakeBackend struct {
	mu    sync.Mutex
	cfs   map[string]string // id -> state
	isOwn bool
	owner string
	maint string
	moved int
	// maintainerOn: changefeed -> the capture a move_maintainer targeted.
	maintainerOn map[string]string
	forwdd       int
}

func (f *fakeBackend) Create(ctx context.Context, req CreateRequest) (ChangefeedInfo, error) {
	if !f.isOwn {
		return ChangefeedInfo{}, ErrNotOwner
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.cfs[req.ChangefeedID]; ok {
		return ChangefeedInfo{}, ErrAlreadyExists
	}
	f.cfs[req.ChangefeedID] = "normal"
	return ChangefeedInfo{ID: req.ChangefeedID, State: "normal", CheckpointTs: req.StartTs}, nil
}
func (f *fakeBackend) List(ctx context.Context) ([]ChangefeedInfo, error) {
	if !f.isOwn {
		return nil, ErrNotOwner
	}
	var out []ChangefeedInfo
	for id, st := range f.cfs {
		out = append(out, ChangefeedInfo{ID: id, State: st})
	}
	return out, nil
}
func (f *fakeBackend) Get(ctx context.Context, id string) (ChangefeedInfo, error) {
	if !f.isOwn {
		return ChangefeedInfo{}, ErrNotOwner
	}
	st, ok := f.cfs[id]
	if !ok {
		return ChangefeedInfo{}, fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	return ChangefeedInfo{ID: id, State: st, MaintainerOn: f.maint}, nil
}
func (f *fakeBackend) Pause(ctx context.Context, id string) error {
	if !f.isOwn {
		return ErrNotOwner
	}
	if _, ok := f.cfs[id]; !ok {
		return ErrNotFound
	}
	f.cfs[id] = "stopped"
	return nil
}
func (f *fakeBackend) Resume(ctx context.Context, id string, o uint64) error {
	if !f.isOwn {
		return ErrNotOwner
	}
	if f.cfs[id] != "stopped" {
		return fmt.Errorf("%w: cannot resume from state %s", ErrInvalidState, f.cfs[id])
	}
	f.cfs[id] = "normal"
	return nil
}
func (f *fakeBackend) Remove(ctx context.Context, id string) error {
	if !f.isOwn {
		return ErrNotOwner
	}
	delete(f.cfs, id)
	return nil
}
func (f *fakeBackend) MoveTable(ctx context.Context, id string, t int64, to string) (int, error) {
	if f.maint != "" {
		return 0, ErrNoMaintainer
	}
	f.moved++
	return 1, nil
}
func (f *fakeBackend) MoveMaintainer(ctx context.Context, id, target string) error {
	if !f.isOwn {
		return ErrNotOwner
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case f.cfs[id] == "":
		return fmt.Errorf("%w: %s", ErrNotFound, id)
	case f.cfs[id] != "normal":
		return fmt.Errorf("%w: changefeed %s is not replicating", ErrInvalidState, id)
	case target != "n1" && target != "n2":
		return fmt.Errorf("%w: %s", ErrNodeNotFound, target)
	}
	if f.maintainerOn == nil {
		f.maintainerOn = map[string]string{}
	}
	f.maintainerOn[id] = target
	return nil
}
func (f *fakeBackend) SplitTable(ctx context.Context, id string, t int64) (int, error) {
	return 0, ErrNoMaintainer
}
func (f *fakeBackend) Captures(ctx context.Context) ([]Capture, error)     { return nil, nil }
func (f *fakeBackend) AddDelayRule(ctx context.Context, r DelayRule) error { return nil }
func (f *fakeBackend) SetFailpoint(ctx context.Context, name string, on bool) error {
	return fmt.Errorf("%w: unknown failpoint %q", ErrInvalidParam, name)
}
func (f *fakeBackend) OwnerAPIAddr() string { return f.owner }
func (f *fakeBackend) MaintainerAPIAddr(ctx context.Context, id string) string {
	return f.maint
}

func TestAPIThroughForwarding(t *testing.T) {
	owner := &fakeBackend{cfs: map[string]string{}, isOwn: true}
	os := httptest.NewServer(Handler(owner))
	defer os.Close()
	ownerAddr := strings.TrimPrefix(os.URL, "http://")
	follower := &fakeBackend{owner: ownerAddr, maint: ownerAddr}
	fs := httptest.NewServer(Handler(follower))
	defer fs.Close()
	ctx := context.Background()
	c := NewClient(fs.URL) // every call goes through the follower

	if _, err := c.Create(ctx, CreateRequest{ChangefeedID: "cf", StartTs: 5}); err != nil {
		t.Fatalf("create: %v", err)
	}
	if _, err := c.Create(ctx, CreateRequest{ChangefeedID: "cf"}); !errors.Is(err, ErrAlreadyExists) {
		t.Fatalf("second create: %v, want already exists", err)
	}
	if _, err := c.Create(ctx, CreateRequest{ChangefeedID: "a/b"}); !errors.Is(err, ErrInvalidParam) {
		t.Fatalf("bad id: %v, want invalid param", err)
	}
	if err := c.Pause(ctx, "cf"); err != nil {
		t.Fatalf("pause: %v", err)
	}
	info, err := c.Get(ctx, "cf")
	if err != nil || info.State != "stopped" {
		t.Fatalf("get after pause: %+v %v", info, err)
	}
	if err := c.Resume(ctx, "cf", 0); err != nil {
		t.Fatalf("resume: %v", err)
	}
	if err := c.Resume(ctx, "cf", 0); !errors.Is(err, ErrInvalidState) {
		t.Fatalf("resume of a running changefeed: %v, want invalid state", err)
	}
	l, err := c.List(ctx)
	if err != nil || len(l) != 1 {
		t.Fatalf("list: %v %v", l, err)
	}
	if _, err := c.Get(ctx, "nope"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("get missing: %v, want not found", err)
	}
	if n, err := c.MoveTable(ctx, "cf", 1, "n2"); err != nil || n != 1 || owner.moved != 1 {
		t.Fatalf("move through the maintainer's capture: %d %v (owner moved %d)", n, err, owner.moved)
	}
	if _, err := c.MoveTable(ctx, "cf", 0, "n2"); !errors.Is(err, ErrInvalidParam) {
		t.Fatalf("move without table: %v", err)
	}
	if _, err := c.SplitTable(ctx, "cf", 1); !errors.Is(err, ErrNoMaintainer) {
		t.Fatalf("split nowhere: %v, want no maintainer", err)
	}
	// move_maintainer (debug) is answered by the owner.
	require.NoError(t, c.MoveMaintainer(ctx, "cf", "n2"))
	require.Equal(t, "n2", owner.maintainerOn["cf"])
	require.ErrorIs(t, c.MoveMaintainer(ctx, "cf", "n9"), ErrNodeNotFound)
	require.ErrorIs(t, c.MoveMaintainer(ctx, "cf", ""), ErrInvalidParam)
	require.ErrorIs(t, c.MoveMaintainer(ctx, "nope", "n2"), ErrNotFound)
	require.NoError(t, c.Pause(ctx, "cf"))
	require.ErrorIs(t, c.MoveMaintainer(ctx, "cf", "n2"), ErrInvalidState)
	if err := c.Remove(ctx, "cf"); err != nil {
		t.Fatalf("remove: %v", err)
	}
	// No owner known: 503, a definite refusal.
	lonely := httptest.NewServer(Handler(&fakeBackend{}))
	defer lonely.Close()
	if err := NewClient(lonely.URL).Pause(ctx, "cf"); !errors.Is(err, ErrNotReady) {
		t.Fatalf("no owner: %v, want not ready", err)
	}
	// Unreachable server: a transport error, not a refusal.
	l2, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := l2.Addr().String()
	l2.Close()
	if err := NewClient(addr).Pause(ctx, "cf"); err == nil || errors.Is(err, ErrNotReady) {
		t.Fatalf("unreachable: %v", err)
	}
}
