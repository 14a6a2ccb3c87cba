#!/usr/bin/env bash
# Fails when regenerating changes anything: generated code must be committed
# exactly as the generators produce it.
set -euo pipefail
cd "$(dirname "$0")/.."

./scripts/generate.sh
if ! git diff --exit-code --stat -- proto gen ent buf.yaml buf.gen.yaml; then
  echo "generated files are stale: run ./scripts/generate.sh and commit the result" >&2
  exit 1
fi
untracked=$(git ls-files --others --exclude-standard -- proto gen ent)
if [ -n "$untracked" ]; then
  echo "generation produced untracked files:" >&2
  echo "$untracked" >&2
  exit 1
fi
echo "generated code is up to date"
