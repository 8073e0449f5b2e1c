package cluster

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/IBM/sarama"

	"cdcspec/runtime/etcdmeta"
)

// PreflightTimeout bounds Preflight: every external endpoint answers
// within it or the run does not start.
const PreflightTimeout = 5 * time.Second

// PreflightError names the flag and the address of an external endpoint
// that did not answer.
type PreflightError struct {
	Flag string // "--etcd" or "--kafka"
	Addr string
	Err  error
}

func (e *PreflightError) Error() string {
	return fmt.Sprintf("%s %s does not answer within %s: %v", e.Flag, e.Addr, PreflightTimeout, e.Err)
}

func (e *PreflightError) Unwrap() error { return e.Err }

// Preflight probes every external etcd endpoint (a read) and Kafka broker
// (a metadata request), all at once, before anything of the cluster
// starts: an endpoint that does not answer within PreflightTimeout would
// otherwise surface minutes later as captures that never register or a
// changefeed that never advances. Every address given must answer (one
// dead etcd member is worth knowing before a fault run). It returns the
// first failure in flag then address order, or parent's error if parent
// ends first.
func Preflight(parent context.Context, etcd, kafka []string) error {
	if len(etcd) == 0 && len(kafka) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(parent, PreflightTimeout)
	defer cancel()
	var mu sync.Mutex
	var errs []*PreflightError
	var wg sync.WaitGroup
	probe := func(flag, addr string, f func(context.Context, string) error) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := f(ctx, addr); err != nil {
				mu.Lock()
				errs = append(errs, &PreflightError{Flag: flag, Addr: addr, Err: err})
				mu.Unlock()
			}
		}()
	}
	for _, e := range etcd {
		probe("--etcd", e, probeEtcd)
	}
	for _, k := range kafka {
		probe("--kafka", k, probeKafka)
	}
	// Every probe ends by the deadline (each honours ctx).
	wg.Wait()
	if err := parent.Err(); err != nil {
		return err // interrupted: not the endpoints' fault
	}
	if len(errs) == 0 {
		return nil
	}
	sort.Slice(errs, func(i, j int) bool {
		if errs[i].Flag != errs[j].Flag {
			return errs[i].Flag < errs[j].Flag
		}
		return errs[i].Addr < errs[j].Addr
	})
	return errs[0]
}

func probeEtcd(ctx context.Context, addr string) error {
	dl, _ := ctx.Deadline()
	c, err := etcdmeta.Dial(ctx, etcdmeta.ClientConfig{Endpoints: []string{addr}, DialTimeout: time.Until(dl)})
	if err != nil {
		return err
	}
	return c.Close()
}

func probeKafka(ctx context.Context, addr string) error {
	dl, _ := ctx.Deadline()
	left := time.Until(dl)
	sc := sarama.NewConfig()
	sc.ClientID = "cdcspec-preflight"
	sc.Version = sarama.V2_8_0_0
	sc.Net.DialTimeout, sc.Net.ReadTimeout, sc.Net.WriteTimeout = left, left, left
	b := sarama.NewBroker(addr)
	if err := b.Open(sc); err != nil {
		return err
	}
	errc := make(chan error, 1)
	// The request and the close run on their own: Close waits for a
	// request in flight, which a silent broker holds until ReadTimeout.
	go func() {
		_, err := b.GetMetadata(&sarama.MetadataRequest{Version: 1})
		errc <- err
		_ = b.Close()
	}()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}
