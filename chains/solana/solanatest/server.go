package solanatest

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"

	solana "github.com/gagliardetto/solana-go"
	"github.com/gagliardetto/solana-go/programs/system"
	"github.com/gagliardetto/solana-go/programs/token"
)

// Defaults applied by Options.WithDefaults.
const (
	// DefaultConfirmedDepth is the slot depth (the newest slot is depth 1)
	// at which a block is confirmed, as chains/devnet has it.
	DefaultConfirmedDepth = 2
	// DefaultFinalizedDepth is the slot depth at which a block is
	// finalized (mainnet: about 32).
	DefaultFinalizedDepth = 3
	// DefaultMaxAge is how many blocks a blockhash stays valid
	// (MAX_PROCESSING_AGE).
	DefaultMaxAge = 150
	// DefaultLamportsPerSignature is the base fee.
	DefaultLamportsPerSignature = 5000
	// DefaultDecimals is the fake mint's decimals (USDC's).
	DefaultDecimals = 6
	// FaucetLamports and FaucetTokens are what the faucet holds at genesis.
	FaucetLamports = 500_000_000 * solana.LAMPORTS_PER_SOL
	FaucetTokens   = 1 << 60
)

// Options configure a Server. The zero value is usable.
type Options struct {
	// ConfirmedDepth and FinalizedDepth are the slot depths of the
	// confirmed and finalized commitments (processed is depth 1).
	ConfirmedDepth, FinalizedDepth int64
	// MaxAge is how many blocks a blockhash stays valid.
	MaxAge int64
	// LamportsPerSignature is the fee per signature.
	LamportsPerSignature uint64
	// Decimals is the fake mint's decimals.
	Decimals uint8
	// Seed makes keys, the mint, the genesis hash and blockhashes
	// deterministic; empty means a fixed seed.
	Seed []byte
}

// WithDefaults returns o with zero fields set to their defaults.
func (o Options) WithDefaults() Options {
	if o.ConfirmedDepth == 0 {
		o.ConfirmedDepth = DefaultConfirmedDepth
	}
	if o.FinalizedDepth == 0 {
		o.FinalizedDepth = max(DefaultFinalizedDepth, o.ConfirmedDepth)
	}
	if o.MaxAge == 0 {
		o.MaxAge = DefaultMaxAge
	}
	if o.LamportsPerSignature == 0 {
		o.LamportsPerSignature = DefaultLamportsPerSignature
	}
	if o.Decimals == 0 {
		o.Decimals = DefaultDecimals
	}
	if len(o.Seed) == 0 {
		o.Seed = []byte("payhook solanatest")
	}
	return o
}

// Fault is a misbehaviour the server shows for a method (SetFault).
type Fault int

// Faults.
const (
	// FaultNone answers normally.
	FaultNone Fault = iota
	// FaultDown answers HTTP 503 with an HTML body.
	FaultDown
	// FaultGarbage answers HTTP 200 with bytes that are not JSON.
	FaultGarbage
	// FaultWrongShape answers a JSON-RPC result of the wrong type.
	FaultWrongShape
	// FaultNull answers a null result.
	FaultNull
	// FaultError answers the JSON-RPC error -32005 (node is behind).
	FaultError
	// FaultSlow never answers: the request hangs until the client gives up
	// or the server closes.
	FaultSlow
)

// slot is one slot of the fake chain.
type slot struct {
	n        int64
	skipped  bool
	hash     string // blockhash
	parent   int64  // parent slot
	prevHash string
	height   int64 // block height
	time     int64 // unix seconds
	txs      []*txRecord
	st       state // accounts after the slot
}

// Server is an in-process Solana JSON-RPC node over HTTP: it serves the
// documented shapes of the methods payhook's backend uses, keeps a chain
// of slots with balances, executes System transfers, SPL token transfers
// and associated-token-account creation from signed transactions it
// verifies, and lets a test produce, skip and reorganise slots. It is safe
// for concurrent use.
type Server struct {
	opts    Options
	genesis string
	faucet  solana.PrivateKey
	mint    solana.PublicKey
	http    *httptest.Server
	closing chan struct{}
	closed  sync.Once

	mu      sync.Mutex
	slots   []*slot
	pending []*txRecord
	bySig   map[string]*txRecord
	mined   uint64
	faults  map[string]Fault
	calls   map[string]int
}

