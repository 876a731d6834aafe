#!/usr/bin/env bash
# Each package as a user gets it: the artifacts `make dist` built (target/dist) installed into a
# new project outside the repository (an npm project, a virtual environment, a Go module with a
# local replace, a cargo project patched to the packaged crates), each running a small program that opens a session the CLI
# made, applies an update and assembles the next request. Then the CLI reads the session back:
# the four updates are there, one after another. Part of `make test` (`make test-packages`).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
HERE=$ROOT/tests/packages
CLI=$ROOT/target/debug/workmem
DIST=$ROOT/target/dist
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
export WORKMEM_SESSIONS_DIR=$WORK/sessions

dir=$("$CLI" --json session new | python3 -c 'import json, sys; print(json.load(sys.stdin)["dir"])')
"$CLI" apply --session "$dir" "$ROOT/tests/data/session/update.dsl" > /dev/null 2>&1
# One update per runtime, each adding a learning of its own.
update() {
  printf 'KEY_LEARNINGS:\n  ADD:\n    - because a user installed it: the %s package opens the CLI'"'"'s sessions\n' "$1" > "$WORK/$1.dsl"
  echo "$WORK/$1.dsl"
}

echo "npm: $(basename "$DIST"/workmem-[0-9]*.tgz)"
mkdir "$WORK/npm" && cd "$WORK/npm"
npm init -y > /dev/null
npm install --no-audit --no-fund --silent "$DIST"/workmem-[0-9]*.tgz
cp "$HERE/main.mjs" .
node main.mjs "$dir" "$(update js)" >> "$WORK/out.jsonl"
# The docs' snippets as a TypeScript user compiles them, with each setting docs/packages.md
# gives for the engine's Disposable handles.
npm install --no-audit --no-fund --silent typescript@7.0.2 @types/node@20.19.43
python3 - "$ROOT/docs/packages.md" <<'PY'
import re, sys
doc = open(sys.argv[1]).read()
open("snippet.mts", "w").write(re.search(r"```js\n(.*?)```", doc, re.S).group(1))
open("session.mts", "w").write(re.search(r"```js,session\n(.*?)```", doc, re.S).group(1))
PY
common=(--strict --noEmit --target es2022 --module nodenext --moduleResolution nodenext)
npx tsc "${common[@]}" --types node snippet.mts session.mts
npx tsc "${common[@]}" --types '' --lib es2022,esnext.disposable,dom snippet.mts
# The TypeScript framework adapters from the tarball, each page's snippet as a user runs it in
# this project (the same pins as the package's own tests).
npm install --no-audit --no-fund --silent ai@7.0.173 @ai-sdk/openai@4.0.118 @openai/agents@0.20.0
python3 -c 'import sys; from pathlib import Path; sys.path.insert(0, sys.argv[1]); import docs_snippets
sys.exit(0 if all(docs_snippets.framework(p, t, project=Path(sys.argv[2])) for p, t in (("ai-sdk.md", "ai-sdk"), ("agents-sdk.md", "agents-ts"))) else 1)' \
  "$ROOT/tests" "$WORK/npm"
echo "npm adapters: workmem/ai-sdk, workmem/agents; both framework pages' snippets ran from the tarball"

echo "PyPI: $(basename "$DIST"/workmem-[0-9]*.whl)"
python3 -m venv "$WORK/venv"
"$WORK/venv/bin/pip" install -q --disable-pip-version-check "$DIST"/workmem-[0-9]*.whl mypy==2.4.1
cp "$HERE/main.py" "$WORK/"
(cd "$WORK" && venv/bin/mypy --strict --no-incremental main.py > /dev/null) || { echo "mypy --strict failed on main.py" >&2; (cd "$WORK" && venv/bin/mypy --strict main.py) >&2; exit 1; }
(cd / && "$WORK/venv/bin/python" "$WORK/main.py" "$dir" "$(update python)") >> "$WORK/out.jsonl"
# The framework adapters from the wheel's extras, each page's snippet as a user runs it, outside
# the repository (the same pins as the project's own environment).
"$WORK/venv/bin/pip" install -q --disable-pip-version-check "$(echo "$DIST"/workmem-[0-9]*.whl)[langchain,agents]" \
  langchain==1.5.0 langchain-openai==1.7.4 openai-agents==0.24.0 tiktoken==0.14.0
