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
#   WEBHOOKX_BIN       a WebhookX binary you already have (its `version` names it); when
#                      unset, the script installs one from the Go module proxy:
#   WEBHOOKX_VERSIONS  exact versions of github.com/webhookx-io/webhookx to try, newest
#                      first; the first that downloads and builds is used
#   CLIENTS            concurrent ingest clients against WebhookX's proxy (64)
#   WX_PRELOAD         1: WebhookX takes in all N events with its worker off, then
#                      delivers them with its proxy off (its delivery alone, with
#                      no ingest competing for the CPU); 0: both at once (0)
#   WORKERS            payhook's delivery workers (128, payhook-bench's default)
#   WX_ADMIN_PORT, WX_PROXY_PORT, WX_STATUS_PORT   WebhookX's loopback ports (19601-19603)
#   KEEP               1: keep the temporary directory (binaries, logs, JSON)
#   RESULTS_OUT        also write the results (one JSON object per system and round) here
# Every other WEBHOOKX_* variable set by the caller reaches WebhookX as it is.
#
# Exit status: 0 when every system asked for ran and delivered N; 3 when
# WebhookX could not be built (payhook's figures are still reported); 1 on
# any other failure.
#
# WebhookX runs standalone (proxy, worker and admin API in one process);
# its CPU is counted over that process and any it starts.
set -euo pipefail

N=${N:-20000}
ROUNDS=${ROUNDS:-1}
ONLY=${ONLY:-both}
PGURL=${PGURL:-postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable}
REDIS_HOST=${REDIS_HOST:-127.0.0.1}
REDIS_PORT=${REDIS_PORT:-6379}
REDIS_DB=${REDIS_DB:-13}
WEBHOOKX_BIN=${WEBHOOKX_BIN:-}
WEBHOOKX_VERSIONS=${WEBHOOKX_VERSIONS:-"v1.2.0 v0.15.0 v0.14.0 v0.13.0"}
CLIENTS=${CLIENTS:-64}
WX_PRELOAD=${WX_PRELOAD:-0}
WORKERS=${WORKERS:-128}
WX_ADMIN_PORT=${WX_ADMIN_PORT:-19601}
WX_PROXY_PORT=${WX_PROXY_PORT:-19602}
WX_STATUS_PORT=${WX_STATUS_PORT:-19603}
WX_DB=webhookx_bench
# WebhookX's database: PGURL's server and user, database WX_DB.
WX_PGURL=$(sed -E "s#^(postgres(ql)?://[^/]*)/[^?]*#\1/$WX_DB#" <<<"$PGURL")
WX_PG_USER=$(sed -E 's#^postgres(ql)?://(([^:@/]*)(:[^@/]*)?@)?.*#\3#' <<<"$PGURL")
WX_PG_PASSWORD=$(sed -E 's#^postgres(ql)?://(([^:@/]*)(:([^@/]*))?@)?.*#\5#' <<<"$PGURL")
WX_PG_HOST=$(sed -E 's#^postgres(ql)?://([^@/]*@)?([^:/?]*).*#\3#' <<<"$PGURL")
WX_PG_PORT=$(sed -E 's#^postgres(ql)?://([^@/]*@)?[^:/?]*(:([0-9]+))?.*#\4#' <<<"$PGURL")
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

