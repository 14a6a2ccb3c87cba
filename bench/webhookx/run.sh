#!/usr/bin/env bash
# bench/webhookx/run.sh: payhook and WebhookX side by side, doing the same work:
# N HMAC-signed JSON POSTs each, to the same loopback receiver
# (bench/webhookx/receiver, a fresh one per system), on this machine's
# PostgreSQL and (WebhookX) Redis. Run from the repository's root:
#
#   bash bench/webhookx/run.sh
#
# For each system it reports deliveries per second sustained at the receiver
# (the middle 80% of arrivals) and the CPU seconds of the system's own
# process per 1,000 deliveries (the receiver, PostgreSQL, Redis and the load
# generator excluded), then the ratios. README.md beside this file says what
# is measured and how.
#
# Settings (environment):
#   N                  deliveries per system (20000)
#   ROUNDS             rounds, each payhook then WebhookX back to back (1)
#   ONLY               payhook, webhookx or both (both)
#   PGURL              PostgreSQL server (postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable)
#   REDIS_HOST/PORT    Redis (127.0.0.1 6379); REDIS_DB the database WebhookX may use (13),
#                      which must be empty: the script empties it afterwards
#   WEBHOOKX_VERSIONS  exact versions of github.com/webhookx-io/webhookx to try, newest
#                      first; the first that downloads and builds is used
#   CLIENTS            concurrent ingest clients against WebhookX's proxy (64)
#   WORKERS            payhook's delivery workers (128, payhook-bench's default)
#   WX_ADMIN_PORT, WX_PROXY_PORT, WX_STATUS_PORT   WebhookX's loopback ports (19601-19603)
#   KEEP               1: keep the temporary directory (binaries, logs, JSON)
#   RESULTS_OUT        also write the results (one JSON object per system and round) here
# Every other WEBHOOKX_* variable set by the caller reaches WebhookX as it is.
#
# Exit status: 0 when every system asked for ran and delivered N; 3 when
# WebhookX could not be built (payhook's figures are still reported); 1 on
# any other failure.
set -euo pipefail

N=${N:-20000}
ROUNDS=${ROUNDS:-1}
ONLY=${ONLY:-both}
PGURL=${PGURL:-postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable}
REDIS_HOST=${REDIS_HOST:-127.0.0.1}
REDIS_PORT=${REDIS_PORT:-6379}
REDIS_DB=${REDIS_DB:-13}
WEBHOOKX_VERSIONS=${WEBHOOKX_VERSIONS:-"v0.15.0 v0.14.0 v0.13.0"}
CLIENTS=${CLIENTS:-64}
WORKERS=${WORKERS:-128}
WX_ADMIN_PORT=${WX_ADMIN_PORT:-19601}
WX_PROXY_PORT=${WX_PROXY_PORT:-19602}
WX_STATUS_PORT=${WX_STATUS_PORT:-19603}
WX_DB=webhookx_bench
SECRET=bench-webhookx-signing-secret-not-a-secret
EVENT=payment.confirmed

case $ONLY in payhook | webhookx | both) ;; *)
	echo "ONLY=$ONLY: payhook, webhookx or both" >&2
	exit 1
	;;
esac
[ -f go.mod ] && [ -d bench/webhookx ] || {
	echo "run me from payhook's repository root: bash bench/webhookx/run.sh" >&2
	exit 1
}

