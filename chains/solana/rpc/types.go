package rpc

import (
	"encoding/json"
	"fmt"
	"strconv"

	solana "github.com/gagliardetto/solana-go"
)

// The documented shapes of the answers the backend reads, reduced to the
// fields it uses. Required fields are pointers where a missing value must
// not read as zero.

// contextValue is the RpcResponse wrapper: {"context":{"slot":N},"value":V}.
type contextValue[T any] struct {
	Context struct {
		Slot uint64 `json:"slot"`
	} `json:"context"`
	Value T `json:"value"`
}

// blockHeader is getBlock's answer with transactionDetails "none".
type blockHeader struct {
	Blockhash         string  `json:"blockhash"`
	PreviousBlockhash string  `json:"previousBlockhash"`
	ParentSlot        *uint64 `json:"parentSlot"`
	BlockHeight       *uint64 `json:"blockHeight"`
	BlockTime         *int64  `json:"blockTime"`
}

func (h *blockHeader) check(slot int64) error {
	if h.ParentSlot == nil || (slot > 0 && *h.ParentSlot >= uint64(slot)) {
		return fmt.Errorf("block %d: parent slot missing or not below it", slot)
	}
	if err := checkHash(h.Blockhash); err != nil {
		return fmt.Errorf("block %d: blockhash: %w", slot, err)
	}
	if err := checkHash(h.PreviousBlockhash); err != nil {
		return fmt.Errorf("block %d: previousBlockhash: %w", slot, err)
	}
	return nil
}

// signatureInfo is one entry of getSignaturesForAddress.
type signatureInfo struct {
	Signature          string          `json:"signature"`
	Slot               *uint64         `json:"slot"`
	Err                json.RawMessage `json:"err"`
	ConfirmationStatus *string         `json:"confirmationStatus"`
}

// failed reports a transaction error (err not null).
func failed(err json.RawMessage) bool { return len(err) > 0 && string(err) != "null" }

// signatureStatus is one non-null entry of getSignatureStatuses.
type signatureStatus struct {
	Slot               *uint64         `json:"slot"`
	Confirmations      *uint64         `json:"confirmations"`
	Err                json.RawMessage `json:"err"`
	ConfirmationStatus *string         `json:"confirmationStatus"`
}

// txResult is getTransaction's answer with encoding "json".
type txResult struct {
	Slot        *uint64   `json:"slot"`
	Meta        *txMeta   `json:"meta"`
	Transaction *txObject `json:"transaction"`
}

type txObject struct {
	Signatures []string `json:"signatures"`
	Message    struct {
		AccountKeys []string `json:"accountKeys"`
	} `json:"message"`
}

type txMeta struct {
	Err               json.RawMessage `json:"err"`
	PreBalances       []uint64        `json:"preBalances"`
	PostBalances      []uint64        `json:"postBalances"`
	PreTokenBalances  []tokenBalance  `json:"preTokenBalances"`
	PostTokenBalances []tokenBalance  `json:"postTokenBalances"`
	LoadedAddresses   *struct {
		Writable []string `json:"writable"`
		Readonly []string `json:"readonly"`
	} `json:"loadedAddresses"`
}

type tokenBalance struct {
	AccountIndex  int    `json:"accountIndex"`
	Mint          string `json:"mint"`
	Owner         string `json:"owner"`
	UITokenAmount struct {
		Amount   string `json:"amount"`
		Decimals int    `json:"decimals"`
	} `json:"uiTokenAmount"`
}

// accountKeys returns the transaction's account keys in the order its
// balances use: the message's keys, then the addresses loaded from lookup
// tables (writable, then read-only).
func (t *txResult) accountKeys() []string {
	keys := append([]string(nil), t.Transaction.Message.AccountKeys...)
	if la := t.Meta.LoadedAddresses; la != nil {
		keys = append(keys, la.Writable...)
		keys = append(keys, la.Readonly...)
	}
	return keys
}

// check validates the fields the backend reads.
func (t *txResult) check(sig string) error {
	switch {
	case t.Slot == nil:
		return fmt.Errorf("transaction %s: no slot", sig)
	case t.Meta == nil:
		return fmt.Errorf("transaction %s: no status metadata", sig)
	case t.Transaction == nil || len(t.Transaction.Signatures) == 0 || t.Transaction.Signatures[0] != sig:
		return fmt.Errorf("transaction %s: the answer is another transaction", sig)
	}
	n := len(t.accountKeys())
	if len(t.Meta.PreBalances) != n || len(t.Meta.PostBalances) != n {
		return fmt.Errorf("transaction %s: %d account keys but %d/%d balances", sig, n, len(t.Meta.PreBalances), len(t.Meta.PostBalances))
	}
	for _, tb := range append(append([]tokenBalance(nil), t.Meta.PreTokenBalances...), t.Meta.PostTokenBalances...) {
		if tb.AccountIndex < 0 || tb.AccountIndex >= n {
			return fmt.Errorf("transaction %s: token balance of account %d of %d", sig, tb.AccountIndex, n)
		}
		if _, err := strconv.ParseUint(tb.UITokenAmount.Amount, 10, 64); err != nil {
			return fmt.Errorf("transaction %s: token amount %q", sig, cut(tb.UITokenAmount.Amount))
		}
	}
	return nil
}

// latestBlockhash is getLatestBlockhash's value.
type latestBlockhash struct {
	Blockhash            string  `json:"blockhash"`
	LastValidBlockHeight *uint64 `json:"lastValidBlockHeight"`
}

// accountInfo is one account of getMultipleAccounts or getAccountInfo with
// encoding base64.
type accountInfo struct {
	Lamports uint64    `json:"lamports"`
	Owner    string    `json:"owner"`
	Data     [2]string `json:"data"`
}

// uiTokenAmount is getTokenAccountBalance's value.
type uiTokenAmount struct {
	Amount   string `json:"amount"`
	Decimals int    `json:"decimals"`
}

// checkHash reports a string that is not a base58 32-byte hash.
func checkHash(s string) error {
	if _, err := solana.HashFromBase58(s); err != nil || s == "" {
		return fmt.Errorf("%q is not a base58 32-byte hash", cut(s))
	}
	return nil
}

// checkSignature reports a string that is not a base58 64-byte signature.
func checkSignature(s string) error {
	if _, err := solana.SignatureFromBase58(s); err != nil || s == "" {
		return fmt.Errorf("%q is not a base58 signature", cut(s))
	}
	return nil
}
