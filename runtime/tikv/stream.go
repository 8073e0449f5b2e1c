package tikv

import (
	"bufio"
	"context"
	"errors"
	"net"
	"sync"
	"time"
)

// errStreamCanceled is what Recv returns once the stream was cancelled
// (gRPC's codes.Canceled).
var errStreamCanceled = errors.New("rpc error: code = Canceled desc = context canceled")

// eventFeedStream is one client stream to a store. Like a gRPC client
// stream, a reader goroutine moves every received message into a receive
// buffer; cancel appends the cancellation after what is already buffered,
// so Recv still returns the buffered messages first (grpc-go's
// recvBufferReader "delays the ctx error until the recv buffer is empty"),
// and messages that arrive after the cancel are discarded.
type eventFeedStream struct {
	addr    string
	storeID uint64
	conn    net.Conn

	wmu sync.Mutex
	w   *bufio.Writer

	mu     sync.Mutex
	items  []streamItem
	closed bool // an error is queued: later messages are discarded
	notify chan struct{}
}

type streamItem struct {
	ev  ChangeDataEvent
	err error
}

func dialStream(ctx context.Context, addr string, storeID uint64) (*eventFeedStream, error) {
	d := net.Dialer{Timeout: 500 * time.Millisecond}
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	s := &eventFeedStream{addr: addr, storeID: storeID, conn: conn, w: bufio.NewWriter(conn), notify: make(chan struct{}, 1)}
	go s.readLoop()
	return s, nil
}

func (s *eventFeedStream) readLoop() {
	r := bufio.NewReader(s.conn)
	for {
		var ev ChangeDataEvent
		if err := readMsg(r, &ev); err != nil {
			s.put(streamItem{err: err})
			return
		}
		s.put(streamItem{ev: ev})
	}
}

func (s *eventFeedStream) put(it streamItem) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	if it.err != nil {
		s.closed = true
	}
	s.items = append(s.items, it)
	s.mu.Unlock()
	select {
	case s.notify <- struct{}{}:
	default:
	}
}

// Send writes a request.
func (s *eventFeedStream) Send(req ChangeDataRequest) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	_ = s.conn.SetWriteDeadline(time.Now().Add(time.Second))
	return writeMsg(s.w, req)
}

// Recv returns the next buffered message, or the stream's error once the
// buffer is drained.
func (s *eventFeedStream) Recv() (ChangeDataEvent, error) {
	for {
		s.mu.Lock()
		if len(s.items) > 0 {
			it := s.items[0]
			if it.err == nil {
				s.items = s.items[1:]
			}
			s.mu.Unlock()
			return it.ev, it.err
		}
		s.mu.Unlock()
		<-s.notify
	}
}

// cancel ends the stream: the connection closes, the cancellation queues
// behind the buffered messages.
func (s *eventFeedStream) cancel() {
	s.put(streamItem{err: errStreamCanceled})
	_ = s.conn.Close()
}
