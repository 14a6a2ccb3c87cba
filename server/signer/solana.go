package signer

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/big"

	bin "github.com/gagliardetto/binary"
	solana "github.com/gagliardetto/solana-go"
	ata "github.com/gagliardetto/solana-go/programs/associated-token-account"
	"github.com/gagliardetto/solana-go/programs/system"
	"github.com/gagliardetto/solana-go/programs/token"
	"github.com/shopspring/decimal"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/payhook/payhook/chains"
	signerv1 "github.com/payhook/payhook/gen/payhook/signer/v1"
)

// maxSolanaMessage bounds a Solana message to sign: a whole transaction,
// signatures included, is at most 1232 bytes.
const maxSolanaMessage = 1232

// solanaFeePerSignature is Solana's base fee, in lamports per signature.
const solanaFeePerSignature = 5000

// lamportDecimals are SOL's decimals: a System transfer's lamports are
// counted in SOL whatever the ticker.
const lamportDecimals = 9

// createIdempotent is the Associated Token Account program's
// CreateIdempotent instruction data. solana-go decodes that program's
// instructions without looking at the data (it knows only Create), so the
// signer compares it.
var createIdempotent = []byte{1}

// SignSolana implements SignerService. The message must be a legacy
// Solana message (solana-go parses it; it must serialise back to the same
// bytes) whose signers are, in order, the public keys of the keys the
// request names, derived here from the seed; its fee payer, the first
// signer, is then one of the seed's own. Its instructions must be what
// payhook's Solana backend (chains/solana/rpc) builds, and each is checked
// against the policy:
//
//   - System transfers from a signer: the recipient is an output in SOL
//     (under a token's policy only to the seed's own keys: a top-up).
//   - The Associated Token Account program's CreateIdempotent, under a
//     token's policy only: for the policy's mint, paid by an own key, for
//     a wallet that is an allowed destination or an own key.
//   - SPL Token TransferChecked of the policy's mint with the ticker's
//     decimals, authorised by a signer, to the associated token account of
//     an allowed destination or of an own key: that wallet is an output in
//     the ticker's units.
//
// Anything else (another program or instruction, extra accounts, a token
// instruction under the native ticker) is refused. The own keys are the
// operator's, those the request names (Own) and the signers'. The daily
// cap counts one message once, by its SHA-256.
func (s *Service) SignSolana(ctx context.Context, r *signerv1.SignSolanaRequest) (*signerv1.SignSolanaResponse, error) {
	t, sc, err := s.context(r.GetContext(), familySolana)
	if err != nil {
		return nil, err
	}
	raw := r.GetMessage()
	if len(raw) == 0 || len(raw) > maxSolanaMessage {
		return nil, status.Errorf(codes.InvalidArgument, "message: a message of %d bytes (a Solana transaction has at most %d)", len(raw), maxSolanaMessage)
	}
	msg, err := parseSolanaMessage(raw)
	if err != nil {
		return nil, status.Errorf(codes.InvalidArgument, "message: %v", err)
	}
	keys := keyRefs(r.GetKeys())
	if err := s.checkSolanaSigners(t, msg, keys); err != nil {
		return nil, err
	}
	own, err := s.ownAddresses(t, append(keyRefs(r.GetOwn()), keys...))
	if err != nil {
		return nil, status.Errorf(codes.InvalidArgument, "own: %v", err)
	}
	if payer := msg.AccountKeys[0].String(); !own[payer] {
		return nil, status.Errorf(codes.InvalidArgument, "message: the fee payer %s is none of the seed's keys", payer)
	}
	outs, err := s.solanaOutputs(t, sc.ProjectID, msg, own)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(raw)
	txKey := hex.EncodeToString(sum[:])
	// The fee: 5,000 lamports a signature (the signer accepts no compute
	// budget instruction, so no priority fee).
	fee := decimal.New(solanaFeePerSignature*int64(len(keys)), -nativeDecimals(t))
	sigs, err := authorize(s, t, sc, outs, fee, txKey, func() ([][]byte, error) {
		return s.local.SignSolana(ctx, chains.SolanaSignRequest{Context: sc, Message: raw, Keys: keys, Own: keyRefs(r.GetOwn())})
	})
	if err != nil {
		return nil, err
	}
	s.logger.Info("signed", "ticker", t.Ticker, "project", sc.ProjectID, "purpose", sc.Purpose, "key", sc.Key, "message", txKey)
	return &signerv1.SignSolanaResponse{Signatures: sigs}, nil
}

