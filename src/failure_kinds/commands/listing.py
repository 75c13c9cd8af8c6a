"""``failure-kinds list``: every registered kind, grouped by domain, and the stages, with what each means."""

from __future__ import annotations

import json

from failure_kinds import FailureKind, Stage
from failure_kinds._streams import write_output
from failure_kinds.commands import EXIT_CLEAN

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse

# The heading of the stages in the text listing; no domain is called so.
STAGES_HEADING = "stages (where in an episode it failed)"


def run(arguments: argparse.Namespace) -> int:
    write_output({"text": render_text, "json": render_json, "markdown": render_markdown}[arguments.format]())
    return EXIT_CLEAN


def _domains() -> dict[str, list[tuple[FailureKind, str]]]:
    """Each domain's kinds, with the description and, when deprecated, the replacement."""
    domains: dict[str, list[tuple[FailureKind, str]]] = {}
    for kind in FailureKind:
        replaced = "" if kind.replaced_by is None else f" Deprecated: use {kind.replaced_by.value}."
        domains.setdefault(kind.domain, []).append((kind, kind.description + replaced))
    return domains


def render_text() -> str:
    width = max(len(name) for name in [*FailureKind, *Stage])
    lines: list[str] = []
    for domain, kinds in _domains().items():
        lines += [domain, *(f"  {kind.value:<{width}}  {meaning}" for kind, meaning in kinds), ""]
    lines += [STAGES_HEADING, *(f"  {stage.value:<{width}}  {stage.description}" for stage in Stage), ""]
    return "\n".join(lines)


def render_json() -> str:
    from failure_kinds.export import kind_record

    kinds = [kind_record(kind) for kind in FailureKind]
    stages = [{"value": stage.value, "description": stage.description} for stage in Stage]
    return json.dumps({"kinds": kinds, "stages": stages}, indent=2) + "\n"


def render_markdown() -> str:
    lines = ["| Domain | Kind | What went wrong |", "| --- | --- | --- |"]
    for domain, kinds in _domains().items():
        lines += [f"| {domain} | `{kind.value}` | {meaning} |" for kind, meaning in kinds]
    lines += ["", "| Stage | Where in the episode |", "| --- | --- |"]
    lines += [f"| `{stage.value}` | {stage.description} |" for stage in Stage]
    return "\n".join(lines) + "\n"
