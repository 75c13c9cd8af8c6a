"""failure-kinds export and diff: the vocabulary as data, its JSON Schema, and compatibility with every
earlier release's export in exports/."""

from __future__ import annotations

import copy
import json
import re
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from helpers import ROOT, examples, run_cli
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import failure_kinds
from failure_kinds._runtime import category
from failure_kinds.export import ExportError, compare, json_schema, read_export, vocabulary

RELEASES = sorted((ROOT / "exports").glob("*.json"))


# An evaluator of the schema's keywords; any other keyword fails, so the schema cannot outgrow it.
def accepts(schema: dict[str, Any], value: object) -> bool:
    annotations = {"$schema", "title", "description"}
    unknown = set(schema) - annotations - {"type", "anyOf", "enum", "pattern"}
    assert not unknown, f"evaluator does not know {unknown}"
    if "type" in schema:
        assert schema["type"] == "string"
        if not isinstance(value, str):
            return False
    if "enum" in schema and value not in schema["enum"]:
        return False
    if "pattern" in schema:
        pattern = schema["pattern"]
        # ECMA-262 anchors: without the multiline flag, ^ and $ match only at the ends of the string
        # (Python's $ would also match before a final newline), so ^X$ is a full match of X.
        assert pattern[:1] + pattern[-1:] == "^$"
        if not isinstance(value, str) or re.fullmatch(pattern[1:-1], value) is None:
            return False
    if "anyOf" in schema:
        return any(accepts(branch, value) for branch in schema["anyOf"])
    return True


DECLARED = {"usersim": ["persona_drift", "goal_abandoned"], "tb4": ["container_crash"]}
NAME = st.from_regex(r"[a-z][a-z0-9_]{0,8}", fullmatch=True)
CANDIDATES = st.one_of(
    st.sampled_from(sorted(failure_kinds.FAILURE_KINDS)),
    st.sampled_from(["peer_drop", "timeout_exceeded", "oom_killed", "judge_faild", "", "usersim:", ":x"]),
    st.sampled_from([f"{server}:{kind}" for server, kinds in DECLARED.items() for kind in kinds]),
    st.builds(lambda server, kind: f"{server}:{kind}", st.sampled_from(sorted(DECLARED)) | NAME, NAME),
    st.builds(str.__add__, st.sampled_from(sorted(failure_kinds.FAILURE_KINDS)), st.text(max_size=3)),
    st.text(max_size=30),
)


@settings(max_examples=examples(600), deadline=None)
@given(CANDIDATES, st.booleans())
def test_the_schema_accepts_exactly_what_the_runtime_passes_silently(value: str, declared: bool) -> None:
    namespaces = DECLARED if declared else None
    schema = json_schema(namespaces)
    expected = category(value, namespaces or {}) in ("registered", "namespaced")
    assert accepts(schema, value) is expected


def test_the_export_holds_every_kind_label_and_stage() -> None:
    from failure_kinds.history import OLDER_LABELS

    data = vocabulary()
    kinds = {kind["value"]: kind for kind in data["kinds"]}  # type: ignore[attr-defined]
    assert set(kinds) == failure_kinds.FAILURE_KINDS
    for member in failure_kinds.FailureKind:
        replaced_by = None if member.replaced_by is None else member.replaced_by.value
        expected = (member.name, member.domain, member.description, member.since, replaced_by)
        fields = ("name", "domain", "description", "since", "replaced_by")
        assert tuple(kinds[member.value][field] for field in fields) == expected
    labels = {label["label"]: label for label in data["older_labels"]}  # type: ignore[attr-defined]
    assert set(labels) == set(OLDER_LABELS)
    assert all(labels[name]["replacement"] == OLDER_LABELS[name].replacement for name in labels)
    assert [stage["value"] for stage in data["stages"]] == [stage.value for stage in failure_kinds.Stage]  # type: ignore[attr-defined]
    assert "namespaces" not in data


