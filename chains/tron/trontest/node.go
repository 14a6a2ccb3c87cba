package trontest

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math/big"
	"net/http/httptest"
	"sync"
	"time"

	"github.com/btcsuite/btcd/btcec/v2"

	"github.com/payhook/payhook/chains/devnet"
)

// Defaults applied by Options.WithDefaults.
const (
	// DefaultSolidLag is how many blocks the solidified head lags the tip:
	// the devnet's (devnet.DefaultTronSolidLag, 19).
	DefaultSolidLag = devnet.DefaultTronSolidLag
	// DefaultTransactionFee is the bandwidth price, sun per byte
	// (getTransactionFee on mainnet).
	DefaultTransactionFee = 1000
	// DefaultEnergyFee is the energy price, sun per unit (getEnergyFee).
	DefaultEnergyFee = 100
	// DefaultTransferEnergy is the energy one TRC20 transfer uses.
	DefaultTransferEnergy = 65_000
	// DefaultVersion is the java-tron version getnodeinfo reports.
	DefaultVersion = "4.8.1"
	// BlockInterval is TRON's block time; block n is mined at
	// GenesisTime + n * BlockInterval.
	BlockInterval = 3 * time.Second
	// maxExpiration is java-tron's Constant.MAXIMUM_TIME_UNTIL_EXPIRATION.
	maxExpiration = 24 * time.Hour
	// defaultLifetime is how long a transaction the node builds is valid.
	defaultLifetime = 60 * time.Second
	// resultSize is what java-tron adds to a transaction's size for its
	// result when charging bandwidth (MAX_RESULT_SIZE_IN_TX).
	resultSize = 64
)

// PrivateGenesis is the genesis block id of the node by default: a
// private network's, neither mainnet's nor a public testnet's.
var PrivateGenesis = "0000000000000000" + hex.EncodeToString(sha(
	[]byte("payhook trontest private network"))[8:])

// Options tune a Node. The zero value is usable.
type Options struct {
	// SolidLag is how many blocks the solidified head lags the tip; zero
	// means DefaultSolidLag, negative means none.
	SolidLag int64
	// Genesis is block 0's id (mainnet's, Nile's, Shasta's, to test a
	// node of another network); "" means PrivateGenesis.
	Genesis string
	// GenesisTime is block 0's time; zero means 2024-01-01T00:00:00Z.
	// The node reads no clock: time advances BlockInterval per block.
	GenesisTime time.Time
	// TransactionFee is the bandwidth price in sun per byte; zero means
	// DefaultTransactionFee. Bandwidth is always paid in TRX (the node
	// grants no free bandwidth).
	TransactionFee int64
	// EnergyFee is the energy price in sun; zero means DefaultEnergyFee.
	EnergyFee int64
	// TransferEnergy is the energy one TRC20 transfer uses; zero means
	// DefaultTransferEnergy.
	TransferEnergy int64
	// Contracts are the TRC20 token contracts the node runs (base58).
	Contracts []string
	// Version is the java-tron version the node reports; "" means
	// DefaultVersion.
	Version string
}

// WithDefaults returns o with its zero fields set.
func (o Options) WithDefaults() Options {
	if o.SolidLag == 0 {
		o.SolidLag = DefaultSolidLag
	}
	if o.SolidLag < 0 {
		o.SolidLag = 0
	}
	if o.Genesis == "" {
		o.Genesis = PrivateGenesis
	}
	if o.GenesisTime.IsZero() {
		o.GenesisTime = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	}
	if o.TransactionFee == 0 {
		o.TransactionFee = DefaultTransactionFee
	}
	if o.EnergyFee == 0 {
		o.EnergyFee = DefaultEnergyFee
	}
	if o.TransferEnergy == 0 {
		o.TransferEnergy = DefaultTransferEnergy
	}
	if o.Version == "" {
		o.Version = DefaultVersion
	}
	return o
}

// tx is one transaction the node knows.
type tx struct {
	id    string
	raw   []byte
	sig   []byte
	r     rawTx
	fail  bool // Pay(..., fail): execution fails (REVERT)
	block *block
	gone  bool // in a block a reorganisation dropped; never included again
	res   result
}

// size is the bandwidth the transaction uses.
func (t *tx) size() int64 { return int64(len(encodeSigned(t.raw, t.sig))) + resultSize }

// result is a transaction's execution, fixed at inclusion.
type result struct {
	ret         string // contractRet
	receipt     string // receipt.result ("" for a TRX transfer)
	netFee      int64
	energyFee   int64
	energyUsage int64
	failed      bool
	message     string
	logs        []logEntry
	effects     effects
}

