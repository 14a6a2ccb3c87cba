#!/usr/bin/env bash
# Builds the payhook binary stamped with the commit it is built from (and a
# version when VERSION is set), so that `payhook version` and the
# payhook_build_info metric name it whether or not Go's VCS data is there:
#
#   ./scripts/build.sh                 # writes ./payhook
#   ./scripts/build.sh /usr/local/bin/payhook
#   VERSION=v1.2.3 ./scripts/build.sh
#
# Outside a git checkout set COMMIT yourself (COMMIT=... ./scripts/build.sh);
# without it the binary says its commit is unknown.
set -euo pipefail
cd "$(dirname "$0")/.."

out="${1:-payhook}"
commit="${COMMIT:-}"
if [ -z "$commit" ] && git rev-parse --git-dir >/dev/null 2>&1; then
  commit="$(git rev-parse HEAD)"
  # A build of changed files is not that commit's binary: say so.
  if ! git diff --quiet HEAD -- 2>/dev/null; then
    commit="${commit}-dirty"
  fi
fi
go build -trimpath -ldflags "-X main.version=${VERSION:-} -X main.commit=${commit}" -o "$out" ./cmd/payhook
echo "built $out (commit ${commit:-unknown})"
