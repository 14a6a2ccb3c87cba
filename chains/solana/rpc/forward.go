package rpc

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"

	bin "github.com/gagliardetto/binary"
	solana "github.com/gagliardetto/solana-go"
	ata "github.com/gagliardetto/solana-go/programs/associated-token-account"
	"github.com/gagliardetto/solana-go/programs/system"
	"github.com/gagliardetto/solana-go/programs/token"
	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/chains"
)

// Sizes and limits of the Solana runtime the forwards respect.
const (
	// maxTxSize is the largest serialised transaction (the IPv6 MTU less
	// headers).
	maxTxSize = 1232
	// tokenAccountSize and mintSize are the SPL Token program's account
	// sizes.
	tokenAccountSize = 165
	mintSize         = 82
	// codeInvalidParams is JSON-RPC's invalid-params code, which
	// getTokenAccountBalance answers for an account that does not exist.
	codeInvalidParams = -32602
)

// envelope is Signed.Raw: the signed transaction as sendTransaction takes
// it and the block height after which it can never be included, which
// Send needs to tell an expired transaction from a slow one.
type envelope struct {
	// Transaction is the wire transaction, base64.
	Transaction string `json:"transaction"`
	// LastValidBlockHeight is getLatestBlockhash's, for the transaction's
	// blockhash.
	LastValidBlockHeight uint64 `json:"lastValidBlockHeight"`
}

// output is one destination and amount of a checked forward.
type output struct {
	to    solana.PublicKey
	units uint64
}

// checked is a Forward that passed check.
type checked struct {
	from    solana.PublicKey
	outputs []output
	in, out uint64 // sums of the inputs and outputs, in base units
}

// invalid wraps chains.ErrInvalidForward.
func invalid(f chains.Forward, format string, args ...any) error {
	return fmt.Errorf("%w: forward %q: %s", chains.ErrInvalidForward, f.ID, fmt.Sprintf(format, args...))
}

// check validates f without I/O.
func (b *Backend) check(f chains.Forward) (checked, error) {
	t := b.ticker
	var c checked
	if f.ID == "" {
		return c, fmt.Errorf("%w: %s forward without an ID", chains.ErrInvalidForward, t.Ticker)
	}
	if err := chains.ValidateAddress(t, f.From); err != nil {
		return c, invalid(f, "from: %v", err)
	}
	c.from = solana.MustPublicKeyFromBase58(f.From) // validated: 32 bytes of base58
	if len(f.Outputs) == 0 {
		return c, invalid(f, "no outputs")
	}
	if len(f.Inputs) == 0 {
		return c, invalid(f, "no inputs")
	}
	var in, out big.Int
	for i, p := range f.Inputs {
		if p.To != f.From {
			return c, invalid(f, "input %d (%s) pays %s, not the forward's address", i, p.TxID, p.To)
		}
		u, ok := toUnits(t, p.Value)
		if !ok || u.Sign() < 0 {
			return c, invalid(f, "input %d: value %s is not a whole number of base units", i, p.Value)
		}
		in.Add(&in, u)
	}
	for i, o := range f.Outputs {
		if err := chains.ValidateAddress(t, o.Address); err != nil {
			return c, invalid(f, "output %d: %v", i, err)
		}
		if o.Address == f.From {
			return c, invalid(f, "output %d pays the payment address itself", i)
		}
		u, ok := toUnits(t, o.Amount)
		if !ok || u.Sign() <= 0 {
			return c, invalid(f, "output %d: amount %s is not a positive whole number of base units", i, o.Amount)
		}
		out.Add(&out, u)
		c.outputs = append(c.outputs, output{to: solana.MustPublicKeyFromBase58(o.Address), units: u.Uint64()})
	}
	if !in.IsUint64() || !out.IsUint64() {
		return c, invalid(f, "amounts beyond 2^64 base units")
	}
	c.in, c.out = in.Uint64(), out.Uint64()
	if c.in < c.out {
		return c, invalid(f, "inputs (%d base units) do not cover the outputs (%d)", c.in, c.out)
	}
	return c, nil
}