// parseSolanaMessage parses raw, a legacy message (payhook builds no
// other), and checks what solana-go's accessors assume: a header that fits
// the account keys, no key twice (the runtime refuses that too, and a
// key's flags are read by its first place), and instructions whose indexes
// name account keys. raw must be exactly the message's serialisation, so
// that what is checked is what is signed.
func parseSolanaMessage(raw []byte) (*solana.Message, error) {
	var m solana.Message
	if err := m.UnmarshalWithDecoder(bin.NewBinDecoder(raw)); err != nil {
		return nil, fmt.Errorf("not a Solana message: %v", err)
	}
	if m.IsVersioned() {
		return nil, fmt.Errorf("a versioned message (v%d); the signer signs legacy messages, which payhook builds", m.GetVersion())
	}
	if back, err := m.MarshalBinary(); err != nil || !bytes.Equal(back, raw) {
		return nil, fmt.Errorf("%d bytes that are not a message's exact serialisation (trailing or non-canonical bytes)", len(raw))
	}
	h, n := m.Header, len(m.AccountKeys)
	if h.NumRequiredSignatures == 0 || int(h.NumRequiredSignatures) > n ||
		h.NumReadonlySignedAccounts >= h.NumRequiredSignatures || int(h.NumReadonlyUnsignedAccounts) > n-int(h.NumRequiredSignatures) {
		return nil, fmt.Errorf("header %d/%d/%d does not fit %d account keys (a writable fee payer first)",
			h.NumRequiredSignatures, h.NumReadonlySignedAccounts, h.NumReadonlyUnsignedAccounts, n)
	}
	seen := make(map[solana.PublicKey]bool, n)
	for _, k := range m.AccountKeys {
		if seen[k] {
			return nil, fmt.Errorf("account key %s appears twice", k)
		}
		seen[k] = true
	}
	for i, ix := range m.Instructions {
		if int(ix.ProgramIDIndex) >= n {
			return nil, fmt.Errorf("instruction %d: program index %d beyond %d account keys", i, ix.ProgramIDIndex, n)
		}
		for _, a := range ix.Accounts {
			if int(a) >= n {
				return nil, fmt.Errorf("instruction %d: account index %d beyond %d account keys", i, a, n)
			}
		}
	}
	return &m, nil
}

// checkSolanaSigners checks that keys are msg's signers in order: as many
// as the signatures it requires, each the public key the seed derives for
// the key at that place. Errors are gRPC statuses.
func (s *Service) checkSolanaSigners(t chains.Ticker, msg *solana.Message, keys []chains.KeyRef) error {
	if n := int(msg.Header.NumRequiredSignatures); n != len(keys) {
		return status.Errorf(codes.InvalidArgument, "keys: %d keys for a message that %d signatures sign", len(keys), n)
	}
	path, err := t.Rules().KeyPath(t)
	if err != nil {
		return status.Errorf(codes.InvalidArgument, "context.ticker: %v", err)
	}
	for i, k := range keys {
		pub, err := s.cfg.Keys.Ed25519At(path, k)
		if err != nil {
			return status.Errorf(codes.InvalidArgument, "keys[%d]: %s: %v", i, keyName(k), err)
		}
		if signer := msg.AccountKeys[i]; !bytes.Equal(pub, signer[:]) {
			return status.Errorf(codes.InvalidArgument, "keys[%d]: %s is %s, and the message's signer %d is %s",
				i, keyName(k), solana.PublicKeyFromBytes(pub), i, signer)
		}
	}
	return nil
}

