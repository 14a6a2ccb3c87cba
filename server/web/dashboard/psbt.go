package dashboard

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"unicode"

	entdb "github.com/payhook/payhook/ent/db"
	entoutbound "github.com/payhook/payhook/ent/db/outbound"
	entpayout "github.com/payhook/payhook/ent/db/payout"
	"github.com/payhook/payhook/internal/kind"
	"github.com/payhook/payhook/server/merchant/payout"
	"github.com/payhook/payhook/server/outbound"
)

// Payouts from a merchant's watch-only key are prepared as PSBTs (BIP
// 174) that the merchant signs in their own wallet. The payouts page lists
// them waiting for the signature, each with its PSBT to download
// (payouts/ID/psbt, read access) and shown as base64, and a form that
// takes the signed one back (POST payouts/ID/psbt: a .psbt file, binary or
// base64, or the base64 pasted), which payout.Service.SubmitPSBT checks
// and sends. Uploading sends money: it needs the role payout approval
// needs, and it is audited (payout.psbt_submit).

// psbtUpload is the signed PSBT's upload: a file (psbt_file: binary or
// base64) or the base64 pasted (psbt), each at most the upload's bound.
var psbtUpload = upload{what: "a signed PSBT", parts: map[string]int64{
	"psbt_file": MaxUploadBytes,
	"psbt":      MaxUploadBytes,
}}

// psbtMagic starts every binary PSBT (BIP 174).
var psbtMagic = []byte("psbt\xff")

// maxPSBTRows bounds the payouts listed waiting for a signature, and those
// listed signed.
const maxPSBTRows = 20

// isPSBTPath reports whether rest (below Prefix) is a payout's PSBT,
// payouts/ID/psbt.
func isPSBTPath(rest string) bool {
	id, ok := strings.CutPrefix(rest, "payouts/")
	if !ok {
		return false
	}
	id, ok = strings.CutSuffix(id, "/psbt")
	return ok && id != "" && !strings.Contains(id, "/")
}

// psbtRow is a payout waiting for the merchant's signature.
type psbtRow struct {
	ID                     int64
	Coin, NetworkFee, When string
	Outputs                []payoutOutput
	// Base64 is the unsigned PSBT, for wallets that paste.
	Base64 string
	// Error is why the last upload was refused, Pasted what it pasted.
	Error, Pasted string
}

// signedRow is a payout whose signed PSBT was accepted.
type signedRow struct {
	ID                       int64
	Coin, Status, TxID, When string
}

// psbtRefusal is an upload of payout ID refused: why, and what was pasted
// (the form keeps it).
type psbtRefusal struct {
	ID             int64
	Reason, Pasted string
}

// psbtPayouts fills d with the project's payouts waiting for a signature
// and those recently signed.
func (h *Handler) psbtPayouts(r *http.Request, projectID int64, d *payoutsData, refused *psbtRefusal) error {
	ctx := r.Context()
	waiting, err := h.cfg.DB.Outbound.Query().
		Where(entoutbound.ProjectID(projectID), entoutbound.PurposeEQ(outbound.PurposePayoutPSBT), entoutbound.StateEQ(entoutbound.StateAwaitingSignature)).
		Order(entdb.Asc(entoutbound.FieldID)).Limit(maxPSBTRows).IDs(ctx)
	if err != nil {
		return fmt.Errorf("payouts waiting for a signature: %w", err)
	}
	ps, err := h.cfg.DB.Payout.Query().Where(entpayout.ProjectID(projectID), entpayout.OutboundIDIn(waiting...)).
		Order(entdb.Asc(entpayout.FieldID)).All(ctx)
	if err != nil {
		return fmt.Errorf("payouts waiting for a signature: %w", err)
	}
	caller := payout.Caller{ProjectID: projectID}
	for _, p := range ps {
		got, err := h.cfg.Payouts.GetPSBT(ctx, caller, p.ID)
		if errors.Is(err, payout.ErrNoPSBT) {
			continue // signed meanwhile
		}
		if err != nil {
			return err
		}
		row := psbtRow{
			ID: p.ID, Coin: p.Ticker, NetworkFee: got.NetworkFee.String(), When: p.CreatedAt.UTC().Format("2006-01-02 15:04 UTC"),
			Base64: base64.StdEncoding.EncodeToString(got.PSBT),
		}
		for _, o := range got.Outputs {
			row.Outputs = append(row.Outputs, payoutOutput{Address: o.Address, Amount: o.Amount.String()})
		}
		if refused != nil && refused.ID == p.ID {
			// Said beside its form, not again at the top.
			row.Error, row.Pasted, d.Error = refused.Reason, refused.Pasted, ""
		}
		d.Signature = append(d.Signature, row)
	}
	signed, err := h.cfg.DB.Outbound.Query().
		Where(entoutbound.ProjectID(projectID), entoutbound.PurposeEQ(outbound.PurposePayoutPSBT), entoutbound.StateNEQ(entoutbound.StateAwaitingSignature)).
		Order(entdb.Desc(entoutbound.FieldID)).Limit(maxPSBTRows).All(ctx)
	if err != nil {
		return fmt.Errorf("payouts signed: %w", err)
	}
	txids := make(map[int64]string, len(signed))
	ids := make([]int64, len(signed))
	for i, o := range signed {
		ids[i], txids[o.ID] = o.ID, o.Txid
	}
	ps, err = h.cfg.DB.Payout.Query().Where(entpayout.ProjectID(projectID), entpayout.OutboundIDIn(ids...)).
		Order(entdb.Desc(entpayout.FieldID)).All(ctx)
	if err != nil {
		return fmt.Errorf("payouts signed: %w", err)
	}
	for _, p := range ps {
		d.Signed = append(d.Signed, signedRow{
			ID: p.ID, Coin: p.Ticker, Status: string(p.Status), TxID: txids[*p.OutboundID],
			When: p.UpdatedAt.UTC().Format("2006-01-02 15:04 UTC"),
		})
	}
	return nil
}