// toUnits returns v in base units of t when it is a whole number of them
// within 64 bits (sign included in the check by the caller).
func toUnits(t chains.Ticker, v decimal.Decimal) (*big.Int, bool) {
	s := v.Shift(t.Decimals)
	if !s.IsInteger() {
		return nil, false
	}
	u := s.BigInt()
	if u.BitLen() > 64 {
		return nil, false
	}
	return u, true
}

// Sign implements chains.Backend. It validates f (errors wrap
// chains.ErrInvalidForward), reads what it needs at the confirmed
// commitment (a recent blockhash, the fee, balances; node errors wrap
// chains.ErrNode), and signs:
//
//   - SOL: one System transfer from From to each output, and one of what
//     remains of the inputs after the outputs and the fee (the service fee
//     and the unspent fee budget) to the operator's address, so the payment
//     address is emptied of the inputs; From pays the fee. Dust left beside
//     other funds on From (below the rent-exempt minimum, which the
//     runtime would refuse) goes to the operator too.
//   - SPL: for each output, an idempotent creation of the destination's
//     associated token account and a TransferChecked from From's
//     associated token account; the operator's address pays the fee and
//     the rent of new accounts (no top-up of From is needed). The service
//     fee stays in From's token account.
//
// Raw is a JSON envelope of the base64 transaction and its last valid
// block height; TxID is its first signature (base58).
func (b *Backend) Sign(ctx context.Context, f chains.Forward) (chains.Signed, error) {
	c, err := b.check(f)
	if err != nil {
		return chains.Signed{}, err
	}
	if b.signer == nil {
		return chains.Signed{}, fmt.Errorf("%w: %s forward %q", ErrWatchOnly, b.ticker.Ticker, f.ID)
	}
	var s chains.Signed
	if b.ticker.Token {
		s, err = b.signToken(ctx, f, c)
	} else {
		s, err = b.signNative(ctx, f, c)
	}
	if err != nil {
		return chains.Signed{}, fmt.Errorf("%s sign: %w", b.ticker.Ticker, err)
	}
	return s, nil
}

func (b *Backend) signNative(ctx context.Context, f chains.Forward, c checked) (chains.Signed, error) {
	op, err := b.operator(ctx)
	if err != nil {
		return chains.Signed{}, err
	}
	rent, err := b.rentExempt(ctx, 0)
	if err != nil {
		return chains.Signed{}, err
	}
	keys := []solana.PublicKey{c.from, op}
	for _, o := range c.outputs {
		keys = append(keys, o.to)
	}
	accts, err := b.accounts(ctx, keys)
	if err != nil {
		return chains.Signed{}, err
	}
	balance := accts[0].lamports()
	bh, err := b.latestBlockhash(ctx)
	if err != nil {
		return chains.Signed{}, err
	}
	build := func(sweep uint64) (*solana.Transaction, error) {
		ixs := make([]solana.Instruction, 0, len(c.outputs)+1)
		for _, o := range c.outputs {
			ixs = append(ixs, transferIx(o.units, c.from, o.to))
		}
		if sweep > 0 {
			ixs = append(ixs, transferIx(sweep, c.from, op))
		}
		return solana.NewTransaction(ixs, bh.hash, solana.TransactionPayer(c.from))
	}
	probe, err := build(1)
	if err != nil {
		return chains.Signed{}, invalid(f, "%v", err)
	}
	fee, err := b.feeFor(ctx, probe)
	if err != nil {
		return chains.Signed{}, err
	}
	if c.in-c.out < fee {
		return chains.Signed{}, invalid(f, "inputs (%d lamports) do not cover the outputs (%d) and the fee (%d)", c.in, c.out, fee)
	}
	if balance < c.in {
		return chains.Signed{}, fmt.Errorf("%w: %s holds %d lamports, the inputs are %d", ErrInsufficientFunds, f.From, balance, c.in)
	}
	sweep := c.in - c.out - fee
	if rest := balance - c.in; rest > 0 && rest < rent {
		sweep += rest
	}
	// What each account receives: a new account must reach the
	// rent-exempt minimum, or the runtime refuses the transaction.
	incoming := map[solana.PublicKey]uint64{}
	for _, o := range c.outputs {
		incoming[o.to] += o.units
	}
	incoming[op] += sweep
	for i, k := range keys[1:] {
		got := incoming[k]
		if accts[i+1] != nil || got == 0 || got >= rent {
			continue
		}
		if k == op {
			return chains.Signed{}, fmt.Errorf("%w: the operator's address %s is empty and would receive %d lamports, below the rent-exempt minimum %d: fund it with at least %d lamports",
				ErrOperatorUnfunded, op, got, rent, rent)
		}
		return chains.Signed{}, invalid(f, "output to %s: %d lamports open a new account, which needs at least %d (rent-exempt minimum)", k, got, rent)
	}
	tx, err := build(sweep)
	if err != nil {
		return chains.Signed{}, invalid(f, "%v", err)
	}
	return b.sign(ctx, f, tx, bh, map[solana.PublicKey]chains.KeyRef{c.from: {Index: f.FromIndex}})
}

