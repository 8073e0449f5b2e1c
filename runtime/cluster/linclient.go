package cluster

import (
	"context"
	"errors"
	"fmt"

	"cdcspec/linearizability"
	"cdcspec/runtime/adminapi"
	"cdcspec/spec"
)

// LinClient implements linearizability.Client with the admin API client,
// so porcupine can check the real runtime's admin API. linearizability
// counts ts in ms as impl does; the API speaks TSOs (spec.TSO), so
// LinClient converts both ways.
type LinClient struct{ API *adminapi.Client }

var _ linearizability.Client = LinClient{}

// definite maps the API's refusals to linearizability's definite errors;
// everything else (timeouts, 5xx, forwarding failures) is an unknown outcome.
func definite(err error) error {
	if err == nil {
		return nil
	}
	switch {
	case errors.Is(err, adminapi.ErrNotFound):
		return fmt.Errorf("%w: %v", linearizability.ErrChangefeedNotExists, err)
	case errors.Is(err, adminapi.ErrAlreadyExists):
		return fmt.Errorf("%w: %v", linearizability.ErrChangefeedAlreadyExists, err)
	case errors.Is(err, adminapi.ErrInvalidState):
		return fmt.Errorf("%w: %v", linearizability.ErrChangefeedInvalidState, err)
	case errors.Is(err, adminapi.ErrNotReady):
		// 503 from the owner (or from a capture that knows no owner): the
		// call never reached a coordinator that could apply it.
		var ae *adminapi.APIError
		if errors.As(err, &ae) && ae.Status == 503 {
			return fmt.Errorf("%w: %v", linearizability.ErrRejected, err)
		}
	}
	return err
}

// Create implements linearizability.Client.
func (l LinClient) Create(ctx context.Context, id string, startTs, targetTs uint64) error {
	if targetTs != 0 {
		return fmt.Errorf("%w: target_ts is not supported by the runtime", linearizability.ErrRejected)
	}
	_, err := l.API.Create(ctx, adminapi.CreateRequest{ChangefeedID: id, StartTs: spec.TSO(startTs)})
	return definite(err)
}

// Pause implements linearizability.Client.
func (l LinClient) Pause(ctx context.Context, id string) error { return definite(l.API.Pause(ctx, id)) }

// Resume implements linearizability.Client.
func (l LinClient) Resume(ctx context.Context, id string, overwrite uint64) error {
	return definite(l.API.Resume(ctx, id, spec.TSO(overwrite)))
}

// Remove implements linearizability.Client.
func (l LinClient) Remove(ctx context.Context, id string) error {
	return definite(l.API.Remove(ctx, id))
}

// Get implements linearizability.Client.
func (l LinClient) Get(ctx context.Context, id string) (linearizability.ChangefeedStatus, error) {
	info, err := l.API.Get(ctx, id)
	if err != nil {
		return linearizability.ChangefeedStatus{}, definite(err)
	}
	return linearizability.ChangefeedStatus{State: info.State, CheckpointTs: spec.PhysicalMs(info.CheckpointTs)}, nil
}
