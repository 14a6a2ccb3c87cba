package audit

import (
	"context"
	"fmt"
	"strings"
	"time"

	entdb "github.com/payhook/payhook/ent/db"
	entapikey "github.com/payhook/payhook/ent/db/apikey"
	"github.com/payhook/payhook/server/interceptor"
)

// Calls records the management API's calls (interceptor.AuditRecorder):
// the entry's actor is the call's API key, its action the method's short
// name (ProjectService/SetWallet).
type Calls struct {
	// DB is where entries are written.
	DB *entdb.Client
	// Now is the clock.
	Now func() time.Time
}

// RecordCall implements interceptor.AuditRecorder. It reads the key's name
// (one query: audited methods are not the payments' hot path).
func (c Calls) RecordCall(ctx context.Context, call interceptor.AuditedCall) error {
	if call.ProjectID == 0 {
		return fmt.Errorf("audit %s: no project", call.Method)
	}
	k, err := c.DB.APIKey.Query().Where(entapikey.ID(call.Key.ID)).Select(entapikey.FieldName).Only(ctx)
	if err != nil {
		return fmt.Errorf("audit %s: api key %d: %w", call.Method, call.Key.ID, err)
	}
	action := strings.TrimPrefix(call.Method, "/")
	action = strings.TrimPrefix(action, "payhook.v1.")
	return Record(ctx, c.DB, Entry{
		ProjectID: call.ProjectID, ActorKind: APIKey, ActorID: call.Key.ID, Actor: k.Name,
		Action: action, Target: call.Target, IP: call.IP, UserAgent: call.UserAgent, At: c.Now(),
	})
}