func (b *Backend) signToken(ctx context.Context, f chains.Forward, c checked) (chains.Signed, error) {
	decimals, err := b.checkMint(ctx)
	if err != nil {
		return chains.Signed{}, err
	}
	op, err := b.operator(ctx)
	if err != nil {
		return chains.Signed{}, err
	}
	source, _, err := solana.FindAssociatedTokenAddress(c.from, b.mint)
	if err != nil {
		return chains.Signed{}, invalid(f, "associated token account of %s: %v", c.from, err)
	}
	held, err := b.tokenBalance(ctx, source)
	if err != nil {
		return chains.Signed{}, err
	}
	if held < c.out {
		return chains.Signed{}, fmt.Errorf("%w: the token account %s of %s holds %d base units, the outputs are %d", ErrInsufficientFunds, source, f.From, held, c.out)
	}
	// Destinations' associated token accounts, created where missing.
	keys := []solana.PublicKey{op}
	dest := map[solana.PublicKey]solana.PublicKey{}
	for _, o := range c.outputs {
		if _, ok := dest[o.to]; ok {
			continue
		}
		a, _, err := solana.FindAssociatedTokenAddress(o.to, b.mint)
		if err != nil {
			return chains.Signed{}, invalid(f, "associated token account of %s: %v", o.to, err)
		}
		dest[o.to] = a
		keys = append(keys, a)
	}
	accts, err := b.accounts(ctx, keys)
	if err != nil {
		return chains.Signed{}, err
	}
	missing := uint64(0)
	for i, k := range keys[1:] {
		switch a := accts[i+1]; {
		case a == nil:
			missing++
		case a.Owner != solana.TokenProgramID.String():
			return chains.Signed{}, invalid(f, "the associated token account %s exists and is not a token account", k)
		}
	}
	bh, err := b.latestBlockhash(ctx)
	if err != nil {
		return chains.Signed{}, err
	}
	var ixs []solana.Instruction
	created := map[solana.PublicKey]bool{}
	for _, o := range c.outputs {
		if !created[o.to] {
			created[o.to] = true
			ixs = append(ixs, createATAIdempotent(op, o.to, b.mint))
		}
		ixs = append(ixs, token.NewTransferCheckedInstruction(o.units, decimals, source, b.mint, dest[o.to], c.from, nil).Build())
	}
	tx, err := solana.NewTransaction(ixs, bh.hash, solana.TransactionPayer(op))
	if err != nil {
		return chains.Signed{}, invalid(f, "%v", err)
	}
	fee, err := b.feeFor(ctx, tx)
	if err != nil {
		return chains.Signed{}, err
	}
	rentATA, err := b.rentExempt(ctx, tokenAccountSize)
	if err != nil {
		return chains.Signed{}, err
	}
	rent, err := b.rentExempt(ctx, 0)
	if err != nil {
		return chains.Signed{}, err
	}
	need := fee + missing*rentATA
	if have := accts[0].lamports(); have < need+rent {
		return chains.Signed{}, fmt.Errorf("%w: the operator's address %s holds %d lamports; this forward needs %d (fee %d, %d new token accounts at %d) and %d must stay (rent-exempt minimum)",
			ErrOperatorUnfunded, op, have, need, fee, missing, rentATA, rent)
	}
	return b.sign(ctx, f, tx, bh, map[solana.PublicKey]chains.KeyRef{c.from: {Index: f.FromIndex}, op: {Operator: true}})
}

