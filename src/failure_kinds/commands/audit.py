"""``failure-kinds audit``: count the failure kinds in rollout logs, with :mod:`failure_kinds.audit`."""

from __future__ import annotations

import sys

from failure_kinds._streams import error_line, write_output
from failure_kinds.commands import EXIT_CLEAN, EXIT_FINDINGS, EXIT_USAGE, load_project_config

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse


def run(arguments: argparse.Namespace) -> int:
    import failure_kinds.audit as audit
    from failure_kinds._display import escaped, plain

    fields = arguments.fields or ["failure_kind"]
    stages = arguments.stages or [None]
    if len(stages) > 1:  # one stage path serves every field: a second would silently replace the first
        raise audit.AuditError("--stage is given more than once")
    config = load_project_config(arguments)
    aliases = audit.merged_aliases(arguments.aliases or None, arguments.alias)
    if arguments.decoder == "msgspec" and not audit.fast_available():
        raise audit.AuditError(
            "--decoder msgspec needs msgspec, the fast extra (see the README's Install): "
            "pip install '.[fast]' in a clone of failure-kinds"
        )
    report = audit.audit(
        [*getattr(arguments, "ray_paths", []), *arguments.paths],
        fields,
        aliases,
        fast=arguments.decoder != "stdlib",
        progress=sys.stderr,
        namespaces=dict(config.namespaces),
        jobs=arguments.jobs,
        ray=arguments.ray,
        line_bytes=arguments.max_line_bytes,
        stage_path=stages[0],
    )
    if report.failed_files and len(report.failed_files) == len(report.files) and not report.records:
        pass  # nothing could be read: the errors below, and no report of nothing
    elif arguments.format == "json":
        write_output(audit.render_json(report))
    else:
        utf8 = (getattr(sys.stdout, "encoding", None) or "utf-8").lower().replace("-", "") == "utf8"
        write_output(audit.render_text(report, bar_character="\u2588" if utf8 else "#"))
    for note in dict.fromkeys(note for one in (report, *report.also) for note in one.notes):
        error_line(f"failure-kinds audit: note: {note}")
    for file in report.failed_files:  # the words may come from a Ray task's partial
        error_line(f"failure-kinds audit: {plain(file.path)}: {escaped(file.error or '')}")
    if report.failed_files:
        return EXIT_USAGE
    # An older label fails --strict even when the vocabulary knows its replacement: its producers still
    # write it until the user says how to read it (--alias) or fixes them.
    findings = any(one.findings for one in (report, *report.also))
    return EXIT_FINDINGS if arguments.strict and findings else EXIT_CLEAN
