package solanatest

import (
	"encoding/json"
	"fmt"
	"maps"
	"strconv"

	bin "github.com/gagliardetto/binary"
	solana "github.com/gagliardetto/solana-go"
	"github.com/gagliardetto/solana-go/programs/system"
	"github.com/gagliardetto/solana-go/programs/token"
)

// Program ids the fake executes.
var (
	systemProgram = solana.SystemProgramID
	tokenProgram  = solana.TokenProgramID
	ataProgram    = solana.SPLAssociatedTokenAccountProgramID
	computeBudget = solana.ComputeBudget
)

// Account sizes of the SPL Token program.
const (
	tokenAccountSz = 165
	mintSz         = 82
)

// account is one account of the fake ledger: a system account (lamports
// only), a token account or a mint.
type account struct {
	lamports uint64
	owner    solana.PublicKey
	token    *tokenAccount // set for token accounts
	mint     *mintAccount  // set for mints
}

type tokenAccount struct {
	mint, owner solana.PublicKey
	amount      uint64
}

type mintAccount struct {
	decimals  uint8
	supply    uint64
	authority solana.PublicKey
}

// size is the account's data length.
func (a *account) size() int {
	switch {
	case a.token != nil:
		return tokenAccountSz
	case a.mint != nil:
		return mintSz
	}
	return 0
}

// data returns the account's data as the SPL Token program lays it out.
func (a *account) data() []byte {
	var v any
	switch {
	case a.token != nil:
		v = &token.Account{Mint: a.token.mint, Owner: a.token.owner, Amount: a.token.amount, State: token.Initialized}
	case a.mint != nil:
		auth := a.mint.authority
		v = &token.Mint{MintAuthority: &auth, Supply: a.mint.supply, Decimals: a.mint.decimals, IsInitialized: true}
	default:
		return nil
	}
	out, err := bin.MarshalBin(v)
	if err != nil {
		panic("solanatest: encode account: " + err.Error()) // our own values
	}
	return out
}

func (a *account) clone() *account {
	c := *a
	if a.token != nil {
		t := *a.token
		c.token = &t
	}
	if a.mint != nil {
		m := *a.mint
		c.mint = &m
	}
	return &c
}

// state is every account, by address. States are copied, never shared
// between slots.
type state map[solana.PublicKey]*account

func (s state) clone() state {
	c := make(state, len(s))
	for k, v := range s {
		c[k] = v.clone()
	}
	return c
}

// rentExempt is the minimum balance of an account of size bytes: the
// formula of the runtime's default rent (3480 lamports per byte-year, two
// years, 128 bytes of overhead).
func rentExempt(size int) uint64 { return uint64(size+128) * 3480 * 2 }

// tokenBalance is one entry of meta.pre/postTokenBalances.
type tokenBalance struct {
	AccountIndex  int           `json:"accountIndex"`
	Mint          string        `json:"mint"`
	Owner         string        `json:"owner"`
	ProgramID     string        `json:"programId"`
	UITokenAmount uiTokenAmount `json:"uiTokenAmount"`
}

type uiTokenAmount struct {
	Amount         string   `json:"amount"`
	Decimals       uint8    `json:"decimals"`
	UIAmount       *float64 `json:"uiAmount"`
	UIAmountString string   `json:"uiAmountString"`
}

func newUIAmount(amount uint64, decimals uint8) uiTokenAmount {
	s := strconv.FormatUint(amount, 10)
	ui := float64(amount)
	for range decimals {
		ui /= 10
	}
	str := strconv.FormatFloat(ui, 'f', -1, 64)
	return uiTokenAmount{Amount: s, Decimals: decimals, UIAmount: &ui, UIAmountString: str}
}

// txRecord is one transaction the fake received.
type txRecord struct {
	sig  string
	tx   *solana.Transaction
	wire []byte
	slot int64 // including slot; 0 while waiting
	pos  int   // position in the slot
	gone bool  // its slot was reorganised away
	meta *txMeta
}

// txMeta is what execution recorded: the documented meta object.
type txMeta struct {
	Err               json.RawMessage `json:"err"`
	Fee               uint64          `json:"fee"`
	PreBalances       []uint64        `json:"preBalances"`
	PostBalances      []uint64        `json:"postBalances"`
	PreTokenBalances  []tokenBalance  `json:"preTokenBalances"`
	PostTokenBalances []tokenBalance  `json:"postTokenBalances"`
}

// txError is a transaction error as the RPC API encodes it.
type txError struct{ v any }

func (e *txError) Error() string {
	b, _ := json.Marshal(e.v)
	return string(b)
}

func (e *txError) json() json.RawMessage {
	b, _ := json.Marshal(e.v)
	return b
}

func instructionError(i int, detail any) *txError {
	return &txError{map[string]any{"InstructionError": []any{i, detail}}}
}