// New starts a Server with opts at slot 0: the genesis block, in which the
// faucet holds FaucetLamports and FaucetTokens of the mint. Close stops it.
func New(opts Options) *Server {
	opts = opts.WithDefaults()
	s := &Server{
		opts:    opts,
		genesis: solana.HashFromBytes(derive(opts.Seed, "genesis")).String(),
		faucet:  solana.PrivateKey(ed25519.NewKeyFromSeed(derive(opts.Seed, "faucet"))),
		mint:    solana.PrivateKey(ed25519.NewKeyFromSeed(derive(opts.Seed, "mint"))).PublicKey(),
		closing: make(chan struct{}),
		bySig:   make(map[string]*txRecord),
		faults:  make(map[string]Fault),
		calls:   make(map[string]int),
	}
	faucet := s.faucet.PublicKey()
	faucetATA, _, err := solana.FindAssociatedTokenAddress(faucet, s.mint)
	if err != nil {
		panic("solanatest: " + err.Error())
	}
	st := state{
		faucet: {lamports: FaucetLamports, owner: systemProgram},
		s.mint: {lamports: rentExempt(mintSz), owner: tokenProgram,
			mint: &mintAccount{decimals: opts.Decimals, supply: FaucetTokens, authority: faucet}},
		faucetATA: {lamports: rentExempt(tokenAccountSz), owner: tokenProgram,
			token: &tokenAccount{mint: s.mint, owner: faucet, amount: FaucetTokens}},
	}
	s.slots = []*slot{{n: 0, hash: s.newHash(""), prevHash: solana.Hash{}.String(), time: genesisTime, st: st}}
	s.http = httptest.NewServer(http.HandlerFunc(s.serveHTTP))
	return s
}

// genesisTime is slot 0's block time; each slot adds 400 ms.
const genesisTime = 1_700_000_000

func derive(seed []byte, what string) []byte {
	h := sha256.Sum256(append(append([]byte{}, seed...), what...))
	return h[:]
}

// newHash returns a fresh blockhash mixing parent; s.mu held (or during
// New).
func (s *Server) newHash(parent string) string {
	s.mined++
	b := append(derive(s.opts.Seed, "block"), binary.BigEndian.AppendUint64(nil, s.mined)...)
	h := sha256.Sum256(append(b, parent...))
	return solana.HashFromBytes(h[:]).String()
}

// URL returns the JSON-RPC endpoint.
func (s *Server) URL() string { return s.http.URL }

// Close stops the server; requests held by FaultSlow return. It is
// idempotent.
func (s *Server) Close() {
	s.closed.Do(func() {
		close(s.closing)
		s.http.CloseClientConnections()
		s.http.Close()
	})
}

// Genesis returns the genesis hash (getGenesisHash).
func (s *Server) Genesis() string { return s.genesis }

// Mint returns the fake SPL mint (base58).
func (s *Server) Mint() string { return s.mint.String() }

// Faucet returns the faucet's address.
func (s *Server) Faucet() string { return s.faucet.PublicKey().String() }

// SetFault makes method ("" for every method) misbehave as f until set to
// FaultNone.
func (s *Server) SetFault(method string, f Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if f == FaultNone {
		delete(s.faults, method)
		return
	}
	s.faults[method] = f
}

// Calls returns how many requests of method the server has answered.
func (s *Server) Calls(method string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[method]
}

// tip returns the newest slot; s.mu held.
func (s *Server) tip() int64 { return int64(len(s.slots) - 1) }

// lastBlock returns the newest produced slot at or below n; s.mu held.
func (s *Server) lastBlock(n int64) *slot {
	for ; n > 0; n-- {
		if !s.slots[n].skipped {
			return s.slots[n]
		}
	}
	return s.slots[0]
}

// depth of commitment c; "" means finalized (the RPC default).
func (s *Server) depth(c string) int64 {
	switch c {
	case "processed":
		return 1
	case "confirmed":
		return s.opts.ConfirmedDepth
	}
	return s.opts.FinalizedDepth
}

// at returns the newest block at commitment c; s.mu held.
func (s *Server) at(c string) *slot {
	return s.lastBlock(max(0, s.tip()-s.depth(c)+1))
}

// status returns the commitment a block in slot n has reached; s.mu held.
func (s *Server) status(n int64) string {
	d := s.tip() - n + 1
	switch {
	case d >= s.opts.FinalizedDepth:
		return "finalized"
	case d >= s.opts.ConfirmedDepth:
		return "confirmed"
	}
	return "processed"
}

