#!/usr/bin/env python3
"""Checks the links of the front page, CONTRIBUTING.md and the book in docs/: every relative
link names a file that exists (from docs/, one inside docs/, which is all the built book
has), every #fragment names a heading of its page, and every page of docs/ is in SUMMARY.md.
Part of `make test-docs`."""

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)|!\[[^\]]*\]\(([^)\s]+)\)")


def prose(text: str):
    """The lines outside fenced code, with inline code spans blanked."""
    fenced = False
    for n, line in enumerate(text.split("\n"), 1):
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        if not fenced:
            yield n, re.sub(r"`[^`]*`", "", line)


def slug(heading: str) -> str:
    """A heading's anchor as GitHub and mdBook make it."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading.strip().lower())
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    return {slug(line.lstrip("#")) for _, line in prose(page.read_text()) if re.match(r"#{1,6} ", line)}


def main() -> int:
    pages = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *sorted(DOCS.rglob("*.md"))]
    problems = []
    for page in pages:
        for n, line in prose(page.read_text()):
            for match in LINK.finditer(line):
                target = match.group(1) or match.group(2)
                if re.match(r"[a-z]+:", target):
                    continue
                path, _, fragment = target.partition("#")
                resolved = (page.parent / path).resolve() if path else page
                where = f"{page.relative_to(ROOT)}:{n}: {target}"
                if not resolved.exists():
                    problems.append(f"{where}: no such file")
                elif page.is_relative_to(DOCS) and not resolved.is_relative_to(DOCS):
                    problems.append(f"{where}: outside docs/, so not in the built book")
                elif fragment and resolved.suffix == ".md" and fragment not in anchors(resolved):
                    problems.append(f"{where}: no heading #{fragment}")
    summary = (DOCS / "SUMMARY.md").read_text()
    listed = {(DOCS / t).resolve() for t in re.findall(r"\]\(([^)#]+)\)", summary)}
    for page in sorted(DOCS.rglob("*.md")):
        if page.name != "SUMMARY.md" and page.resolve() not in listed:
            problems.append(f"{page.relative_to(ROOT)}: not in docs/SUMMARY.md")
    for p in problems:
        print(p, file=sys.stderr)
    if problems:
        return 1
    print(f"links of {len(pages)} pages checked")
    return 0


if __name__ == "__main__":
    sys.exit(main())
