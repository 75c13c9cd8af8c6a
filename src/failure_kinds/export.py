"""The vocabulary as data: the JSON export, a JSON Schema of one kind's value, and the comparison of two
exports, which says whether the newer is compatible (it removes and re-values nothing)."""

from __future__ import annotations

import json
import re
import sys
from typing import NamedTuple, cast

import failure_kinds
from failure_kinds import FailureKindsError
from failure_kinds._display import escaped, shown
from failure_kinds._runtime import NAMESPACED_PATTERN

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Collection, Mapping

# The layout of an export; a later layout that a reader cannot read says so with another number.
FORMAT = 1
# An export of any vocabulary is a few hundred kilobytes at most; a larger file is not one.
READ_LIMIT = 64 * 1024 * 1024


class ExportError(FailureKindsError):
    """An export that cannot be read or is not one."""


def kind_record(kind: failure_kinds.FailureKind) -> dict[str, str | None]:
    """What ``list --format json`` and the export say of a kind (the export puts its value first)."""
    replaced_by = None if kind.replaced_by is None else kind.replaced_by.value
    fields = {"name": kind.name, "value": kind.value, "domain": kind.domain, "description": kind.description}
    return {**fields, "since": kind.since, "replaced_by": replaced_by}


def vocabulary(namespaces: Mapping[str, Collection[str]] | None = None) -> dict[str, object]:
    """The export of the installed vocabulary, with ``namespaces`` when given (an empty one too)."""
    from dataclasses import asdict

    from failure_kinds.history import OLDER_LABELS

    data: dict[str, object] = {
        "format": FORMAT,
        "version": failure_kinds.__version__,
        "kinds": [{"value": kind.value, **kind_record(kind)} for kind in failure_kinds.FailureKind],
        "older_labels": [asdict(label) for label in OLDER_LABELS.values()],
        "stages": [{"value": stage.value, "description": stage.description} for stage in failure_kinds.Stage],
    }
    if namespaces is not None:
        data["namespaces"] = {server: sorted(kinds) for server, kinds in sorted(namespaces.items())}
    return data


def json_schema(namespaces: Mapping[str, Collection[str]] | None = None) -> dict[str, object]:
    declared = namespaces or {}
    alternatives: list[dict[str, object]] = [
        {"title": "registered kind", "enum": [kind.value for kind in failure_kinds.FailureKind]}
    ]
    if declared:
        kinds = sorted(f"{server}:{kind}" for server, members in declared.items() for kind in members)
        alternatives.append({"title": "declared namespaced kind", "enum": kinds})
    # Server names are [a-z][a-z0-9_]*, so they mean the same as written in any regular expression
    # dialect; the lookahead keeps a declared server's undeclared kinds out.
    guard = f"(?!(?:{'|'.join(sorted(declared))}):)" if declared else ""
    pattern = f"^{guard}{NAMESPACED_PATTERN.pattern}$"
    alternatives.append({"title": "namespaced kind of an undeclared server", "pattern": pattern})
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "failure kind",
        "description": f"A failure kind of failure-kinds {failure_kinds.__version__}: why a rollout failed.",
        "type": "string",
        "anyOf": alternatives,
    }


def read_export(path: str) -> dict[str, object]:
    where = escaped(path, 200)
    from failure_kinds._streams import describe_read_error, read_regular  # the words of every command

    try:
        data = read_regular(path, READ_LIMIT)
    except (OSError, ValueError) as error:
        raise ExportError(f"{where}: {describe_read_error(error)}") from None
    if isinstance(data, str):
        raise ExportError(f"{where}: {data}; not an export")
    if len(data) > READ_LIMIT:
        raise ExportError(f"{where}: larger than {READ_LIMIT // (1024 * 1024)} MiB; not an export")
    try:
        export = json.loads(data.decode("utf-8-sig"))
    except UnicodeDecodeError:
        raise ExportError(f"{where}: not UTF-8; not an export") from None
    except json.JSONDecodeError as error:
        raise ExportError(f"{where}: not JSON ({error.msg}); not an export") from None
    except RecursionError:
        raise ExportError(f"{where}: not JSON (nested too deeply); not an export") from None
    except ValueError:  # the decoder's one other refusal: an integer past sys.get_int_max_str_digits()
        limit = sys.get_int_max_str_digits()
        raise ExportError(
            f"{where}: a number too long to read (over {limit:,} digits); not an export"
        ) from None
    problem = _problem(export)
    if problem is not None:
        raise ExportError(f"{where}: not a failure-kinds export: {problem}")
    return cast("dict[str, object]", export)