// logEntry is a Transfer event.
type logEntry struct {
	contract, from, to account
	value              *big.Int
}

// effects are what a transaction changed: TRX deltas and token moves.
type effects struct {
	trx    map[account]int64
	tokens []logEntry
}

// block is one block of the chain.
type block struct {
	number int64
	id     string
	parent string
	time   int64 // milliseconds
	txs    []*tx
}

// Node is an in-memory TRON full node serving the HTTP API over
// httptest. It is safe for concurrent use.
type Node struct {
	opts   Options
	srv    *httptest.Server
	quit   chan struct{}
	closed sync.Once

	faucet    *btcec.PrivateKey
	faucetAcc account
	contracts map[account]bool

	mu      sync.Mutex
	blocks  []*block // blocks[0] is the genesis block
	pending []*tx
	byID    map[string]*tx
	funded  map[account]int64 // TRX given outside blocks (Fund)
	trx     map[account]int64 // balances at the tip
	tokens  map[account]map[account]*big.Int
	exists  map[account]bool
	built   int64 // transactions built, for distinct timestamps
	mined   int64 // blocks ever mined, for distinct ids
	faults  map[string]Fault
}

// faucetSupply is what the faucet holds of TRX and of every token.
const faucetSupply = int64(1) << 60

// New starts a Node; Close stops it.
func New(opts Options) (*Node, error) {
	opts = opts.WithDefaults()
	if len(opts.Genesis) != 64 {
		return nil, fmt.Errorf("trontest: genesis id %q is not 32 bytes of hex", opts.Genesis)
	}
	if _, err := hex.DecodeString(opts.Genesis); err != nil {
		return nil, fmt.Errorf("trontest: genesis id %q is not hex", opts.Genesis)
	}
	n := &Node{
		opts:      opts,
		quit:      make(chan struct{}),
		contracts: map[account]bool{},
		byID:      map[string]*tx{},
		funded:    map[account]int64{},
		faults:    map[string]Fault{},
	}
	for _, c := range opts.Contracts {
		a, err := parseBase58(c)
		if err != nil {
			return nil, fmt.Errorf("trontest: contract: %w", err)
		}
		n.contracts[a] = true
	}
	n.faucet, _ = btcec.PrivKeyFromBytes(sha([]byte("payhook trontest faucet")))
	n.faucetAcc = keyAccount(n.faucet.PubKey())
	n.funded[n.faucetAcc] = faucetSupply
	n.blocks = []*block{{number: 0, id: opts.Genesis, parent: hex.EncodeToString(sha([]byte("genesis parent"))),
		time: opts.GenesisTime.UnixMilli()}}
	n.rebuild()
	n.srv = httptest.NewServer(n.handler())
	return n, nil
}

// URL returns the node's base URL, e.g. http://127.0.0.1:34567.
func (n *Node) URL() string { return n.srv.URL }

// Close stops the node, ending requests that hang on a fault.
func (n *Node) Close() {
	n.closed.Do(func() {
		close(n.quit)
		n.srv.Close()
	})
}

// Faucet returns the address that Pay sends from.
func (n *Node) Faucet() string { return n.faucetAcc.String() }

func sha(b []byte) []byte { s := sha256.Sum256(b); return s[:] }

// rebuild recomputes the tip's balances from the funding and the effects
// of the blocks; n.mu must be held (or n not yet shared).
func (n *Node) rebuild() {
	n.trx = map[account]int64{}
	n.exists = map[account]bool{}
	n.tokens = map[account]map[account]*big.Int{}
	for a, v := range n.funded {
		n.trx[a] += v
		n.exists[a] = true
	}
	for c := range n.contracts {
		n.tokens[c] = map[account]*big.Int{n.faucetAcc: big.NewInt(faucetSupply)}
	}
	for _, b := range n.blocks {
		for _, t := range b.txs {
			n.apply(t.res.effects)
		}
	}
}

// apply adds effects to the tip's balances.
func (n *Node) apply(e effects) {
	for a, d := range e.trx {
		n.trx[a] += d
		n.exists[a] = true
	}
	for _, m := range e.tokens {
		bal := n.tokens[m.contract]
		if bal[m.from] == nil {
			bal[m.from] = new(big.Int)
		}
		if bal[m.to] == nil {
			bal[m.to] = new(big.Int)
		}
		bal[m.from] = new(big.Int).Sub(bal[m.from], m.value)
		bal[m.to] = new(big.Int).Add(bal[m.to], m.value)
	}
}

