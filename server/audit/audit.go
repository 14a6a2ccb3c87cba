package audit

import (
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	entdb "github.com/payhook/payhook/ent/db"
	"github.com/payhook/payhook/ent/db/auditentry"
)

// Kinds of actor.
const (
	// User is a dashboard user (ActorID is the DashboardUser's id).
	User = auditentry.ActorKindUser
	// APIKey is an API key (ActorID is the APIKey's id).
	APIKey = auditentry.ActorKindAPIKey
	// Operator is the operator through a payhook command (server/admin):
	// ActorID is 0, Actor "cli:" and the OS user who ran it.
	Operator = auditentry.ActorKindOperator
)

// Bounds of what an entry keeps.
const (
	// MaxUserAgent is the most bytes of a User-Agent kept.
	MaxUserAgent = 256
	// MaxText is the most bytes of an actor's name or a target kept.
	MaxText = 200
)

// Entry is one change to record.
type Entry struct {
	// ProjectID is the project changed.
	ProjectID int64
	// ActorKind and ActorID are who changed it; Actor is their name then
	// (an email, a key's name, cli:<OS user>).
	ActorKind auditentry.ActorKind
	ActorID   int64
	Actor     string
	// Action is what was done (user.disable, ProjectService/SetWallet);
	// Target what it was done to ("" for the project itself).
	Action, Target string
	// IP and UserAgent are where it came from.
	IP, UserAgent string
	// At is when.
	At time.Time
}

// Record stores e with c: a transaction's client writes it in that
// transaction.
func Record(ctx context.Context, c *entdb.Client, e Entry) error {
	if e.ProjectID == 0 || e.Action == "" {
		return fmt.Errorf("audit entry without a project or an action: %+v", e)
	}
	err := c.AuditEntry.Create().SetProjectID(e.ProjectID).SetActorKind(e.ActorKind).SetActorID(e.ActorID).
		SetActor(cut(e.Actor, MaxText)).SetAction(cut(e.Action, MaxText)).SetTarget(cut(e.Target, MaxText)).
		SetIP(cut(e.IP, 64)).SetUserAgent(cut(e.UserAgent, MaxUserAgent)).SetCreatedAt(e.At).Exec(ctx)
	if err != nil {
		return fmt.Errorf("record %s: %w", e.Action, err)
	}
	return nil
}

// cut returns s cut to at most n bytes, on a rune boundary, without
// control characters.
func cut(s string, n int) string {
	s = strings.Map(func(r rune) rune {
		if r < ' ' || r == 0x7f || r == utf8.RuneError {
			return ' '
		}
		return r
	}, s)
	for len(s) > n {
		_, size := utf8.DecodeLastRuneInString(s)
		s = s[:len(s)-size]
	}
	return s
}

// DefaultPage is how many entries List returns without a limit.
const DefaultPage = 50

// List returns the project's entries, newest first, older than the entry
// before (0: from the newest), at most limit (DefaultPage when 0); next is
// the cursor of the page after (0 when this is the last).
func List(ctx context.Context, c *entdb.Client, projectID, before int64, limit int) (rows []*entdb.AuditEntry, next int64, err error) {
	if limit <= 0 {
		limit = DefaultPage
	}
	q := c.AuditEntry.Query().Where(auditentry.ProjectID(projectID))
	if before > 0 {
		q = q.Where(auditentry.IDLT(before))
	}
	rows, err = q.Order(entdb.Desc(auditentry.FieldID)).Limit(limit + 1).All(ctx)
	if err != nil {
		return nil, 0, fmt.Errorf("list audit entries: %w", err)
	}
	if len(rows) > limit {
		rows = rows[:limit]
		next = rows[limit-1].ID
	}
	return rows, next, nil
}

// CSVHeader is the header row of WriteCSV.
var CSVHeader = []string{"id", "time", "actor_kind", "actor_id", "actor", "action", "target", "ip", "user_agent"}

// csvPage is how many entries WriteCSV reads per query.
const csvPage = 500

// WriteCSV writes the project's entries, newest first, as CSV with
// CSVHeader to w, a page at a time (flush, when not nil, runs after each
// page: a long log streams). A cell a spreadsheet would take for a formula
// (=, +, -, @ first) is prefixed with a quote.
func WriteCSV(ctx context.Context, c *entdb.Client, projectID int64, w io.Writer, flush func()) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(CSVHeader); err != nil {
		return err
	}
	var before int64
	for {
		rows, next, err := List(ctx, c, projectID, before, csvPage)
		if err != nil {
			return err
		}
		for _, e := range rows {
			if err := cw.Write([]string{
				strconv.FormatInt(e.ID, 10), e.CreatedAt.UTC().Format(time.RFC3339), string(e.ActorKind),
				strconv.FormatInt(e.ActorID, 10), cell(e.Actor), cell(e.Action), cell(e.Target), cell(e.IP), cell(e.UserAgent),
			}); err != nil {
				return err
			}
		}
		cw.Flush()
		if err := cw.Error(); err != nil {
			return err
		}
		if flush != nil {
			flush()
		}
		if next == 0 {
			return nil
		}
		before = next
	}
}

// cell defuses a value a spreadsheet would evaluate (CSV injection).
func cell(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}