// solanaOutputs walks msg's instructions and returns what they pay, for
// the policy (Policy.leaving): one output per transfer, and one of no
// value per associated token account created, whose wallet must be
// allowed or own like a recipient. Errors are gRPC statuses: an
// instruction payhook does not build is INVALID_ARGUMENT, another mint
// PERMISSION_DENIED.
func (s *Service) solanaOutputs(t chains.Ticker, project int64, msg *solana.Message, own map[string]bool) ([]output, error) {
	metas, err := msg.AccountMetaList()
	if err != nil {
		return nil, status.Errorf(codes.InvalidArgument, "message: %v", err)
	}
	w := solanaWalk{t: t, own: own}
	if t.Token {
		if w.mint, w.atas, err = s.tokenAccounts(t, project, own); err != nil {
			return nil, err
		}
	}
	var outs []output
	for i, ix := range msg.Instructions {
		accts := make([]*solana.AccountMeta, len(ix.Accounts))
		for j, a := range ix.Accounts {
			accts[j] = metas[a]
		}
		var o output
		switch program := msg.AccountKeys[ix.ProgramIDIndex]; program {
		case solana.SystemProgramID:
			o, err = w.system(i, accts, ix.Data)
		case solana.SPLAssociatedTokenAccountProgramID:
			o, err = w.createATA(i, accts, ix.Data)
		case solana.TokenProgramID:
			o, err = w.transferChecked(i, accts, ix.Data)
		default:
			err = status.Errorf(codes.InvalidArgument, "instruction %d: calls program %s; the signer signs System transfers, associated token account creations and SPL Token TransferChecked only", i, program)
		}
		if err != nil {
			return nil, err
		}
		outs = append(outs, o)
	}
	return outs, nil
}

// tokenAccounts returns the policy's mint of t and the associated token
// accounts of that mint of project's allowed destinations and of the own
// addresses, each mapped to its wallet.
func (s *Service) tokenAccounts(t chains.Ticker, project int64, own map[string]bool) (solana.PublicKey, map[solana.PublicKey]string, error) {
	contract, err := s.cfg.Policy.contract(t)
	if err != nil {
		return solana.PublicKey{}, nil, status.Errorf(codes.PermissionDenied, "%v: %v", chains.ErrSignerRefused, err)
	}
	mint, err := solana.PublicKeyFromBase58(contract)
	if err != nil {
		return solana.PublicKey{}, nil, status.Errorf(codes.PermissionDenied, "%v: %s's mint %q: %v", chains.ErrSignerRefused, t.Ticker, contract, err)
	}
	atas := map[solana.PublicKey]string{}
	wallets := append([]string(nil), s.cfg.Policy.destinations(t, project)...)
	for a := range own {
		wallets = append(wallets, a)
	}
	for _, a := range wallets {
		wallet, err := solana.PublicKeyFromBase58(a)
		if err != nil {
			return solana.PublicKey{}, nil, status.Errorf(codes.Internal, "address %s: %v", a, err)
		}
		acct, _, err := solana.FindAssociatedTokenAddress(wallet, mint)
		if err != nil {
			return solana.PublicKey{}, nil, status.Errorf(codes.Internal, "the associated token account of %s: %v", a, err)
		}
		atas[acct] = a
	}
	return mint, atas, nil
}

// solanaWalk checks the instructions of one message of ticker t.
type solanaWalk struct {
	t chains.Ticker
	// own are the seed's own addresses (ownAddresses).
	own map[string]bool
	// mint is the policy's mint of a token; atas maps the associated
	// token accounts of that mint of the allowed destinations and own
	// addresses to their wallets.
	mint solana.PublicKey
	atas map[solana.PublicKey]string
}

