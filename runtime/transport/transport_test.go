package transport

import (
	"fmt"
	"sync"
	"testing"
	"time"
)

type inbox struct {
	mu   sync.Mutex
	msgs map[string][]string
	cond *sync.Cond
}

func newInbox() *inbox {
	in := &inbox{msgs: map[string][]string{}}
	in.cond = sync.NewCond(&in.mu)
	return in
}

func (in *inbox) handle(from string, p []byte) {
	in.mu.Lock()
	in.msgs[from] = append(in.msgs[from], string(p))
	in.mu.Unlock()
	in.cond.Broadcast()
}

func (in *inbox) waitFor(t *testing.T, from string, n int) []string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	in.mu.Lock()
	defer in.mu.Unlock()
	for len(in.msgs[from]) < n {
		if time.Now().After(deadline) {
			t.Fatalf("got %d of %d messages from %s", len(in.msgs[from]), n, from)
		}
		in.mu.Unlock()
		time.Sleep(5 * time.Millisecond)
		in.mu.Lock()
	}
	return append([]string(nil), in.msgs[from]...)
}

func pair(t *testing.T, queue int) (*Transport, *Transport, *inbox, *inbox) {
	t.Helper()
	ia, ib := newInbox(), newInbox()
	a, err := Listen(Config{NodeID: "a", QueueSize: queue}, ia.handle)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Listen(Config{NodeID: "b", QueueSize: queue}, ib.handle)
	if err != nil {
		t.Fatal(err)
	}
	peers := map[string]string{"a": a.Addr(), "b": b.Addr()}
	a.SetPeers(peers)
	b.SetPeers(peers)
	t.Cleanup(func() { a.Close(); b.Close() })
	return a, b, ia, ib
}

func TestFIFOPerConnection(t *testing.T) {
	a, _, _, ib := pair(t, 4096)
	for i := 0; i < 1000; i++ {
		if err := a.Send("b", []byte(fmt.Sprint(i))); err != nil {
			t.Fatal(err)
		}
	}
	got := ib.waitFor(t, "a", 1000)
	for i, m := range got {
		if m != fmt.Sprint(i) {
			t.Fatalf("message %d is %q: FIFO broken", i, m)
		}
	}
}

func TestOwnNodeAndUnknownTarget(t *testing.T) {
	a, _, ia, _ := pair(t, 16)
	if err := a.Send("a", []byte("self")); err != nil {
		t.Fatal(err)
	}
	if got := ia.waitFor(t, "a", 1); got[0] != "self" {
		t.Fatalf("own-node message: %q", got)
	}
	if err := a.Send("nobody", []byte("x")); err != ErrUnknownTarget {
		t.Fatalf("unknown target: err = %v", err)
	}
}

func TestCongestionDropsWithoutBlocking(t *testing.T) {
	ia := newInbox()
	a, err := Listen(Config{NodeID: "a", QueueSize: 2}, ia.handle)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	// The peer's address does not accept connections, so nothing drains.
	a.SetPeers(map[string]string{"a": a.Addr(), "z": "127.0.0.1:1"})
	dropped := 0
	start := time.Now()
	for i := 0; i < 100; i++ {
		if err := a.Send("z", []byte("x")); err == ErrCongested {
			dropped++
		}
	}
	if dropped < 90 {
		t.Fatalf("expected most sends to a stuck peer to drop, dropped %d", dropped)
	}
	if time.Since(start) > 5*time.Second {
		t.Fatal("Send blocked")
	}
}

func TestPeerRestartReconnects(t *testing.T) {
	a, b, _, _ := pair(t, 64)
	// b restarts on a new port: the address book changes, a redials.
	b.Close()
	ib2 := newInbox()
	b2, err := Listen(Config{NodeID: "b"}, ib2.handle)
	if err != nil {
		t.Fatal(err)
	}
	defer b2.Close()
	a.SetPeers(map[string]string{"a": a.Addr(), "b": b2.Addr()})
	deadline := time.Now().Add(10 * time.Second)
	for {
		_ = a.Send("b", []byte("hello"))
		ib2.mu.Lock()
		n := len(ib2.msgs["a"])
		ib2.mu.Unlock()
		if n > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no message reached the restarted peer")
		}
		time.Sleep(20 * time.Millisecond)
	}
}
