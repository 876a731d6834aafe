#!/usr/bin/env bash
# A fleet: N `workmem proxy` replicas (default 3) on one PostgreSQL database behind HAProxy,
# round-robin per request, no stickiness, as a team runs a gateway. Point the agents' base URL
# at the balancer; any replica serves any request of any conversation (docs/fleet.md).
#
#   examples/fleet/fleet.sh https://api.openai.com postgres://workmem@db.internal/workmem
#
# Runs until Ctrl-C or SIGTERM, then stops the replicas and the balancer. Settings:
#   REPLICAS    how many proxies (3)
#   LISTEN      the balancer's address (127.0.0.1:7384)
#   FLEET_DIR   where the replicas' logs, PIDs and the balancer's config go (a temporary folder,
#               removed at the end; a folder given is kept)
#   WORKMEM     the workmem binary (default: workmem on PATH, else this checkout's, built now)
#   HAPROXY     the haproxy binary (haproxy on PATH, else /usr/sbin/haproxy)
# Arguments after the database URL go to every `workmem proxy` (--window 200000, ...).
set -euo pipefail

if [ $# -lt 2 ]; then
  echo "usage: $0 UPSTREAM_URL POSTGRES_URL [workmem proxy flags...]" >&2
  exit 2
fi
upstream=$1 database=$2
shift 2
replicas=${REPLICAS:-3}
listen=${LISTEN:-127.0.0.1:7384}
haproxy=${HAPROXY:-$(command -v haproxy || echo /usr/sbin/haproxy)}
. "$(dirname "$0")/../lib/workmem.sh"
if [ -n "${FLEET_DIR:-}" ]; then
  dir=$FLEET_DIR
  mkdir -p "$dir"
else
  dir=$(mktemp -d)
fi

pids=()
stop() {
  trap - EXIT INT TERM
  [ ${#pids[@]} -eq 0 ] || kill "${pids[@]}" 2> /dev/null || true
  wait 2> /dev/null || true
  [ -n "${FLEET_DIR:-}" ] || rm -rf "$dir"
}
trap stop EXIT
trap 'exit 0' INT TERM

# Every replica keeps its sessions in the one database: what makes them one service.
export WORKMEM_SESSIONS_DB=$database
servers=""
for i in $(seq 0 $((replicas - 1))); do
  "$workmem" proxy --listen 127.0.0.1:0 --upstream "$upstream" "$@" --json > "$dir/replica-$i.out" 2>> "$dir/replica-$i.log" &
  pid=$!
  pids+=("$pid")
  echo "$pid" > "$dir/replica-$i.pid"
  # Its first line says where it listens; it is given 30 s to say so.
  for _ in $(seq 300); do
    [ -s "$dir/replica-$i.out" ] && break
    kill -0 "$pid" 2> /dev/null || { cat "$dir/replica-$i.log" >&2; exit 1; }
    sleep 0.1
  done
  address=$(sed -n 's|.*"listening":"http://\([^"]*\)".*|\1|p' "$dir/replica-$i.out")
  [ -n "$address" ] || { echo "replica $i did not start: $(cat "$dir/replica-$i.log")" >&2; exit 1; }
  servers+="  server r$i $address check inter 200ms fall 1 rise 2"$'\n'
done

# Round-robin per request (HAProxy balances each request of a kept-alive connection); a replica
# that stops answering its health check gets no more requests, and one that refuses a
# connection has it sent to another (retries, redispatch). Streams may last minutes: the
# client and server timeouts are the proxy's own --upstream-timeout.
cat > "$dir/haproxy.cfg" << EOF
global
  maxconn 512
  log stdout format raw local0
defaults
  mode http
  log global
  option httplog
  timeout connect 2s
  timeout client 10m
  timeout server 10m
  retries 3
  option redispatch
frontend fleet
  bind $listen
  default_backend replicas
backend replicas
  balance roundrobin
$servers
EOF
"$haproxy" -db -f "$dir/haproxy.cfg" >> "$dir/haproxy.log" 2>&1 &
balancer=$!
pids+=("$balancer")
echo "$balancer" > "$dir/haproxy.pid"
for _ in $(seq 300); do
  (exec 3<> "/dev/tcp/${listen%:*}/${listen##*:}") 2> /dev/null && break
  kill -0 "$balancer" 2> /dev/null || { cat "$dir/haproxy.log" >&2; exit 1; }
  sleep 0.1
done
echo "a fleet of $replicas replicas on http://$listen (logs in $dir)"
# Until the balancer ends, or Ctrl-C: a replica that dies is one the balancer goes around.
wait "$balancer"