// system checks a System Program instruction: a Transfer from a signer.
func (w solanaWalk) system(i int, accts []*solana.AccountMeta, data []byte) (output, error) {
	inst := new(system.Instruction)
	if err := bin.NewBinDecoder(data).Decode(inst); err != nil {
		return output{}, status.Errorf(codes.InvalidArgument, "instruction %d: System Program: %v", i, err)
	}
	tr, ok := inst.Impl.(*system.Transfer)
	if !ok {
		return output{}, status.Errorf(codes.InvalidArgument, "instruction %d: System Program %s; the signer signs its Transfer only", i, system.InstructionIDToName(inst.TypeID.Uint32()))
	}
	if tr.Lamports == nil || len(accts) != 2 || canonical(data, inst.Data) != nil {
		return output{}, status.Errorf(codes.InvalidArgument, "instruction %d: a System Transfer with %d accounts and %d bytes of data, not the 2 and 12 payhook builds", i, len(accts), len(data))
	}
	if err := tr.SetAccounts(accts); err != nil {
		return output{}, status.Errorf(codes.InvalidArgument, "instruction %d: System Transfer: %v", i, err)
	}
	from, to := tr.GetFundingAccount(), tr.GetRecipientAccount()
	if !from.IsSigner {
		return output{}, status.Errorf(codes.InvalidArgument, "instruction %d: a System Transfer from %s, which does not sign the message", i, from.PublicKey)
	}
	dest := to.PublicKey.String()
	o := output{dest: dest, name: dest, value: decimal.NewFromBigInt(new(big.Int).SetUint64(*tr.Lamports), -lamportDecimals), own: w.own[dest]}
	if w.t.Token && !o.own {
		// SOL under a token's policy: only a top-up of the seed's own
		// address is signed.
		return output{}, status.Errorf(codes.PermissionDenied, "%v: instruction %d: a %s transaction pays SOL to %s, which is none of the seed's own keys (only top-ups to them are signed under a token)",
			chains.ErrSignerRefused, i, w.t.Ticker, dest)
	}
	return o, nil
}

// createATA checks an Associated Token Account program instruction: a
// CreateIdempotent of the policy's mint, paid by an own key, for a wallet
// the policy allows or an own one. Its output has no value: the rent it
// moves into the new account (about 0.002 SOL, paid by an own key) stays
// with the wallet's token account and is not counted against the cap,
// which is in the token's units.
func (w solanaWalk) createATA(i int, accts []*solana.AccountMeta, data []byte) (output, error) {
	if !w.t.Token {
		return output{}, status.Errorf(codes.InvalidArgument, "instruction %d: an Associated Token Account instruction under %s, a native coin; the signer signs token instructions under a token's ticker only", i, w.t.Ticker)
	}
	if !bytes.Equal(data, createIdempotent) || len(accts) != 6 {
		return output{}, status.Errorf(codes.InvalidArgument, "instruction %d: an Associated Token Account instruction with data %x and %d accounts; the signer signs CreateIdempotent (data 01, 6 accounts) only", i, data, len(accts))
	}
	inst, err := ata.DecodeInstruction(accts, data)
	if err != nil {
		return output{}, status.Errorf(codes.InvalidArgument, "instruction %d: Associated Token Account: %v", i, err)
	}
	c, ok := inst.Impl.(*ata.Create)
	if !ok {
		return output{}, status.Errorf(codes.InvalidArgument, "instruction %d: Associated Token Account: not a creation", i)
	}
	if c.Mint != w.mint {
		return output{}, status.Errorf(codes.PermissionDenied, "%v: instruction %d: creates a token account of mint %s, not %s's mint %s", chains.ErrSignerRefused, i, c.Mint, w.t.Ticker, w.mint)
	}
	if payer := c.Payer.String(); !w.own[payer] {
		return output{}, status.Errorf(codes.InvalidArgument, "instruction %d: a token account's rent paid by %s, which is none of the seed's keys", i, payer)
	}
	want, _, err := solana.FindAssociatedTokenAddress(c.Wallet, c.Mint)
	if err != nil || accts[1].PublicKey != want || accts[4].PublicKey != solana.SystemProgramID || accts[5].PublicKey != solana.TokenProgramID {
		return output{}, status.Errorf(codes.InvalidArgument, "instruction %d: creates %s for %s with programs %s and %s, not its associated token account of the SPL Token program",
			i, accts[1].PublicKey, c.Wallet, accts[4].PublicKey, accts[5].PublicKey)
	}
	wallet := c.Wallet.String()
	return output{dest: wallet, name: fmt.Sprintf("%s (instruction %d creates its token account)", wallet, i), value: decimal.Zero, own: w.own[wallet]}, nil
}