// operator returns the operator's address (the signer's).
func (b *Backend) operator(ctx context.Context) (solana.PublicKey, error) {
	opAddr, err := b.signer.OperatorAddress(ctx, b.ticker)
	if err != nil {
		return solana.PublicKey{}, fmt.Errorf("operator address: %w", err)
	}
	op, err := solana.PublicKeyFromBase58(opAddr)
	if err != nil {
		return solana.PublicKey{}, fmt.Errorf("%w: operator address %s: %v", chains.ErrSignerUnavailable, opAddr, err)
	}
	return op, nil
}

// sign has the signer sign tx's message with the keys of its signers
// (keys) and wraps it in an envelope. Each signature must verify against
// its signer's public key: a key that does not control its account (From
// not the address of FromIndex) is refused.
func (b *Backend) sign(ctx context.Context, f chains.Forward, tx *solana.Transaction, bh recent, keys map[solana.PublicKey]chains.KeyRef) (chains.Signed, error) {
	msg, err := tx.Message.MarshalBinary()
	if err != nil {
		return chains.Signed{}, fmt.Errorf("serialise forward %q: %w", f.ID, err)
	}
	signers := tx.Message.Signers()
	refs := make([]chains.KeyRef, len(signers))
	for i, k := range signers {
		ref, ok := keys[k]
		if !ok {
			return chains.Signed{}, invalid(f, "no key signs for %s", k)
		}
		refs[i] = ref
	}
	sigs, err := b.signer.SignSolana(ctx, chains.SolanaSignRequest{Context: f.SignContext(b.ticker), Message: msg, Keys: refs, Own: f.OwnKeys()})
	if err != nil {
		return chains.Signed{}, fmt.Errorf("sign forward %q: %w", f.ID, err)
	}
	if len(sigs) != len(signers) {
		return chains.Signed{}, fmt.Errorf("%w: sign forward %q: %d signatures for %d signers", chains.ErrSignerUnavailable, f.ID, len(sigs), len(signers))
	}
	tx.Signatures = make([]solana.Signature, len(signers))
	for i, k := range signers {
		if len(sigs[i]) != ed25519.SignatureSize || !ed25519.Verify(k[:], msg, sigs[i]) {
			if refs[i].Operator {
				return chains.Signed{}, fmt.Errorf("%w: sign forward %q: the operator's signature does not verify for %s", chains.ErrSignerUnavailable, f.ID, k)
			}
			return chains.Signed{}, invalid(f, "%s is not the address of key index %d", k, refs[i].Index)
		}
		copy(tx.Signatures[i][:], sigs[i])
	}
	wire, err := tx.MarshalBinary()
	if err != nil {
		return chains.Signed{}, fmt.Errorf("serialise forward %q: %w", f.ID, err)
	}
	if len(wire) > maxTxSize {
		return chains.Signed{}, invalid(f, "%d outputs make a %d-byte transaction, above Solana's %d bytes", len(f.Outputs), len(wire), maxTxSize)
	}
	raw, err := json.Marshal(envelope{Transaction: base64.StdEncoding.EncodeToString(wire), LastValidBlockHeight: bh.lastValid})
	if err != nil {
		return chains.Signed{}, fmt.Errorf("record forward %q: %w", f.ID, err)
	}
	return chains.Signed{TxID: tx.Signatures[0].String(), Raw: raw}, nil
}

