package kafkasink

import (
	"bytes"
	"context"
	"net"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestKcatReadsFixedListenTopic shows the topic is real Kafka: with kfake on
// a fixed listen address (the --kafka-listen mode), the sink writes rows and
// kcat (Debian's kafkacat, skipped when absent) reads them back and they
// decode. Run: go test -run Kcat -v ./runtime/kafkasink/
func TestKcatReadsFixedListenTopic(t *testing.T) {
	kcat, err := exec.LookPath("kcat")
	if err != nil {
		if kcat, err = exec.LookPath("kafkacat"); err != nil {
			t.Skip("kcat not installed (apt-get install kcat)")
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	k, err := StartKfake(KfakeConfig{ListenAddr: addr})
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	acks := newAckLog()
	s, err := Start(context.Background(), Config{Brokers: []string{addr}, Changefeed: "default/kcat", Partitions: 2, OnAck: acks.onAck})
	if err != nil {
		t.Fatal(err)
	}
	rows := genRows("default/kcat", 2, 10, 100)
	if err := s.Write(context.Background(), rows...); err != nil {
		t.Fatal(err)
	}
	acks.wait(t, len(rows), 5*time.Second)
	s.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	// -C consume, -e exit at the end, one message value per line.
	cmd := exec.CommandContext(ctx, kcat, "-b", addr, "-t", s.Topic(), "-C", "-e", "-q", "-f", "%p %o %s\n")
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("kcat: %v\n%s", err, errOut.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != len(rows) {
		t.Fatalf("kcat printed %d messages, want %d:\n%s\n%s", len(lines), len(rows), out.String(), errOut.String())
	}
	for _, l := range lines {
		parts := strings.SplitN(l, " ", 3)
		if len(parts) != 3 {
			t.Fatalf("kcat line %q", l)
		}
		if _, err := DecodeMessage([]byte(parts[2])); err != nil {
			t.Fatalf("kcat line %q: %v", l, err)
		}
	}
	t.Logf("kcat -b %s -t %s -C -e read %d messages; first: %s", addr, s.Topic(), len(lines), lines[0])
}