// Mine produces n slots, each with a block, and returns the newest slot.
// The first includes the waiting transactions that can still be (their
// blockhash valid, their fee payable), in arrival order.
func (s *Server) Mine(n int) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range n {
		parent := s.lastBlock(s.tip())
		b := &slot{n: s.tip() + 1, parent: parent.n, prevHash: parent.hash, height: parent.height + 1,
			time: genesisTime + (s.tip()+1)*2/5, st: parent.st.clone()}
		b.hash = s.newHash(parent.hash)
		if i == 0 {
			for _, r := range s.pending {
				if !s.validHash(r.tx.Message.RecentBlockhash.String(), b.height, parent.n) {
					delete(s.bySig, r.sig)
					continue
				}
				meta, err := execute(b.st, r.tx, s.opts.LamportsPerSignature)
				if err != nil {
					delete(s.bySig, r.sig)
					continue
				}
				r.meta, r.slot, r.pos = meta, b.n, len(b.txs)
				b.txs = append(b.txs, r)
			}
			s.pending = nil
		}
		s.slots = append(s.slots, b)
	}
	return s.tip()
}

// Skip adds n slots whose leader produced no block and returns the newest
// slot. Waiting transactions keep waiting.
func (s *Server) Skip(n int) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	for range n {
		s.slots = append(s.slots, &slot{n: s.tip() + 1, skipped: true})
	}
	return s.tip()
}

// Reorg drops the newest depth slots and returns the new tip. Their
// transactions leave the chain: the server forgets them, and includes one
// again only if it is sent again while its blockhash is valid.
func (s *Server) Reorg(depth int) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if depth < 1 || int64(depth) > s.tip() {
		return 0, fmt.Errorf("solanatest: reorganise %d slots at slot %d", depth, s.tip())
	}
	keep := len(s.slots) - depth
	for _, b := range s.slots[keep:] {
		for _, r := range b.txs {
			r.gone = true
			delete(s.bySig, r.sig)
		}
	}
	s.slots = s.slots[:keep]
	return s.tip(), nil
}

// validHash reports whether blockhash is a block on the chain at or below
// slot `below` that a block at height h may still reference; s.mu held.
func (s *Server) validHash(blockhash string, h, below int64) bool {
	for n := below; n >= 0; n-- {
		b := s.slots[n]
		if !b.skipped && b.hash == blockhash {
			return h <= b.height+s.opts.MaxAge
		}
	}
	return false
}

// rejected is a transaction the server refuses; its message is the
// RPC error's.
type rejected struct {
	code   int64
	msg    string
	reason any // data.err
}

func (r *rejected) Error() string { return r.msg }

// submit verifies tx and queues it for the next slot, as sendTransaction
// does; preflight simulates it at commitment c ("" skips the simulation).
// It returns the signature. Sending a waiting transaction again is a no-op.
func (s *Server) submit(wire []byte, c string) (string, error) {
	tx, err := solana.TransactionFromBytes(wire)
	if err != nil {
		return "", &rejected{code: -32602, msg: "invalid transaction: failed to deserialize solana_transaction::versioned::VersionedTransaction: io error: unexpected end of file"}
	}
	if err := checkShape(tx); err != nil {
		return "", &rejected{code: -32602, msg: "invalid transaction: " + err.Error()}
	}
	if err := tx.VerifySignatures(); err != nil {
		return "", &rejected{code: -32003, msg: "Transaction signature verification failure"}
	}
	sig := tx.Signatures[0].String()
	s.mu.Lock()
	defer s.mu.Unlock()
	if r, ok := s.bySig[sig]; ok {
		if r.slot == 0 || c == "" {
			return sig, nil
		}
		return "", &rejected{code: -32002, msg: "Transaction simulation failed: This transaction has already been processed", reason: "AlreadyProcessed"}
	}
	if c != "" {
		bank := s.at(c)
		if !s.validHash(tx.Message.RecentBlockhash.String(), bank.height, bank.n) {
			return "", &rejected{code: -32002, msg: "Transaction simulation failed: Blockhash not found", reason: "BlockhashNotFound"}
		}
		sim := bank.st.clone()
		meta, err := execute(sim, tx, s.opts.LamportsPerSignature)
		var te *txError
		switch {
		case errors.As(err, &te):
			return "", &rejected{code: -32002, msg: "Transaction simulation failed: " + te.Error(), reason: te.v}
		case err != nil:
			return "", &rejected{code: -32002, msg: "Transaction simulation failed: " + err.Error()}
		case string(meta.Err) != "null":
			return "", &rejected{code: -32002, msg: "Transaction simulation failed: Error processing Instruction: " + string(meta.Err), reason: meta.Err}
		}
	}
	r := &txRecord{sig: sig, tx: tx, wire: wire}
	s.bySig[sig] = r
	s.pending = append(s.pending, r)
	return sig, nil
}

