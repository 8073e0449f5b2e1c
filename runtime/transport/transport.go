// Package transport carries control messages between captures over TCP with
// TiCDC's message-center semantics (pkg/messaging, protocol reference B.1):
//
//   - FIFO per connection: frames from one sender to one receiver arrive in
//     the order they were sent while the connection lives;
//   - non-blocking sends: Send never waits; it drops the message and returns
//     ErrCongested when the peer's outbound queue is full, or ErrUnknownTarget
//     when the peer is not in the address book;
//   - reconnects lose data: frames queued or in flight on a broken connection
//     are dropped; the connection is re-dialled in the background;
//   - no deduplication and no sequencing beyond the connection: callers
//     re-send what matters.
//
// The wire format is a frame per message: a 4-byte big-endian length, then
// the payload. The first frame on a connection is the dialler's node ID.
// Payload encoding is the caller's business.
package transport

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"
)

// MaxFrame bounds a frame's payload; larger frames are refused on send and
// break the connection on receive.
const MaxFrame = 16 << 20

// Errors returned by Send. Both mean the message was dropped.
var (
	ErrCongested     = errors.New("transport: target congested, message dropped")
	ErrUnknownTarget = errors.New("transport: target not in the node list, message dropped")
	ErrClosed        = errors.New("transport: closed")
)

// Handler receives every message addressed to this node, on the receiving
// connection's goroutine (one goroutine per peer connection). It must not block
// for long.
type Handler func(from string, payload []byte)

// Config configures a Transport.
type Config struct {
	NodeID     string
	ListenAddr string // "127.0.0.1:0" picks a free port
	// QueueSize is the outbound queue per peer; a full queue drops (congestion).
	QueueSize int
	// DialTimeout and RedialInterval bound reconnects (TiCDC resets a broken
	// connection within about 1 s).
	DialTimeout    time.Duration
	RedialInterval time.Duration
}

// Transport is one capture's message center.
type Transport struct {
	cfg     Config
	ln      net.Listener
	handler Handler

	mu      sync.Mutex
	peers   map[string]*peer
	inbound map[net.Conn]struct{}
	closed  bool
	local   chan []byte
	wg      sync.WaitGroup
	ctx     context.Context
	cancel  context.CancelFunc
}

type peer struct {
	id    string
	addr  string
	queue chan []byte
	stop  chan struct{}
}

// Listen starts a transport listening on cfg.ListenAddr; handler receives
// every inbound message.
func Listen(cfg Config, handler Handler) (*Transport, error) {
	if cfg.NodeID == "" {
		return nil, errors.New("transport: NodeID is required")
	}
	if cfg.QueueSize <= 0 {
		cfg.QueueSize = 1024
	}
	if cfg.DialTimeout <= 0 {
		cfg.DialTimeout = time.Second
	}
	if cfg.RedialInterval <= 0 {
		cfg.RedialInterval = 200 * time.Millisecond
	}
	if cfg.ListenAddr == "" {
		cfg.ListenAddr = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", cfg.ListenAddr)
	if err != nil {
		return nil, fmt.Errorf("transport: listen on %s: %w", cfg.ListenAddr, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t := &Transport{cfg: cfg, ln: ln, handler: handler, peers: map[string]*peer{}, inbound: map[net.Conn]struct{}{},
		local: make(chan []byte, cfg.QueueSize), ctx: ctx, cancel: cancel}
	t.wg.Add(2)
	go t.acceptLoop()
	go t.localLoop()
	return t, nil
}

// Addr is the address the transport listens on.
func (t *Transport) Addr() string { return t.ln.Addr().String() }

// SetPeers replaces the address book (TiCDC's "Add remote target" / "remove
// remote target from message center"). Peers that left are disconnected and
// their queued messages dropped; new peers are dialled lazily.
func (t *Transport) SetPeers(addrs map[string]string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return
	}
	for id, p := range t.peers {
		if a, ok := addrs[id]; !ok || a != p.addr {
			close(p.stop)
			delete(t.peers, id)
		}
	}
	for id, a := range addrs {
		if id == t.cfg.NodeID {
			continue
		}
		if _, ok := t.peers[id]; ok {
			continue
		}
		p := &peer{id: id, addr: a, queue: make(chan []byte, t.cfg.QueueSize), stop: make(chan struct{})}
		t.peers[id] = p
		t.wg.Add(1)
		go t.sendLoop(p)
	}
}

// Send queues payload for node to. It never blocks. A message to this node's
// own ID goes through a local queue (dropped when full, like TiCDC's own-node
// channel) and reaches the handler on the local delivery goroutine.
func (t *Transport) Send(to string, payload []byte) error {
	if len(payload) > MaxFrame {
		return fmt.Errorf("transport: %d-byte message exceeds the %d-byte frame limit", len(payload), MaxFrame)
	}
	if to == t.cfg.NodeID {
		select {
		case t.local <- payload:
			return nil
		default:
			return ErrCongested
		}
	}
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return ErrClosed
	}
	p := t.peers[to]
	t.mu.Unlock()
	if p == nil {
		return ErrUnknownTarget
	}
	select {
	case p.queue <- payload:
		return nil
	default:
		return ErrCongested
	}
}

// Close stops the transport: every connection closes, queued messages are dropped.
func (t *Transport) Close() error {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return nil
	}
	t.closed = true
	for id, p := range t.peers {
		close(p.stop)
		delete(t.peers, id)
	}
	for c := range t.inbound {
		c.Close()
	}
	t.mu.Unlock()
	t.cancel()
	err := t.ln.Close()
	t.wg.Wait()
	return err
}

