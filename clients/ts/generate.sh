#!/usr/bin/env bash
# Regenerates the TypeScript of clients/ts/src/gen from proto/ with
# protoc-gen-es, the npm package pinned in package.json, run by buf (a go.mod
# tool) from the repository root: nothing comes from the Buf Schema Registry.
#
#   clients/ts/generate.sh         rewrites clients/ts/src/gen
#   clients/ts/generate.sh DIR     writes DIR/src/gen instead (ts_test.go
#                                  compares it with the committed code)
#
# Needs Go and Node.js with `npm ci --prefix clients/ts` done.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
out="$here"
if [ $# -gt 0 ]; then
  mkdir -p "$1"
  out="$(cd "$1" && pwd)"
fi
if [ ! -x "$here/node_modules/.bin/protoc-gen-es" ]; then
  echo "protoc-gen-es is not installed: run npm ci --prefix clients/ts" >&2
  exit 1
fi
cd "$root"
go tool buf generate --template clients/ts/buf.gen.yaml --output "$out"
