package linearizability

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"
)

// Result is the outcome of one check.
type Result struct {
	Model string
	// Verdict is porcupine's: Ok, Illegal, or Unknown (the timeout expired).
	Verdict    porcupine.CheckResult
	Ops        int
	Partitions int
	// UnknownOutcomes counts operations checked as returning at infinity;
	// DroppedReads counts unknown-outcome reads left out (they constrain
	// nothing).
	UnknownOutcomes int
	DroppedReads    int
	Timeout         time.Duration
	Elapsed         time.Duration
	// Message is one line for humans: "linearizable", "not linearizable:
	// ...", or "inconclusive: timeout ...".
	Message string
	// ArtifactDir is the folder written for a failed check ("" if none).
	ArtifactDir string
}

// Ok reports whether the history was proven linearizable. Unknown is not Ok.
func (r Result) Ok() bool { return r.Verdict == porcupine.Ok }

func (r Result) String() string {
	s := fmt.Sprintf("%s: %s (%d ops, %d partitions, %d unknown outcomes at infinity, %d unknown reads dropped, %v)", r.Model, r.Message, r.Ops, r.Partitions, r.UnknownOutcomes, r.DroppedReads, r.Elapsed.Round(time.Microsecond))
	if r.ArtifactDir != "" {
		s += "; artifacts: " + r.ArtifactDir
	}
	return s
}

// ArtifactPolicy says when Check writes an artifact folder.
type ArtifactPolicy int

const (
	// ArtifactsOnFailure (default): on Illegal or Unknown.
	ArtifactsOnFailure ArtifactPolicy = iota
	ArtifactsNever
	ArtifactsAlways
)

// CheckOptions configures CheckWith.
type CheckOptions struct {
	// Timeout is required (> 0): porcupine's search is NP-hard.
	Timeout time.Duration
	// Name names the artifact folder (<Name>-<timestamp>); defaults to the
	// history's Name, then the model's.
	Name string
	// ArtifactRoot is where folders go; defaults to DefaultArtifactRoot().
	ArtifactRoot string
	Artifacts    ArtifactPolicy
	// Log receives the artifact path; defaults to os.Stderr.
	Log io.Writer
	// VisualizeTimeout bounds the second, verbose pass that computes the
	// partial linearizations for the message and the HTML (default
	// DefaultVisualizeTimeout). It never changes the verdict.
	VisualizeTimeout time.Duration
}

// DefaultVisualizeTimeout is CheckOptions.VisualizeTimeout's default.
const DefaultVisualizeTimeout = 2 * time.Second

// Check checks h against m with a timeout. Unknown (timeout) is reported as
// a failure ("inconclusive: timeout"), never a pass. The verdict comes from
// porcupine's CheckOperationsTimeout (it stops at the first partition proven
// Illegal); a failure then runs CheckOperationsVerbose within
// VisualizeTimeout for the partial linearizations, writes porcupine's HTML
// visualization, the history as JSON and result.txt to
// DefaultArtifactRoot()/<name>-<timestamp>/, and prints the path to stderr.
// The error is for bad input (malformed history, no timeout) or an artifact
// that could not be written; the verdict is in Result.
func Check(m Model, h History, timeout time.Duration) (Result, error) {
	return CheckWith(m, h, CheckOptions{Timeout: timeout})
}

// CheckWith is Check with options.
func CheckWith(m Model, h History, opts CheckOptions) (Result, error) {
	res := Result{Model: m.Name, Ops: len(h.Ops), Timeout: opts.Timeout}
	res.UnknownOutcomes, res.DroppedReads = h.unknownCounts()
	if m.accepts == nil {
		return res, errors.New("linearizability: zero Model; use AdminModel, AdminModelSpontaneousFailure or CheckpointRegisterModel")
	}
	if opts.Timeout <= 0 {
		return res, fmt.Errorf("linearizability: check of %q without a timeout: porcupine can run forever; pass a timeout > 0", h.Name)
	}
	if err := h.validate(m); err != nil {
		return res, err
	}
	ops := h.operations()
	parts := m.porcupine.Partition(ops)
	res.Partitions = len(parts)
	// The verdict comes from the non-verbose check: it stops at the first
	// partition proven Illegal, whereas the verbose one waits for every
	// partition (proving another partition illegal can take seconds).
	start := time.Now()
	verdict := porcupine.CheckOperationsTimeout(m.porcupine, ops, opts.Timeout)
	res.Elapsed = time.Since(start)
	res.Verdict = verdict
	write := opts.Artifacts == ArtifactsAlways || (opts.Artifacts == ArtifactsOnFailure && verdict != porcupine.Ok)
	var info porcupine.LinearizationInfo
	if write || verdict == porcupine.Illegal {
		// Partial linearizations for the message and the visualization,
		// within their own budget; a partition still being searched when it
		// runs out shows its longest prefix so far.
		vizTimeout := opts.VisualizeTimeout
		if vizTimeout <= 0 {
			vizTimeout = DefaultVisualizeTimeout
		}
		_, info = porcupine.CheckOperationsVerbose(m.porcupine, ops, vizTimeout)
	}
	switch verdict {
	case porcupine.Ok:
		res.Message = "linearizable"
	case porcupine.Illegal:
		res.Message = "not linearizable: " + illegalSummary(parts, info)
	default:
		res.Message = fmt.Sprintf("inconclusive: timeout after %v (porcupine returned %s); this is a failure, not a pass: shrink the history (fewer concurrent ops per changefeed) or raise the timeout", opts.Timeout, verdict)
	}
	if !write {
		return res, nil
	}
	dir, err := writeArtifacts(m, h, info, res, opts)
	res.ArtifactDir = dir
	if err != nil {
		return res, err
	}
	log := opts.Log
	if log == nil {
		log = os.Stderr
	}
	fmt.Fprintf(log, "linearizability: %s; history: %s\n", res.Message, filepath.Join(dir, "history.html"))
	return res, nil
}

// illegalSummary names the partitions (changefeeds) left without a complete
// linearization and how far the longest linearizable prefix got in each
// (at least one is proven illegal; another may only have run out of the
// visualization budget). parts is the model's partitioning of the history,
// in the order porcupine checked them.
func illegalSummary(parts [][]porcupine.Operation, info porcupine.LinearizationInfo) string {
	partials := info.PartialLinearizations()
	var bad []string
	for i, part := range parts {
		if i >= len(partials) || len(part) == 0 {
			continue
		}
		longest := 0
		for _, lin := range partials[i] {
			longest = max(longest, len(lin))
		}
		if longest < len(part) {
			bad = append(bad, fmt.Sprintf("%q (%d of %d ops)", part[0].Input.(Input).Changefeed, longest, len(part)))
		}
	}
	if len(bad) == 0 {
		return "no linearization exists"
	}
	return "longest linearizable prefix per changefeed left incomplete: " + strings.Join(bad, ", ") + "; the HTML history shows where each partial linearization stops"
}

// ModelByName returns the model with the given stable name.
func ModelByName(name string) (Model, error) {
	if name == CheckpointRegisterModelName {
		return CheckpointRegisterModel(), nil
	}
	var names []string
	for _, o := range allAdminOptions() {
		if o.Name() == name {
			return NewAdminModel(o), nil
		}
		names = append(names, o.Name())
	}
	return Model{}, fmt.Errorf("linearizability: unknown model %q (want %s or %s)", name, CheckpointRegisterModelName, strings.Join(names, ", "))
}