// execute runs tx on st (modified in place) and returns its meta. A
// transaction whose fee cannot be paid returns an error and changes
// nothing: it cannot be included. A failing instruction reverts all but
// the fee and is recorded in meta.Err.
func execute(st state, tx *solana.Transaction, lamportsPerSignature uint64) (*txMeta, error) {
	keys := tx.Message.AccountKeys
	fee := lamportsPerSignature * uint64(len(tx.Signatures))
	payer := st[keys[0]]
	if payer == nil {
		return nil, &txError{"AccountNotFound"}
	}
	if payer.lamports < fee || payer.token != nil || payer.mint != nil {
		return nil, &txError{"InsufficientFundsForFee"}
	}
	meta := &txMeta{Fee: fee, Err: json.RawMessage("null")}
	balances := func(s state) []uint64 {
		out := make([]uint64, len(keys))
		for i, k := range keys {
			if a := s[k]; a != nil {
				out[i] = a.lamports
			}
		}
		return out
	}
	tokens := func(s state) []tokenBalance {
		out := []tokenBalance{}
		for i, k := range keys {
			if a := s[k]; a != nil && a.token != nil {
				dec := uint8(0)
				if m := s[a.token.mint]; m != nil && m.mint != nil {
					dec = m.mint.decimals
				}
				out = append(out, tokenBalance{AccountIndex: i, Mint: a.token.mint.String(), Owner: a.token.owner.String(),
					ProgramID: tokenProgram.String(), UITokenAmount: newUIAmount(a.token.amount, dec)})
			}
		}
		return out
	}
	meta.PreBalances, meta.PreTokenBalances = balances(st), tokens(st)

	work := st.clone()
	work[keys[0]].lamports -= fee
	afterFee := work.clone()
	err := run(work, tx)
	if err == nil {
		err = checkRent(st, work, tx)
	}
	result := work
	if err != nil {
		result = afterFee
		meta.Err = err.json()
	}
	for k, a := range result {
		if a.lamports == 0 && a.token == nil && a.mint == nil {
			delete(result, k) // an emptied system account ceases to exist
		}
	}
	clear(st)
	maps.Copy(st, result)
	meta.PostBalances, meta.PostTokenBalances = balances(st), tokens(st)
	return meta, nil
}

// checkRent applies the runtime's rent rule: an account whose balance the
// transaction changed ends with none or at least the rent-exempt minimum.
func checkRent(before, after state, tx *solana.Transaction) *txError {
	for i, k := range tx.Message.AccountKeys {
		a := after[k]
		if a == nil || a.lamports == 0 {
			continue
		}
		if b := before[k]; b != nil && b.lamports == a.lamports {
			continue
		}
		if a.lamports < rentExempt(a.size()) {
			return &txError{map[string]any{"InsufficientFundsForRent": map[string]any{"account_index": i}}}
		}
	}
	return nil
}