// view is a balance sheet that transactions execute against: the tip's
// with the effects of some transactions on top.
type view struct {
	n      *Node
	trx    map[account]int64
	tokens map[account]map[account]*big.Int
}

func (n *Node) view() *view {
	return &view{n: n, trx: map[account]int64{}, tokens: map[account]map[account]*big.Int{}}
}

func (v *view) balance(a account) int64 { return v.n.trx[a] + v.trx[a] }

func (v *view) token(c, a account) *big.Int {
	if m := v.tokens[c]; m != nil && m[a] != nil {
		return m[a]
	}
	if b := v.n.tokens[c][a]; b != nil {
		return b
	}
	return new(big.Int)
}

func (v *view) add(e effects) {
	for a, d := range e.trx {
		v.trx[a] += d
	}
	for _, m := range e.tokens {
		if v.tokens[m.contract] == nil {
			v.tokens[m.contract] = map[account]*big.Int{}
		}
		v.tokens[m.contract][m.from] = new(big.Int).Sub(v.token(m.contract, m.from), m.value)
		v.tokens[m.contract][m.to] = new(big.Int).Add(v.token(m.contract, m.to), m.value)
	}
}

// errInvalid is a transaction a node refuses before execution, with the
// broadcast code it answers.
type errInvalid struct{ code, msg string }

func (e *errInvalid) Error() string { return e.code + ": " + e.msg }

// execute runs t against v (without changing v) and returns its result;
// an *errInvalid for a transaction the chain would not include.
func (n *Node) execute(v *view, t *tx) (result, error) {
	r := t.r
	fee := t.size() * n.opts.TransactionFee
	res := result{netFee: fee, effects: effects{trx: map[account]int64{}}}
	switch r.typ {
	case typeTransfer:
		if r.amount <= 0 {
			return result{}, &errInvalid{"CONTRACT_VALIDATE_ERROR", "Amount must be greater than 0."}
		}
		if r.owner == r.to {
			return result{}, &errInvalid{"CONTRACT_VALIDATE_ERROR", "Cannot transfer TRX to yourself."}
		}
		if v.balance(r.owner) < r.amount+fee {
			return result{}, &errInvalid{"CONTRACT_VALIDATE_ERROR", "Validate TransferContract error, balance is not sufficient."}
		}
		res.effects.trx[r.owner] -= fee
		if t.fail {
			// A stand-in for the suite: the chain includes no failed
			// TransferContract, so a node never reports one.
			res.ret, res.failed, res.message = "REVERT", true, "REVERT opcode executed"
			return res, nil
		}
		res.effects.trx[r.owner] -= r.amount
		res.effects.trx[r.to] += r.amount
		res.ret = "SUCCESS"
		return res, nil
	case typeTrigger:
		if !n.contracts[r.contract] {
			return result{}, &errInvalid{"CONTRACT_VALIDATE_ERROR", "No contract or not a valid smart contract"}
		}
		bal := v.balance(r.owner)
		if bal < fee {
			return result{}, &errInvalid{"BANDWITH_ERROR", "account has insufficient balance to pay bandwidth"}
		}
		res.effects.trx[r.owner] -= fee
		bal -= fee
		cost := n.opts.TransferEnergy * n.opts.EnergyFee
		if cost > r.feeLimit || cost > bal {
			burn := min(r.feeLimit, bal)
			res.effects.trx[r.owner] -= burn
			res.energyFee, res.energyUsage = burn, burn/n.opts.EnergyFee
			res.ret, res.receipt, res.failed, res.message = "OUT_OF_ENERGY", "OUT_OF_ENERGY", true, "Not enough energy"
			return res, nil
		}
		res.effects.trx[r.owner] -= cost
		res.energyFee, res.energyUsage = cost, n.opts.TransferEnergy
		to, amount, ok := transferCall(r.data)
		switch {
		case t.fail || !ok || r.callValue != 0:
			res.ret, res.receipt, res.failed, res.message = "REVERT", "REVERT", true, "REVERT opcode executed"
		case v.token(r.contract, r.owner).Cmp(amount) < 0:
			res.ret, res.receipt, res.failed, res.message = "REVERT", "REVERT", true, "REVERT opcode executed"
		default:
			m := logEntry{contract: r.contract, from: r.owner, to: to, value: amount}
			res.logs = []logEntry{m}
			res.effects.tokens = []logEntry{m}
			res.ret, res.receipt = "SUCCESS", "SUCCESS"
		}
		return res, nil
	}
	return result{}, &errInvalid{"CONTRACT_VALIDATE_ERROR", "contract type not served"}
}

