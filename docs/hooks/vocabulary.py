"""MkDocs hook: the vocabulary page's table, written when the site is built.

The marker line is replaced by what ``failure-kinds list --format markdown`` prints, run with the Python
that builds the site, so the page shows exactly the kinds of the package installed there;
tests/test_docs.py checks the replacement.
"""

from __future__ import annotations

import subprocess
import sys
from typing import Any

MARKER = "<!-- vocabulary table: written from the enum by docs/hooks/vocabulary.py -->"


def vocabulary_table() -> str:
    command = [sys.executable, "-m", "failure_kinds", "list", "--format", "markdown"]
    listed = subprocess.run(command, capture_output=True, text=True, encoding="utf-8", check=False)
    if listed.returncode != 0:
        raise RuntimeError(f"{' '.join(command[2:])} failed: {listed.stderr.strip()}")
    return listed.stdout.rstrip("\n")


def with_vocabulary(markdown: str) -> str:
    if MARKER not in markdown:
        return markdown
    return markdown.replace(MARKER, vocabulary_table())


def on_page_markdown(markdown: str, **_: Any) -> str:
    return with_vocabulary(markdown)