TMP=$(mktemp -d /tmp/bench-webhookx.XXXXXX)
PIDS=()
WX_DB_CREATED=0
WX_REDIS_USED=0
cleanup() {
	local pid
	for pid in "${PIDS[@]}"; do
		kill "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	done
	if [ "$WX_DB_CREATED" = 1 ]; then
		PGOPTIONS="-c client_min_messages=warning" psql -q "$PGURL" -c "DROP DATABASE IF EXISTS $WX_DB WITH (FORCE)" >/dev/null 2>&1 || true
	fi
	if [ "$WX_REDIS_USED" = 1 ]; then
		redis-cli -h "$REDIS_HOST" -p "$REDIS_PORT" -n "$REDIS_DB" FLUSHDB >/dev/null 2>&1 || true
	fi
	if [ "${KEEP:-0}" = 1 ]; then
		echo "kept $TMP" >&2
	else
		rm -rf "$TMP"
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

say() { echo "== $*" >&2; }

# waitfor CMD...: runs CMD every 0.2 s until it succeeds, for at most 60 s.
waitfor() {
	local i
	for ((i = 0; i < 300; i++)); do
		"$@" >/dev/null 2>&1 && return 0
		sleep 0.2
	done
	return 1
}

# cpu PID: the process's user and system CPU time in seconds (/proc/PID/stat).
cpu() {
	local tck
	tck=$(getconf CLK_TCK)
	# Fields after the command name, which is in parentheses and may hold spaces:
	# utime and stime are the 12th and 13th after ")".
	sed 's/^.*) //' "/proc/$1/stat" | awk -v t="$tck" '{ printf "%.2f\n", ($12 + $13) / t }'
}

# receiver_start NAME: starts a fresh shared receiver; sets RECV_PID and RECV_URL.
receiver_start() {
	rm -f "$TMP/$1.addr"
	"$TMP/receiver" --addr-file "$TMP/$1.addr" >"$TMP/$1.receiver.json" 2>"$TMP/$1.receiver.log" &
	RECV_PID=$!
	PIDS+=("$RECV_PID")
	waitfor test -s "$TMP/$1.addr" || {
		echo "the receiver did not start" >&2
		return 1
	}
	RECV_URL="http://$(cat "$TMP/$1.addr")"
}

# receiver_stats: what the running receiver counted so far.
receiver_stats() { curl -sf "$RECV_URL/stats"; }

# receiver_stop NAME: stops the receiver; its final stats are in $TMP/NAME.receiver.json.
receiver_stop() {
	kill "$RECV_PID"
	wait "$RECV_PID" || true
}

# wait_delivered: polls the receiver until it counted N deliveries, for at
# most (N/50 + 120) s.
wait_delivered() {
	local limit=$((N / 50 + 120)) start=$SECONDS got
	while :; do
		got=$(receiver_stats | jq .deliveries)
		[ "$got" -ge "$N" ] && return 0
		if ((SECONDS - start > limit)); then
			echo "the receiver counted $got of $N deliveries within ${limit}s" >&2
			return 1
		fi
		sleep 0.1
	done
}

say "building the receiver, the ingest client and payhook-bench"
go build -o "$TMP/receiver" ./bench/webhookx/receiver
go build -o "$TMP/ingest" ./bench/webhookx/ingest
go build -o "$TMP/payhook-bench" ./cmd/payhook-bench

WX_BIN=
WX_VERSION=
WX_WHY=
if [ "$ONLY" != payhook ]; then
	# WebhookX from the Go module proxy, exactly as published: never from a
	# copy of its repository, and nothing of it is kept.
	for v in $WEBHOOKX_VERSIONS; do
		say "building github.com/webhookx-io/webhookx@$v"
		if GOBIN="$TMP/wx-$v" go install "github.com/webhookx-io/webhookx@$v" >"$TMP/wx-build-$v.log" 2>&1; then
			WX_BIN="$TMP/wx-$v/webhookx"
			WX_VERSION=$v
			break
		fi
		WX_WHY="$WX_WHY
  $v: $(grep -m1 -E 'Forbidden|not found|error|cannot' "$TMP/wx-build-$v.log" || tail -1 "$TMP/wx-build-$v.log")"
	done
	if [ -z "$WX_BIN" ]; then
		say "WebhookX could not be built from the Go module proxy; every version tried failed:$WX_WHY"
		[ "$ONLY" = webhookx ] && exit 3
	fi
fi

RESULTS="$TMP/results.jsonl"
: >"$RESULTS"

run_payhook() {
	local round=$1
	say "round $round: payhook, $N HMAC-signed JSON deliveries"
	receiver_start "payhook-$round"
	"$TMP/payhook-bench" --db "$PGURL" --receiver-url "$RECV_URL/hook" \
		--transports json --signer hmac --n "$N" --hmac-n 0 --rate 0 \
		--workers "$WORKERS" --limits-for 1s --out "$TMP/payhook-$round.json" >"$TMP/payhook-$round.log" 2>&1 || {
		cat "$TMP/payhook-$round.log" >&2
		return 1
	}
	wait_delivered
	receiver_stop "payhook-$round"
	jq -c --arg round "$round" --slurpfile bench "$TMP/payhook-$round.json" '{
		system: "payhook", round: ($round | tonumber), deliveries: .deliveries, signed: .signed,
		sustained: .sustained_per_second, overall: .per_second,
		cpu_per_1000: $bench[0].runs[0].cpu_seconds_per_1000, body_bytes: (.body_bytes / .deliveries)
	}' "$TMP/payhook-$round.receiver.json" >>"$RESULTS"
}

