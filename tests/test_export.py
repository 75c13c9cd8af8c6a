"""failure-kinds export and diff: the vocabulary as data, its JSON Schema, and compatibility between
releases (the current vocabulary against the export of every earlier release in exports/)."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import pytest
from helpers import ROOT, examples, run_cli
from hypothesis import given, settings
from hypothesis import strategies as st

import failure_kinds
from failure_kinds._runtime import category
from failure_kinds.export import ExportError, compare, json_schema, read_export, vocabulary

RELEASES = sorted((ROOT / "exports").glob("*.json"))


# The JSON Schema, judged by an evaluator of the keywords it uses (any other keyword is an error, so
# the schema cannot quietly grow beyond what is checked here).


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
    st.builds(
        lambda name, tail: name + tail,
        st.sampled_from(sorted(failure_kinds.FAILURE_KINDS)),
        st.text(max_size=3),
    ),
    st.text(max_size=30),
)


@settings(max_examples=examples(600), deadline=None)
@given(CANDIDATES, st.booleans())
def test_the_schema_accepts_exactly_what_the_runtime_passes_silently(value: str, declared: bool) -> None:
    namespaces = DECLARED if declared else None
    schema = json_schema(namespaces)
    expected = category(value, namespaces or {}) in ("registered", "namespaced")
    assert accepts(schema, value) is expected


def test_the_schema_is_2020_12_and_rejects_what_is_not_a_string() -> None:
    schema = json_schema()
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert not any(accepts(schema, value) for value in (None, 3, ["judge_failed"], {"judge_failed": 1}))
    # Valid JSON Schema structure: the keywords used are the dialect's own.
    json.dumps(schema)


# The JSON export


def test_the_export_holds_every_kind_label_and_stage() -> None:
    data = vocabulary()
    assert data["version"] == failure_kinds.__version__
    kinds = {kind["value"]: kind for kind in data["kinds"]}  # type: ignore[attr-defined]
    assert set(kinds) == failure_kinds.FAILURE_KINDS
    for member in failure_kinds.FailureKind:
        entry = kinds[member.value]
        assert entry["name"] == member.name
        assert entry["domain"] == member.domain
        assert entry["description"] == member.description
        assert entry["since"] == member.since
        assert entry["replaced_by"] == (None if member.replaced_by is None else member.replaced_by.value)
    from failure_kinds.history import OLDER_LABELS

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
    assert accepts(schema, "tb4:container_crash")
    assert not accepts(schema, "tb4:container_crsh")
    assert accepts(schema, "usersim:anything")
    broken = run_cli("export", "--config", str(tmp_path / "missing.toml"), cwd=tmp_path)
    assert broken.returncode == 2
    assert len(broken.stderr.splitlines()) == 1


# Compatibility with the releases kept in the repository


def test_every_earlier_release_is_kept() -> None:
    assert [path.stem for path in RELEASES][:2] == ["0.1.0", "0.2.0"]


@pytest.mark.parametrize("release", RELEASES, ids=[path.stem for path in RELEASES])
def test_the_current_vocabulary_is_compatible_with_each_release(release: Path) -> None:
    old = read_export(str(release))
    lines, compatible = compare(old, vocabulary())
    assert compatible, lines
    assert not any(line.startswith(("removed ", "re-valued ")) for line in lines)
    old_kinds = {kind["value"]: kind for kind in old["kinds"]}  # type: ignore[attr-defined]
    for member in failure_kinds.FailureKind:
        if member.value in old_kinds:
            # A kind keeps its constant name and the version it first appeared in.
            assert old_kinds[member.value]["name"] == member.name
            assert old_kinds[member.value]["since"] == member.since


def test_the_command_compares_the_current_vocabulary_with_a_release(tmp_path: Path) -> None:
    current = tmp_path / "current.json"
    current.write_text(run_cli("export", cwd=tmp_path).stdout)
    result = run_cli("diff", str(ROOT / "exports" / "0.2.0.json"), str(current))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "added kind environment_server_failed (ENVIRONMENT_SERVER_FAILED)" in result.stdout.splitlines()
    backwards = run_cli("diff", str(current), str(ROOT / "exports" / "0.2.0.json"))
    assert backwards.returncode == 1
    assert (
        "removed kind environment_server_failed (ENVIRONMENT_SERVER_FAILED)" in backwards.stdout.splitlines()
    )
    same = run_cli("diff", str(current), str(current))
    assert (same.returncode, same.stdout, same.stderr) == (0, "no changes\n", "")


# compare() on generated changes


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
    breaking = False
    touched: set[str] = set()
    for number, (change, pick) in enumerate(changes):
        kinds = [kind for kind in new["kinds"] if kind["name"] not in touched]
        if change in ("remove", "revalue", "deprecate") and kinds:
            kind = kinds[pick % len(kinds)]
            touched.add(kind["name"])
            if change == "remove":
                new["kinds"].remove(kind)
                expected.add(f"removed kind {kind['value']} ({kind['name']})")
                breaking = True
            elif change == "revalue":
                old_value, kind["value"] = kind["value"], f"renamed_{number}"
                expected.add(f"re-valued kind {kind['name']}: {old_value!r} -> 'renamed_{number}'")
                breaking = True
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
            breaking = True
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
            breaking = True
    lines, compatible = compare(old, new)
    assert set(lines) == expected
    assert len(lines) == len(expected)
    assert compatible is not breaking
    # Incompatible changes come first.
    flags = [line.startswith(("removed ", "re-valued ")) for line in lines]
    assert flags == sorted(flags, reverse=True)


# Malformed exports: one line, exit 2, never a traceback


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
@given(st.one_of(JSON_VALUES, mangled_exports()))
def test_any_json_is_an_export_or_one_clear_error(data: object) -> None:
    path = Path(tempfile_dir()) / "export.json"
    path.write_text(json.dumps(data))
    try:
        export = read_export(str(path))
    except ExportError as error:
        message = str(error)
    else:
        # What is read is fit for compare, and an export compared with itself has no changes.
        assert compare(export, export) == ([], True)
        return
    assert "\n" not in message
    assert message.startswith(str(path))


def tempfile_dir() -> str:
    import tempfile

    folder = Path(tempfile.gettempdir()) / "failure-kinds-export-tests"
    folder.mkdir(exist_ok=True)
    return str(folder)


@settings(max_examples=examples(100), deadline=None)
@given(st.binary(max_size=200))
def test_any_bytes_are_an_export_or_one_clear_error(data: bytes) -> None:
    path = Path(tempfile_dir()) / "bytes.json"
    path.write_bytes(data)
    message = ""
    try:
        read_export(str(path))
    except ExportError as error:
        message = str(error)
    assert "\n" not in message


def test_malformed_exports_exit_2_with_one_line(tmp_path: Path) -> None:
    good = ROOT / "exports" / "0.2.0.json"
    cases = {
        "missing": None,
        "directory": "dir",
        "not json": b'{"format": 1, "kinds": [',
        "not utf-8": b'{"format": 1, "k\xff": []}',
        "deep": b"[" * 200_000 + b"]" * 200_000,
        "huge number": b'{"format": 1, "kinds": [' + b"7" * 5_000 + b"]}",
        "wrong format": json.dumps({"format": 2, "kinds": [], "stages": [], "older_labels": []}).encode(),
        "duplicate kind": json.dumps(
            {
                "format": 1,
                "kinds": [{"value": "a", "name": "A", "replaced_by": None}] * 2,
                "stages": [],
                "older_labels": [],
            }
        ).encode(),
    }
    for name, content in cases.items():
        path = tmp_path / name.replace(" ", "_")
        if content == "dir":
            path.mkdir()
        elif isinstance(content, bytes):
            path.write_bytes(content)
        for arguments in ((str(path), str(good)), (str(good), str(path))):
            result = run_cli("diff", *arguments)
            assert result.returncode == 2, (name, result.stdout, result.stderr)
            assert result.stdout == ""
            assert len(result.stderr.splitlines()) == 1, (name, result.stderr)
            assert "Traceback" not in result.stderr
    # What each met is named: a number Python will not convert is not a nesting too deep.
    assert "nested too deeply" in run_cli("diff", str(tmp_path / "deep"), str(good)).stderr
    huge = run_cli("diff", str(tmp_path / "huge_number"), str(good)).stderr
    assert huge.endswith(": a number too long to read (over 4,300 digits); not an export\n"), huge