// run executes tx's instructions on st.
func run(st state, tx *solana.Transaction) *txError {
	m := tx.Message
	keys := m.AccountKeys
	for i, ci := range m.Instructions {
		metas := make([]*solana.AccountMeta, len(ci.Accounts))
		for j, idx := range ci.Accounts {
			w, _ := m.IsWritable(keys[idx])
			metas[j] = &solana.AccountMeta{PublicKey: keys[idx], IsSigner: int(idx) < int(m.Header.NumRequiredSignatures), IsWritable: w}
		}
		var err *txError
		switch program := keys[ci.ProgramIDIndex]; program {
		case systemProgram:
			err = runSystem(st, i, metas, ci.Data)
		case ataProgram:
			err = runATA(st, i, metas, ci.Data)
		case tokenProgram:
			err = runToken(st, i, metas, ci.Data)
		case computeBudget:
		default:
			err = &txError{"ProgramAccountNotFound"}
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func runSystem(st state, i int, metas []*solana.AccountMeta, data []byte) *txError {
	ix, err := system.DecodeInstruction(metas, data)
	if err != nil {
		return instructionError(i, "InvalidInstructionData")
	}
	tr, ok := ix.Impl.(*system.Transfer)
	if !ok || tr.Lamports == nil || len(metas) < 2 {
		return instructionError(i, "InvalidInstructionData")
	}
	from, to := metas[0], metas[1]
	if !from.IsSigner {
		return instructionError(i, "MissingRequiredSignature")
	}
	if !from.IsWritable || !to.IsWritable {
		return instructionError(i, "ReadonlyLamportChange")
	}
	src := st[from.PublicKey]
	if src == nil || src.token != nil || src.mint != nil {
		return instructionError(i, map[string]any{"Custom": 0})
	}
	if src.lamports < *tr.Lamports {
		return instructionError(i, map[string]any{"Custom": 1}) // SystemError::ResultWithNegativeLamports
	}
	dst := st[to.PublicKey]
	if dst == nil {
		dst = &account{owner: systemProgram}
		st[to.PublicKey] = dst
	}
	src.lamports -= *tr.Lamports
	dst.lamports += *tr.Lamports
	return nil
}

func runATA(st state, i int, metas []*solana.AccountMeta, data []byte) *txError {
	idempotent := len(data) == 1 && data[0] == 1
	if len(data) > 1 || len(data) == 1 && data[0] > 1 || len(metas) < 6 {
		return instructionError(i, "InvalidInstructionData")
	}
	payer, ataKey, wallet, mintKey := metas[0], metas[1].PublicKey, metas[2].PublicKey, metas[3].PublicKey
	want, _, err := solana.FindAssociatedTokenAddress(wallet, mintKey)
	if err != nil || want != ataKey {
		return instructionError(i, "InvalidSeeds")
	}
	mint := st[mintKey]
	if mint == nil || mint.mint == nil {
		return instructionError(i, "IncorrectProgramId")
	}
	if a := st[ataKey]; a != nil {
		if idempotent && a.token != nil && a.token.owner == wallet && a.token.mint == mintKey {
			return nil
		}
		return instructionError(i, "IllegalOwner")
	}
	rent := rentExempt(tokenAccountSz)
	p := st[payer.PublicKey]
	if !payer.IsSigner || p == nil || p.token != nil || p.mint != nil {
		return instructionError(i, "MissingRequiredSignature")
	}
	if p.lamports < rent {
		return instructionError(i, map[string]any{"Custom": 1})
	}
	p.lamports -= rent
	st[ataKey] = &account{lamports: rent, owner: tokenProgram, token: &tokenAccount{mint: mintKey, owner: wallet}}
	return nil
}

// Token program errors (spl_token::error::TokenError) the fake returns.
const (
	tokenInsufficientFunds = 1
	tokenMintMismatch      = 3
	tokenOwnerMismatch     = 4
	tokenMintDecimals      = 18
)

func runToken(st state, i int, metas []*solana.AccountMeta, data []byte) *txError {
	ix, err := token.DecodeInstruction(metas, data)
	if err != nil {
		return instructionError(i, "InvalidInstructionData")
	}
	var (
		source, dest, owner solana.PublicKey
		ownerSigner         bool
		amount              uint64
		mintKey             *solana.PublicKey
		decimals            *uint8
	)
	switch v := ix.Impl.(type) {
	case *token.TransferChecked:
		if v.Amount == nil || v.Decimals == nil || len(metas) < 4 {
			return instructionError(i, "InvalidInstructionData")
		}
		source, dest, owner, ownerSigner = metas[0].PublicKey, metas[2].PublicKey, metas[3].PublicKey, metas[3].IsSigner
		amount, mintKey, decimals = *v.Amount, &metas[1].PublicKey, v.Decimals
	case *token.Transfer:
		if v.Amount == nil || len(metas) < 3 {
			return instructionError(i, "InvalidInstructionData")
		}
		source, dest, owner, ownerSigner = metas[0].PublicKey, metas[1].PublicKey, metas[2].PublicKey, metas[2].IsSigner
		amount = *v.Amount
	default:
		return instructionError(i, "InvalidInstructionData")
	}
	src, dst := st[source], st[dest]
	if src == nil || dst == nil || src.token == nil || dst.token == nil {
		return instructionError(i, "UninitializedAccount")
	}
	if src.token.mint != dst.token.mint || mintKey != nil && *mintKey != src.token.mint {
		return instructionError(i, map[string]any{"Custom": tokenMintMismatch})
	}
	if decimals != nil {
		m := st[src.token.mint]
		if m == nil || m.mint == nil || m.mint.decimals != *decimals {
			return instructionError(i, map[string]any{"Custom": tokenMintDecimals})
		}
	}
	if src.token.owner != owner {
		return instructionError(i, map[string]any{"Custom": tokenOwnerMismatch})
	}
	if !ownerSigner {
		return instructionError(i, "MissingRequiredSignature")
	}
	if src.token.amount < amount {
		return instructionError(i, map[string]any{"Custom": tokenInsufficientFunds})
	}
	src.token.amount -= amount
	dst.token.amount += amount
	return nil
}

// checkShape rejects transactions the fake cannot index safely: it
// executes legacy messages only, with consistent header counts and
// account indices.
func checkShape(tx *solana.Transaction) error {
	m := tx.Message
	n := len(m.AccountKeys)
	switch {
	case m.IsVersioned():
		return fmt.Errorf("versioned transactions are not supported by the fake")
	case n == 0 || len(tx.Signatures) == 0:
		return fmt.Errorf("no account keys or signatures")
	case int(m.Header.NumRequiredSignatures) != len(tx.Signatures) || int(m.Header.NumRequiredSignatures) > n:
		return fmt.Errorf("%d signatures for %d required", len(tx.Signatures), m.Header.NumRequiredSignatures)
	case int(m.Header.NumReadonlySignedAccounts) > int(m.Header.NumRequiredSignatures) ||
		int(m.Header.NumReadonlyUnsignedAccounts) > n-int(m.Header.NumRequiredSignatures):
		return fmt.Errorf("inconsistent header")
	}
	for _, ci := range m.Instructions {
		if int(ci.ProgramIDIndex) >= n {
			return fmt.Errorf("program index out of range")
		}
		for _, a := range ci.Accounts {
			if int(a) >= n {
				return fmt.Errorf("account index out of range")
			}
		}
	}
	return nil
}
