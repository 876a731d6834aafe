#!/usr/bin/env python3
"""Runs the book's snippets as written: the packages chapter's (docs/packages.md), each from its
runtime's folder, checking the Rust one is the example `make test` runs, and its session
snippets on a session the CLI made; and the curl session
of docs/documents.md against `workmem serve`, in a fresh home. Part of `make test-docs`."""

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
from typing import Optional
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
PACKAGES = ROOT / "packages"


def main() -> int:
    section = (ROOT / "docs" / "packages.md").read_text()
    blocks = {}
    for lang, code in re.findall(r"```(js|python|go|rust)\n(.*?)```", section, re.S):
        blocks.setdefault(lang, code)  # the first of each: the ones that run as written
    assert set(blocks) == {"js", "python", "go", "rust"}, f"snippets found: {sorted(blocks)}"
    sessions = dict(re.findall(r"```(js|python|go),session\n(.*?)```", section, re.S))
    assert set(sessions) == {"js", "python", "go"}, f"session snippets found: {sorted(sessions)}"
    assert blocks["rust"] == (EXAMPLES / "rust" / "src" / "main.rs").read_text(), \
        "the packages chapter's Rust snippet is not examples/rust/src/main.rs"

    runs = []
    js = PACKAGES / "js" / ".docs-snippet.mjs"
    py = Path(tempfile.mkdtemp()) / "snippet.py"
    go = PACKAGES / "go" / "cmd" / "docs-snippet"
    try:
        js.write_text(blocks["js"])
        py.write_text(blocks["python"])
        go.mkdir(parents=True, exist_ok=True)
        (go / "main.go").write_text(blocks["go"])
        runs = [
            (["node", js.name], js.parent),
            ([sys.executable, str(py)], PACKAGES / "python"),
            (["go", "run", "./cmd/docs-snippet"], PACKAGES / "go"),
        ]
        for cmd, cwd in runs:
            out = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
            if out.returncode != 0 or "KL-1" not in out.stdout:
                print(f"docs/packages.md snippet `{' '.join(cmd)}` failed:\n{out.stdout}{out.stderr}", file=sys.stderr)
                return 1
        # The session snippets, each on a session the CLI made: both of its updates land.
        js.write_text(sessions["js"])
        py.write_text(sessions["python"])
        (go / "main.go").write_text(sessions["go"])
        for cmd, cwd in runs:
            home = Path(tempfile.mkdtemp())
            made = subprocess.run([str(ROOT / "target" / "debug" / "workmem"), "session", "new", "--json"], cwd=home,
                                  env={**os.environ, "WORKMEM_SESSIONS_DIR": str(home / "sessions")}, capture_output=True, text=True, check=True)
            directory = json.loads(made.stdout)["dir"]
            out = subprocess.run(cmd + [directory], cwd=cwd, capture_output=True, text=True)
            shutil.rmtree(home, ignore_errors=True)
            if out.returncode != 0 or "KL-1" not in out.stdout or "Writing the fix" not in out.stdout:
                print(f"docs/packages.md session snippet `{' '.join(cmd)}` failed:\n{out.stdout}{out.stderr}", file=sys.stderr)
                return 1
        runs += runs
    finally:
        js.unlink(missing_ok=True)
        shutil.rmtree(py.parent, ignore_errors=True)
        shutil.rmtree(go, ignore_errors=True)
    if not curl_session((ROOT / "docs" / "documents.md").read_text()):
        return 1
    for page, tag in FRAMEWORKS:
        if not framework(page, tag):
            return 1
    print(f"{len(runs) + 2 + len(FRAMEWORKS)} snippets of docs/ ran as written")
    return 0


