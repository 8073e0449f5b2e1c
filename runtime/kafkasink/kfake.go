package kafkasink

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// KfakeConfig configures an embedded kfake broker cluster.
type KfakeConfig struct {
	// ListenAddr, when set, is the host:port of the first broker (e.g.
	// "127.0.0.1:9092", the --kafka-listen flag), so outside clients such
	// as kcat can read the topics. The host must be an address clients can
	// dial: kfake advertises exactly the listener's address. Further
	// brokers listen on random ports of the same host. Empty: every broker
	// on 127.0.0.1:<random>.
	ListenAddr string
	// Brokers is the number of brokers, default 1.
	Brokers int
	// DefaultPartitions is the partition count of auto-created topics,
	// default 3. Auto-creation is on; the Sink creates its topic anyway.
	DefaultPartitions int32
	// Topics are created at start with DefaultPartitions partitions.
	Topics []string
	// DataDir, when set, keeps the partitions' segments in files there
	// (kfake.DataDir): a long run's messages then live in the page cache,
	// not in the process's heap. Empty: in memory.
	DataDir string
}

// Kfake is an in-process Kafka cluster (github.com/twmb/franz-go/pkg/kfake)
// on loopback TCP with produce-fault controls. Real clients (sarama, kgo,
// kcat) talk to it over the Kafka protocol.
type Kfake struct {
	c *kfake.Cluster

	mu        sync.Mutex
	active    bool      // a produce fault is in force
	reset     bool      // the fault closes the connection instead of swallowing
	until     time.Time // zero: until Heal
	swallowed atomic.Int64
	resets    atomic.Int64
	produced  atomic.Int64
	closeOnce sync.Once
}

// StartKfake starts the cluster and installs the produce control function
// used by TimeoutProduce.
func StartKfake(cfg KfakeConfig) (*Kfake, error) {
	brokers := cfg.Brokers
	if brokers <= 0 {
		brokers = 1
	}
	parts := cfg.DefaultPartitions
	if parts <= 0 {
		parts = 3
	}
	opts := []kfake.Opt{
		kfake.NumBrokers(brokers),
		kfake.AllowAutoTopicCreation(),
		kfake.DefaultNumPartitions(int(parts)),
		// kfake keeps segments in an in-memory file that grows by doubling
		// up to the segment size (100 MiB by default); 1 MiB segments cut
		// that copying (BenchmarkSinkThroughput: ~30% of CPU in memmove).
		kfake.BrokerConfigs(map[string]string{"log.segment.bytes": "1048576"}),
	}
	if len(cfg.Topics) > 0 {
		opts = append(opts, kfake.SeedTopics(parts, cfg.Topics...))
	}
	if cfg.DataDir != "" {
		// On disk a segment is fsynced when it rolls: 16 MiB segments
		// keep that to about one a second at 20 MB/s.
		opts = append(opts, kfake.DataDir(cfg.DataDir), kfake.BrokerConfigs(map[string]string{"log.segment.bytes": "16777216"}))
	}
	if cfg.ListenAddr != "" {
		host, portS, err := net.SplitHostPort(cfg.ListenAddr)
		if err != nil {
			return nil, fmt.Errorf("kafkasink: kafka listen address %q: %w", cfg.ListenAddr, err)
		}
		port, err := strconv.Atoi(portS)
		if err != nil || port <= 0 || port > 65535 {
			return nil, fmt.Errorf("kafkasink: kafka listen address %q: port %q is not in 1..65535", cfg.ListenAddr, portS)
		}
		if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
			return nil, fmt.Errorf("kafkasink: kafka listen address %q: kfake advertises the listen host, so it must be dialable, not %s", cfg.ListenAddr, host)
		}
		ports := []int{port}
		for i := 1; i < brokers; i++ {
			ports = append(ports, 0)
		}
		opts = append(opts, kfake.Ports(ports...), kfake.ListenFn(func(network, addr string) (net.Listener, error) {
			_, p, _ := net.SplitHostPort(addr)
			return net.Listen(network, net.JoinHostPort(host, p))
		}))
	}
	c, err := kfake.NewCluster(opts...)
	if err != nil {
		return nil, fmt.Errorf("kafkasink: start kfake: %w", err)
	}
	k := &Kfake{c: c}
	c.ControlKey(int16(kmsg.Produce), k.controlProduce)
	return k, nil
}