def test_the_command_exports_json_and_the_declared_namespaces(tmp_path: Path) -> None:
    bare = run_cli("export", cwd=tmp_path)
    assert bare.returncode == 0, bare.stderr
    assert json.loads(bare.stdout) == vocabulary()
    (tmp_path / "pyproject.toml").write_text('[tool.failure-kinds.namespaces]\ntb4 = ["container_crash"]\n')
    configured = run_cli("export", "--format", "json", cwd=tmp_path)
    assert json.loads(configured.stdout)["namespaces"] == {"tb4": ["container_crash"]}
    schema = json.loads(run_cli("export", "--format", "jsonschema", cwd=tmp_path).stdout)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert not any(accepts(schema, value) for value in (None, 3, ["judge_failed"], {"judge_failed": 1}))
    assert accepts(schema, "tb4:container_crash")
    assert not accepts(schema, "tb4:container_crsh")
    assert accepts(schema, "usersim:anything")
    broken = run_cli("export", "--config", str(tmp_path / "missing.toml"), cwd=tmp_path)
    assert broken.returncode == 2
    assert len(broken.stderr.splitlines()) == 1


@pytest.mark.parametrize("release", RELEASES, ids=[path.stem for path in RELEASES])
def test_the_current_vocabulary_is_compatible_with_each_release(release: Path) -> None:
    old = read_export(str(release))
    lines, compatible = compare(old, vocabulary())
    assert compatible, lines  # no removal or re-valuation (the property below: those break)
    old_kinds = {kind["value"]: kind for kind in old["kinds"]}  # type: ignore[attr-defined]
    for member in failure_kinds.FailureKind:
        if member.value in old_kinds:
            # A kind keeps its constant name and the version it first appeared in.
            assert old_kinds[member.value]["name"] == member.name
            assert old_kinds[member.value]["since"] == member.since


def test_the_command_compares_the_current_vocabulary_with_a_release(tmp_path: Path) -> None:
    assert [path.stem for path in RELEASES][:2] == ["0.1.0", "0.2.0"], "every earlier release is kept"
    current = tmp_path / "current.json"
    current.write_text(run_cli("export", cwd=tmp_path).stdout)
    result = run_cli("diff", str(ROOT / "exports" / "0.2.0.json"), str(current))
    assert result.returncode == 0, result.stdout + result.stderr
    change = "kind environment_server_failed (ENVIRONMENT_SERVER_FAILED)"
    assert f"added {change}" in result.stdout.splitlines()
    backwards = run_cli("diff", str(current), str(ROOT / "exports" / "0.2.0.json"))
    assert backwards.returncode == 1
    assert f"removed {change}" in backwards.stdout.splitlines()
    same = run_cli("diff", str(current), str(current))
    assert (same.returncode, same.stdout, same.stderr) == (0, "no changes\n", "")


def base_export() -> dict[str, Any]:
    return json.loads(json.dumps(vocabulary()))


CHANGES = st.lists(
    st.tuples(
        st.sampled_from(
            ["remove", "revalue", "add", "deprecate", "remove_stage", "add_stage", "add_label", "drop_label"]
        ),
        st.integers(0, 1000),
    ),
    max_size=6,
)


@settings(max_examples=examples(200), deadline=None)
@given(CHANGES)
def test_each_change_is_one_line_and_only_removals_and_revaluations_break(
    changes: list[tuple[str, int]],
) -> None:
    old = base_export()
    new = copy.deepcopy(old)
    expected: set[str] = set()
    touched: set[str] = set()
    for number, (change, pick) in enumerate(changes):
        kinds = [kind for kind in new["kinds"] if kind["name"] not in touched]
        if change in ("remove", "revalue", "deprecate") and kinds:
            kind = kinds[pick % len(kinds)]
            touched.add(kind["name"])
            if change == "remove":
                new["kinds"].remove(kind)
                expected.add(f"removed kind {kind['value']} ({kind['name']})")
            elif change == "revalue":
                old_value, kind["value"] = kind["value"], f"renamed_{number}"
                expected.add(f"re-valued kind {kind['name']}: {old_value!r} -> 'renamed_{number}'")
            elif kind["replaced_by"] is None:
                kind["replaced_by"] = "judge_failed"
                expected.add(f"deprecated kind {kind['value']}: use judge_failed")
        elif change == "add":
            new["kinds"].append(
                {"value": f"new_kind_{number}", "name": f"NEW_KIND_{number}", "replaced_by": None}
            )
            touched.add(f"NEW_KIND_{number}")
            expected.add(f"added kind new_kind_{number} (NEW_KIND_{number})")
        elif change == "remove_stage" and (
            stages := [item for item in new["stages"] if item in old["stages"]]
        ):
            stage = stages[pick % len(stages)]
            new["stages"].remove(stage)
            expected.add(f"removed stage {stage['value']}")
        elif change == "add_stage":
            new["stages"].append({"value": f"stage_{number}"})
            expected.add(f"added stage stage_{number}")
        elif change == "add_label":
            new["older_labels"].append({"label": f"old_{number}", "replacement": None})
            expected.add(f"added older label old_{number} (no single replacement)")
        elif change == "drop_label" and (
            labels := [item for item in new["older_labels"] if item in old["older_labels"]]
        ):
            label = labels[pick % len(labels)]
            new["older_labels"].remove(label)
            expected.add(f"removed older label {label['label']}")
    lines, compatible = compare(old, new)
    assert set(lines) == expected
    assert len(lines) == len(expected)
    # What breaks code or old data: removing anything, or giving a kind another value.
    assert compatible is not any(line.startswith(("removed ", "re-valued ")) for line in expected)
    # Incompatible changes come first.
    flags = [line.startswith(("removed ", "re-valued ")) for line in lines]
    assert flags == sorted(flags, reverse=True)


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=5), children, max_size=3)
    ),
    max_leaves=10,
)


