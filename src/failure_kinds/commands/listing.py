"""``failure-kinds list``: every registered kind, grouped by domain, with what it means."""

from __future__ import annotations

import json

from failure_kinds import FailureKind
from failure_kinds._streams import write_output
from failure_kinds.commands import EXIT_CLEAN

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse

FORMATS = ("text", "json", "markdown")


def run(arguments: argparse.Namespace) -> int:
    render = {"text": render_text, "json": render_json, "markdown": render_markdown}
    write_output(render[arguments.format]())
    return EXIT_CLEAN


def _by_domain() -> dict[str, list[FailureKind]]:
    domains: dict[str, list[FailureKind]] = {}
    for kind in FailureKind:
        domains.setdefault(kind.domain, []).append(kind)
    return domains


def render_text() -> str:
    width = max(len(kind.value) for kind in FailureKind)
    lines: list[str] = []
    for domain, kinds in _by_domain().items():
        lines.append(domain)
        lines.extend(f"  {kind.value:<{width}}  {kind.description}" for kind in kinds)
        lines.append("")
    return "\n".join(lines)


def render_json() -> str:
    entries = [
        {"name": kind.name, "value": kind.value, "domain": kind.domain, "description": kind.description}
        for kind in FailureKind
    ]
    return json.dumps(entries, indent=2) + "\n"


def render_markdown() -> str:
    lines = ["| Domain | Kind | What went wrong |", "| --- | --- | --- |"]
    for domain, kinds in _by_domain().items():
        lines.extend(f"| {domain} | `{kind.value}` | {kind.description} |" for kind in kinds)
    return "\n".join(lines) + "\n"