func (t *Transport) sendLoop(p *peer) {
	defer t.wg.Done()
	for {
		conn, err := t.dial(p)
		if err != nil {
			if !t.sleep(p, t.cfg.RedialInterval) {
				return
			}
			continue
		}
		t.writeUntilBroken(p, conn)
		conn.Close()
		// Reconnects lose data: drop whatever was queued for the broken connection.
		drain(p.queue)
		if !t.sleep(p, t.cfg.RedialInterval) {
			return
		}
	}
}

func drain(q chan []byte) {
	for {
		select {
		case <-q:
		default:
			return
		}
	}
}

func (t *Transport) sleep(p *peer, d time.Duration) bool {
	select {
	case <-p.stop:
		return false
	case <-time.After(d):
		return true
	}
}

func (t *Transport) dial(p *peer) (net.Conn, error) {
	d := net.Dialer{Timeout: t.cfg.DialTimeout}
	conn, err := d.DialContext(t.ctx, "tcp", p.addr)
	if err != nil {
		return nil, err
	}
	if err := writeFrame(conn, []byte(t.cfg.NodeID)); err != nil {
		conn.Close()
		return nil, err
	}
	return conn, nil
}

func (t *Transport) writeUntilBroken(p *peer, conn net.Conn) {
	w := bufio.NewWriterSize(conn, 64<<10)
	for {
		var msg []byte
		select {
		case <-p.stop:
			return
		case msg = <-p.queue:
		}
		if err := writeFrame(w, msg); err != nil {
			return
		}
		// Batch what is already queued, then flush.
		for more := true; more; {
			select {
			case m := <-p.queue:
				if err := writeFrame(w, m); err != nil {
					return
				}
			default:
				more = false
			}
		}
		if err := w.Flush(); err != nil {
			return
		}
	}
}

func writeFrame(w io.Writer, payload []byte) error {
	var hdr [4]byte
	binary.BigEndian.PutUint32(hdr[:], uint32(len(payload)))
	if _, err := w.Write(hdr[:]); err != nil {
		return err
	}
	_, err := w.Write(payload)
	return err
}

func readFrame(r io.Reader) ([]byte, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return nil, err
	}
	n := binary.BigEndian.Uint32(hdr[:])
	if n > MaxFrame {
		return nil, fmt.Errorf("transport: frame of %d bytes exceeds the %d-byte limit", n, MaxFrame)
	}
	buf := make([]byte, n)
	if _, err := io.ReadFull(r, buf); err != nil {
		return nil, err
	}
	return buf, nil
}

func (t *Transport) localLoop() {
	defer t.wg.Done()
	for {
		select {
		case <-t.ctx.Done():
			return
		case m := <-t.local:
			t.handler(t.cfg.NodeID, m)
		}
	}
}

func (t *Transport) acceptLoop() {
	defer t.wg.Done()
	for {
		conn, err := t.ln.Accept()
		if err != nil {
			return
		}
		t.mu.Lock()
		if t.closed {
			t.mu.Unlock()
			conn.Close()
			return
		}
		t.inbound[conn] = struct{}{}
		t.wg.Add(1)
		t.mu.Unlock()
		go t.readLoop(conn)
	}
}

func (t *Transport) readLoop(conn net.Conn) {
	defer t.wg.Done()
	defer func() {
		t.mu.Lock()
		delete(t.inbound, conn)
		t.mu.Unlock()
		conn.Close()
	}()
	r := bufio.NewReaderSize(conn, 64<<10)
	hello, err := readFrame(r)
	if err != nil {
		return
	}
	from := string(hello)
	for {
		msg, err := readFrame(r)
		if err != nil {
			return
		}
		t.handler(from, msg)
	}
}