// transferChecked checks an SPL Token instruction: a TransferChecked of
// the policy's mint, with the ticker's decimals, authorised by a signer,
// to the associated token account of an allowed destination or own
// address; the output is that wallet.
func (w solanaWalk) transferChecked(i int, accts []*solana.AccountMeta, data []byte) (output, error) {
	if !w.t.Token {
		return output{}, status.Errorf(codes.InvalidArgument, "instruction %d: an SPL Token instruction under %s, a native coin; the signer signs token instructions under a token's ticker only", i, w.t.Ticker)
	}
	inst := new(token.Instruction)
	if err := bin.NewBinDecoder(data).Decode(inst); err != nil {
		return output{}, status.Errorf(codes.InvalidArgument, "instruction %d: SPL Token: %v", i, err)
	}
	tc, ok := inst.Impl.(*token.TransferChecked)
	if !ok {
		return output{}, status.Errorf(codes.InvalidArgument, "instruction %d: SPL Token %s; the signer signs its TransferChecked only", i, token.InstructionIDToName(inst.TypeID.Uint8()))
	}
	if tc.Amount == nil || tc.Decimals == nil || len(accts) != 4 || canonical(data, inst.Data) != nil {
		return output{}, status.Errorf(codes.InvalidArgument, "instruction %d: a TransferChecked with %d accounts and %d bytes of data, not the 4 and 10 payhook builds", i, len(accts), len(data))
	}
	if err := tc.SetAccounts(accts); err != nil {
		return output{}, status.Errorf(codes.InvalidArgument, "instruction %d: SPL Token TransferChecked: %v", i, err)
	}
	if mint := tc.GetMintAccount().PublicKey; mint != w.mint {
		return output{}, status.Errorf(codes.PermissionDenied, "%v: instruction %d: transfers mint %s, not %s's mint %s", chains.ErrSignerRefused, i, mint, w.t.Ticker, w.mint)
	}
	if int32(*tc.Decimals) != w.t.Decimals {
		return output{}, status.Errorf(codes.InvalidArgument, "instruction %d: a TransferChecked with %d decimals; %s has %d", i, *tc.Decimals, w.t.Ticker, w.t.Decimals)
	}
	if owner := tc.GetOwnerAccount(); !owner.IsSigner {
		return output{}, status.Errorf(codes.InvalidArgument, "instruction %d: a TransferChecked authorised by %s, which does not sign the message", i, owner.PublicKey)
	}
	value := decimal.NewFromBigInt(new(big.Int).SetUint64(*tc.Amount), -w.t.Decimals)
	acct := tc.GetDestinationAccount().PublicKey
	wallet, ok := w.atas[acct]
	if !ok {
		// No destination key can match: the policy refuses it (saying which
		// destinations it allows).
		return output{dest: "token account " + acct.String(), value: value,
			name: fmt.Sprintf("token account %s (instruction %d), the associated token account of none of the allowed destinations and own keys", acct, i)}, nil
	}
	return output{dest: wallet, name: fmt.Sprintf("%s (instruction %d pays its token account %s)", wallet, i, acct), value: value, own: w.own[wallet]}, nil
}

// canonical checks that data is the serialisation of the instruction it
// decoded to (encode): no trailing bytes the runtime would ignore.
func canonical(data []byte, encode func() ([]byte, error)) error {
	back, err := encode()
	if err != nil {
		return err
	}
	if !bytes.Equal(back, data) {
		return fmt.Errorf("%d bytes of data, %d of them the instruction's", len(data), len(back))
	}
	return nil
}
