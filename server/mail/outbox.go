package mail

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"strings"
	"unicode"

	entdb "github.com/payhook/payhook/ent/db"
	entemail "github.com/payhook/payhook/ent/db/email"
	"github.com/payhook/payhook/ent/store"
)

// Kind is what an email says (the emails table's kind).
type Kind string

// The kinds of email payhook sends.
const (
	// KindPayoutApproval: a payout of the project waits for a dashboard
	// user's approval (to the project's dashboard users).
	KindPayoutApproval Kind = "payout_approval"
	// KindEndpointPaused: payhook paused the webhooks to one of the
	// project's endpoints (to the project's dashboard users).
	KindEndpointPaused Kind = "endpoint_paused"
	// KindPriceDegraded: payhook has no fresh price of a coin it serves
	// (to the operator, --operator-email).
	KindPriceDegraded Kind = "price_degraded"
	// KindReceipt: a checkout that carried the payer's email was paid (to
	// the payer).
	KindReceipt Kind = "receipt"
	// KindInvitation: an owner invited someone to the project's dashboard
	// (to the invitee).
	KindInvitation Kind = "invitation"
)

// Email is one email to store: to one recipient, about one cause.
type Email struct {
	// ProjectID is the project it is about; 0 for the operator's.
	ProjectID int64
	// Kind is what it says.
	Kind Kind
	// Cause names what caused it, unique within its kind (a payout's id,
	// an episode's start): the same kind, cause and recipient are one
	// email, however often they are stored.
	Cause string
	// To is the recipient's address.
	To string
	// Subject, Text and HTML are the message: a subject line, the plain
	// text and, optionally, the same as HTML.
	Subject, Text, HTML string
}

// dedupeKey is the email's unique key: kind, cause and recipient (in lower
// case). A long cause is replaced by its hash, so the key stays short
// enough for the unique index.
func (e Email) dedupeKey() string {
	cause := e.Cause
	if len(cause) > maxCause {
		h := sha256.Sum256([]byte(cause))
		cause = "sha256-" + hex.EncodeToString(h[:16])
	}
	return string(e.Kind) + ":" + cause + ":" + strings.ToLower(e.To)
}

// maxCause is the longest cause kept as it is in a dedupe key.
const maxCause = 128

// check reports what is missing or wrong in e.
func (e Email) check() error {
	switch {
	case e.Kind == "":
		return fmt.Errorf("%w: no kind", ErrInvalidEmail)
	case e.Cause == "":
		return fmt.Errorf("%w: %s email without a cause", ErrInvalidEmail, e.Kind)
	case strings.TrimSpace(e.Subject) == "" || strings.TrimSpace(e.Text) == "":
		return fmt.Errorf("%w: %s email without a subject or a text", ErrInvalidEmail, e.Kind)
	}
	if err := checkAddress(e.To); err != nil {
		return fmt.Errorf("%w: %s email to %q: %w", ErrInvalidEmail, e.Kind, e.To, err)
	}
	return nil
}

// Outbox stores emails in their causes' transactions. A nil *Outbox is
// email off: it stores nothing and every method returns nil, so callers
// need no check of their own.
type Outbox struct {
	db     *store.DB
	cfg    Config
	wake   func()
	logger *slog.Logger
}

// Enqueue stores emails inside tx, the transaction of what causes them, to
// be sent once it commits (a rollback stores nothing). An email whose
// kind, cause and recipient were stored before, by this or any earlier
// transaction, is left out: a cause is emailed once. All of them are
// written in one statement. Errors wrap ErrInvalidEmail for an email
// missing a part or with a bad address; nothing is stored then.
func (o *Outbox) Enqueue(ctx context.Context, tx *entdb.Tx, emails ...Email) error {
	if o == nil || len(emails) == 0 {
		return nil
	}
	now := o.cfg.Now()
	seen := map[string]bool{}
	rows := make([][]any, 0, len(emails))
	for _, e := range emails {
		if err := e.check(); err != nil {
			return err
		}
		key := e.dedupeKey()
		if seen[key] {
			continue
		}
		seen[key] = true
		rows = append(rows, []any{now, e.ProjectID, string(e.Kind), key, e.To, headerText(e.Subject), e.Text, e.HTML,
			entemail.StatusPending.String(), 0, now, ""})
	}
	if _, err := store.InsertRows(ctx, tx, o.db.Dialect, entemail.Table, emailColumns, rows,
		"ON CONFLICT ("+entemail.FieldDedupeKey+") DO NOTHING", false); err != nil {
		return fmt.Errorf("store %d emails: %w", len(rows), err)
	}
	if o.wake != nil {
		tx.OnCommit(func(next entdb.Committer) entdb.Committer {
			return entdb.CommitFunc(func(ctx context.Context, tx *entdb.Tx) error {
				err := next.Commit(ctx, tx)
				if err == nil {
					o.wake()
				}
				return err
			})
		})
	}
	return nil
}

// emailColumns are the columns Enqueue writes; "to" is a reserved word in
// SQL, quoted the way both dialects read it.
var emailColumns = []store.Column{
	{Name: entemail.FieldCreatedAt, PGType: "timestamptz"},
	{Name: entemail.FieldProjectID, PGType: "bigint"},
	{Name: entemail.FieldKind, PGType: "text"},
	{Name: entemail.FieldDedupeKey, PGType: "text"},
	{Name: `"` + entemail.FieldTo + `"`, PGType: "text"},
	{Name: entemail.FieldSubject, PGType: "text"},
	{Name: entemail.FieldTextBody, PGType: "text"},
	{Name: entemail.FieldHTMLBody, PGType: "text"},
	{Name: entemail.FieldStatus, PGType: "text"},
	{Name: entemail.FieldAttempts, PGType: "bigint"},
	{Name: entemail.FieldNextAttemptAt, PGType: "timestamptz"},
	{Name: entemail.FieldLastError, PGType: "text"},
}

// headerText makes s one header line: control characters (a line break
// in a project's name) become spaces.
func headerText(s string) string {
	return strings.Join(strings.FieldsFunc(s, func(r rune) bool { return unicode.IsControl(r) || unicode.IsSpace(r) }), " ")
}
