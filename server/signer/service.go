package signer

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/btcsuite/btcd/wire"
	"github.com/shopspring/decimal"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/status"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/chains/keysign"
	signerv1 "github.com/payhook/payhook/gen/payhook/signer/v1"
	"github.com/payhook/payhook/internal/clock"
)

// maxPaths bounds the key paths one GetPublicKeys asks for.
const maxPaths = 64

// Config configures a Service.
type Config struct {
	// Keys is the seed the service signs with.
	Keys *chains.Keys
	// Registry resolves the tickers requests name.
	Registry *chains.Registry
	// Policy is what the service signs.
	Policy *Policy
	// StateFile keeps the daily caps' state (see state).
	StateFile string
	// Now is the clock; clock.Now when nil.
	Now func() time.Time
}

// Service is the SignerService: keysign.Local behind a Policy.
type Service struct {
	signerv1.UnimplementedSignerServiceServer

	cfg    Config
	local  *keysign.Local
	logger *slog.Logger

	mu    sync.Mutex // serialises authorize: check, sign, record
	state *state
}

// NewService returns a Service, its caps' state read from cfg.StateFile.
func NewService(cfg Config, logger *slog.Logger) (*Service, error) {
	if cfg.Keys == nil || cfg.Registry == nil || cfg.Policy == nil || cfg.StateFile == "" {
		return nil, errors.New("signer: keys, registry, policy and state file are required")
	}
	if cfg.Now == nil {
		cfg.Now = clock.Now
	}
	st, err := loadState(cfg.StateFile)
	if err != nil {
		return nil, err
	}
	return &Service{cfg: cfg, local: keysign.New(cfg.Keys), logger: logger, state: st}, nil
}

// GetPublicKeys implements SignerService.
func (s *Service) GetPublicKeys(_ context.Context, r *signerv1.GetPublicKeysRequest) (*signerv1.GetPublicKeysResponse, error) {
	if len(r.GetPaths()) == 0 || len(r.GetPaths()) > maxPaths {
		return nil, status.Errorf(codes.InvalidArgument, "paths: want 1 to %d key paths, got %d", maxPaths, len(r.GetPaths()))
	}
	out := &signerv1.GetPublicKeysResponse{}
	for i, p := range r.GetPaths() {
		path := chains.KeyPath{Curve: chains.Secp256k1, Purpose: p.GetPurpose(), CoinType: p.GetCoinType()}
		if path.Purpose >= 1<<31 || path.CoinType >= 1<<31 {
			return nil, status.Errorf(codes.InvalidArgument, "paths[%d]: steps must be below 2^31", i)
		}
		ext, err := s.cfg.Keys.ExternalPublic(path)
		if err != nil {
			return nil, status.Errorf(codes.InvalidArgument, "paths[%d]: %v", i, err)
		}
		op, err := s.cfg.Keys.OperatorPublic(path)
		if err != nil {
			return nil, status.Errorf(codes.InvalidArgument, "paths[%d]: %v", i, err)
		}
		out.Keys = append(out.Keys, &signerv1.PublicKeys{Path: p, ExternalXpub: ext.String(), OperatorPublicKey: op.SerializeCompressed()})
	}
	return out, nil
}