python3 -c 'import sys; sys.path.insert(0, sys.argv[1]); import docs_snippets
sys.exit(0 if all(docs_snippets.framework(p, t, sys.argv[2]) for p, t in (("langchain.md", "langchain"), ("agents-sdk.md", "agents"))) else 1)' \
  "$ROOT/tests" "$WORK/venv/bin/python"
echo "PyPI extras: langchain, agents; both framework pages' snippets ran from the wheel"

echo "Go: github.com/workmem/workmem/packages/go, replaced by $ROOT/packages/go"
mkdir "$WORK/go" && cd "$WORK/go"
go mod init example.com/user > /dev/null 2>&1
# As docs/packages.md gives it (which must keep saying so), <clone> this checkout.
grep -qF 'go mod edit -require github.com/workmem/workmem/packages/go@v0.2.0 -replace github.com/workmem/workmem/packages/go=<clone>/packages/go` and then `go mod tidy' "$ROOT/docs/packages.md" \
  || { echo "docs/packages.md no longer gives the Go install this test runs" >&2; exit 1; }
go mod edit -require github.com/workmem/workmem/packages/go@v0.2.0 -replace "github.com/workmem/workmem/packages/go=$ROOT/packages/go"
cp "$HERE/main.go" .
go mod tidy 2> /dev/null || go mod tidy
go run . "$dir" "$(update go)" >> "$WORK/out.jsonl"

# The CLI as pip and npm install it (packages/cli/pack.py), run from a PATH that has no Rust
# toolchain and no build of this repository: the wheel in a new environment with no index, the
# two npm packages in a new project with no registry.
cli_works() {
  local where=$1 path=$2
  shift 2
  [[ $(PATH=$path "$@" --version) =~ ^workmem\ [0-9.]+$ ]] || { echo "$where: workmem --version" >&2; exit 1; }
  [[ $(PATH=$path "$@" proxy --help) == *--upstream* ]] || { echo "$where: workmem proxy --help" >&2; exit 1; }
  # In the current directory, where the demo makes its session (and npx finds the project's).
  PATH=$path "$@" demo > "$WORK/demo-$where.txt" || { echo "$where: workmem demo failed" >&2; exit 1; }
  grep -q "KL-1" "$WORK/demo-$where.txt" || { echo "$where: workmem demo printed no learning" >&2; exit 1; }
}
# Node's own commands beside the system's, and no cargo or rustc among them.
mkdir "$WORK/node-bin"
for tool in node npm npx; do ln -s "$(command -v "$tool")" "$WORK/node-bin/$tool"; done
bare_path=$WORK/node-bin:/usr/bin:/bin
for tool in cargo rustc; do
  if PATH=$bare_path command -v "$tool" > /dev/null; then echo "$tool is on $bare_path" >&2; exit 1; fi