// psbtID parses the payout id of payouts/ID/psbt; 0 when it is none.
func psbtID(sub string) int64 {
	id, err := strconv.ParseInt(strings.TrimSuffix(sub, "/psbt"), 10, 64)
	if err != nil || id <= 0 {
		return 0
	}
	return id
}

// downloadPSBT answers payout id's PSBT as a file, payout-ID.psbt: the
// binary BIP 174 bytes payout.Service.GetPSBT gives.
func (h *Handler) downloadPSBT(w http.ResponseWriter, r *http.Request, s *session, id int64) {
	if id == 0 || h.cfg.Payouts == nil {
		h.pages.NotFound(w)
		return
	}
	got, err := h.cfg.Payouts.GetPSBT(r.Context(), payout.Caller{ProjectID: s.user.ProjectID}, id)
	switch {
	case errors.Is(err, payout.ErrPayoutNotFound), errors.Is(err, payout.ErrNoPSBT):
		h.pages.NotFound(w)
		return
	case err != nil:
		h.pages.Fail(w, "payout PSBT", err)
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": fmt.Sprintf("payout-%d.psbt", id)}))
	w.Header().Set("Content-Length", strconv.Itoa(len(got.PSBT)))
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(got.PSBT)
}

// submitPSBT takes the merchant's signed PSBT of payout id (readUpload
// read it) and hands it to payout.Service.SubmitPSBT, which checks and
// sends it. Accepted, the page says so with the transaction's id; refused
// (not a PSBT, not signed, not the payout's: 400; signed already: 409),
// the page says why and keeps what was pasted.
func (h *Handler) submitPSBT(w http.ResponseWriter, r *http.Request, s *session, id int64) {
	if id == 0 || h.cfg.Payouts == nil {
		h.pages.NotFound(w)
		return
	}
	pasted := string(uploaded(r, "psbt"))
	refuse := func(status int, why string) {
		h.payoutsPageWith(w, r, s, status, func(d *payoutsData) *psbtRefusal {
			d.Error = fmt.Sprintf("Payout %d: the PSBT is refused: %s", id, why)
			return &psbtRefusal{ID: id, Reason: why, Pasted: pasted}
		})
	}
	raw, why := decodePSBT(uploaded(r, "psbt_file"), pasted)
	if why != "" {
		refuse(http.StatusBadRequest, why)
		return
	}
	_, err := h.cfg.Payouts.SubmitPSBT(r.Context(), payout.Caller{ProjectID: s.user.ProjectID}, id, raw)
	switch k := kind.Of(err); {
	case err == nil:
		http.Redirect(w, r, payoutsPath+"?signed="+strconv.FormatInt(id, 10)+"#signed", http.StatusSeeOther)
	case errors.Is(err, payout.ErrPayoutNotFound):
		h.pages.NotFound(w)
	case errors.Is(err, payout.ErrNoPSBT) || k == kind.Conflict:
		refuse(http.StatusConflict, kind.Message(err))
	case k == kind.Invalid || k == kind.FailedPrecondition:
		refuse(http.StatusBadRequest, kind.Message(err))
	default:
		h.pages.Fail(w, "submit payout PSBT", err)
	}
}

// decodePSBT returns the PSBT of an upload: the file's bytes (binary BIP
// 174, or its base64 as a text file), or the pasted base64; or why there
// is none.
func decodePSBT(file []byte, pasted string) ([]byte, string) {
	pasted = strings.TrimSpace(pasted)
	switch {
	case len(file) > 0 && pasted != "":
		return nil, "choose the signed PSBT's file or paste its base64, not both"
	case len(file) > 0:
		if bytes.HasPrefix(file, psbtMagic) {
			return file, ""
		}
		if b, ok := fromBase64(string(file)); ok {
			return b, ""
		}
		return nil, "the file is neither a PSBT (BIP 174, binary) nor one in base64"
	case pasted != "":
		if b, ok := fromBase64(pasted); ok {
			return b, ""
		}
		return nil, "the pasted text is not base64 (export the signed PSBT from your wallet as base64)"
	}
	return nil, "choose the signed PSBT's file or paste its base64"
}

// fromBase64 decodes s, standard base64 with any white space (wallets
// wrap lines) removed.
func fromBase64(s string) ([]byte, bool) {
	s = strings.Map(func(c rune) rune {
		if unicode.IsSpace(c) {
			return -1
		}
		return c
	}, s)
	b, err := base64.StdEncoding.DecodeString(s)
	return b, err == nil && len(b) > 0
}
