package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"cdcspec/runtime/server"
	"cdcspec/spec"
)

func init() {
	register("server", "run one capture process (etcd session, owner election, TCP transport, Kafka sink)", runServer)
}

// listFlag is a repeatable (and comma-separated) string flag.
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error {
	for _, p := range strings.Split(v, ",") {
		if p = strings.TrimSpace(p); p != "" {
			*l = append(*l, p)
		}
	}
	return nil
}

func runServer(args []string, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("server", flag.ContinueOnError)
	fl.SetOutput(stderr)
	var etcd, kafka, bugs listFlag
	fl.Var(&etcd, "etcd", "etcd endpoints `host:port`[,host:port...] (required)")
	fl.Var(&kafka, "kafka", "Kafka brokers `host:port`[,host:port...] (required)")
	fl.Var(&bugs, "bug", "switch a catalogued bug on: `NAME` as cdcspec bugs lists them (repeatable)")
	addr := fl.String("addr", "127.0.0.1:0", "transport listen address host:port")
	apiAddr := fl.String("api-addr", "127.0.0.1:0", "admin API listen address host:port")
	logFile := fl.String("log-file", "", "log file (TiCDC's format); empty: stderr")
	logLevel := fl.String("log-level", "info", "log level: debug, info, warn, error")
	ttl := fl.Duration("session-ttl", 5*time.Second, "etcd session TTL (TiCDC: 10s)")
	readTimeout := fl.Duration("kafka-timeout", 2*time.Second, "Kafka read/write timeout per request (TiCDC: 10s)")
	retries := fl.Int("kafka-retries", 1, "sarama producer retries, -1..100 (-1: none; 0: sarama's default, 3)")
	partitions := fl.Int("partitions", 3, "partitions of a topic the sink creates, 1..1024")
	rawWatermark := fl.Bool("legacy-raw-watermark", false, "pre-#4548 maintainer checkpoint reporting (seed #5709 needs it)")
	fl.Usage = func() {} // -h prints serverUsage on stdout; a bad flag names itself
	if code, ok := parseFlags(fl, args, false, stderr); !ok {
		if code == exitOK {
			serverUsage(stdout, fl)
		} else {
			fmt.Fprintln(stderr, "'cdcspec server -h' lists its flags")
		}
		return code
	}
	if len(etcd) == 0 || len(kafka) == 0 {
		fmt.Fprintln(stderr, "cdcspec server: --etcd and --kafka are required ('cdcspec server -h' lists the flags)")
		return exitUsage
	}
	errs := []error{
		hostPort("--addr", *addr),
		hostPort("--api-addr", *apiAddr),
		oneOf("--log-level", *logLevel, logLevels...),
		durationIn("--session-ttl", *ttl, time.Second, time.Minute),
		durationIn("--kafka-timeout", *readTimeout, 100*time.Millisecond, time.Minute),
		intIn("--kafka-retries", *retries, -1, 100),
		intIn("--partitions", *partitions, 1, 1024),
	}
	for _, e := range etcd {
		errs = append(errs, hostPortOrURL("--etcd", e))
	}
	for _, k := range kafka {
		errs = append(errs, hostPort("--kafka", k))
	}
	if _, err := spec.ParseBugs(bugs); err != nil {
		errs = append(errs, fmt.Errorf("--bug: %v", err))
	}
	if err := firstErr(errs...); err != nil {
		fmt.Fprintf(stderr, "cdcspec server: %v\n", err)
		return exitUsage
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cfg := server.Config{Etcd: etcd, Kafka: kafka, Addr: *addr, APIAddr: *apiAddr, LogFile: *logFile, LogLevel: *logLevel,
		Bugs: bugs, SessionTTL: *ttl, Stdout: stdout,
		Sink: server.SinkConfig{Partitions: int32(*partitions), Retries: *retries, ReadTimeout: *readTimeout, WriteTimeout: *readTimeout, DialTimeout: *readTimeout}}
	cfg.Legacy.RawWatermarkCheckpoint = *rawWatermark
	err := server.Run(ctx, cfg)
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, server.ErrCaptureSuicide):
		fmt.Fprintf(stderr, "cdcspec server: %v\n", err)
		return exitViolation
	default:
		fmt.Fprintf(stderr, "cdcspec server: %v\n", err)
		return exitUsage
	}
}

func serverUsage(w io.Writer, fl *flag.FlagSet) {
	fmt.Fprintln(w, "usage: cdcspec server --etcd host:port --kafka host:port [--addr host:port] [--log-file F] [--bug NAME]...")
	fmt.Fprintln(w, "\nRuns one capture process (etcd session, owner election, TCP transport, Kafka sink). The shared synthetic")
	fmt.Fprintln(w, "upstream must be described in etcd (cdcspec run does it). Its log is in TiCDC's format; every ts in it is a TSO.")
	fmt.Fprintln(w, "\nExample:\n  cdcspec server --etcd 127.0.0.1:2379 --kafka 127.0.0.1:9092 --log-file capture-1.log")
	fmt.Fprintln(w, "\nExit status: 0 on SIGTERM/SIGINT, 1 on capture suicide (etcd session lost), 2 on usage or setup errors.")
	fmt.Fprintln(w, "\nFlags:")
	printFlagDefaults(w, fl)
}

// printFlagDefaults writes fl's flag list to w (run, server and cli print
// their own help text above it).
func printFlagDefaults(w io.Writer, fl *flag.FlagSet) {
	out := fl.Output()
	fl.SetOutput(w)
	fl.PrintDefaults()
	fl.SetOutput(out)
}