// SignUtxo implements SignerService: the request is checked against the
// seed (keysign.Local.CheckUTXO: each input's key controls it, each own
// output pays its key), then against the policy (every other output pays
// an allowed destination of the project and ticker, and the day's total
// stays within the cap, one transaction counted once however often it is
// signed), then signed; what it counted is recorded durably before the
// signature is answered.
func (s *Service) SignUtxo(_ context.Context, r *signerv1.SignUtxoRequest) (*signerv1.SignUtxoResponse, error) {
	t, sc, err := s.context(r.GetContext(), familyUTXO)
	if err != nil {
		return nil, err
	}
	req := chains.UTXOSignRequest{Context: sc, Tx: r.GetTx()}
	for _, in := range r.GetInputs() {
		req.Inputs = append(req.Inputs, chains.UTXOInput{Value: in.GetValue(), Script: in.GetScript(), Key: in.GetKey()})
	}
	for _, o := range r.GetOwn() {
		req.Own = append(req.Own, chains.UTXOOwnOutput{Output: int(o.GetOutput()), Key: keyRef(o.GetKey())})
	}
	u, err := s.local.CheckUTXO(req)
	if err != nil {
		return nil, status.Error(codes.InvalidArgument, err.Error())
	}
	outs := make([]output, len(u.Tx.TxOut))
	for i, o := range u.Tx.TxOut {
		outs[i] = output{dest: string(o.PkScript), name: scriptName(t, o.PkScript), value: decimal.New(o.Value, -t.Decimals), own: u.Own[i]}
	}
	// The fee is what the inputs bring beyond the outputs. (A legacy input
	// of a coin without SIGHASH_FORKID does not commit to its value: a
	// server that understates it gets a transaction the network refuses
	// or one that pays less fee than it says, never more than checked
	// here by more than it lied.)
	fee := decimal.Zero
	for _, in := range r.GetInputs() {
		fee = fee.Add(decimal.New(in.GetValue(), -t.Decimals))
	}
	for _, o := range outs {
		fee = fee.Sub(o.value)
	}
	signed, err := authorize(s, t, sc, outs, fee, u.Tx.TxHash().String(), func() ([]byte, error) { return u.Sign(sc) })
	if err != nil {
		return nil, err
	}
	s.logger.Info("signed", "ticker", t.Ticker, "project", sc.ProjectID, "purpose", sc.Purpose, "key", sc.Key, "txid", signedTxID(signed))
	return &signerv1.SignUtxoResponse{Tx: signed}, nil
}

// context checks a request's context: its outbound key, a ticker of the
// family the method signs, on the network the policy configures for it.
// It returns the ticker on that network and the context as chains sees
// it; errors are gRPC statuses.
func (s *Service) context(c *signerv1.SignContext, want family) (chains.Ticker, chains.SignContext, error) {
	if c.GetKey() == "" {
		return chains.Ticker{}, chains.SignContext{}, status.Error(codes.InvalidArgument, "context.key: the outbound key is required (the signer logs what each signature is for)")
	}
	t, ok := s.cfg.Registry.Lookup(c.GetTicker())
	if !ok {
		return chains.Ticker{}, chains.SignContext{}, status.Errorf(codes.InvalidArgument, "context.ticker: unknown ticker %q", c.GetTicker())
	}
	if got := familyOf(t); got != want {
		return chains.Ticker{}, chains.SignContext{}, status.Errorf(codes.InvalidArgument, "context.ticker: %s is of the %s family, and this method signs the %s family", t.Ticker, got, want)
	}
	t, err := s.cfg.Policy.ticker(s.cfg.Registry, t.Ticker)
	if err != nil {
		return chains.Ticker{}, chains.SignContext{}, status.Errorf(codes.InvalidArgument, "context.ticker: %v", err)
	}
	// The registry spells mainnet "" (Ticker.Net); so may the server.
	if asked, have := netName(chains.Net(c.GetNet())), netName(t.Net); asked != have {
		return chains.Ticker{}, chains.SignContext{}, status.Error(codes.PermissionDenied, fmt.Errorf("%w: %s: the signer's policy has it on %s; the server asked for %s", chains.ErrSignerRefused, t.Ticker, have, asked).Error())
	}
	return t, chains.SignContext{Ticker: t, Purpose: c.GetPurpose(), ProjectID: c.GetProjectId(), Key: c.GetKey()}, nil
}