done
echo "PyPI CLI: $(basename "$DIST"/workmem_cli-*.whl)"
python3 -m venv "$WORK/cli-venv"
"$WORK/cli-venv/bin/pip" install -q --no-index --disable-pip-version-check "$DIST"/workmem_cli-*.whl
mkdir "$WORK/pip-cli" && cd "$WORK/pip-cli"
cli_works pip "$WORK/cli-venv/bin:$bare_path" workmem
echo "npm CLI: $(cd "$DIST" && ls workmem-cli-*.tgz | tr '\n' ' ')"
mkdir "$WORK/npm-cli" && cd "$WORK/npm-cli"
npm init -y > /dev/null
npm install --no-audit --no-fund --silent --offline "$DIST"/workmem-cli-*.tgz
cli_works npm "$bare_path" npx --offline workmem
# A supervisor's SIGTERM to the npm wrapper reaches the binary: `workmem proxy` stops (its port
# freed, no orphan) and its exit status is the wrapper's, the same as the binary's own.
terminated() {
  local what=$1 log=$WORK/term-$1.log
  shift
  PATH=$bare_path "$@" proxy --upstream http://127.0.0.1:9 --listen 127.0.0.1:0 --sessions-dir "$WORK/term-sessions" > "$log" 2>&1 &
  local pid=$! port=""
  for _ in $(seq 100); do
    port=$(grep -o '127\.0\.0\.1:[0-9]*' "$log" | head -1 | cut -d: -f2)
    [[ -n $port ]] && break
    sleep 0.1
  done
  [[ -n $port ]] || { echo "$what: the proxy printed no address: $(cat "$log")" >&2; exit 1; }
  kill -TERM "$pid"
  local rc=0
  wait "$pid" || rc=$?
  if (exec 3<> "/dev/tcp/127.0.0.1/$port") 2> /dev/null; then
    echo "$what: the proxy still listens on $port after SIGTERM" >&2
    exit 1
  fi
  echo "$rc"
}
direct=$(terminated binary "$WORK/cli-venv/bin/workmem")
wrapped=$(terminated npm node "$WORK/npm-cli/node_modules/@workmem/cli/bin/workmem.js")
[[ $direct == "$wrapped" ]] || { echo "SIGTERM: the binary exits $direct, the npm wrapper $wrapped" >&2; exit 1; }
echo "SIGTERM to the npm wrapper: the proxy stopped and freed its port; exit $wrapped, as the binary's own"
echo "the CLI from the wheel and from npm: --version, proxy --help and demo ran with no toolchain on PATH"

echo "crates: $(cd "$DIST" && ls -- *.crate | tr '\n' ' ')"
mkdir -p "$WORK/rust/src" "$WORK/crates" && cd "$WORK/rust"
for crate in "$DIST"/*.crate; do tar -xzf "$crate" -C "$WORK/crates"; done
version=$(basename "$DIST"/workmem-runtime-*.crate .crate | sed 's/workmem-runtime-//')
# The crates as crates.io would serve them: registry dependencies, patched to the packages.
cat > Cargo.toml <<TOML
[package]
name = "user"
version = "0.1.0"
edition = "2024"

[dependencies]
workmem-runtime = "$version"
workmem-store = "$version"
workmem-commit = "$version"

[patch.crates-io]
TOML
for crate_dir in "$WORK"/crates/*/; do
  name=$(basename "$crate_dir" | sed "s/-$version\$//")
  echo "$name = { path = \"$crate_dir\" }" >> Cargo.toml
done
# The repository's dev profile and lock file, so that the build reuses what the repository's
# build compiled (with cargo's default profile, all 160 dependencies built again: 2.5 minutes).
awk '/^\[/{p = /^\[profile\.dev(\]|\.)/} p' "$ROOT/Cargo.toml" >> Cargo.toml
cp "$HERE/main.rs" src/main.rs
cp "$ROOT/Cargo.lock" .
CARGO_TARGET_DIR=$ROOT/target cargo run -q -- "$dir" "$(update rust)" >> "$WORK/out.jsonl"

# What the CLI sees now: five updates, each runtime's learning in order, the overview each
# program put into its request.
"$CLI" --json log --session "$dir" > "$WORK/log.json"
python3 - "$WORK/out.jsonl" "$WORK/log.json" <<'PY'
import json, sys
runs = [json.loads(line) for line in open(sys.argv[1])]
records = json.load(open(sys.argv[2]))  # `log --json`: the update log's records
assert [r["runtime"] for r in runs] == ["js", "python", "go", "rust"], runs
assert [r["seq"] for r in runs] == [2, 3, 4, 5], [r["seq"] for r in runs]
first = int(runs[0]["added"][0].removeprefix("KL-"))
assert [r["added"] for r in runs] == [[f"KL-{first + i}"] for i in range(4)], [r["added"] for r in runs]
for r in runs:
    assert r["messages"] == 4, r
    assert r["overview"].startswith('<working_memory path="working-memory/overview.md">'), r
    assert all(f"**{added[0]}**" in r["overview"] for added in [p["added"] for p in runs[:runs.index(r) + 1]]), r
    print(f'{r["runtime"]:>6}: update {r["seq"]} added {r["added"][0]}; the request has {r["messages"]} messages')
assert [rec["seq"] for rec in records] == [1, 2, 3, 4, 5], records
print("4 packages installed outside the repository opened the CLI's session, applied an update and assembled a request")
PY
