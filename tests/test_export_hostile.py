"""`failure-kinds diff` on crafted exports: every text it prints is a name of a known shape, so an export
cannot forge an output line or flood it, and changes that break code or old data are incompatible."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path

import pytest
from helpers import examples, run_cli
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from failure_kinds.export import ExportError, compare, read_export, vocabulary

CURRENT: dict[str, object] = vocabulary()

# Where a printed text comes from in an export, and how to put one there.
PLACES: dict[str, Callable[[dict[str, object], str], None]] = {
    "kind value": lambda export, text: export["kinds"][0].update(value=text),  # type: ignore[index]
    "kind name": lambda export, text: export["kinds"][0].update(name=text),  # type: ignore[index]
    "replaced_by": lambda export, text: export["kinds"][1].update(replaced_by=text),  # type: ignore[index]
    "stage": lambda export, text: export["stages"].append({"value": text, "description": "x"}),  # type: ignore[attr-defined]
    "older label": lambda export, text: export["older_labels"][0].update(label=text),  # type: ignore[index]
    "replacement": lambda export, text: export["older_labels"][0].update(replacement=text),  # type: ignore[index]
}


def written(folder: Path, name: str, export: object) -> str:
    path = folder / name
    path.write_text(json.dumps(export), encoding="utf-8")
    return str(path)


@settings(
    max_examples=examples(200), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(place=st.sampled_from(sorted(PLACES)), text=st.text(min_size=1, max_size=300))
def test_a_crafted_text_is_refused_or_printed_as_a_plain_name(tmp_path: Path, place: str, text: str) -> None:
    hostile = copy.deepcopy(CURRENT)
    PLACES[place](hostile, text)
    old = written(tmp_path, "old.json", CURRENT)
    new = written(tmp_path, "new.json", hostile)
    try:
        lines, _ = compare(read_export(old), read_export(new))
    except ExportError as error:
        message = str(error)
        assert message.isprintable()
        assert len(message) < 600
        return
    # Accepted: every line is printable and short, whatever the text was.
    assert all(line.isprintable() and len(line) <= 400 for line in lines)


@pytest.mark.parametrize(
    ("change", "first_line"),
    [
        (
            lambda export: export["kinds"][0].update(name="TRANSPORT_X"),
            "renamed constant of kind transport_unreachable: TRANSPORT_UNREACHABLE -> TRANSPORT_X",
        ),
        (
            lambda export: [
                label.update(replacement=None)
                for label in export["older_labels"]
                if label["label"] == "peer_drop"
            ],
            "removed replacement of older label peer_drop: transport_peer_drop -> None",
        ),
    ],
)
def test_changes_that_break_code_or_old_data_are_incompatible(
    tmp_path: Path, change: Callable[[dict[str, object]], object], first_line: str
) -> None:
    changed = copy.deepcopy(CURRENT)
    change(changed)
    result = run_cli("diff", written(tmp_path, "old.json", CURRENT), written(tmp_path, "new.json", changed))
    assert result.returncode == 1, result.stderr
    assert result.stdout.splitlines()[0] == first_line


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        (lambda export: export.update(format=True), "format True is not 1"),
        (lambda export: export["kinds"][0].update(replaced_by="no_such_kind"), "not by another of its kinds"),
        (
            lambda export: export["kinds"][0].update(replaced_by=export["kinds"][0]["value"]),
            "not by another of its kinds",
        ),
        (lambda export: export["kinds"][0].update(since="banana"), "not a version such as 0.3.0"),
        (
            lambda export: export["older_labels"][0].update(replacement="no_such_kind"),
            "not by one of its kinds",
        ),
        (lambda export: export["stages"].append({"value": "\x1b[31m\nforged: ok"}), "does not match"),
        (lambda export: export["stages"].append({"value": "s" * 100_000}), "does not match"),
    ],
)
def test_a_malformed_export_is_one_line_and_exit_2(
    tmp_path: Path, change: Callable[[dict[str, object]], object], reason: str
) -> None:
    changed = copy.deepcopy(CURRENT)
    change(changed)
    result = run_cli("diff", written(tmp_path, "old.json", CURRENT), written(tmp_path, "new.json", changed))
    assert result.returncode == 2
    assert result.stdout == ""
    (line,) = result.stderr.splitlines()
    assert reason in line
    assert line.isprintable()
    assert len(line) < 600


def test_a_first_replacement_of_an_older_label_is_compatible(tmp_path: Path) -> None:
    changed = copy.deepcopy(CURRENT)
    older = next(label for label in changed["older_labels"] if label["replacement"] is None)  # type: ignore[attr-defined]
    older["replacement"] = "agent_timeout"
    result = run_cli("diff", written(tmp_path, "old.json", CURRENT), written(tmp_path, "new.json", changed))
    assert result.returncode == 0, result.stdout
    assert result.stdout == f"added replacement of older label {older['label']}: None -> agent_timeout\n"
