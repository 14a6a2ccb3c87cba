#!/usr/bin/env bash
# Copies the third-party .proto sources payhook imports into proto/third_party,
# taking them from modules on the Go module proxy (no Buf Schema Registry needed).
# The versions are pinned here; the go command verifies each module against go.sum's
# checksum database entry, so the copy is reproducible. CI reruns this and fails on a diff.
set -euo pipefail
cd "$(dirname "$0")/.."

GATEWAY_V1=github.com/grpc-ecosystem/grpc-gateway@v1.16.0       # ships googleapis' google/api protos
PROTOVALIDATE=github.com/bufbuild/protovalidate@v1.2.2          # ships buf/validate/validate.proto

moddir() { GOFLAGS=-mod=mod go mod download -json "$1" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p'; }

out=proto/third_party
rm -rf "$out"
mkdir -p "$out/google/api" "$out/buf/validate"

g=$(moddir "$GATEWAY_V1")
cp "$g/third_party/googleapis/google/api/annotations.proto" "$g/third_party/googleapis/google/api/http.proto" "$g/third_party/googleapis/google/api/httpbody.proto" "$out/google/api/"
cp "$g/third_party/googleapis/LICENSE" "$out/google/LICENSE"

p=$(moddir "$PROTOVALIDATE")
cp "$p/proto/protovalidate/buf/validate/validate.proto" "$out/buf/validate/"
cp "$p/LICENSE" "$out/buf/LICENSE"

chmod -R u+w "$out"
cat > "$out/README.md" <<MD
# Third-party protos

Copied by \`scripts/protodeps.sh\` from modules on the Go module proxy; do not edit.

| files | from | licence |
|---|---|---|
| google/api/annotations.proto, http.proto, httpbody.proto | $GATEWAY_V1 (third_party/googleapis) | google/LICENSE (Apache-2.0) |
| buf/validate/validate.proto | $PROTOVALIDATE (proto/protovalidate) | buf/LICENSE (Apache-2.0) |
MD