def framework(page: str, tag: str, python: str = sys.executable, project: Optional[Path] = None) -> bool:
    """A framework page's agent (`python,<tag>` or `js,<tag>`), as written, against the proxy's
    scripted model on loopback (`OPENAI_BASE_URL`, which the frameworks' OpenAI clients read), in a
    scratch directory with the files it reads; tiktoken's encoding read from cargo's copy, as
    in the package's tests. `python`: the interpreter (`make test-packages` gives a virtual
    environment's, with the built wheel installed); `project`: the npm project a JavaScript
    snippet runs in (`make test-packages` gives one with the built tarball installed; by
    default the package's own directory, whose `node_modules` has the frameworks)."""
    found = re.search(rf"```(python|js),{tag}\n(.*?)```", (ROOT / "docs" / page).read_text(), re.S)
    assert found, f"docs/{page} has no {tag} snippet"
    language, snippet = found.group(1), found.group(2)
    assert len(snippet.strip().splitlines()) <= 15, f"docs/{page}'s snippet is over fifteen lines"
    sys.path.insert(0, str(ROOT / "tests" / "proxy"))
    import upstream

    script = upstream.Script(steps=3, files=3, file_size=2000, tool="read_file", arguments=lambda p: {"path": p})
    server = upstream.start(script)
    # A JavaScript snippet runs beneath its npm project, where its imports resolve.
    home = Path(tempfile.mkdtemp(prefix=".snippet-", dir=(project or ROOT / "packages" / "js") if language == "js" else None))
    try:
        for k in range(1, 4):
            (home / f"file_{k}.txt").write_text(script.text(k))
        if language == "js":
            (home / "snippet.mjs").write_text(snippet)
            command = ["node", "snippet.mjs"]
        else:
            (home / "snippet.py").write_text(snippet)
            command = [python, "-c", (f"import sys; sys.path.insert(0, {str(ROOT / 'tests' / 'python')!r}); import tiktoken_offline; "
                                      "tiktoken_offline.install(); import runpy; runpy.run_path('snippet.py', run_name='__main__')")]
        # No trace leaves the machine: the Agents SDKs would send their traces to the provider.
        env = {**os.environ, "OPENAI_BASE_URL": f"http://127.0.0.1:{server.server_address[1]}/v1", "OPENAI_API_KEY": "test",
               "OPENAI_AGENTS_DISABLE_TRACING": "1"}
        out = subprocess.run(command, cwd=home, env=env, capture_output=True, text=True, timeout=120)
        ok = out.returncode == 0 and f"{upstream.ANSWER} 3 steps" in out.stdout and any((home / "sessions").glob("*/*/messages.jsonl"))
        if not ok:
            print(f"docs/{page} snippet failed:\n{out.stdout}{out.stderr}", file=sys.stderr)
        return ok
    finally:
        server.shutdown()
        shutil.rmtree(home, ignore_errors=True)


#: Each framework page's snippets, by tag.
FRAMEWORKS = (("langchain.md", "langchain"), ("agents-sdk.md", "agents"), ("agents-sdk.md", "agents-ts"), ("ai-sdk.md", "ai-sdk"))


def curl_session(chapter: str) -> bool:
    """The "Over HTTP" session, in bash as a user's shell runs it, with a home of its own
    (so the embedded default database is a new one) and the debug build on PATH."""
    section = chapter.split("## Over HTTP (`workmem serve`)", 1)[1].split("\n## ", 1)[0]
    script = re.search(r"```sh\n(.*?)```", section, re.S).group(1)
    home = Path(tempfile.mkdtemp())
    env = {k: v for k, v in os.environ.items() if not k.startswith("WORKMEM_")}
    env.update(HOME=str(home), PATH=f"{ROOT / 'target' / 'debug'}:{env['PATH']}")
    # Its own process group, so a server the script leaves behind (it failed before `kill`)
    # goes with it.
    shell = subprocess.Popen(["bash", "-euo", "pipefail", "-c", script], env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        stdout, stderr = shell.communicate(timeout=120)
    finally:
        try:
            os.killpg(shell.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        shutil.rmtree(home, ignore_errors=True)
    out = subprocess.CompletedProcess(shell.args, shell.returncode, stdout, stderr)
    # The put's answer (version 1, by the token's agent), then the get's, with the text.
    ok = out.returncode == 0 and '"version":1,"actor_id":"alice"' in out.stdout and '"context":"# Facts\\n- CEO = Bob' in out.stdout
    if not ok:
        print(f"docs/documents.md curl session failed:\n{out.stdout}{out.stderr}", file=sys.stderr)
    return ok


if __name__ == "__main__":
    sys.exit(main())