# cpu PID: the user and system CPU time in seconds of the process and of all
# its descendants, living (their own /proc/PID/stat) or ended and waited for
# (the parent's cutime and cstime).
cpu() {
	local tck pids p kids
	tck=$(getconf CLK_TCK)
	pids=("$1")
	for ((p = 0; p < ${#pids[@]}; p++)); do
		kids=$(ps -o pid= --ppid "${pids[p]}" || true)
		for k in $kids; do pids+=("$k"); done
	done
	# Fields after the command name, which is in parentheses and may hold spaces:
	# utime, stime, cutime and cstime are the 12th to the 15th after ")".
	for p in "${pids[@]}"; do sed 's/^.*) //' "/proc/$p/stat" 2>/dev/null || true; done |
		awk -v t="$tck" '{ s += $12 + $13 + $14 + $15 } END { printf "%.2f\n", s / t }'
}

# cpu_procs PID: how many processes cpu PID counts now.
cpu_procs() {
	local pids p kids
	pids=("$1")
	for ((p = 0; p < ${#pids[@]}; p++)); do
		kids=$(ps -o pid= --ppid "${pids[p]}" || true)
		for k in $kids; do pids+=("$k"); done
	done
	echo "${#pids[@]}"
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

# receiver_stop NAME: stops the receiver; its final stats are in
# $TMP/NAME.receiver.json. Fails unless it counted exactly N deliveries, every
# one signed (no event lost, none delivered twice, none unsigned).
receiver_stop() {
	local got
	kill "$RECV_PID"
	wait "$RECV_PID" || true
	got=$(jq -r '"\(.deliveries) \(.signed)"' "$TMP/$1.receiver.json")
	if [ "$got" != "$N $N" ]; then
		echo "$1: the receiver counted $got deliveries and signed ones, not $N $N" >&2
		return 1
	fi
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
if [ "$ONLY" != payhook ] && [ -n "$WEBHOOKX_BIN" ]; then
	# The caller's own WebhookX binary.
	[ -x "$WEBHOOKX_BIN" ] || {
		echo "WEBHOOKX_BIN=$WEBHOOKX_BIN: not an executable file" >&2
		exit 1
	}
	WX_BIN=$WEBHOOKX_BIN
	WX_VERSION=$("$WX_BIN" version 2>&1 | head -1 | sed 's/^WebhookX //')
	say "WebhookX from WEBHOOKX_BIN=$WX_BIN: $WX_VERSION"
elif [ "$ONLY" != payhook ]; then
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
		say "WebhookX could not be built from the Go module proxy; every version tried failed:$WX_WHY
  (WEBHOOKX_BIN=/path/to/webhookx runs a binary you already have)"
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
	receiver_stop "payhook-$round" || return 1
	jq -c --arg round "$round" --slurpfile bench "$TMP/payhook-$round.json" '{
		system: "payhook", round: ($round | tonumber), deliveries: .deliveries, signed: .signed,
		sustained: .sustained_per_second, overall: .per_second,
		cpu_per_1000: $bench[0].runs[0].cpu_seconds_per_1000, body_bytes: (.body_bytes / .deliveries)
	}' "$TMP/payhook-$round.receiver.json" >>"$RESULTS"
}

# wx_routed: true once WebhookX's proxy routes POST / to the bench source.
wx_routed() {
	local code
	code=$(curl -s -o /dev/null -w '%{http_code}' -H 'Content-Type: application/json' -d '{}' "http://127.0.0.1:$WX_PROXY_PORT/")
	[ "$code" = 400 ]
}

# wx_start LOG WORKER PROXY: starts WebhookX with its worker enabled or not
# (true, false) and its proxy listening at PROXY (or off); sets wxpid once
# the admin API answers.
wx_start() {
	WEBHOOKX_WORKER_ENABLED=$2 WEBHOOKX_PROXY_LISTEN=$3 "$WX_BIN" start >"$TMP/webhookx-$1.log" 2>&1 &
	wxpid=$!
	PIDS+=("$wxpid")
	waitfor curl -sf "http://127.0.0.1:$WX_ADMIN_PORT/" || {
		tail -20 "$TMP/webhookx-$1.log" >&2
		return 1
	}
}

# wx_queued: waits (at most 120 s) until WebhookX's database holds N queued
# attempts.
wx_queued() {
	local start=$SECONDS got
	while :; do
		got=$(psql -qtA "$WX_PGURL" -c "SELECT count(*) FROM attempts WHERE status = 'QUEUED'")
		[ "$got" = "$N" ] && return 0
		if ((SECONDS - start > 120)); then
			echo "WebhookX's database: $got queued attempts, not $N" >&2
			return 1
		fi
		sleep 0.1
	done
}

# wx_recorded: waits (at most 120 s) until WebhookX's database holds N
# successful attempts and N attempt details.
wx_recorded() {
	local start=$SECONDS got
	while :; do
		got=$(psql -qtA "$WX_PGURL" -c "SELECT (SELECT count(*) FROM attempts WHERE status = 'SUCCESSFUL') || ' ' || (SELECT count(*) FROM attempt_details)")
		[ "$got" = "$N $N" ] && return 0
		if ((SECONDS - start > 120)); then
			echo "WebhookX's database: successful attempts and attempt details: $got, not $N" >&2
			return 1
		fi
		sleep 0.1
	done
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
	# WebhookX 1.2.0's configuration, from the environment (WEBHOOKX_ and the
	# path of the key, upper case): standalone (proxy, worker and admin API
	# in one process), every listener on loopback, no anonymous reports to
	# report.webhookx.io, no per-request access log (payhook-bench's
	# engine logs to io.Discard), warnings only. The deliverer's ACL denies by
	# default every private and loopback address, so it denies one
	# documentation address instead (the receiver is on loopback). The
	# worker's pool keeps its defaults (10000 queued, 100 concurrent
	# deliveries per CPU).
	export WEBHOOKX_ROLE=standalone
	export WEBHOOKX_LOG_LEVEL=${WEBHOOKX_LOG_LEVEL:-warn} WEBHOOKX_LOG_COLORED=false
	export WEBHOOKX_ACCESS_LOG_ENABLED=${WEBHOOKX_ACCESS_LOG_ENABLED:-false}
	export WEBHOOKX_ANONYMOUS_REPORTS=false
	export WEBHOOKX_DATABASE_HOST=${WX_PG_HOST:-127.0.0.1} WEBHOOKX_DATABASE_PORT=${WX_PG_PORT:-5432}
	export WEBHOOKX_DATABASE_USERNAME=${WX_PG_USER:-postgres} WEBHOOKX_DATABASE_PASSWORD=$WX_PG_PASSWORD
	export WEBHOOKX_DATABASE_DATABASE=$WX_DB
	export WEBHOOKX_REDIS_HOST=$REDIS_HOST WEBHOOKX_REDIS_PORT=$REDIS_PORT WEBHOOKX_REDIS_DATABASE=$REDIS_DB
	export WEBHOOKX_PROXY_QUEUE_REDIS_HOST=$REDIS_HOST WEBHOOKX_PROXY_QUEUE_REDIS_PORT=$REDIS_PORT
	export WEBHOOKX_PROXY_QUEUE_REDIS_DATABASE=$REDIS_DB
	export WEBHOOKX_ADMIN_LISTEN=127.0.0.1:$WX_ADMIN_PORT WEBHOOKX_PROXY_LISTEN=127.0.0.1:$WX_PROXY_PORT
	export WEBHOOKX_STATUS_LISTEN=127.0.0.1:$WX_STATUS_PORT
	export WEBHOOKX_WORKER_DELIVERER_ACL_DENY=192.0.2.1
	"$WX_BIN" db up >"$TMP/webhookx-$round.migrate.log" 2>&1 || {
		cat "$TMP/webhookx-$round.migrate.log" >&2
		return 1
	}
	if [ "$WX_PRELOAD" = 1 ]; then
		wx_start "$round-ingest" false "127.0.0.1:$WX_PROXY_PORT" || return 1
	else
		wx_start "$round" true "127.0.0.1:$WX_PROXY_PORT" || return 1
	fi
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
	# The proxy rebuilds its routes from the sources once a second: it
	# answers 404 until it knows the source, and 400 to an event without
	# event_type once it does (nothing is ingested).
	waitfor wx_routed || {
		echo "WebhookX's proxy did not route to the source within 60 s" >&2
		return 1
	}
	if [ "$WX_PRELOAD" = 1 ]; then
		# Every event ingested and its attempt queued first, with the
		# worker off; then WebhookX again with the worker on and the proxy
		# off, whose CPU from its start is the delivery's alone.
		"$TMP/ingest" --url "http://127.0.0.1:$WX_PROXY_PORT/" --n "$N" --clients "$CLIENTS" --event-type "$EVENT" >"$TMP/webhookx-$round.ingest.json"
		wx_queued || return 1
		kill "$wxpid"
		wait "$wxpid" || true
		wx_start "$round" true off || return 1
		cpu0=0
	else
		cpu0=$(cpu "$wxpid")
		"$TMP/ingest" --url "http://127.0.0.1:$WX_PROXY_PORT/" --n "$N" --clients "$CLIENTS" --event-type "$EVENT" >"$TMP/webhookx-$round.ingest.json"
	fi
	wait_delivered
	# WebhookX's own record of the work: every attempt marked successful
	# and its request log written (as payhook's CPU figure includes
	# recording every acknowledgement).
	wx_recorded || {
		echo "WebhookX did not record $N successful attempts" >&2
		return 1
	}
	cpu1=$(cpu "$wxpid")
	WX_PROCS=$(cpu_procs "$wxpid")
	kill "$wxpid"
	wait "$wxpid" || true
	receiver_stop "webhookx-$round" || return 1
	if [ "$(jq .failed "$TMP/webhookx-$round.ingest.json")" != 0 ]; then
		echo "the ingest client failed to post some events: $(cat "$TMP/webhookx-$round.ingest.json")" >&2
		return 1
	fi
	PGOPTIONS="-c client_min_messages=warning" psql -q "$PGURL" -c "DROP DATABASE IF EXISTS $WX_DB WITH (FORCE)" >/dev/null
	redis-cli -h "$REDIS_HOST" -p "$REDIS_PORT" -n "$REDIS_DB" FLUSHDB >/dev/null
	jq -c --arg round "$round" --arg cpu "$(awk -v a="$cpu0" -v b="$cpu1" 'BEGIN { print b - a }')" --arg version "$WX_VERSION" \
		--arg procs "$WX_PROCS" --arg preload "$WX_PRELOAD" --slurpfile ingest "$TMP/webhookx-$round.ingest.json" '{
		system: ("WebhookX " + $version + (if $preload == "1" then " preloaded" else "" end)), round: ($round | tonumber), deliveries: .deliveries, signed: .signed,
		sustained: .sustained_per_second, overall: .per_second,
		cpu_per_1000: (($cpu | tonumber) / .deliveries * 1000), body_bytes: (.body_bytes / .deliveries),
		ingest_per_second: $ingest[0].per_second, ingest_failed: $ingest[0].failed,
		processes: ($procs | tonumber)
	}' "$TMP/webhookx-$round.receiver.json" >>"$RESULTS"
}

for ((round = 1; round <= ROUNDS; round++)); do
	if [ "$ONLY" != webhookx ]; then run_payhook "$round"; fi
	if [ -n "$WX_BIN" ]; then run_webhookx "$round"; fi
done

echo
echo "machine: $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg) at the end; N=$N per system"
jq -r '[.system, .round, .deliveries, .signed, (.sustained | floor), (.overall | floor), (.cpu_per_1000 * 1000 | floor / 1000), (.body_bytes | floor)] | @tsv' "$RESULTS" |
	awk 'BEGIN { printf "%-36s %5s %10s %8s %14s %10s %11s %10s\n", "system", "round", "delivered", "signed", "sustained/s", "overall/s", "cpu s/1k", "body B" }
	{ printf "%-36s %5s %10s %8s %14s %10s %11s %10s\n", $1, $2, $3, $4, $5, $6, $7, $8 }' FS='\t'
if [ -n "$WX_BIN" ] && [ "$ONLY" = both ]; then
	# The worst round of each system counts: payhook's lowest rate and
	# highest CPU, WebhookX's highest rate and lowest CPU.
	jq -rs '
		(map(select(.system == "payhook"))) as $p | (map(select(.system != "payhook"))) as $w |
		($p | map(.sustained) | min) as $pr | ($w | map(.sustained) | max) as $wr |
		($p | map(.cpu_per_1000) | max) as $pc | ($w | map(.cpu_per_1000) | min) as $wc |
		"\nratios (worst round of each): sustained deliveries/s payhook/WebhookX \($pr / $wr * 100 | floor / 100) (target >= 3); " +
		"CPU per delivery payhook/WebhookX \($pc / $wc * 100 | floor / 100) (target <= 1)"' "$RESULTS"
	# And round by round (the two ran back to back, under much the same
	# load from anything else on the machine).
	jq -rs '
		group_by(.round)[] | (map(select(.system == "payhook"))[0]) as $p | (map(select(.system != "payhook"))[0]) as $w |
		"round \($p.round): sustained deliveries/s payhook/WebhookX \($p.sustained / $w.sustained * 100 | floor / 100); " +
		"CPU per delivery payhook/WebhookX \($p.cpu_per_1000 / $w.cpu_per_1000 * 100 | floor / 100)"' "$RESULTS"
fi
if [ -n "${RESULTS_OUT:-}" ]; then cp "$RESULTS" "$RESULTS_OUT"; fi
if [ "$ONLY" != payhook ] && [ -z "$WX_BIN" ]; then
	echo "WebhookX: not built (see above); no comparison" >&2
	exit 3
fi
