package cluster

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"cdcspec/runtime/adminapi"
	"cdcspec/spec"
)

// Changefeed lifecycle steps on the running cluster: maintainer move,
// remove and re-create, pause and resume (with or without an overwritten
// checkpoint), owner failover. Each waits (bounded by lifecycleWait) to
// see its outcome and reports it as the step's path.

// lifecycleWait bounds how long a lifecycle step waits for its outcome
// (the move done, the old changefeed gone, a new owner elected).
const lifecycleWait = 20 * time.Second

// pathNote is the outcome a step's injector saw, for the report
// (Recovery.Path, PathReached).
type pathNote struct {
	path    string
	reached bool
}

// notePath records the running step's outcome (inject reads it).
func (c *Cluster) notePath(reached bool, format string, args ...any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.path = &pathNote{path: fmt.Sprintf(format, args...), reached: reached}
}

// takePath returns and clears the outcome notePath recorded.
func (c *Cluster) takePath() *pathNote {
	c.mu.Lock()
	defer c.mu.Unlock()
	p := c.path
	c.path = nil
	return p
}

// MoveMaintainer moves the changefeed's maintainer to another live capture
// (the debug endpoint move_maintainer: the coordinator's
// MoveMaintainerOperator, a non-cascade remove at the origin then an add at
// the target) and waits until the changefeed reports its maintainer on the
// target with no operator in flight. It returns "origin -> target".
func (c *Cluster) MoveMaintainer(ctx context.Context) (string, error) {
	from, err := c.maintainerHost(ctx)
	if err != nil {
		return "", err
	}
	members := c.Members()
	var targets []string
	for _, id := range c.captureOfSlot() {
		if id != from {
			targets = append(targets, id)
		}
	}
	if len(targets) == 0 {
		return "", fmt.Errorf("no live capture other than the maintainer's %s", from)
	}
	sort.Strings(targets)
	to := ""
	for _, i := range c.perm(len(targets)) {
		if err = c.API().MoveMaintainer(ctx, c.cfg.Changefeed, targets[i]); err == nil {
			to = targets[i]
			break
		}
		// A target that has not answered the bootstrap yet (just
		// restarted) is refused; try another.
		if !errors.Is(err, adminapi.ErrNodeNotFound) {
			return "", err
		}
	}
	if to == "" {
		return "", err
	}
	target := fmt.Sprintf("maintainer %s -> %s", from, to)
	start := time.Now()
	var info adminapi.ChangefeedInfo
	for deadline := start.Add(lifecycleWait); time.Now().Before(deadline) && ctx.Err() == nil; time.Sleep(100 * time.Millisecond) {
		info, err = c.API().Get(ctx, c.cfg.Changefeed)
		if err == nil && info.MaintainerOn == members[to].APIAddr && info.Operator == "" {
			c.notePath(true, "maintainer moved: running on %s, no operator in flight, %s after the move started", to, time.Since(start).Round(time.Millisecond))
			return target, nil
		}
	}
	c.notePath(false, "the move did not complete within %s (maintainer_addr %q, operator %q, last error %v)", lifecycleWait, info.MaintainerOn, info.Operator, err)
	return target, nil
}

