package kafkastream

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"cdcspec/runtime/kafkasink"
	"cdcspec/traces"
)

// captures are four captures' logs: the two of a healthy cluster, and two
// with a planted bug (#6202's duplicate dispatcher, #5709's dropped error
// re-sent).
var captures = []string{
	"../testdata/healthy/capture-1.log",
	"../testdata/healthy/capture-2.log",
	"../testdata/planted_duplicate_dispatcher.log",
	"../testdata/planted_error_resends.log",
}

// TestKafkaEqualsFiles (issue 30): four captures' logs, one Kafka message
// per line keyed by capture, through stage one and three stage-two
// instances, one of which is killed mid-stream: the findings topic holds
// exactly the findings `cdcspec trace` gives on the same logs as files,
// each once.
func TestKafkaEqualsFiles(t *testing.T) {
	if testing.Short() {
		t.Skip("starts kfake and consumer groups")
	}
	var ins []traces.Input
	for _, c := range captures {
		ins = append(ins, traces.Input{Name: c, Open: func() (io.ReadCloser, error) { return os.Open(c) }})
	}
	rep, err := traces.Run(ins, traces.Options{})
	require.NoError(t, err)
	want := map[string]string{}
	for i := range rep.Findings {
		b, err := json.Marshal(&rep.Findings[i])
		require.NoError(t, err)
		want[rep.Findings[i].ID()] = string(b)
	}
	require.NotEmpty(t, want)

	k, err := kafkasink.StartKfake(kafkasink.KfakeConfig{DefaultPartitions: 4, Topics: []string{"raw", "events", "findings"}})
	require.NoError(t, err)
	defer k.Close()
	cfg := Config{Brokers: k.Addrs(), Raw: "raw", Events: "events", Findings: "findings", Group: "trace",
		Idle: 3 * time.Second, Sources: captures}

	// the shipper: one message per line, keyed by capture
	sc := sarama.NewConfig()
	sc.Producer.Return.Successes = true
	sc.Producer.RequiredAcks = sarama.WaitForAll
	prod, err := sarama.NewSyncProducer(cfg.Brokers, sc)
	require.NoError(t, err)
	lines := 0
	for _, c := range captures {
		f, err := os.Open(c)
		require.NoError(t, err)
		s := bufio.NewScanner(f)
		var msgs []*sarama.ProducerMessage
		for s.Scan() {
			msgs = append(msgs, &sarama.ProducerMessage{Topic: "raw", Key: sarama.StringEncoder(c), Value: sarama.ByteEncoder(append([]byte(nil), s.Bytes()...))})
		}
		f.Close()
		require.NoError(t, prod.SendMessages(msgs))
		lines += len(msgs)
	}
	require.NoError(t, prod.Close())

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	run := func(ctx context.Context, fn func(context.Context, Config) error) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := fn(ctx, cfg); err != nil && ctx.Err() == nil {
				t.Errorf("stage: %v", err)
			}
		}()
	}
	run(ctx, RunParse)
	killCtx, kill := context.WithCancel(ctx)
	run(killCtx, RunCheck)
	run(ctx, RunCheck)
	run(ctx, RunCheck)
	time.Sleep(time.Second)
	kill() // mid-stream: before any partition has been idle

	client, err := sarama.NewClient(cfg.Brokers, sarama.NewConfig())
	require.NoError(t, err)
	defer client.Close()
	var got map[string]string
	var n int
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		got, n = map[string]string{}, 0
		require.NoError(t, ReadTopic(client, "findings", func(m *sarama.ConsumerMessage) {
			got[string(m.Key)] = string(m.Value)
			n++
		}))
		if len(got) >= len(want) {
			time.Sleep(2 * cfg.Idle) // anything published twice would show now
			got, n = map[string]string{}, 0
			require.NoError(t, ReadTopic(client, "findings", func(m *sarama.ConsumerMessage) {
				got[string(m.Key)] = string(m.Value)
				n++
			}))
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	cancel()
	wg.Wait()
	assert.Equal(t, len(got), n, "a finding was published twice")
	for id, g := range got {
		if want[id] == "" {
			t.Logf("not in the file mode: %.300s", g)
		}
	}
	for id, w := range want {
		if got[id] == "" {
			t.Logf("missing: %.300s", w)
		}
	}
	require.Equal(t, len(want), len(got), "findings: want %d, got %d", len(want), len(got))
	for id, w := range want {
		assert.JSONEq(t, w, got[id], "finding %s", id)
	}
	t.Logf("%d lines of 4 captures; %d findings, each once", lines, len(got))
}
