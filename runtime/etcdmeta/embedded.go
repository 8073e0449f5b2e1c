package etcdmeta

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"
)

// EmbedConfig configures an embedded single-member etcd.
type EmbedConfig struct {
	// Dir is the data directory. Empty: a fresh temporary directory that
	// Close removes. A given Dir is kept.
	Dir string
	// Name is the member name, default "cdcspec-etcd".
	Name string
	// ClientAddr, when set, is the client listen host:port (e.g.
	// "127.0.0.1:2379"); default a free 127.0.0.1 port. The peer port is
	// always a free 127.0.0.1 port.
	ClientAddr string
	// StartTimeout bounds waiting for the member to serve, default 20s.
	StartTimeout time.Duration
	// Fsync keeps etcd's fsyncs. Off by default: the embedded etcd is a
	// test/demo store, and skipping fsync makes writes ~10x cheaper.
	Fsync bool
	// Logger receives etcd's logs; default none (etcd's own error lines on
	// shutdown are noise for callers).
	Logger *zap.Logger
}

// Embedded is a running embedded etcd member on loopback.
type Embedded struct {
	e         *embed.Etcd
	dir       string
	removeDir bool
	endpoint  string
	closeOnce sync.Once
}

// StartEmbedded starts a single-member etcd and waits until it serves
// clients. Heartbeat 50ms / election 500ms keep the minimum lease TTL at
// 1s (etcd rounds smaller TTLs up to 1.5*election timeout).
func StartEmbedded(cfg EmbedConfig) (*Embedded, error) {
	dir, removeDir := cfg.Dir, false
	if dir == "" {
		d, err := os.MkdirTemp("", "cdcspec-etcd-")
		if err != nil {
			return nil, fmt.Errorf("etcdmeta: temp dir for embedded etcd: %w", err)
		}
		dir, removeDir = d, true
	}
	start := cfg.StartTimeout
	if start <= 0 {
		start = 20 * time.Second
	}
	var lastErr error
	// Free ports are picked by listen-and-close, so another process may grab
	// one before etcd binds it; retry a few times with new ports.
	for attempt := 0; attempt < 5; attempt++ {
		e, endpoint, err := startOnce(cfg, dir, start)
		if err == nil {
			return &Embedded{e: e, dir: dir, removeDir: removeDir, endpoint: endpoint}, nil
		}
		lastErr = err
		if cfg.ClientAddr != "" || !isAddrInUse(err) {
			break
		}
	}
	if removeDir {
		os.RemoveAll(dir)
	}
	return nil, lastErr
}

func startOnce(cfg EmbedConfig, dir string, timeout time.Duration) (*embed.Etcd, string, error) {
	clientAddr := cfg.ClientAddr
	if clientAddr == "" {
		p, err := freePort()
		if err != nil {
			return nil, "", err
		}
		clientAddr = p
	} else if _, _, err := net.SplitHostPort(clientAddr); err != nil {
		return nil, "", fmt.Errorf("etcdmeta: etcd client address %q: %w", clientAddr, err)
	}
	peerAddr, err := freePort()
	if err != nil {
		return nil, "", err
	}
	ec := embed.NewConfig()
	ec.Name = cfg.Name
	if ec.Name == "" {
		ec.Name = "cdcspec-etcd"
	}
	ec.Dir = dir
	cu := url.URL{Scheme: "http", Host: clientAddr}
	pu := url.URL{Scheme: "http", Host: peerAddr}
	ec.ListenClientUrls, ec.AdvertiseClientUrls = []url.URL{cu}, []url.URL{cu}
	ec.ListenPeerUrls, ec.AdvertisePeerUrls = []url.URL{pu}, []url.URL{pu}
	ec.InitialCluster = ec.InitialClusterFromName(ec.Name)
	ec.TickMs, ec.ElectionMs = 50, 500
	ec.UnsafeNoFsync = !cfg.Fsync
	ec.LogLevel = "error"
	lg := cfg.Logger
	if lg == nil {
		lg = zap.NewNop()
	}
	ec.ZapLoggerBuilder = embed.NewZapLoggerBuilder(lg)
	e, err := embed.StartEtcd(ec)
	if err != nil {
		return nil, "", fmt.Errorf("etcdmeta: start embedded etcd (client %s, peer %s, dir %s): %w", clientAddr, peerAddr, dir, err)
	}
	select {
	case <-e.Server.ReadyNotify():
		return e, cu.String(), nil
	case err := <-e.Err():
		e.Close()
		return nil, "", fmt.Errorf("etcdmeta: embedded etcd failed while starting: %w", err)
	case <-time.After(timeout):
		e.Server.Stop()
		e.Close()
		return nil, "", fmt.Errorf("etcdmeta: embedded etcd not ready within %v", timeout)
	}
}

func freePort() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("etcdmeta: pick a free port: %w", err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr, nil
}

func isAddrInUse(err error) bool {
	return err != nil && strings.Contains(err.Error(), "address already in use")
}

// Endpoints returns the client URLs, for Dial.
func (m *Embedded) Endpoints() []string { return []string{m.endpoint} }

// Dir returns the data directory.
func (m *Embedded) Dir() string { return m.dir }

// Close stops the member and removes a temporary data directory. Close
// clients (and their watches) first, or etcd waits for them. Idempotent.
func (m *Embedded) Close() error {
	var err error
	m.closeOnce.Do(func() {
		m.e.Close()
		if m.removeDir {
			err = os.RemoveAll(m.dir)
		}
	})
	if err != nil {
		return errors.Join(errors.New("etcdmeta: remove embedded etcd dir"), err)
	}
	return nil
}
