#!/usr/bin/env bash
# Fuzzes the HTTP API with Schemathesis from its own OpenAPI document: a fresh `workmem serve`
# on a temporary SQLite database, tokens for one vault, board and session, and every
# operation tried with generated (and malformed) requests for a bounded number of examples
# (SCHEMATHESIS_EXAMPLES, default 30). Any 5xx, or any answer the document does not
# describe (status, content type, body schema, a missing Allow on a 405, a route that
# ignores auth), fails the run.
set -euo pipefail
cd "$(dirname "$0")/../.."
schemathesis=${SCHEMATHESIS:-target/venv/bin/schemathesis}
workmem=${WORKMEM:-target/debug/workmem}
dir=$(mktemp -d)
trap 'kill "$server" 2>/dev/null || true; rm -rf "$dir"' EXIT
export WORKMEM_DB=$dir/workmem.sqlite3 WORKMEM_SESSIONS_DIR=$dir/sessions
"$workmem" board create auth --name Auth --goal "Build auth" > /dev/null
"$workmem" board task add auth "Design token schema" > /dev/null
"$workmem" session new --id alpha > /dev/null
WORKMEM_VAULT_TOKEN=$("$workmem" doc grant acme fuzz)
WORKMEM_BOARD_TOKEN=$("$workmem" board grant auth fuzz)
WORKMEM_SESSION_TOKEN=$("$workmem" session grant alpha fuzz)
export WORKMEM_VAULT_TOKEN WORKMEM_BOARD_TOKEN WORKMEM_SESSION_TOKEN
"$workmem" serve --listen 127.0.0.1:0 > "$dir/serve.out" &
server=$!
for _ in $(seq 100); do
    url=$(sed -n 's/^listening on \(http:[^ ]*\).*/\1/p' "$dir/serve.out")
    [ -n "$url" ] && break
    sleep 0.1
done
[ -n "$url" ] || { echo "schemathesis: the server did not start" >&2; exit 1; }
"$schemathesis" --config-file tests/http/schemathesis.toml run "$url/openapi.json" \
    --checks all --exclude-checks positive_data_acceptance \
    --max-examples "${SCHEMATHESIS_EXAMPLES:-30}" --seed 1 \
    --generation-database none --no-color