// Send implements chains.Backend. It is idempotent on the signature: a
// transaction the node knows (waiting in a slot, confirmed, finalized)
// is not sent again and Send succeeds; one it does not know is sent
// (sendTransaction with preflight at the confirmed commitment), and a node
// that answers "already processed" counts as success.
//
// A transaction can never land once the chain is past its last valid
// block height: when the node does not know the signature and its
// finalized block height is beyond that, Send returns ErrExpired without
// sending (the forward may then be signed again). A transaction the chain
// included but whose execution failed gives ErrFailed. Bytes that are not
// an envelope of this backend, or whose signature is not s.TxID, wrap
// chains.ErrInvalidForward; node errors (including a refused preflight)
// wrap chains.ErrNode.
func (b *Backend) Send(ctx context.Context, s chains.Signed) error {
	env, tx, err := decodeSigned(s)
	if err != nil {
		return fmt.Errorf("%w: %s send: %v", chains.ErrInvalidForward, b.ticker.Ticker, err)
	}
	sig := tx.Signatures[0].String()
	if err := b.send(ctx, env, sig); err != nil {
		return fmt.Errorf("%s send %s: %w", b.ticker.Ticker, sig, err)
	}
	return nil
}

func (b *Backend) send(ctx context.Context, env envelope, sig string) error {
	// The finalized height is read before the status: a node catching up
	// could otherwise not know the signature yet and then report a height
	// past the block that includes it.
	height, err := b.getBlockHeight(ctx, finalized)
	if err != nil {
		return err
	}
	known, err := b.status(ctx, sig)
	if err != nil {
		return err
	}
	if known != nil {
		if failed(known.Err) {
			// Only a failure in a finalized block is final: on a minority
			// fork the same bytes may still land, successfully.
			if known.ConfirmationStatus != nil && *known.ConfirmationStatus == string(finalized) {
				return fmt.Errorf("%w: in slot %d: %s", ErrFailed, *known.Slot, cut(string(known.Err)))
			}
			return nodeError("getSignatureStatuses", "%s failed in slot %d, not yet finalized", sig, *known.Slot)
		}
		return nil
	}
	if uint64(height) > env.LastValidBlockHeight {
		return fmt.Errorf("%w: the finalized block height %d is past its last valid block height %d, and the node never saw it", ErrExpired, height, env.LastValidBlockHeight)
	}
	var got string
	cfg := map[string]any{"encoding": "base64", "preflightCommitment": confirmed}
	err = b.rpc.call(ctx, "sendTransaction", []any{env.Transaction, cfg}, &got)
	var re *RPCError
	if errors.As(err, &re) && re.Reason == "AlreadyProcessed" {
		return nil
	}
	if err != nil {
		return err
	}
	if got != sig {
		return nodeError("sendTransaction", "answered signature %q for %s", cut(got), sig)
	}
	return nil
}

// decodeSigned returns the envelope of s and its transaction, checking
// that the transaction is signed and that its signature is s.TxID.
func decodeSigned(s chains.Signed) (envelope, *solana.Transaction, error) {
	var env envelope
	if err := json.Unmarshal(s.Raw, &env); err != nil || env.Transaction == "" {
		return env, nil, errors.New("not a transaction signed by this backend")
	}
	wire, err := base64.StdEncoding.DecodeString(env.Transaction)
	if err != nil || len(wire) > maxTxSize {
		return env, nil, errors.New("the recorded transaction is not base64 of at most 1232 bytes")
	}
	tx, err := solana.TransactionFromDecoder(bin.NewBinDecoder(wire))
	if err != nil || len(tx.Signatures) == 0 {
		return env, nil, errors.New("the recorded bytes are not a signed Solana transaction")
	}
	if err := tx.VerifySignatures(); err != nil {
		return env, nil, fmt.Errorf("the recorded transaction's signatures do not verify: %v", err)
	}
	if s.TxID != "" && tx.Signatures[0].String() != s.TxID {
		return env, nil, fmt.Errorf("the recorded transaction is %s, not %s", tx.Signatures[0], s.TxID)
	}
	return env, tx, nil
}