// authorize checks outs, the recipients of one transaction identified by
// txKey (a hash of its unsigned form), against the policy of sc's project
// and t, and the day's cap, and fee, the most the transaction may pay the
// network in the chain's native coin, against the policy's max_fee; then
// signs (sign) and records what it counted before the signature is
// answered. Errors are gRPC statuses.
func authorize[R any](s *Service, t chains.Ticker, sc chains.SignContext, outs []output, fee decimal.Decimal, txKey string, sign func() (R, error)) (R, error) {
	var zero R
	log := s.logger.With("ticker", t.Ticker, "project", sc.ProjectID, "purpose", sc.Purpose, "key", sc.Key)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.state.roll(s.cfg.Now().UTC().Format(time.DateOnly))
	leaving, rule, err := s.cfg.Policy.leaving(t, sc.ProjectID, outs)
	if err != nil {
		log.Warn("refused", "reason", err.Error())
		return zero, status.Error(codes.PermissionDenied, err.Error())
	}
	if rule.maxFee != nil && fee.GreaterThan(*rule.maxFee) {
		err := fmt.Errorf("%w: the transaction may pay the network up to %s of the chain's native coin, and project %d's %s policy allows at most %s a transaction",
			chains.ErrSignerRefused, fee, sc.ProjectID, t.Ticker, rule.maxFee)
		log.Warn("refused", "reason", err.Error())
		return zero, status.Error(codes.PermissionDenied, err.Error())
	}
	spentKey := fmt.Sprintf("%d/%s", sc.ProjectID, t.Ticker)
	// One transaction counts once, whatever key it comes under; the same
	// key with another transaction counts again.
	counted := s.state.Txs[txKey]
	extra := decimal.Max(decimal.Zero, leaving.Sub(counted))
	spent := s.state.Spent[spentKey]
	if spent.Add(extra).GreaterThan(rule.cap) {
		err := fmt.Errorf("%w: project %d may send at most %s %s a day (UTC); %s left today, and this transaction sends %s",
			chains.ErrSignerRefused, sc.ProjectID, rule.cap, t.Ticker, decimal.Max(decimal.Zero, rule.cap.Sub(spent)), leaving)
		log.Warn("refused", "reason", err.Error())
		return zero, status.Error(codes.PermissionDenied, err.Error())
	}
	signed, err := sign()
	if err != nil {
		return zero, status.Error(codes.InvalidArgument, err.Error())
	}
	if extra.Sign() > 0 {
		s.state.Spent[spentKey] = spent.Add(extra)
		s.state.Txs[txKey] = counted.Add(extra)
		if err := s.state.save(s.cfg.StateFile); err != nil {
			// Unrecorded, the signature is not handed out.
			s.state.Spent[spentKey], s.state.Txs[txKey] = spent, counted
			log.Error("the cap's state could not be recorded; nothing signed", "err", err.Error())
			return zero, status.Error(codes.Unavailable, "the signer could not record its state; try again")
		}
	}
	log.Info("authorized", "tx", txKey, "leaving", leaving.String(), "spent_today", s.state.Spent[spentKey].String(), "cap", rule.cap.String())
	return signed, nil
}

// keyRef is k as chains names it.
func keyRef(k *signerv1.KeyRef) chains.KeyRef {
	return chains.KeyRef{Operator: k.GetOperator(), Index: k.GetIndex()}
}

// keyRefs is ks as chains names them.
func keyRefs(ks []*signerv1.KeyRef) []chains.KeyRef {
	out := make([]chains.KeyRef, len(ks))
	for i, k := range ks {
		out[i] = keyRef(k)
	}
	return out
}

// NewGRPCServer returns the gRPC server of svc over mutual TLS (tc, from
// ServerTLS). Serve it on a listener; GracefulStop it.
func NewGRPCServer(svc *Service, tc *tls.Config) *grpc.Server {
	gs := grpc.NewServer(grpc.Creds(credentials.NewTLS(tc)))
	signerv1.RegisterSignerServiceServer(gs, svc)
	return gs
}

// signedTxID is the id of the signed transaction raw, for the log.
func signedTxID(raw []byte) string {
	var tx wire.MsgTx
	if err := tx.Deserialize(bytes.NewReader(raw)); err != nil {
		return ""
	}
	return tx.TxHash().String()
}

// netName is n, mainnet for "".
func netName(n chains.Net) chains.Net {
	if n == "" {
		return chains.Mainnet
	}
	return n
}
