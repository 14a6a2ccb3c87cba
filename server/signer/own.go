package signer

import (
	"context"
	"crypto/ed25519"
	"fmt"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/payhook/payhook/chains"
	signerv1 "github.com/payhook/payhook/gen/payhook/signer/v1"
)

// maxEd25519Keys bounds the indexes one GetEd25519PublicKeys answers.
const maxEd25519Keys = 256

// ownAddresses returns the addresses (destKey) of t that the seed's keys
// refs control, with the operator's, which is always the signer's own:
// money an account-family transaction pays them does not leave. The
// signer derives each itself: the server only names the keys.
func (s *Service) ownAddresses(t chains.Ticker, refs []chains.KeyRef) (map[string]bool, error) {
	out := map[string]bool{}
	op, err := s.cfg.Keys.OperatorAddress(t)
	if err != nil {
		return nil, fmt.Errorf("the operator's address of %s: %w", t.Ticker, err)
	}
	refs = append([]chains.KeyRef{{Operator: true}}, refs...)
	for _, k := range refs {
		addr := op
		if !k.Operator {
			if addr, err = s.address(t, k.Index); err != nil {
				return nil, err
			}
		}
		d, err := destKey(t, addr)
		if err != nil {
			return nil, fmt.Errorf("%s address of %s: %w", t.Ticker, keyName(k), err)
		}
		out[d] = true
	}
	return out, nil
}

// address returns the payment address of t at index, from the seed.
func (s *Service) address(t chains.Ticker, index uint32) (string, error) {
	p, err := t.Rules().KeyPath(t)
	if err != nil {
		return "", err
	}
	if p.Curve == chains.Ed25519 {
		priv, err := s.cfg.Keys.Ed25519(t, index)
		if err != nil {
			return "", fmt.Errorf("%s key %d: %w", t.Ticker, index, err)
		}
		defer clear(priv)
		return t.Rules().Address(t, priv.Public().(ed25519.PublicKey))
	}
	priv, err := s.cfg.Keys.Secp256k1(t, index)
	if err != nil {
		return "", fmt.Errorf("%s key %d: %w", t.Ticker, index, err)
	}
	defer priv.Zero()
	return chains.PubKeyAddress(t, priv.PubKey())
}

// keyName names k in messages.
func keyName(k chains.KeyRef) string {
	if k.Operator {
		return "the operator's key"
	}
	return fmt.Sprintf("key %d", k.Index)
}

// GetEd25519PublicKeys implements SignerService: the public keys of
// indexes start to start+count-1 of an ed25519 key path, and the
// operator's, from the seed.
func (s *Service) GetEd25519PublicKeys(_ context.Context, r *signerv1.GetEd25519PublicKeysRequest) (*signerv1.GetEd25519PublicKeysResponse, error) {
	p := chains.KeyPath{Curve: chains.Ed25519, Purpose: r.GetPath().GetPurpose(), CoinType: r.GetPath().GetCoinType()}
	if r.GetPath() == nil || p.Purpose >= 1<<31 || p.CoinType >= 1<<31 {
		return nil, status.Error(codes.InvalidArgument, "path: want a key path with steps below 2^31")
	}
	if r.GetCount() == 0 || r.GetCount() > maxEd25519Keys {
		return nil, status.Errorf(codes.InvalidArgument, "count: want 1 to %d indexes, got %d", maxEd25519Keys, r.GetCount())
	}
	if uint64(r.GetStart())+uint64(r.GetCount()) > 1<<31 {
		return nil, status.Errorf(codes.InvalidArgument, "start: indexes %d to %d pass 2^31", r.GetStart(), uint64(r.GetStart())+uint64(r.GetCount())-1)
	}
	op, err := s.cfg.Keys.Ed25519At(p, chains.OperatorKey)
	if err != nil {
		return nil, status.Errorf(codes.InvalidArgument, "path: %v", err)
	}
	out := &signerv1.GetEd25519PublicKeysResponse{OperatorPublicKey: op}
	for i := range r.GetCount() {
		pub, err := s.cfg.Keys.Ed25519At(p, chains.KeyRef{Index: r.GetStart() + i})
		if err != nil {
			return nil, status.Errorf(codes.InvalidArgument, "index %d: %v", r.GetStart()+i, err)
		}
		out.PublicKeys = append(out.PublicKeys, pub)
	}
	return out, nil
}
