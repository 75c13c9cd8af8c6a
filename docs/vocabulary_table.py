"""Write the tables of docs/vocabulary.md from the FailureKind and Stage enums.

The page holds, between its two marker comments, what ``failure-kinds list --format markdown`` prints for
the source tree. The table is committed rather than written when the site is built, since Zensical runs
no MkDocs hook; ``make lint`` and tests/test_docs.py check that it is current.

    python docs/vocabulary_table.py          rewrite the table
    python docs/vocabulary_table.py --check  exit 1 when the committed table is out of date
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

PAGE_PATH = Path(__file__).parent / "vocabulary.md"
SOURCE_PATH = Path(__file__).parent.parent / "src"

BEGIN = "<!-- vocabulary table: begin. Written by docs/vocabulary_table.py from the enums: do not edit. -->"
END = "<!-- vocabulary table: end -->"


class MarkersError(Exception):
    """The page lacks the two marker lines, or has them out of order or more than once."""


def table() -> str:
    """The tables of kinds and stages for the enums as the source tree defines them now."""
    sys.path.insert(0, str(SOURCE_PATH))
    try:
        from failure_kinds.commands.listing import render_markdown
    finally:
        sys.path.remove(str(SOURCE_PATH))
    return render_markdown()


def with_table(page: str, written: str) -> str:
    """The page with everything between its markers replaced by the table ``written``."""
    lines = page.splitlines(keepends=True)
    stripped = [line.rstrip("\r\n") for line in lines]
    if stripped.count(BEGIN) != 1 or stripped.count(END) != 1:
        raise MarkersError(f"{PAGE_PATH.name} needs one line {BEGIN!r} and one line {END!r}")
    begin, end = stripped.index(BEGIN), stripped.index(END)
    if end < begin:
        raise MarkersError(f"{PAGE_PATH.name}: the end marker comes before the begin marker")
    # Blank lines around the table keep Markdown from reading the comments as part of it.
    return "".join(lines[: begin + 1]) + "\n" + written + "\n" + "".join(lines[end:])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument(
        "--check", action="store_true", help="exit 1 if the committed table differs; write nothing"
    )
    arguments = parser.parse_args(argv)
    current = PAGE_PATH.read_text(encoding="utf-8")
    try:
        text = with_table(current, table())
    except MarkersError as error:
        print(error, file=sys.stderr)
        return 2
    if arguments.check:
        if current != text:
            print(f"{PAGE_PATH} is out of date: run python docs/vocabulary_table.py", file=sys.stderr)
            return 1
        return 0
    if current != text:
        PAGE_PATH.write_text(text, encoding="utf-8")
        print(f"wrote {PAGE_PATH}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
