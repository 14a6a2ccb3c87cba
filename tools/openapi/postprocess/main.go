// Command postprocess rewrites the OpenAPI 3.1 document that
// protoc-gen-connect-openapi generates from the protos into what payhook's
// REST gateway (server/gateway) really answers. scripts/generate.sh runs it
// on gen/openapi/payhook.openapi.json right after `buf generate`:
//
//	go run ./tools/openapi/postprocess gen/openapi/payhook.openapi.json
//
// The plugin reads the google.api.http and protovalidate rules; what the
// gateway adds on the wire is in Go code, so this step adds it:
//
//   - paths end in a slash (the documented form; the server answers both),
//     and a token binding `{ticker=*/*}` (which the plugin renders as
//     `/*/{*}/op`) becomes `/{network}/{token}/op/` with an operationId of
//     its own;
//   - every success body starts with `"status": "success"`, except
//     `GET /info/`, which is a map keyed by network (see Info); the single
//     ticker forms of info answer one CoinInfo with the status;
//   - errors are the gateway's `{"status": "error", "error": "..."}` body
//     (400, 401 and 403 where a key is needed, 404, and the rest as
//     default);
//   - an operation that may change something (its method declares a scope
//     other than read) takes the Idempotency-Key header, may answer 409 for
//     it, and marks a replayed answer with Idempotent-Replayed;
//   - the public operations need no key (`security: []`);
//   - JSON types as protojson with EmitDefaultValues writes them: int64 is a
//     string of digits; scalars, lists and maps are always present; a proto3
//     optional field is left out until set, never null; a
//     google.protobuf.Value is a string or null;
//   - a query parameter or body field with a minimum length is required (the
//     server answers 400 without it), and so is a body number that must be
//     above zero;
//   - an operation whose body the gateway also takes as a URL-encoded form
//     (the payout, refund and notification POSTs) documents that form too;
//   - the accounting export (GET /ledger/export/), a stream of
//     google.api.HttpBody messages, is the file the gateway writes: CSV or
//     a JSON array of LedgerRow, with its Content-Disposition.
//
// It refuses a document it has already processed, and one whose operations
// are not the ones it knows, so a proto change that needs a new rule here
// fails generation instead of publishing an untruthful document.
package main

import (
	"fmt"
	"os"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: postprocess FILE (rewritten in place)")
		os.Exit(2)
	}
	if err := run(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "postprocess:", err)
		os.Exit(1)
	}
}

func run(path string) error {
	in, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	out, err := Process(in)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return os.WriteFile(path, out, 0o644)
}