// status returns the node's status of sig, nil when it does not know it.
func (b *Backend) status(ctx context.Context, sig string) (*signatureStatus, error) {
	cfg := map[string]any{"searchTransactionHistory": true}
	v, err := callValue[[]*signatureStatus](ctx, b.rpc, "getSignatureStatuses", []any{[]string{sig}, cfg})
	if err != nil {
		return nil, err
	}
	if len(v) != 1 {
		return nil, nodeError("getSignatureStatuses", "%d statuses for 1 signature", len(v))
	}
	if st := v[0]; st != nil && (st.Slot == nil || *st.Slot > 1<<62) {
		return nil, nodeError("getSignatureStatuses", "status without a slot")
	}
	return v[0], nil
}

// recent is a blockhash and its expiry.
type recent struct {
	hash      solana.Hash
	lastValid uint64
}

func (b *Backend) latestBlockhash(ctx context.Context) (recent, error) {
	v, err := callValue[*latestBlockhash](ctx, b.rpc, "getLatestBlockhash", []any{commitment(confirmed)})
	if err != nil {
		return recent{}, err
	}
	if v == nil || v.LastValidBlockHeight == nil {
		return recent{}, nodeError("getLatestBlockhash", "no blockhash in the answer")
	}
	h, err := solana.HashFromBase58(v.Blockhash)
	if err != nil {
		return recent{}, nodeError("getLatestBlockhash", "%v", checkHash(v.Blockhash))
	}
	return recent{hash: h, lastValid: *v.LastValidBlockHeight}, nil
}

// feeFor returns the node's fee for tx's message, in lamports.
func (b *Backend) feeFor(ctx context.Context, tx *solana.Transaction) (uint64, error) {
	msg, err := tx.Message.MarshalBinary()
	if err != nil {
		return 0, fmt.Errorf("serialise message: %w", err)
	}
	fee, err := callValue[*uint64](ctx, b.rpc, "getFeeForMessage", []any{base64.StdEncoding.EncodeToString(msg), commitment(confirmed)})
	if err != nil {
		return 0, err
	}
	if fee == nil {
		return 0, nodeError("getFeeForMessage", "no fee: the node does not know the blockhash it gave")
	}
	if *fee > math.MaxUint32 {
		return 0, nodeError("getFeeForMessage", "implausible fee %d", *fee)
	}
	return *fee, nil
}

// rentExempt returns the minimum balance of an account of size bytes.
func (b *Backend) rentExempt(ctx context.Context, size int) (uint64, error) {
	var v *uint64
	if err := b.rpc.call(ctx, "getMinimumBalanceForRentExemption", []any{size, commitment(confirmed)}, &v); err != nil {
		return 0, err
	}
	if v == nil || *v > math.MaxUint32 {
		return 0, nodeError("getMinimumBalanceForRentExemption", "no plausible balance in the answer")
	}
	return *v, nil
}

// lamports returns a's balance, 0 for a missing account.
func (a *accountInfo) lamports() uint64 {
	if a == nil {
		return 0
	}
	return a.Lamports
}

// accounts returns the accounts of keys (nil where none exists), without
// their data.
func (b *Backend) accounts(ctx context.Context, keys []solana.PublicKey) ([]*accountInfo, error) {
	ks := make([]string, len(keys))
	for i, k := range keys {
		ks[i] = k.String()
	}
	cfg := commitment(confirmed, "encoding", "base64", "dataSlice", map[string]int{"offset": 0, "length": 0})
	v, err := callValue[[]*accountInfo](ctx, b.rpc, "getMultipleAccounts", []any{ks, cfg})
	if err != nil {
		return nil, err
	}
	if len(v) != len(keys) {
		return nil, nodeError("getMultipleAccounts", "%d accounts for %d keys", len(v), len(keys))
	}
	return v, nil
}

