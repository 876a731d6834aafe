#!/usr/bin/env bash
# Spec 002's worked example, "Build auth system for the API", through `workmem board`:
# an orchestrator plans and assigns, a dev agent works and records what it finds, a human
# nudges, QA reviews, and the orchestrator moves on. Each actor is a separate command, as it
# would be a separate process (or machine, with a postgres:// database).
#
#   examples/board/auth.sh                 # on a fresh SQLite file in a temporary directory
#   WORKMEM_DB=postgres://... examples/board/auth.sh
#
# $WORKMEM is the workmem binary (default: workmem on PATH, else this checkout's, built now).
set -euo pipefail

. "$(dirname "$0")/../lib/workmem.sh"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export WORKMEM_DB=${WORKMEM_DB:-$work/boards.sqlite3}
board=${BOARD:-auth}
say() { printf '\n== %s\n' "$*"; }
wm() { "$workmem" board "$@"; }

say "1. The orchestrator creates the board and the tasks the auth-jwt pattern suggests"
wm create "$board" --name "Auth system" --goal "Build auth system for the API" \
  --core auth-jwt --core acme-app --constraint "No breaking changes to the public API"
wm task add "$board" "Design token schema" --review
wm task add "$board" "Implement token service" --depends-on T-1
wm task add "$board" "Add auth middleware" --depends-on T-2
wm task add "$board" "Write auth tests" --depends-on T-3
wm ready "$board"

say "2. The orchestrator assigns the schema to the dev agent"
wm assign "$board" T-1 dev

say "3. The dev agent reads its context, starts, finds a constraint and decides"
wm context "$board" T-1 > /dev/null
wm --as dev status "$board" T-1 in_progress
wm --as dev discover "$board" "User table has no refresh_token column" --type constraint --affects T-1
wm --as dev decide "$board" --question "Where do refresh tokens live?" \
  --choice "Add a refresh_token column to users" --alternative "A separate tokens table" \
  --rationale "One migration, no join" --affects T-1

say "4. A human nudges the dev agent"
wm --as human nudge "$board" "Don't modify user table, use separate token table" --to dev --priority high

say "5. The dev agent sees the nudge in its context and changes course"
context=$(wm --as dev context "$board" T-1)
grep -q "use separate token table" <<< "$context"
wm --as dev decide "$board" --question "Where do refresh tokens live?" \
  --choice "A separate tokens table" --alternative "Add a refresh_token column to users" \
  --rationale "The user table stays as it is (human nudge); tokens rotate without touching users" --affects T-1
wm --as dev discover "$board" "Refresh tokens belong in their own table so they can rotate" --type insight --core auth-jwt

say "6. The dev agent completes the task: the schema is an artifact, the task goes to review"
mkdir -p "$work/schema"
printf 'CREATE TABLE tokens (id uuid PRIMARY KEY, user_id uuid NOT NULL, refresh_token text NOT NULL);\n' > "$work/schema/tokens.sql"
wm --as dev artifact "$board" "$work/schema/tokens.sql" --task T-1 --type code --description "Token table"
wm --as dev status "$board" T-1 completed --summary "tokens table with user_id and refresh_token" --next "token service reads it"

say "7. The orchestrator sees it waiting for review and asks QA"
wm show "$board" needs_review
wm nudge "$board" "Please review T-1" --to qa

say "8. QA approves; the orchestrator continues with the next task"
wm --as qa review "$board" T-1 --verdict approved --comments "Separate table, as asked"
wm ready "$board"
wm assign "$board" T-2 dev
wm candidates "$board"