# What a comparison reads of each section, its identifying field first: each a string, a replacement
# a string or null.
_REQUIRED = {
    "kinds": ("value", "name", "replaced_by"),
    "stages": ("value",),
    "older_labels": ("label", "replacement"),
}
_NULLABLE = ("replaced_by", "replacement")
# Every text a comparison prints is a name of one of these shapes, so a crafted export can neither forge an
# output line (a control character, a line break) nor flood it: anything else makes the file malformed.
_NAME = re.compile(r"[a-z][a-z0-9_]{0,99}")
_CONSTANT = re.compile(r"[A-Z][A-Z0-9_]{0,99}")
_VERSION = re.compile(r"[0-9]{1,4}(?:\.[0-9]{1,4}){1,3}")


def _problem(export: object) -> str | None:
    if not isinstance(export, dict):
        return "the top level is not an object"
    data = cast("dict[str, object]", export)
    if type(data.get("format")) is not int or data.get("format") != FORMAT:  # True == 1, but is no format
        return f"format {shown(data.get('format'), 80)} is not {FORMAT}"
    for section, fields in _REQUIRED.items():
        items = data.get(section)
        if not isinstance(items, list):
            return f"{section} is not a list"
        key = fields[0]
        seen: set[str] = set()
        for index, item in enumerate(cast("list[object]", items)):
            if not isinstance(item, dict):
                return f"{section}[{index}] is not an object"
            entry = cast("dict[str, object]", item)
            for field in fields:
                given = entry.get(field)
                if given is None and field in _NULLABLE and field in entry:
                    continue
                if not isinstance(given, str):
                    types = "string or null" if field in _NULLABLE else "string"
                    return f"{section}[{index}].{field} is missing or not a {types}"
                shape = _CONSTANT if field == "name" else _NAME
                if shape.fullmatch(given) is None:
                    return f"{section}[{index}].{field} {shown(given, 80)} does not match {shape.pattern}"
            identity = str(entry[key])
            if identity in seen:
                return f"{section}[{index}].{key} {shown(identity, 80)} is listed twice"
            seen.add(identity)
    kinds = _by(data, "kinds", "value")
    names = [str(kind["name"]) for kind in kinds.values()]
    if len(set(names)) != len(names):
        return "two kinds have the same name"
    for label, entry in _by(data, "older_labels", "label").items():
        replacement = entry["replacement"]
        if replacement is not None and replacement not in kinds:
            return f"older label {label} is replaced by {shown(replacement, 80)}, not by one of its kinds"
    for value, kind in kinds.items():
        since = kind.get("since", "0.1.0")
        if not isinstance(since, str) or _VERSION.fullmatch(since) is None:
            return f"kind {value} has the first version {shown(since, 80)}, not a version such as 0.3.0"
        replacement = kind["replaced_by"]
        if replacement is not None and (replacement == value or replacement not in kinds):
            return f"kind {value} is replaced by {shown(replacement, 80)}, not by another of its kinds"
    return None


class Change(NamedTuple):
    """One difference between two exports: what ``change`` befell the kind, stage or older label ``name``
    (a re-valued kind is named by its constant), what it was and is (``old``, ``new``: a kind's value,
    constant or replacement, an older label's replacement; None for nothing), whether it ``breaks`` code or
    data written against the older export, and the ``line`` that says so."""

    change: str
    name: str
    old: str | None
    new: str | None
    breaks: bool
    line: str


# The changes that break code importing a constant, or data counted under a value or replacement.
_BREAKING = frozenset({
    "re-valued kind", "removed kind", "renamed constant", "removed stage", "removed older label",
    "removed replacement", "changed replacement",
})  # fmt: skip


