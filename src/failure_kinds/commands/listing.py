"""``failure-kinds list``: every registered kind, grouped by domain, and the stages, with what each means."""

from __future__ import annotations

import json

import failure_kinds
from failure_kinds import FailureKind
from failure_kinds._streams import write_output
from failure_kinds.commands import EXIT_CLEAN

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse

FORMATS = ("text", "json", "markdown")
# The heading of the stages in the text listing; no domain is called so.
STAGES_HEADING = "stages (where in an episode it failed)"


def run(arguments: argparse.Namespace) -> int:
    render = {"text": render_text, "json": render_json, "markdown": render_markdown}
    write_output(render[arguments.format]())
    return EXIT_CLEAN


def _by_domain() -> dict[str, list[FailureKind]]:
    domains: dict[str, list[FailureKind]] = {}
    for kind in FailureKind:
        domains.setdefault(kind.domain, []).append(kind)
    return domains


def _deprecation(kind: FailureKind) -> str:
    return "" if kind.replaced_by is None else f" Deprecated: use {kind.replaced_by.value}."


def render_text() -> str:
    stages = list(failure_kinds.Stage)
    width = max(len(name) for name in [*FailureKind, *stages])
    lines: list[str] = []
    for domain, kinds in _by_domain().items():
        lines.append(domain)
        lines.extend(f"  {kind.value:<{width}}  {kind.description}{_deprecation(kind)}" for kind in kinds)
        lines.append("")
    lines.append(STAGES_HEADING)
    lines.extend(f"  {stage.value:<{width}}  {stage.description}" for stage in stages)
    lines.append("")
    return "\n".join(lines)


def render_json() -> str:
    data = {
        "kinds": [
            {
                "name": kind.name,
                "value": kind.value,
                "domain": kind.domain,
                "description": kind.description,
                "since": kind.since,
                "replaced_by": None if kind.replaced_by is None else kind.replaced_by.value,
            }
            for kind in FailureKind
        ],
        "stages": [{"value": stage.value, "description": stage.description} for stage in failure_kinds.Stage],
    }
    return json.dumps(data, indent=2) + "\n"


def render_markdown() -> str:
    lines = ["| Domain | Kind | What went wrong |", "| --- | --- | --- |"]
    for domain, kinds in _by_domain().items():
        lines.extend(
            f"| {domain} | `{kind.value}` | {kind.description}{_deprecation(kind)} |" for kind in kinds
        )
    lines += ["", "| Stage | Where in the episode |", "| --- | --- |"]
    lines.extend(f"| `{stage.value}` | {stage.description} |" for stage in failure_kinds.Stage)
    return "\n".join(lines) + "\n"