// tokenBalance returns the token account's amount, 0 when it does not
// exist.
func (b *Backend) tokenBalance(ctx context.Context, account solana.PublicKey) (uint64, error) {
	amount, err := callValue[*uiTokenAmount](ctx, b.rpc, "getTokenAccountBalance", []any{account.String(), commitment(confirmed)})
	var re *RPCError
	if errors.As(err, &re) && re.Code == codeInvalidParams {
		return 0, nil // "could not find account"
	}
	if err != nil {
		return 0, err
	}
	if amount == nil {
		return 0, nodeError("getTokenAccountBalance", "no amount in the answer")
	}
	v, err := strconv.ParseUint(amount.Amount, 10, 64)
	if err != nil {
		return 0, nodeError("getTokenAccountBalance", "amount %q", cut(amount.Amount))
	}
	return v, nil
}

// checkMint checks, once per backend, that the mint is an initialised SPL
// Token mint with the ticker's decimals, and returns the decimals. A
// missing or different mint wraps chains.ErrWrongNetwork: the node is not
// on the network the mint was configured for.
func (b *Backend) checkMint(ctx context.Context) (uint8, error) {
	decimals := uint8(b.ticker.Decimals)
	b.mu.Lock()
	ok := b.mintOK
	b.mu.Unlock()
	if ok {
		return decimals, nil
	}
	a, err := callValue[*accountInfo](ctx, b.rpc, "getAccountInfo", []any{b.mint.String(), commitment(confirmed, "encoding", "base64")})
	if err != nil {
		return 0, err
	}
	if a == nil {
		return 0, fmt.Errorf("%w: the mint %s does not exist on this node's network", chains.ErrWrongNetwork, b.mint)
	}
	if a.Owner != solana.TokenProgramID.String() {
		return 0, fmt.Errorf("%w: the mint %s belongs to program %s, not the SPL Token program", chains.ErrWrongNetwork, b.mint, cut(a.Owner))
	}
	data, err := base64.StdEncoding.DecodeString(a.Data[0])
	if err != nil || a.Data[1] != "base64" || len(data) != mintSize {
		return 0, fmt.Errorf("%w: the account %s is not an SPL Token mint", chains.ErrWrongNetwork, b.mint)
	}
	var m token.Mint
	if err := bin.NewBinDecoder(data).Decode(&m); err != nil || !m.IsInitialized {
		return 0, fmt.Errorf("%w: the account %s is not an initialised SPL Token mint", chains.ErrWrongNetwork, b.mint)
	}
	if m.Decimals != decimals {
		return 0, fmt.Errorf("%w: the mint %s has %d decimals, the ticker %s has %d", chains.ErrWrongNetwork, b.mint, m.Decimals, b.ticker.Ticker, decimals)
	}
	b.mu.Lock()
	b.mintOK = true
	b.mu.Unlock()
	return decimals, nil
}

// transferIx is a System Program transfer.
func transferIx(lamports uint64, from, to solana.PublicKey) solana.Instruction {
	return system.NewTransferInstruction(lamports, from, to).Build()
}

// createATAIdempotent is the Associated Token Account program's
// CreateIdempotent (instruction 1): it creates wallet's associated token
// account for mint, paid by payer, and succeeds when it exists already.
// solana-go builds only Create (instruction 0, which fails on an existing
// account); the accounts are the same.
func createATAIdempotent(payer, wallet, mint solana.PublicKey) solana.Instruction {
	ix := ata.NewCreateInstruction(payer, wallet, mint).Build()
	return solana.NewInstruction(solana.SPLAssociatedTokenAccountProgramID, ix.Accounts(), []byte{1})
}