run_webhookx() {
	local round=$1 wxpid cpu0 cpu1 empty
	say "round $round: WebhookX $WX_VERSION, $N HMAC-signed JSON deliveries"
	empty=$(redis-cli -h "$REDIS_HOST" -p "$REDIS_PORT" -n "$REDIS_DB" DBSIZE)
	if [ "$empty" != 0 ]; then
		echo "Redis database $REDIS_DB holds $empty keys: choose an empty one (REDIS_DB)" >&2
		return 1
	fi
	PGOPTIONS="-c client_min_messages=warning" psql -q "$PGURL" -c "DROP DATABASE IF EXISTS $WX_DB WITH (FORCE)" >/dev/null
	psql -q "$PGURL" -c "CREATE DATABASE $WX_DB" >/dev/null
	WX_DB_CREATED=1
	WX_REDIS_USED=1
	receiver_start "webhookx-$round"
	# Loopback listeners only; the deliverer's ACL denies by default every
	# private and loopback address, so it denies one documentation address
	# instead (the receiver is on loopback).
	export WEBHOOKX_LOG_LEVEL=${WEBHOOKX_LOG_LEVEL:-warn}
	export WEBHOOKX_ANONYMOUS_REPORTS=false
	export WEBHOOKX_DATABASE_HOST=127.0.0.1 WEBHOOKX_DATABASE_PORT=5432 WEBHOOKX_DATABASE_USERNAME=postgres
	export WEBHOOKX_DATABASE_PASSWORD= WEBHOOKX_DATABASE_DATABASE=$WX_DB
	export WEBHOOKX_REDIS_HOST=$REDIS_HOST WEBHOOKX_REDIS_PORT=$REDIS_PORT WEBHOOKX_REDIS_DATABASE=$REDIS_DB
	export WEBHOOKX_PROXY_QUEUE_REDIS_HOST=$REDIS_HOST WEBHOOKX_PROXY_QUEUE_REDIS_PORT=$REDIS_PORT
	export WEBHOOKX_PROXY_QUEUE_REDIS_DATABASE=$REDIS_DB
	export WEBHOOKX_ADMIN_LISTEN=127.0.0.1:$WX_ADMIN_PORT WEBHOOKX_PROXY_LISTEN=127.0.0.1:$WX_PROXY_PORT
	export WEBHOOKX_STATUS_LISTEN=127.0.0.1:$WX_STATUS_PORT
	export WEBHOOKX_WORKER_ENABLED=true WEBHOOKX_WORKER_DELIVERER_ACL_DENY=192.0.2.1
	"$WX_BIN" db up >"$TMP/webhookx-$round.migrate.log" 2>&1 ||
		"$WX_BIN" migrations up >>"$TMP/webhookx-$round.migrate.log" 2>&1 || {
		cat "$TMP/webhookx-$round.migrate.log" >&2
		return 1
	}
	"$WX_BIN" start >"$TMP/webhookx-$round.log" 2>&1 &
	wxpid=$!
	PIDS+=("$wxpid")
	waitfor curl -sf "http://127.0.0.1:$WX_ADMIN_PORT/" || {
		tail -20 "$TMP/webhookx-$round.log" >&2
		return 1
	}
	# One endpoint to the receiver, signed with HMAC-SHA256 (the
	# webhookx-signature plugin), and one source taking events
	# asynchronously (queued in Redis) on the proxy.
	cat >"$TMP/webhookx.yml" <<-EOF
		endpoints:
		  - name: bench-receiver
		    request:
		      timeout: 30000
		      url: $RECV_URL/hook
		      method: POST
		    retry:
		      strategy: fixed
		      config:
		        attempts: [0, 1, 1]
		    events: [ "$EVENT" ]
		    plugins:
		      - name: webhookx-signature
		        config:
		          signing_secret: $SECRET
		sources:
		  - name: bench-source
		    async: ${WEBHOOKX_SOURCE_ASYNC:-true}
		    type: http
		    config:
		      http:
		        path: /
		        methods: [ "POST" ]
	EOF
	"$WX_BIN" admin sync --addr "http://127.0.0.1:$WX_ADMIN_PORT" "$TMP/webhookx.yml" >"$TMP/webhookx-$round.sync.log" 2>&1 || {
		cat "$TMP/webhookx-$round.sync.log" >&2
		return 1
	}
	waitfor curl -s -o /dev/null "http://127.0.0.1:$WX_PROXY_PORT/" || return 1
	cpu0=$(cpu "$wxpid")
	"$TMP/ingest" --url "http://127.0.0.1:$WX_PROXY_PORT/" --n "$N" --clients "$CLIENTS" --event-type "$EVENT" >"$TMP/webhookx-$round.ingest.json"
	wait_delivered
	cpu1=$(cpu "$wxpid")
	kill "$wxpid"
	wait "$wxpid" || true
	receiver_stop "webhookx-$round"
	PGOPTIONS="-c client_min_messages=warning" psql -q "$PGURL" -c "DROP DATABASE IF EXISTS $WX_DB WITH (FORCE)" >/dev/null
	redis-cli -h "$REDIS_HOST" -p "$REDIS_PORT" -n "$REDIS_DB" FLUSHDB >/dev/null
	jq -c --arg round "$round" --arg cpu "$(awk -v a="$cpu0" -v b="$cpu1" 'BEGIN { print b - a }')" --arg version "$WX_VERSION" \
		--slurpfile ingest "$TMP/webhookx-$round.ingest.json" '{
		system: ("WebhookX " + $version), round: ($round | tonumber), deliveries: .deliveries, signed: .signed,
		sustained: .sustained_per_second, overall: .per_second,
		cpu_per_1000: (($cpu | tonumber) / .deliveries * 1000), body_bytes: (.body_bytes / .deliveries),
		ingest_per_second: $ingest[0].per_second, ingest_failed: $ingest[0].failed
	}' "$TMP/webhookx-$round.receiver.json" >>"$RESULTS"
}

