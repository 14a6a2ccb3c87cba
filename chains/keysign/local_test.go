package keysign_test

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"errors"
	"math/big"
	"strings"
	"testing"

	"github.com/btcsuite/btcd/btcec/v2/ecdsa"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/txscript"
	"github.com/btcsuite/btcd/wire"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/chains/family"
	"github.com/payhook/payhook/chains/keysign"
	"github.com/payhook/payhook/chains/utxo"
)

var seed = bytes.Repeat([]byte{5}, 32)

func ticker(t *testing.T, name string, net chains.Net) chains.Ticker {
	t.Helper()
	reg, err := family.DefaultRegistry().WithNet(name, net)
	if err != nil {
		t.Fatal(err)
	}
	tk, _ := reg.Lookup(name)
	return tk
}

func script(t *testing.T, tk chains.Ticker, addr string) []byte {
	t.Helper()
	a, err := utxo.DecodeAddress(tk, addr)
	if err != nil {
		t.Fatal(err)
	}
	s, err := txscript.PayToAddrScript(a)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// utxoRequest is a one-input, two-output ltc transaction from the address
// of index 1: 0.4 to index 2's address and change to the operator.
func utxoRequest(t *testing.T, l *keysign.Local, tk chains.Ticker) chains.UTXOSignRequest {
	t.Helper()
	d, _ := chains.NewDeriver(seed, family.All())
	from, _ := d.Address(tk, 1)
	to, _ := d.Address(tk, 2)
	op, err := l.OperatorAddress(t.Context(), tk)
	if err != nil {
		t.Fatal(err)
	}
	tx := wire.NewMsgTx(2)
	h, _ := chainhash.NewHashFromStr(strings.Repeat("ab", 32))
	tx.AddTxIn(wire.NewTxIn(wire.NewOutPoint(h, 0), nil, nil))
	tx.AddTxOut(wire.NewTxOut(40_000_000, script(t, tk, to)))
	tx.AddTxOut(wire.NewTxOut(9_990_000, script(t, tk, op)))
	var buf bytes.Buffer
	_ = tx.SerializeNoWitness(&buf)
	return chains.UTXOSignRequest{
		Context: chains.SignContext{Ticker: tk, Purpose: chains.PurposeForward, ProjectID: 1, Key: "f1"},
		Tx:      buf.Bytes(),
		Inputs:  []chains.UTXOInput{{Value: 50_000_000, Script: script(t, tk, from), Key: 1}},
		Own:     []chains.UTXOOwnOutput{{Output: 1, Key: chains.KeyRef{Operator: true}}},
	}
}

// TestSignUTXO: the local signer signs a request whose key controls its
// input; the answer is the same transaction, and VerifyUTXO accepts it.
// CheckUTXO refuses a key that does not control the input, an own output
// that pays another key, and a transaction whose inputs are not all
// described, each with ErrInvalidForward.
func TestSignUTXO(t *testing.T) {
	keys, _ := chains.NewKeys(seed)
	l := keysign.New(keys)
	tk := ticker(t, "ltc", chains.Regtest)
	r := utxoRequest(t, l, tk)
	raw, err := l.SignUTXO(t.Context(), r)
	if err != nil {
		t.Fatal(err)
	}
	var unsigned, signed wire.MsgTx
	_ = unsigned.DeserializeNoWitness(bytes.NewReader(r.Tx))
	if err := signed.Deserialize(bytes.NewReader(raw)); err != nil {
		t.Fatal(err)
	}
	if err := keysign.VerifyUTXO(tk, &unsigned, &signed, []int64{r.Inputs[0].Value}, [][]byte{r.Inputs[0].Script}); err != nil {
		t.Errorf("VerifyUTXO: %v", err)
	}
	if err := keysign.VerifyUTXO(tk, &unsigned, &signed, []int64{r.Inputs[0].Value + 1}, [][]byte{r.Inputs[0].Script}); err == nil {
		t.Error("VerifyUTXO accepts a signature over another amount")
	}
	other := signed.Copy()
	other.TxOut[0].Value--
	if err := keysign.VerifyUTXO(tk, &unsigned, other, []int64{r.Inputs[0].Value}, [][]byte{r.Inputs[0].Script}); err == nil {
		t.Error("VerifyUTXO accepts another transaction")
	}
	u, err := l.CheckUTXO(r)
	if err != nil || !u.Own[1] || u.Own[0] {
		t.Errorf("CheckUTXO: own %v, %v; want output 1 only", u, err)
	}

	for name, mutate := range map[string]func(*chains.UTXOSignRequest){
		"wrong key":            func(r *chains.UTXOSignRequest) { r.Inputs[0].Key = 3 },
		"own output elsewhere": func(r *chains.UTXOSignRequest) { r.Own[0].Output = 0 },
		"own output of index":  func(r *chains.UTXOSignRequest) { r.Own[0].Key = chains.KeyRef{Index: 7} },
		"inputs undescribed":   func(r *chains.UTXOSignRequest) { r.Inputs = nil },
		"not a transaction":    func(r *chains.UTXOSignRequest) { r.Tx = []byte{1, 2, 3} },
	} {
		r := utxoRequest(t, l, tk)
		mutate(&r)
		if _, err := l.SignUTXO(t.Context(), r); !errors.Is(err, chains.ErrInvalidForward) {
			t.Errorf("%s: %v, want ErrInvalidForward", name, err)
		}
	}
}

// TestSignAccountFamilies: EVM, TRON and Solana requests are signed over
// the whole transaction, by the key named.
func TestSignAccountFamilies(t *testing.T) {
	keys, _ := chains.NewKeys(seed)
	l := keysign.New(keys)

	eth := ticker(t, "eth", chains.Mainnet)
	to := common.HexToAddress("0x00000000000000000000000000000000000000aa")
	unsigned := types.NewTx(&types.DynamicFeeTx{ChainID: big.NewInt(1), Nonce: 3, GasTipCap: big.NewInt(1), GasFeeCap: big.NewInt(2), Gas: 21000, To: &to, Value: big.NewInt(5)})
	raw, _ := unsigned.MarshalBinary()
	out, err := l.SignEVM(t.Context(), chains.EVMSignRequest{Context: chains.SignContext{Ticker: eth, Key: "e"}, Tx: raw, ChainID: "1", Key: chains.KeyRef{Index: 4}})
	if err != nil {
		t.Fatal(err)
	}
	signed := new(types.Transaction)
	if err := signed.UnmarshalBinary(out); err != nil {
		t.Fatal(err)
	}
	from, _ := types.Sender(types.LatestSignerForChainID(big.NewInt(1)), signed)
	d, _ := chains.NewDeriver(seed, family.All())
	want, _ := d.Address(eth, 4)
	if !strings.EqualFold(from.Hex(), want) || signed.Nonce() != 3 || signed.Value().Int64() != 5 {
		t.Errorf("EVM: signed by %s (want %s), nonce %d, value %s", from.Hex(), want, signed.Nonce(), signed.Value())
	}

	trx := ticker(t, "trx", chains.Mainnet)
	data := []byte("raw data")
	sig, err := l.SignTron(t.Context(), chains.TronSignRequest{Context: chains.SignContext{Ticker: trx, Key: "t"}, RawData: data, Key: chains.KeyRef{Operator: true}})
	if err != nil || len(sig) != 65 {
		t.Fatalf("TRON: %x, %v", sig, err)
	}
	id := sha256.Sum256(data)
	pub, _, err := ecdsa.RecoverCompact(append([]byte{sig[64]}, sig[:64]...), id[:])
	op, _ := keys.OperatorSecp256k1(trx)
	if err != nil || !pub.IsEqual(op.PubKey()) {
		t.Errorf("TRON: the signature does not recover the operator's key: %v", err)
	}

	sol := ticker(t, "sol", chains.Mainnet)
	msg := []byte("message")
	sigs, err := l.SignSolana(t.Context(), chains.SolanaSignRequest{Context: chains.SignContext{Ticker: sol, Key: "s"}, Message: msg, Keys: []chains.KeyRef{{Index: 2}, {Operator: true}}})
	if err != nil || len(sigs) != 2 {
		t.Fatalf("Solana: %d signatures, %v", len(sigs), err)
	}
	k2, _ := keys.Ed25519(sol, 2)
	kop, _ := keys.OperatorEd25519(sol)
	if !ed25519.Verify(k2.Public().(ed25519.PublicKey), msg, sigs[0]) || !ed25519.Verify(kop.Public().(ed25519.PublicKey), msg, sigs[1]) {
		t.Error("Solana: the signatures are not the named keys'")
	}
	if _, err := l.SignEVM(t.Context(), chains.EVMSignRequest{Context: chains.SignContext{Ticker: eth}, Tx: []byte{0xff}, ChainID: "1"}); !errors.Is(err, chains.ErrInvalidForward) {
		t.Errorf("EVM garbage: %v", err)
	}
}
