package server_test

import (
	"context"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/payhook/payhook/ent/store"
	payhookv1 "github.com/payhook/payhook/gen/payhook/v1"
	"github.com/payhook/payhook/server/merchant/eventtype"
	"github.com/payhook/payhook/server/servertest"
)

// TestEventTypes: GET /events/types/ answers the event catalogue without
// an API key, each event type with its schema exactly as the catalogue
// generates it (through google.protobuf.Struct, nothing lost); ?name=
// answers one, an unknown name is 404 naming it; gRPC answers the same.
func TestEventTypes(t *testing.T) {
	t.Parallel()
	in := servertest.Start(t, store.SQLite)
	all := eventtype.All()

	r := in.Get(t, "/events/types/", nil, "")
	wantStatus(t, r, 200)
	var body struct {
		Status     string `json:"status"`
		EventTypes []struct {
			Name        string   `json:"name"`
			Description string   `json:"description"`
			Services    []string `json:"services"`
			Schema      any      `json:"schema"`
		} `json:"event_types"`
	}
	if err := json.Unmarshal(r.Body, &body); err != nil || body.Status != "success" {
		t.Fatalf("%v: %s", err, r.Body)
	}
	if len(body.EventTypes) != len(all) {
		t.Fatalf("%d event types, the catalogue has %d", len(body.EventTypes), len(all))
	}
	for i, e := range all {
		got := body.EventTypes[i]
		raw, err := json.Marshal(e.Schema())
		if err != nil {
			t.Fatal(err)
		}
		var want any
		if err := json.Unmarshal(raw, &want); err != nil {
			t.Fatal(err)
		}
		if got.Name != e.Name || got.Description != e.Description || !slices.Equal(got.Services, e.Services) || !reflect.DeepEqual(got.Schema, want) {
			t.Errorf("entry %d: %+v, want %s %v", i, got, e.Name, want)
		}
	}

	r = in.Get(t, "/events/types", q("name", "payout.done"), "")
	wantStatus(t, r, 200)
	if l, _ := r.JSON["event_types"].([]any); len(l) != 1 || !strings.Contains(string(r.Body), `"name":"payout.done"`) {
		t.Fatalf("one by name: %s", r.Body)
	}
	r = in.Get(t, "/events/types/", q("name", "payout.lost"), "")
	wantStatus(t, r, 404)
	if !strings.Contains(string(r.Body), `name: unknown event type \"payout.lost\"`) {
		t.Fatalf("unknown name: %s", r.Body)
	}

	got, err := payhookv1.NewEventServiceClient(in.Conn).ListEventTypes(context.Background(), &payhookv1.ListEventTypesRequest{})
	if err != nil || len(got.GetEventTypes()) != len(all) || got.GetEventTypes()[0].GetSchema().GetFields()["type"].GetStringValue() != "object" {
		t.Fatalf("gRPC: %v %v", got, err)
	}
}