for ((round = 1; round <= ROUNDS; round++)); do
	if [ "$ONLY" != webhookx ]; then run_payhook "$round"; fi
	if [ -n "$WX_BIN" ]; then run_webhookx "$round"; fi
done

echo
echo "machine: $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg) at the end; N=$N per system"
jq -r '[.system, .round, .deliveries, .signed, (.sustained | floor), (.overall | floor), (.cpu_per_1000 * 1000 | floor / 1000), (.body_bytes | floor)] | @tsv' "$RESULTS" |
	awk 'BEGIN { printf "%-18s %5s %10s %8s %14s %10s %11s %10s\n", "system", "round", "delivered", "signed", "sustained/s", "overall/s", "cpu s/1k", "body B" }
	{ printf "%-18s %5s %10s %8s %14s %10s %11s %10s\n", $1, $2, $3, $4, $5, $6, $7, $8 }' FS='\t'
if [ -n "$WX_BIN" ] && [ "$ONLY" = both ]; then
	# The worst round of each system counts: payhook's lowest rate and
	# highest CPU, WebhookX's highest rate and lowest CPU.
	jq -rs '
		(map(select(.system == "payhook"))) as $p | (map(select(.system != "payhook"))) as $w |
		($p | map(.sustained) | min) as $pr | ($w | map(.sustained) | max) as $wr |
		($p | map(.cpu_per_1000) | max) as $pc | ($w | map(.cpu_per_1000) | min) as $wc |
		"\nratios (worst round of each): sustained deliveries/s payhook/WebhookX \($pr / $wr * 100 | floor / 100) (target >= 3); " +
		"CPU per delivery payhook/WebhookX \($pc / $wc * 100 | floor / 100) (target <= 1)"' "$RESULTS"
fi
if [ -n "${RESULTS_OUT:-}" ]; then cp "$RESULTS" "$RESULTS_OUT"; fi
if [ "$ONLY" != payhook ] && [ -z "$WX_BIN" ]; then
	echo "WebhookX: not built (see above); no comparison" >&2
	exit 3
fi