// transferCall decodes transfer(address,uint256) call data.
func transferCall(data []byte) (account, *big.Int, bool) {
	if len(data) != 4+64 || hex.EncodeToString(data[:4]) != "a9059cbb" {
		return account{}, nil, false
	}
	for _, c := range data[4:16] {
		if c != 0 {
			return account{}, nil, false
		}
	}
	var to account
	to[0] = 0x41
	copy(to[1:], data[16:36])
	return to, new(big.Int).SetBytes(data[36:68]), true
}

// head returns the tip; n.mu must be held.
func (n *Node) head() *block { return n.blocks[len(n.blocks)-1] }

// solid returns the solidified head; n.mu must be held.
func (n *Node) solid() *block {
	return n.blocks[max(0, int64(len(n.blocks)-1)-n.opts.SolidLag)]
}

// pendingView is the tip's balances with the pending transactions
// executed; n.mu must be held.
func (n *Node) pendingView() *view {
	v := n.view()
	for _, t := range n.pending {
		if res, err := n.execute(v, t); err == nil {
			v.add(res.effects)
		}
	}
	return v
}

// validate checks t as java-tron's Manager.processTransaction does, in
// its order: TaPoS, expiration, duplicate, signature, then execution
// against the pending state; n.mu must be held.
func (n *Node) validate(t *tx) error {
	if !n.tapos(t.r) {
		return &errInvalid{"TAPOS_ERROR", "Tapos check error"}
	}
	now := n.head().time
	if t.r.expiration <= now || t.r.expiration > now+maxExpiration.Milliseconds() {
		return &errInvalid{"TRANSACTION_EXPIRATION_ERROR", fmt.Sprintf(
			"Transaction expiration, transaction expiration time is %d, but headBlockTime is %d", t.r.expiration, now)}
	}
	if _, dup := n.byID[t.id]; dup {
		return &errInvalid{"DUP_TRANSACTION_ERROR", "Dup transaction."}
	}
	if len(t.sig) == 0 {
		return &errInvalid{"SIGERROR", "miss sig or contract"}
	}
	id, _ := hex.DecodeString(t.id)
	if who, ok := signer([32]byte(id), t.sig); !ok || who != t.r.owner {
		return &errInvalid{"SIGERROR", "Validate signature error: signature is not signed by the owner"}
	}
	_, err := n.execute(n.pendingView(), t)
	return err
}

// tapos reports whether r's reference block is in the chain.
func (n *Node) tapos(r rawTx) bool {
	if len(r.refBytes) != 2 || len(r.refHash) != 8 {
		return false
	}
	for _, b := range n.blocks {
		id, _ := hex.DecodeString(b.id)
		if uint16(b.number) == binary.BigEndian.Uint16(r.refBytes) && string(id[8:16]) == string(r.refHash) {
			return true
		}
	}
	return false
}

// submit validates t and puts it in the pending pool; n.mu must be held.
func (n *Node) submit(t *tx) error {
	if err := n.validate(t); err != nil {
		return err
	}
	n.byID[t.id] = t
	n.pending = append(n.pending, t)
	return nil
}

// build returns the raw data of a new transaction referring to the
// solidified head; n.mu must be held.
func (n *Node) build(r rawTx) rawTx {
	ref := n.solid()
	id, _ := hex.DecodeString(ref.id)
	r.refBytes = binary.BigEndian.AppendUint16(nil, uint16(ref.number))
	r.refHash = id[8:16]
	n.built++
	r.timestamp = n.head().time + n.built // distinct, like wall-clock milliseconds
	r.expiration = n.head().time + defaultLifetime.Milliseconds()
	return r
}