// Submit sends a signed transaction as sendTransaction with preflight at
// the confirmed commitment does, and returns its signature.
func (s *Server) Submit(tx *solana.Transaction) (string, error) {
	wire, err := tx.MarshalBinary()
	if err != nil {
		return "", err
	}
	return s.submit(wire, "confirmed")
}

// latest returns the newest block's hash; s.mu held.
func (s *Server) latest() solana.Hash {
	return solana.MustHashFromBase58(s.lastBlock(s.tip()).hash)
}

// PaySOL submits a transfer of lamports from the faucet to `to` and returns
// its signature; the next Mine includes it.
func (s *Server) PaySOL(to string, lamports uint64) (string, error) {
	dst, err := solana.PublicKeyFromBase58(to)
	if err != nil {
		return "", err
	}
	s.mu.Lock()
	bh := s.latest()
	s.mu.Unlock()
	faucet := s.faucet.PublicKey()
	tx, err := solana.NewTransaction([]solana.Instruction{system.NewTransferInstruction(lamports, faucet, dst).Build()}, bh, solana.TransactionPayer(faucet))
	if err != nil {
		return "", err
	}
	return s.signSubmit(tx)
}

// PayToken submits a transfer of amount base units of the mint from the
// faucet to the associated token account of owner `to` (created by the
// same transaction if needed) and returns its signature.
func (s *Server) PayToken(to string, amount uint64) (string, error) {
	owner, err := solana.PublicKeyFromBase58(to)
	if err != nil {
		return "", err
	}
	faucet := s.faucet.PublicKey()
	src, _, err := solana.FindAssociatedTokenAddress(faucet, s.mint)
	if err != nil {
		return "", err
	}
	dst, _, err := solana.FindAssociatedTokenAddress(owner, s.mint)
	if err != nil {
		return "", err
	}
	s.mu.Lock()
	bh := s.latest()
	s.mu.Unlock()
	create := createIdempotent(faucet, owner, s.mint)
	transfer := token.NewTransferCheckedInstruction(amount, s.opts.Decimals, src, s.mint, dst, faucet, nil).Build()
	tx, err := solana.NewTransaction([]solana.Instruction{create, transfer}, bh, solana.TransactionPayer(faucet))
	if err != nil {
		return "", err
	}
	return s.signSubmit(tx)
}

func (s *Server) signSubmit(tx *solana.Transaction) (string, error) {
	if _, err := tx.Sign(func(k solana.PublicKey) *solana.PrivateKey {
		if k == s.faucet.PublicKey() {
			return &s.faucet
		}
		return nil
	}); err != nil {
		return "", err
	}
	return s.Submit(tx)
}

// createIdempotent is the Associated Token Account program's
// CreateIdempotent instruction.
func createIdempotent(payer, wallet, mint solana.PublicKey) solana.Instruction {
	ata, _, _ := solana.FindAssociatedTokenAddress(wallet, mint)
	return solana.NewInstruction(ataProgram, solana.AccountMetaSlice{
		{PublicKey: payer, IsSigner: true, IsWritable: true},
		{PublicKey: ata, IsWritable: true},
		{PublicKey: wallet},
		{PublicKey: mint},
		{PublicKey: systemProgram},
		{PublicKey: tokenProgram},
	}, []byte{1})
}

// Balance returns address's lamports at the newest slot.
func (s *Server) Balance(address string) uint64 {
	k, err := solana.PublicKeyFromBase58(address)
	if err != nil {
		return 0
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if a := s.lastBlock(s.tip()).st[k]; a != nil {
		return a.lamports
	}
	return 0
}

// TokenBalance returns the amount of the mint that owner's associated
// token account holds at the newest slot.
func (s *Server) TokenBalance(owner string) uint64 {
	k, err := solana.PublicKeyFromBase58(owner)
	if err != nil {
		return 0
	}
	ata, _, err := solana.FindAssociatedTokenAddress(k, s.mint)
	if err != nil {
		return 0
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if a := s.lastBlock(s.tip()).st[ata]; a != nil && a.token != nil {
		return a.token.amount
	}
	return 0
}

// Included returns how many slots of the chain include the transaction sig
// (0 or 1: the server never includes a signature twice).
func (s *Server) Included(sig string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, b := range s.slots {
		for _, r := range b.txs {
			if r.sig == sig {
				n++
			}
		}
	}
	return n
}

// Slot returns the newest slot.
func (s *Server) Slot() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tip()
}
