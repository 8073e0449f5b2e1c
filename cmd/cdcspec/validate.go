package main

import (
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"
)

// Flag checks shared by the subcommands. Each returns an error that names
// the flag, the value and the valid range; the subcommand prints it and
// exits with exitUsage before starting any work.

func intIn(flag string, v, lo, hi int) error {
	if v < lo || v > hi {
		return fmt.Errorf("%s %d out of range [%d, %d]", flag, v, lo, hi)
	}
	return nil
}

func floatIn(flag string, v, lo, hi float64) error {
	if !(v >= lo && v <= hi) { // also refuses NaN
		f := func(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }
		return fmt.Errorf("%s %s out of range [%s, %s]", flag, f(v), f(lo), f(hi))
	}
	return nil
}

func durationIn(flag string, v, lo, hi time.Duration) error {
	if v < lo || v > hi {
		return fmt.Errorf("%s %s out of range [%s, %s]", flag, v, lo, hi)
	}
	return nil
}

func oneOf(flag, v string, known ...string) error {
	for _, k := range known {
		if v == k {
			return nil
		}
	}
	return fmt.Errorf("%s %q unknown (known: %s)", flag, v, strings.Join(known, ", "))
}

// hostPort checks a listen or dial address host:port (port 0..65535; an
// empty host means every interface).
func hostPort(flag, v string) error {
	_, port, err := net.SplitHostPort(v)
	if err != nil {
		return fmt.Errorf("%s %q is not host:port: %v", flag, v, err)
	}
	if p, err := strconv.Atoi(port); err != nil || p < 0 || p > 65535 {
		return fmt.Errorf("%s %q: port %q out of range [0, 65535]", flag, v, port)
	}
	return nil
}

// firstErr returns the first non-nil error.
func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// logLevels are the log levels every subcommand accepts.
var logLevels = []string{"debug", "info", "warn", "error"}

// hostPortOrURL accepts host:port or a URL with one (etcd endpoints may be
// http://host:port).
func hostPortOrURL(flag, v string) error {
	if i := strings.Index(v, "://"); i >= 0 {
		v = strings.TrimRight(v[i+3:], "/")
	}
	return hostPort(flag, v)
}