def mangled_exports() -> st.SearchStrategy[object]:
    """A real export with one field replaced by an arbitrary JSON value."""
    base = base_export()
    paths = [("format",), ("kinds",), ("stages",), ("older_labels",)]
    paths += [("kinds", 0, field) for field in ("value", "name", "replaced_by")]
    paths += [("stages", 0, "value"), ("older_labels", 0, "label"), ("older_labels", 0, "replacement")]

    def mangle(path: tuple[Any, ...], value: object) -> object:
        data = copy.deepcopy(base)
        target: Any = data
        for step in path[:-1]:
            target = target[step]
        target[path[-1]] = value
        return data

    return st.builds(mangle, st.sampled_from(paths), JSON_VALUES)


@settings(max_examples=examples(300), deadline=None)
@given(
    st.one_of(st.builds(json.dumps, JSON_VALUES | mangled_exports()).map(str.encode), st.binary(max_size=200))
)
def test_any_file_is_an_export_or_one_clear_error(data: bytes) -> None:
    path = Path(tempfile.gettempdir()) / "failure-kinds-export-test.json"
    path.write_bytes(data)
    try:
        export = read_export(str(path))
    except ExportError as error:
        assert "\n" not in str(error)  # noqa: PT017
        assert str(error).startswith(str(path))  # noqa: PT017
    else:  # fit for compare, and compared with itself, no changes
        assert compare(export, export) == ([], True)


CURRENT: dict[str, Any] = vocabulary()


def change_of(place: str, text: object) -> Callable[[dict[str, Any]], object]:
    """A change that puts ``text`` in one place of an export."""
    return {
        "kind value": lambda export: export["kinds"][0].update(value=text),
        "kind name": lambda export: export["kinds"][0].update(name=text),
        "replaced_by": lambda export: export["kinds"][1].update(replaced_by=text),
        "since": lambda export: export["kinds"][0].update(since=text),
        "stage": lambda export: export["stages"].append({"value": text, "description": "x"}),
        "older label": lambda export: export["older_labels"][0].update(label=text),
        "replacement": lambda export: export["older_labels"][0].update(replacement=text),
        "format": lambda export: export.update(format=text),
    }[place]


def diff(
    folder: Path, change: Callable[[dict[str, Any]], object], *options: str
) -> subprocess.CompletedProcess[str]:
    changed = copy.deepcopy(CURRENT)
    change(changed)
    (folder / "old.json").write_text(json.dumps(CURRENT), encoding="utf-8")
    (folder / "new.json").write_text(json.dumps(changed), encoding="utf-8")
    return run_cli("diff", str(folder / "old.json"), str(folder / "new.json"), *options)


FIRST_REPLACED = next(label["label"] for label in CURRENT["older_labels"] if label["replacement"] is None)