def changes(old: Mapping[str, object], new: Mapping[str, object]) -> list[Change]:
    """What changed from ``old`` to ``new``, the breaking changes first, each group in its lines' order."""
    found: list[Change] = []

    def add(change: str, name: str, before: object, after: object, line: str) -> None:
        was, now = (None if value is None else str(value) for value in (before, after))
        found.append(Change(change, name, was, now, change in _BREAKING, line))

    old_kinds, new_kinds = _by(old, "kinds", "value"), _by(new, "kinds", "value")
    old_names = {str(kind["name"]): value for value, kind in old_kinds.items()}
    new_names = {str(kind["name"]): value for value, kind in new_kinds.items()}
    revalued = {name for name in old_names.keys() & new_names.keys() if old_names[name] != new_names[name]}
    for name in revalued:
        was, now = old_names[name], new_names[name]
        add("re-valued kind", name, was, now, f"re-valued kind {name}: {was!r} -> {now!r}")
    for value in old_kinds.keys() & new_kinds.keys():
        before, after = old_kinds[value]["name"], new_kinds[value]["name"]
        if before != after and before not in new_names:  # code importing it breaks
            line = f"renamed constant of kind {value}: {before} -> {after}"
            add("renamed constant", value, before, after, line)
    moved = {old_names[name] for name in revalued} | {new_names[name] for name in revalued}
    for value, kind in old_kinds.items():
        if value not in new_kinds and value not in moved:
            add("removed kind", value, kind["name"], None, f"removed kind {value} ({kind['name']})")
    for value, kind in new_kinds.items():
        if value not in old_kinds and value not in moved:
            add("added kind", value, None, kind["name"], f"added kind {value} ({kind['name']})")
        before, after = old_kinds.get(value, {}).get("replaced_by"), kind.get("replaced_by")
        if after is not None and after != before:
            add("deprecated kind", value, before, after, f"deprecated kind {value}: use {after}")
        elif after is None and before is not None:
            add("no longer deprecated", value, before, None, f"kind {value} is no longer deprecated")
    old_stages, new_stages = _by(old, "stages", "value"), _by(new, "stages", "value")
    for value in old_stages.keys() - new_stages.keys():
        add("removed stage", value, None, None, f"removed stage {value}")
    for value in new_stages.keys() - old_stages.keys():
        add("added stage", value, None, None, f"added stage {value}")
    old_labels, new_labels = _by(old, "older_labels", "label"), _by(new, "older_labels", "label")
    for label in old_labels.keys() - new_labels.keys():
        before = old_labels[label].get("replacement")
        add("removed older label", label, before, None, f"removed older label {label}")
    for label, entry in new_labels.items():
        replacement = entry.get("replacement")
        if label not in old_labels:
            target = "no single replacement" if replacement is None else f"replaced by {replacement}"
            add("added older label", label, None, replacement, f"added older label {label} ({target})")
        elif (before := old_labels[label].get("replacement")) != replacement:
            # Old data regrouped under the earlier replacement would be counted elsewhere, or nowhere; a first
            # replacement only regroups what had none, so only "added" is compatible.
            change = "added" if before is None else "removed" if replacement is None else "changed"
            shown = ["no single replacement" if value is None else value for value in (before, replacement)]
            line = f"{change} replacement of older label {label}: {shown[0]} -> {shown[1]}"
            add(f"{change} replacement", label, before, replacement, line)
    return sorted(found, key=lambda change: (not change.breaks, change.line))


def compare(old: Mapping[str, object], new: Mapping[str, object]) -> tuple[list[str], bool]:
    """What changed from ``old`` to ``new``, one line each (breaking changes first), and whether ``new``
    is compatible."""
    found = changes(old, new)
    return [change.line for change in found], not any(change.breaks for change in found)


def _by(export: Mapping[str, object], section: str, key: str) -> dict[str, dict[str, object]]:
    return {str(item[key]): item for item in cast("list[dict[str, object]]", export.get(section))}
