#!/usr/bin/env python3
"""Runs the README's "Use it from" snippets as written, each from its runtime's folder, and
checks the Rust one is the example `make test` runs. Part of `make test`."""

import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"


def main() -> int:
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## Use it from JS / Python / Go / Rust", 1)[1].split("\n## ", 1)[0]
    blocks = {}
    for lang, code in re.findall(r"```(js|python|go|rust)\n(.*?)```", section, re.S):
        blocks.setdefault(lang, code)  # the first of each: the ones that run as written
    assert set(blocks) == {"js", "python", "go", "rust"}, f"snippets found: {sorted(blocks)}"
    assert blocks["rust"] == (EXAMPLES / "rust" / "src" / "main.rs").read_text(), \
        "the README's Rust snippet is not examples/rust/src/main.rs"

    runs = []
    js = EXAMPLES / "js" / ".readme-snippet.mjs"
    py = Path(tempfile.mkdtemp()) / "snippet.py"
    go = EXAMPLES / "go" / "cmd" / "readme-snippet"
    try:
        js.write_text(blocks["js"])
        py.write_text(blocks["python"])
        go.mkdir(parents=True, exist_ok=True)
        (go / "main.go").write_text(blocks["go"])
        runs = [
            (["node", js.name], js.parent),
            ([sys.executable, str(py)], EXAMPLES / "python"),
            (["go", "run", "./cmd/readme-snippet"], EXAMPLES / "go"),
        ]
        for cmd, cwd in runs:
            out = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
            if out.returncode != 0 or "KL-1" not in out.stdout:
                print(f"README snippet `{' '.join(cmd)}` failed:\n{out.stdout}{out.stderr}", file=sys.stderr)
                return 1
    finally:
        js.unlink(missing_ok=True)
        shutil.rmtree(py.parent, ignore_errors=True)
        shutil.rmtree(go, ignore_errors=True)
    print(f"{len(runs) + 1} README snippets ran as written")
    return 0


if __name__ == "__main__":
    sys.exit(main())