@pytest.mark.parametrize(("change", "code", "said"), [
    (change_of("kind name", "TRANSPORT_X"), 1,
     "renamed constant of kind transport_unreachable: TRANSPORT_UNREACHABLE -> TRANSPORT_X"),
    (lambda export: [label.update(replacement=None) for label in export["older_labels"]
                     if label["label"] == "peer_drop"], 1,
     "removed replacement of older label peer_drop: transport_peer_drop -> no single replacement"),
    (lambda export: [label.update(replacement="agent_timeout") for label in export["older_labels"]
                     if label["label"] == FIRST_REPLACED], 0,
     f"added replacement of older label {FIRST_REPLACED}: no single replacement -> agent_timeout"),
    (change_of("format", True), 2, "format True is not 1"),
    (change_of("replaced_by", "no_such_kind"), 2, "not by another of its kinds"),
    (lambda export: export["kinds"][0].update(replaced_by=export["kinds"][0]["value"]), 2,
     "not by another of its kinds"),
    (change_of("since", "banana"), 2, "not a version such as 0.3.0"),
    (change_of("replacement", "no_such_kind"), 2, "not by one of its kinds"),
    (change_of("stage", "\x1b[31m\nforged: ok"), 2, "does not match"),
    (change_of("stage", "s" * 100_000), 2, "does not match"),
])  # fmt: skip
def test_what_breaks_code_or_old_data_is_incompatible_and_a_malformed_export_is_one_line(
    tmp_path: Path, change: Callable[[dict[str, Any]], object], code: int, said: str
) -> None:
    result = diff(tmp_path, change)
    assert result.returncode == code, result.stderr
    if code < 2:
        assert result.stdout.splitlines()[0] == said
        # The same changes as JSON, with the same exit code.
        as_json = diff(tmp_path, change, "--format", "json")
        assert as_json.returncode == code
        found = json.loads(as_json.stdout)
        assert found["compatible"] is (code == 0)
        assert [change["breaks"] for change in found["changes"]] == [code == 1]
        first = found["changes"][0]
        assert said.startswith(first["change"].split()[0])
        assert first["name"] in said
        shown = [first[end] or "no single replacement" for end in ("old", "new")]
        assert f"{shown[0]} -> {shown[1]}" in said
        return
    assert result.stdout == ""
    (line,) = result.stderr.splitlines()
    assert said in line
    assert line.isprintable()
    assert len(line) < 600


PLACES = ["kind value", "kind name", "replaced_by", "stage", "older label", "replacement"]


@settings(max_examples=examples(200), suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(place=st.sampled_from(PLACES), text=st.text(min_size=1, max_size=300))
def test_a_crafted_text_is_refused_or_printed_as_a_plain_name(tmp_path: Path, place: str, text: str) -> None:
    """Every text diff prints is a name of a known shape: an export cannot forge a line or flood one."""
    result = diff(tmp_path, change_of(place, text))
    assert all(line.isprintable() and len(line) <= 400 for line in result.stdout.splitlines())
    assert all(line.isprintable() and len(line) < 600 for line in result.stderr.splitlines())
    assert result.returncode == 2 or result.stderr == ""


@pytest.mark.parametrize(("content", "said"), [
    (None, "no such file"),
    ("dir", "is a directory"),
    (b'{"format": 1, "kinds": [', "not JSON"),
    (b'{"format": 1, "k\xff": []}', "not UTF-8; not an export"),
    (b"[" * 200_000 + b"]" * 200_000, "not JSON (nested too deeply); not an export"),
    (b'{"format": 1, "kinds": [' + b"7" * 5_000 + b"]}",
     "a number too long to read (over 4,300 digits); not an export"),
    (json.dumps({"format": 2, "kinds": [], "stages": [], "older_labels": []}).encode(),
     "format 2 is not 1"),
    (json.dumps({"format": 1, "kinds": [{"value": "a", "name": "A", "replaced_by": None}] * 2,
                 "stages": [], "older_labels": []}).encode(), "kinds[1].value 'a' is listed twice"),
    (json.dumps({"format": 1, "kinds": [{"value": "a", "name": "A"}], "stages": [], "older_labels": []})
     .encode(), "kinds[0].replaced_by is missing or not a string or null"),
    (json.dumps({"format": 1, "kinds": [], "stages": [], "older_labels": [{"label": "a"}]}).encode(),
     "older_labels[0].replacement is missing or not a string or null"),
])  # fmt: skip
def test_an_unreadable_file_is_one_line_and_exit_2(
    tmp_path: Path, content: bytes | str | None, said: str
) -> None:
    path, good = tmp_path / "export.json", str(ROOT / "exports" / "0.2.0.json")
    if content == "dir":
        path.mkdir()
    elif isinstance(content, bytes):
        path.write_bytes(content)
    for arguments in ((str(path), good), (good, str(path))):
        result = run_cli("diff", *arguments)
        assert (result.returncode, result.stdout) == (2, ""), result.stderr
        (line,) = result.stderr.splitlines()
        assert line.startswith("failure-kinds diff: error: ")
        assert said in line
