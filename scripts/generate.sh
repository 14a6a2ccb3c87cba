#!/usr/bin/env bash
# Regenerates everything generated in this repository, offline but for the Go
# module proxy: third-party protos, gen/ (buf + protoc plugins pinned as go.mod
# tools) and ent/db (entc). Migrations are not regenerated here: they are
# immutable once landed (see ent/migrations/README.md); the store tests check
# that they match the ent schemas.
set -euo pipefail
cd "$(dirname "$0")/.."

./scripts/protodeps.sh
go tool buf format -w
go tool buf lint
go tool buf generate
# What the REST gateway adds on the wire, which no .proto says (envelope,
# error body, paths, JSON types): see tools/openapi/postprocess.
go run ./tools/openapi/postprocess gen/openapi/payhook.openapi.json
# Embedded by the server (GET /openapi.json, /docs/); server/openapi's tests
# fail when this copy differs from gen/.
cp gen/openapi/payhook.openapi.json server/openapi/openapi.json
go generate ./ent/...
gofmt -l gen ent/db | (! grep .) || { echo "generated code is not gofmt-clean" >&2; exit 1; }