// Pay submits a transaction from the faucet paying amount (sun, or token
// base units with contract) to `to`, and returns its id. With fail its
// execution fails (REVERT): included, nothing moves. contract "" pays TRX.
// A token transfer of 0 is allowed (address-poisoning spam sends them).
func (n *Node) Pay(contract, to string, amount *big.Int, fail bool) (string, error) {
	dest, err := parseBase58(to)
	if err != nil {
		return "", fmt.Errorf("trontest: pay: %w", err)
	}
	if amount.Sign() < 0 || amount.BitLen() > 62 || (amount.Sign() == 0 && contract == "") {
		return "", fmt.Errorf("trontest: pay: amount %s out of range", amount)
	}
	r := rawTx{typ: typeTransfer, owner: n.faucetAcc, to: dest, amount: amount.Int64()}
	if contract != "" {
		c, err := parseBase58(contract)
		if err != nil {
			return "", fmt.Errorf("trontest: pay: %w", err)
		}
		data := append(selector("transfer(address,uint256)"), make([]byte, 12)...)
		data = append(data, dest[1:]...)
		data = append(data, amount.FillBytes(make([]byte, 32))...)
		r = rawTx{typ: typeTrigger, owner: n.faucetAcc, contract: c, data: data, feeLimit: 1_000_000_000}
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	r = n.build(r)
	raw := r.encode()
	id := sha256.Sum256(raw)
	t := &tx{id: hex.EncodeToString(id[:]), raw: raw, sig: sign(n.faucet, id), r: r, fail: fail}
	if err := n.submit(t); err != nil {
		return "", fmt.Errorf("trontest: pay: %w", err)
	}
	return t.id, nil
}

// Fund gives sun to an address outside any block (like a genesis
// allocation: reorganisations do not undo it).
func (n *Node) Fund(address string, sun int64) error {
	a, err := parseBase58(address)
	if err != nil {
		return fmt.Errorf("trontest: fund: %w", err)
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	n.funded[a] += sun
	n.trx[a] += sun
	n.exists[a] = true
	return nil
}

// Balance returns an address's TRX balance in sun at the tip.
func (n *Node) Balance(address string) int64 {
	a, err := parseBase58(address)
	if err != nil {
		return 0
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.trx[a]
}

// TokenBalance returns an address's balance of a token at the tip.
func (n *Node) TokenBalance(contract, address string) *big.Int {
	c, err1 := parseBase58(contract)
	a, err2 := parseBase58(address)
	if err1 != nil || err2 != nil {
		return new(big.Int)
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if b := n.tokens[c][a]; b != nil {
		return new(big.Int).Set(b)
	}
	return new(big.Int)
}

// Height returns the tip's number.
func (n *Node) Height() int64 {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.head().number
}

// Included reports how many blocks of the chain include txid (0 or 1) and
// whether the node holds it pending.
func (n *Node) Included(txid string) (blocks int, pending bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, b := range n.blocks {
		for _, t := range b.txs {
			if t.id == txid {
				blocks++
			}
		}
	}
	for _, t := range n.pending {
		pending = pending || t.id == txid
	}
	return blocks, pending
}

// ErrInvalidCount reports a Mine or Reorg count out of range.
var ErrInvalidCount = errors.New("trontest: invalid block count")

// Mine produces blocks (1 to 1000) and returns the new height. The first
// includes the pending transactions, executed in the order received; one
// that is no longer valid (expired, unpaid) is dropped.
func (n *Node) Mine(count int) (int64, error) {
	if count < 1 || count > 1000 {
		return 0, fmt.Errorf("%w: mine %d", ErrInvalidCount, count)
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	for i := range count {
		parent := n.head()
		b := &block{number: parent.number + 1, parent: parent.id,
			time: n.opts.GenesisTime.Add(time.Duration(parent.number+1) * BlockInterval).UnixMilli()}
		if i == 0 {
			v := n.view()
			for _, t := range n.pending {
				if t.r.expiration <= b.time {
					delete(n.byID, t.id)
					continue
				}
				res, err := n.execute(v, t)
				if err != nil {
					delete(n.byID, t.id)
					continue
				}
				v.add(res.effects)
				t.res, t.block = res, b
				b.txs = append(b.txs, t)
			}
			n.pending = nil
		}
		n.mined++
		h := sha256.New()
		fmt.Fprintf(h, "%s/%d/%d", b.parent, b.number, n.mined)
		for _, t := range b.txs {
			h.Write([]byte(t.id))
		}
		sum := h.Sum(nil)
		binary.BigEndian.PutUint64(sum[:8], uint64(b.number))
		b.id = hex.EncodeToString(sum)
		n.blocks = append(n.blocks, b)
		for _, t := range b.txs {
			n.apply(t.res.effects)
		}
	}
	return n.head().number, nil
}

// Reorg drops the newest depth blocks (1 to the height; the genesis block
// stays) and returns the new height. Their transactions are never
// included again; the pending pool is kept.
func (n *Node) Reorg(depth int) (int64, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	height := int(n.head().number)
	if depth < 1 || depth > height {
		return 0, fmt.Errorf("%w: reorganise %d blocks at height %d", ErrInvalidCount, depth, height)
	}
	keep := len(n.blocks) - depth
	for _, b := range n.blocks[keep:] {
		for _, t := range b.txs {
			t.gone, t.block = true, nil
		}
	}
	clear(n.blocks[keep:])
	n.blocks = n.blocks[:keep]
	n.rebuild()
	return n.head().number, nil
}
