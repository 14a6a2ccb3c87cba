package address

import (
	"context"
	"fmt"

	"github.com/google/uuid"

	entdb "github.com/payhook/payhook/ent/db"
	"github.com/payhook/payhook/ent/db/payoutrequest"
)

// RequestPayout records the API key's request (of project projectID) to
// send value (coin units, a positive decimal within the coin's decimals) of
// ticker to addr (valid for the ticker's network): a pending payout
// request, as `/{ticker}/payout/request/bulk/` records one per output.
// Every call records a new request.
func (s *Service) RequestPayout(ctx context.Context, apiKeyID, projectID int64, ticker, addr, value string) (*entdb.PayoutRequest, error) {
	t, err := s.Lookup(ticker)
	if err != nil {
		return nil, err
	}
	if err := checkAddress(t, addr); err != nil {
		return nil, err
	}
	v, err := ParseAmount("value", value, t.Decimals)
	if err != nil {
		return nil, err
	}
	now := s.now()
	p, err := s.db.PayoutRequest.Create().
		SetAPIKeyID(apiKeyID).
		SetProjectID(projectID).
		SetUUID(uuid.NewString()).
		SetTicker(t.Ticker).
		SetAddress(addr).
		SetValue(v).
		SetCreatedAt(now).
		SetUpdatedAt(now).
		Save(ctx)
	if err != nil {
		return nil, fmt.Errorf("record payout request: %w", err)
	}
	return p, nil
}

// PayoutRequests returns the payout requests no payout has taken yet, of
// every merchant, oldest first (the operator's list).
func (s *Service) PayoutRequests(ctx context.Context) ([]*entdb.PayoutRequest, error) {
	ps, err := s.db.PayoutRequest.Query().
		Where(payoutrequest.StatusEQ(payoutrequest.StatusPending)).
		Order(entdb.Asc(payoutrequest.FieldCreatedAt), entdb.Asc(payoutrequest.FieldID)).
		All(ctx)
	if err != nil {
		return nil, fmt.Errorf("payout requests: %w", err)
	}
	return ps, nil
}