// RemoveAndRecreate removes the changefeed under load, as a user does,
// then creates it again from the checkpoint it showed before the remove
// (`cli changefeed create --start-ts <checkpoint>`). The checkpoint only
// advances, so that start-ts is at or below the removed changefeed's last
// checkpoint: rows above it are delivered again (duplicates), none is
// skipped, and the data check over the whole run proves it. It returns
// "removed at checkpoint X; re-created at start-ts X".
func (c *Cluster) RemoveAndRecreate(ctx context.Context) (string, error) {
	info, err := c.API().Get(ctx, c.cfg.Changefeed)
	if err != nil {
		return "", err
	}
	// Any state will do (a user removes a warning or paused changefeed
	// too): every row at or below the checkpoint is in the sink.
	cp := spec.PhysicalMs(info.CheckpointTs)
	if cp < c.StartTs {
		return "", fmt.Errorf("changefeed %s shows checkpoint %d below its start-ts %d", c.cfg.Changefeed, spec.TSO(cp), spec.TSO(c.StartTs))
	}
	start := time.Now()
	err = c.API().Remove(ctx, c.cfg.Changefeed)
	if errors.Is(err, adminapi.ErrNotReady) || errors.Is(err, adminapi.ErrInvalidParam) {
		return "", err // refused: nothing happened, the step is retried
	}
	removeErr := err
	removedIn := time.Since(start)
	target := fmt.Sprintf("removed at checkpoint %d; re-created at start-ts %d", spec.TSO(cp), spec.TSO(cp))
	// Any other outcome: the remove may have happened; from here on the
	// changefeed must come back, or the run fails to settle.
	for deadline := time.Now().Add(lifecycleWait); ctx.Err() == nil; time.Sleep(200 * time.Millisecond) {
		_, err = c.API().Create(ctx, adminapi.CreateRequest{ChangefeedID: c.cfg.Changefeed, StartTs: spec.TSO(cp)})
		if err == nil {
			c.notePath(true, "removed (the remove answered after %s, %v) and created again from its checkpoint %s after the remove began",
				removedIn.Round(time.Millisecond), orOK(removeErr), time.Since(start).Round(time.Millisecond))
			return target, nil
		}
		if time.Now().After(deadline) {
			break
		}
		// Still there: the remove's outcome was unknown and it did not
		// happen, or it is still stopping. Remove again (idempotent).
		if errors.Is(err, adminapi.ErrAlreadyExists) && removeErr != nil {
			removeErr = c.API().Remove(ctx, c.cfg.Changefeed)
		}
	}
	return "", fmt.Errorf("changefeed %s was removed (%v) but not created again within %s: %w", c.cfg.Changefeed, orOK(removeErr), lifecycleWait, err)
}

func orOK(err error) any {
	if err == nil {
		return "ok"
	}
	return err
}

// PauseResume pauses the changefeed and resumes it after d, in the
// background. With overwrite, the resume carries --overwrite-checkpoint-ts:
// a checkpoint up to 2 s below the one the changefeed showed before the
// pause (never below the run's start-ts), so the resume replays what the
// sink already holds: duplicates, never loss. It returns what it did.
func (c *Cluster) PauseResume(ctx context.Context, d time.Duration, overwrite bool) (string, error) {
	var ow uint64
	if overwrite {
		info, err := c.API().Get(ctx, c.cfg.Changefeed)
		if err != nil {
			return "", err
		}
		cp := spec.PhysicalMs(info.CheckpointTs)
		ow = max(cp-min(cp, 2000), c.StartTs)
	}
	if err := c.API().Pause(ctx, c.cfg.Changefeed); err != nil {
		return "", err
	}
	time.AfterFunc(d, func() {
		for i := 0; i < 50; i++ {
			rctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			err := c.API().Resume(rctx, c.cfg.Changefeed, spec.TSO(ow))
			cancel()
			if err == nil || c.ctx.Err() != nil {
				return
			}
			time.Sleep(200 * time.Millisecond)
		}
	})
	if overwrite {
		return fmt.Sprintf("%s, then resume --overwrite-checkpoint-ts %d", d, spec.TSO(ow)), nil
	}
	return d.String(), nil
}

// KillOwner kill -9s the owner's capture and waits for another capture to
// win the election (coordinator failover).
func (c *Cluster) KillOwner(ctx context.Context) (string, error) {
	id, _, err := c.Etcd.Owner(ctx)
	if err != nil {
		return "", err
	}
	if _, err := c.KillCapture(id); err != nil {
		return "", err
	}
	start := time.Now()
	for deadline := start.Add(lifecycleWait); time.Now().Before(deadline) && ctx.Err() == nil; time.Sleep(100 * time.Millisecond) {
		if next, _, err := c.Etcd.Owner(ctx); err == nil && next != "" && next != id {
			c.notePath(true, "capture %s became the owner %s after the kill", next, time.Since(start).Round(time.Millisecond))
			return id, nil
		}
	}
	c.notePath(false, "no other capture became the owner within %s", lifecycleWait)
	return id, nil
}