// controlProduce swallows produce requests while a timeout fault is
// active: kfake sends no reply, so the client's read deadline expires and
// sarama reports `read tcp ...: i/o timeout`. With a reset fault it closes
// the connection instead (the client sees EOF). Otherwise it passes the
// request on (to Fault handlers, then the broker) and only counts.
func (k *Kfake) controlProduce(kmsg.Request) (kmsg.Response, error, bool) {
	k.c.KeepControl()
	k.mu.Lock()
	on := k.active && (k.until.IsZero() || time.Now().Before(k.until))
	if k.active && !on {
		k.active = false // expired
	}
	reset := k.reset
	k.mu.Unlock()
	switch {
	case on && reset:
		k.resets.Add(1)
		return nil, errProduceReset, true
	case on:
		k.swallowed.Add(1)
		return nil, nil, true
	}
	k.produced.Add(1)
	return nil, nil, false
}

var errProduceReset = errors.New("kfake: produce connection reset by fault injection")

// Addrs returns the brokers' host:port addresses.
func (k *Kfake) Addrs() []string { return k.c.ListenAddrs() }

// Cluster exposes the kfake cluster for other fault controls.
func (k *Kfake) Cluster() *kfake.Cluster { return k.c }

// TimeoutProduce makes every produce request hang unanswered, so producers
// hit a real read timeout (`i/o timeout`). With d > 0 the fault heals by
// itself after d; with d <= 0 it lasts until Heal. Swallowed requests are
// not written.
func (k *Kfake) TimeoutProduce(d time.Duration) { k.startFault(d, false) }

// ResetProduce makes the broker close the connection of every produce
// request (the producer sees EOF at once), for d or, with d <= 0, until
// Heal. Nothing is written.
func (k *Kfake) ResetProduce(d time.Duration) { k.startFault(d, true) }

// FailProduce answers produce requests for topic ("" = all) with err
// (e.g. kerr.NotLeaderForPartition, retriable; kerr.MessageTooLarge, not),
// count times (-1: until the handle's Remove). It uses kfake's Fault API,
// independent of TimeoutProduce/ResetProduce and Heal.
func (k *Kfake) FailProduce(topic string, err *kerr.Error, count int) *kfake.FaultHandle {
	if count == 0 {
		count = 1
	}
	return k.c.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.Produce}, Topic: topic, Err: err, Count: count})
}

func (k *Kfake) startFault(d time.Duration, reset bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.active = true
	k.reset = reset
	k.until = time.Time{}
	if d > 0 {
		k.until = time.Now().Add(d)
	}
}

// Heal ends a TimeoutProduce or ResetProduce fault.
func (k *Kfake) Heal() {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.active = false
	k.until = time.Time{}
}

// ProduceTimingOut reports whether a TimeoutProduce or ResetProduce fault
// is in force.
func (k *Kfake) ProduceTimingOut() bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.active && (k.until.IsZero() || time.Now().Before(k.until))
}

// SwallowedProduces counts produce requests swallowed by TimeoutProduce.
func (k *Kfake) SwallowedProduces() int64 { return k.swallowed.Load() }

// ResetProduces counts produce connections closed by ResetProduce.
func (k *Kfake) ResetProduces() int64 { return k.resets.Load() }

// PassedProduces counts produce requests handed to the broker.
func (k *Kfake) PassedProduces() int64 { return k.produced.Load() }

// Close shuts the cluster down. It is idempotent.
func (k *Kfake) Close() { k.closeOnce.Do(k.c.Close) }
