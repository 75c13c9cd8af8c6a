"""Parquet inputs: only the --field column, the JSON Lines categories row by row, path:row N, and every
broken file named with exit 2."""

from __future__ import annotations

import importlib
import json
import os
import random
import re
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from audit_support import CONSTANTS, changed, hooked
from helpers import ROOT, examples, needs, run_cli
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from failure_kinds.audit import audit, render_json

pytestmark = needs("pyarrow")


class Imported:
    """A module imported when a test first uses it, not as the tests are collected: a process that has
    loaded pyarrow starts every later pool's workers through a fork server, each importing anew."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __getattr__(self, attribute: str) -> Any:
        return getattr(importlib.import_module(self.name), attribute)


pa, pq = Imported("pyarrow"), Imported("pyarrow.parquet")

# A run of row groups is a task of its own only past millions of rows, and a batch holds 65,536 rows:
# small tables meet those cuts with these constants set (the one private name the tests set for Parquet).
RUNS = "failure_kinds.audit.parquet.TASK_ROWS"
BATCH_ROWS = "failure_kinds.audit.parquet.BATCH_ROWS"

EXAMPLE = ROOT / "examples" / "rollout_failures.parquet"
KINDS = ["transport_timeout", "cancelled", "judge_faild", "swe_env:patch_apply_failed", "Judge-Failed"]
KINDS += ["x" * 300]  # longer than a value is kept


def as_lines(report_json: str) -> str:
    """A Parquet report in the words of the JSON Lines report of the same rows."""
    return re.sub(r"\.parquet:row (\d+)", r".jsonl:\1", report_json.replace('.parquet"', '.jsonl"'))


def write_both(folder: Path, values: list[object], row_group_size: int, kind: Any = None) -> tuple[str, str]:
    """The values as a Parquet column and as JSON Lines objects, one row per line."""
    table = pa.table({"failure_kind": pa.array(values, type=kind)})
    pq.write_table(table, folder / "rows.parquet", row_group_size=max(1, row_group_size))
    lines = "".join(json.dumps({"failure_kind": value}) + "\n" for value in values)
    (folder / "rows.jsonl").write_text(lines)
    return str(folder / "rows.parquet"), str(folder / "rows.jsonl")


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    values=st.lists(st.none() | st.sampled_from(KINDS) | st.text(alphabet="ab:_", max_size=4), max_size=60),
    row_group_size=st.integers(min_value=1, max_value=25),
    batch_rows=st.integers(min_value=1, max_value=9),
    distinct_limit=st.integers(min_value=1, max_value=4),
    dictionary=st.booleans(),
)
def test_rows_count_as_the_same_json_lines_would(
    values: list[object], row_group_size: int, batch_rows: int, distinct_limit: int, dictionary: bool
) -> None:
    with tempfile.TemporaryDirectory() as folder, pytest.MonkeyPatch.context() as patch:
        patch.setattr(BATCH_ROWS, batch_rows)
        kind = pa.dictionary(pa.int32(), pa.string()) if dictionary else pa.string()
        parquet_path, lines_path = write_both(Path(folder), values, row_group_size, kind)
        expected = render_json(audit([lines_path], distinct_limit=distinct_limit))
        assert as_lines(render_json(audit([parquet_path], jobs=1, distinct_limit=distinct_limit))) == expected


STAGES = ["agent", "verifier", "request", "particpant", "Agent", "s" * 300]
STAGE_TYPES = {"string": lambda: pa.string(), "dictionary": lambda: pa.dictionary(pa.int8(), pa.string())}
STAGE_TYPES |= {"int64": lambda: pa.int64(), "none": lambda: None}
maybe_kind = st.none() | st.sampled_from(KINDS)
maybe_stage = st.none() | st.sampled_from(STAGES)


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    rows=st.lists(st.tuples(maybe_kind, maybe_stage, maybe_kind, maybe_stage, st.booleans()), max_size=40),
    stage_type=st.sampled_from(list(STAGE_TYPES)),
    row_group_size=st.integers(min_value=1, max_value=25),
    batch_rows=st.integers(min_value=1, max_value=9),
    distinct_limit=st.integers(min_value=1, max_value=4),
    kind_column=st.booleans(),
)
def test_kinds_and_their_stages_count_as_the_same_json_lines_would(
    rows: list[tuple[Any, Any, Any, Any, bool]],
    stage_type: str,
    kind_column: bool,
    row_group_size: int,
    batch_rows: int,
    distinct_limit: int,
) -> None:
    """A top-level kind and stage beside a record's nested ``failure`` (upstream's version 1): each
    (kind, stage) pair counted as JSON Lines count it, with stages of another type (invalid), none at
    all (no such column), a stage without a kind column, or a null ``failure``."""
    kind = STAGE_TYPES[stage_type]()
    records: list[dict[str, object]] = []
    for top_kind, top_stage, nested_kind, nested_stage, has_failure in rows:
        record: dict[str, object] = {"failure_kind": top_kind} if kind_column else {}
        if kind is not None:
            record["stage"] = (
                None if top_stage is None else len(top_stage) if stage_type == "int64" else top_stage
            )
        record["failure"] = {"failure_kind": nested_kind, "stage": nested_stage} if has_failure else None
        records.append(record)
    columns = [("failure_kind", pa.string())] if kind_column else []
    columns += [("stage", kind)] if kind is not None else []
    columns.append(("failure", pa.struct([("failure_kind", pa.string()), ("stage", pa.string())])))
    fields = ["failure_kind", "failure.failure_kind"]
    with tempfile.TemporaryDirectory() as folder, pytest.MonkeyPatch.context() as patch:
        patch.setattr(BATCH_ROWS, batch_rows)
        parquet_path, lines_path = Path(folder) / "rows.parquet", Path(folder) / "rows.jsonl"
        table = pa.Table.from_pylist(records, schema=pa.schema(columns))
        pq.write_table(table, parquet_path, row_group_size=row_group_size)
        lines_path.write_text("".join(json.dumps(record) + "\n" for record in records))
        expected = render_json(audit([str(lines_path)], fields, distinct_limit=distinct_limit))
        read = render_json(audit([str(parquet_path)], fields, jobs=1, distinct_limit=distinct_limit))
    assert as_lines(read) == expected


IN_RUNS = """
import sys
from failure_kinds.audit import audit, render_json
print(render_json(audit(sys.argv[1:], jobs=2, chunk_bytes=1, distinct_limit=3)), end="")
"""


def test_runs_of_row_groups_read_by_workers_count_as_the_same_json_lines_would(tmp_path: Path) -> None:
    """Later runs continue the file: physical rows, first sightings and the pinned pass hold across them.
    Most values are a file's own, so that each file's first sightings show in the one report."""
    chooser = random.Random(5)
    tables, lines = [], []
    for number in range(12):
        own = [f"ab{number}", f"b{number}:a", f"v{number}"]
        values = [chooser.choice([None, *KINDS, *own]) for _ in range(chooser.randrange(60))]
        kind = pa.dictionary(pa.int32(), pa.string()) if number % 2 else pa.string()
        (tmp_path / str(number)).mkdir()
        table, lines_path = write_both(tmp_path / str(number), values, chooser.randrange(1, 12), kind)
        tables.append(table)
        lines.append(lines_path)
    environment = {**os.environ, **hooked(tmp_path), CONSTANTS: f"{RUNS}=7,{BATCH_ROWS}=3"}
    run = [sys.executable, "-c", IN_RUNS, *tables]
    result = subprocess.run(run, capture_output=True, text=True, env=environment, timeout=120, check=False)
    assert result.returncode == 0, result.stderr
    assert as_lines(result.stdout) == render_json(audit(lines, distinct_limit=3))


TEXT = ["cancelled", None, "judge_faild"]


@pytest.mark.parametrize(
    ("kind", "values"),
    [
        (lambda: pa.string(), TEXT), (lambda: pa.large_string(), TEXT), (lambda: pa.string_view(), TEXT),
        (lambda: pa.dictionary(pa.int8(), pa.string()), TEXT), (lambda: pa.int64(), [1, None, 3]),
        (lambda: pa.float64(), [1.5, None, 2.0]), (lambda: pa.bool_(), [True, None, False]),
        (lambda: pa.binary(), [b"cancelled", None, b"x"]),
        (lambda: pa.list_(pa.string()), [["cancelled"], None, []]),
        (lambda: pa.struct([("name", pa.string())]), [{"name": "cancelled"}, None, {"name": None}]),
        (lambda: pa.timestamp("s"), [0, None, 5]),
    ],
    ids=["string", "large_string", "string_view", "dictionary", "int64", "float64", "bool", "binary", "list",
         "struct", "timestamp"],
)  # fmt: skip
def test_text_is_a_kind_another_type_is_invalid_and_null_is_without(
    tmp_path: Path, kind: Callable[[], Any], values: list[object]
) -> None:
    path = tmp_path / "typed.parquet"
    pq.write_table(pa.table({"failure_kind": pa.array(values, type=kind())}), path)
    report = json.loads(render_json(audit([str(path)], jobs=1)))
    text = values is TEXT
    counts = (report["records"], report["invalid"], report["without_kind"], report["with_kind"])
    assert counts == ((3, 0, 1, 2) if text else (3, 2, 1, 0))
    assert report["first_invalid"] == (None if text else f"{path}:row 1")
    seen = [f"{path}:row 1", f"{path}:row 3"] if text else []
    assert [row["first_seen"] for row in report["kinds"]] == seen


def test_a_null_column_a_missing_field_and_a_file_without_rows_have_no_kind(tmp_path: Path) -> None:
    path = tmp_path / "nulls.parquet"
    table = pa.table({"failure_kind": pa.nulls(5), "other": pa.array(["cancelled"] * 5)})
    pq.write_table(table, path, row_group_size=2)
    for field in ("failure_kind", "absent", "other.inner", "failure_kind.deeper"):
        report = audit([str(path)], field, jobs=1)
        assert (report.records, report.without_kind) == (5, 5), field
    no_groups, empty_group = tmp_path / "no_groups.parquet", tmp_path / "empty_group.parquet"
    pq.ParquetWriter(str(no_groups), pa.schema([("failure_kind", pa.string())])).close()
    pq.write_table(pa.table({"failure_kind": pa.array([], pa.string())}), empty_group)
    for path in (no_groups, empty_group):
        report = audit([str(path)], jobs=1)
        assert (report.records, report.files[0].records, report.files[0].error) == (0, 0, None)


def test_the_example_counts_like_the_json_lines_example_it_was_made_from(tmp_path: Path) -> None:
    sys.path.insert(0, str(ROOT / "examples"))
    try:
        make_parquet_example: Any = importlib.import_module("make_parquet_example")
    finally:
        sys.path.pop(0)
    fresh = make_parquet_example.write(tmp_path / "fresh.parquet")
    lines = json.loads(run_cli("audit", str(EXAMPLE.with_suffix(".jsonl")), "--format", "json").stdout)
    for path, field in ((EXAMPLE, "failure_kind"), (fresh, "failure_kind"), (EXAMPLE, "result.failure_kind")):
        result = run_cli("audit", str(path), "--field", field, "--format", "json")
        assert result.returncode == 0, result.stderr
        report = json.loads(result.stdout)
        assert report["with_kind"] == lines["with_kind"] == 319
        rows = [
            [(row["value"], row["count"], row["category"]) for row in of["kinds"]] for of in (report, lines)
        ]
        assert rows[0] == rows[1]
        assert all(row["first_seen"].startswith(f"{path}:row ") for row in report["kinds"])


@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cut=st.integers(min_value=0, max_value=10_000), flip=st.integers(min_value=0, max_value=10_000))
def test_a_truncated_or_corrupt_file_is_named_and_the_rest_is_still_audited(cut: int, flip: int) -> None:
    data = EXAMPLE.read_bytes()
    with tempfile.TemporaryDirectory() as folder:
        broken = Path(folder, "broken.parquet")
        if cut < len(data) - 8:
            broken.write_bytes(data[: cut % (len(data) - 8)])
        else:  # the footer is whole but a byte of the data is not what was written
            position = flip % (len(data) - 8)
            broken.write_bytes(data[:position] + bytes([data[position] ^ 0xFF]) + data[position + 1 :])
        good = Path(folder, "good.jsonl")
        good.write_text('{"failure_kind": "cancelled"}\n')
        report = audit([str(broken), str(good)], jobs=1)
    assert (report.files[-1].records, report.files[-1].error) == (1, None)
    assert report.files[0].records <= 357
    if report.files[0].error is None:  # a flip inside a value can leave a readable file
        assert report.files[0].records == 357


BROKEN = {"empty": b"", "junk": b"junk", "text": b"not parquet\n", "footers": b"PAR1" + bytes(64) + b"PAR1"}


def test_unreadable_parquet_files_are_one_escaped_line_each_exit_2_in_every_engine(tmp_path: Path) -> None:
    paths = []
    for name, content in {**BROKEN, "cut": EXAMPLE.read_bytes()[:-100], "gone": None}.items():
        paths.append(str(tmp_path / f"evil\x1b[2J\n{name}.parquet"))
        if content is not None:
            Path(paths[-1]).write_bytes(content)
    result = run_cli("audit", *paths)
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert "\x1b" not in result.stderr
    errors = result.stderr.splitlines()
    assert len(errors) == len(paths)
    for path, line in zip(paths, errors, strict=True):
        assert line.startswith(f"failure-kinds audit: {path!r}: ")
    present = tmp_path / "present.jsonl"
    present.write_text('{"failure_kind": "cancelled"}\n' * 3)
    one = audit([str(present), *paths], jobs=1)
    unread = [(0, False)] * len(paths)
    assert [(file.records, file.error is None) for file in one.files] == [(3, True), *unread]
    assert one.files[-1].error == "no such file"
    assert render_json(audit([str(present), *paths], jobs=2, chunk_bytes=1)) == render_json(one)


def test_text_that_is_not_utf8_is_unparseable_at_its_row(tmp_path: Path) -> None:
    values = [b"cancelled", b"\xff\xfe", None, b"caf\xc3\xa9", b"\xc3"]
    column = pa.array(values, pa.binary()).view(pa.string())  # written as text without validation
    path = tmp_path / "bytes.parquet"
    pq.write_table(pa.table({"failure_kind": column}), path)
    report = json.loads(render_json(audit([str(path)], jobs=1)))
    assert (report["with_kind"], report["without_kind"], report["unparseable"]) == (2, 1, 2)
    assert report["first_unparseable"] == f"{path}:row 2"
    assert [row["value"] for row in report["kinds"]] == ["caf\u00e9", "cancelled"]


def test_auditing_parquet_does_not_import_pandas(tmp_path: Path) -> None:
    """Where pandas is installed beside numpy (the test extra installs numpy), an Arrow scalar made from
    a Python value imports it (a tenth of a second of a run this short), as does pyarrow.dataset: a
    stand-in pandas on the path says whether anything tried, with nulls to fill and pairs to code."""
    (tmp_path / "pandas").mkdir()
    (tmp_path / "pandas" / "__init__.py").write_text(
        "import sys\nsys.stderr.write('pandas imported\\n')\nraise ImportError('a stand-in')\n"
    )
    staged = tmp_path / "staged.parquet"
    pq.write_table(
        pa.table({"failure_kind": ["cancelled", None, "x"], "stage": ["agent", "seed", None]}), staged
    )
    environment = {**os.environ, "PYTHONPATH": str(tmp_path)}
    code = "from failure_kinds.cli import main; main(['audit', *__import__('sys').argv[1:]])"
    run = [sys.executable, "-c", code, str(EXAMPLE), str(staged), "--format", "json"]
    result = subprocess.run(run, capture_output=True, text=True, env=environment, check=False)
    assert (result.returncode, result.stderr) == (0, "")
    assert json.loads(result.stdout)["records"] == 360
    probe = [sys.executable, "-c", "import pyarrow; pyarrow.scalar(3)"]  # the stand-in is found
    assert "pandas imported" in subprocess.run(probe, capture_output=True, text=True, env=environment).stderr


def test_directories_give_their_parquet_files_in_the_same_sorted_walk_to_the_library_and_the_command(
    tmp_path: Path,
) -> None:
    (tmp_path / "nested").mkdir()
    (tmp_path / "a.jsonl").write_text('{"failure_kind": "cancelled"}\n')
    (tmp_path / "nested" / "b.parquet").write_bytes(EXAMPLE.read_bytes())
    (tmp_path / "nested" / "c.jsonl").write_text('{"failure_kind": "judge_faild"}\n')
    (tmp_path / "nested" / "d.txt").write_text("not an input\n")
    for inputs in ([str(EXAMPLE)], [str(tmp_path)]):
        report = audit(inputs)
        assert render_json(report) == run_cli("audit", *inputs, "--format", "json").stdout
        (table,) = [file for file in report.files if file.path.endswith(".parquet")]
        assert (table.records, table.error, report.unparseable) == (357, None, 0)  # rows, not lines
    names = ["a.jsonl", "nested/b.parquet", "nested/c.jsonl"]
    assert [file.path for file in report.files] == [str(tmp_path / name) for name in names]
    assert report.records == 1 + 357 + 1


@pytest.mark.parametrize("copies", [2, 3])
@pytest.mark.parametrize("nested", [False, True], ids=["top", "in-struct"])
def test_a_field_naming_a_repeated_column_names_the_file_with_exit_2(
    tmp_path: Path, copies: int, nested: bool
) -> None:
    columns, names = [pa.array(["transport_timeout", "cancelled"])] * copies, ["failure_kind"] * copies
    if nested:
        table = pa.Table.from_arrays([pa.StructArray.from_arrays(columns, names=names)], names=["response"])
        fine = pa.table({"response": pa.array([{"failure_kind": "shutdown"}])})
    else:
        table, fine = pa.Table.from_arrays(columns, names=names), pa.table({"failure_kind": ["shutdown"]})
    field = "response.failure_kind" if nested else "failure_kind"
    pq.write_table(table, tmp_path / "repeated.parquet")
    pq.write_table(fine, tmp_path / "fine.parquet")
    paths = [str(tmp_path / "repeated.parquet"), str(tmp_path / "fine.parquet")]
    result = run_cli("audit", *paths, "--field", field, "--format", "json")
    assert result.returncode == 2
    report = json.loads(result.stdout)
    assert (report["records"], report["with_kind"]) == (1, 1)
    assert report["files"][0]["error"] == f"not auditable: the column {field!r} occurs {copies} times"
    assert report["files"][1] == {"path": paths[1], "records": 1, "error": None, "with_kind": 1}
    assert result.stderr.strip().endswith(f"occurs {copies} times")


@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=3), st.binary(min_size=1, max_size=3))
@settings(max_examples=examples(20), deadline=None)
def test_a_field_that_is_not_utf8_finds_no_column_and_blames_no_file(prefix: str, raw: bytes) -> None:
    field = prefix + raw.decode("utf-8", "surrogateescape")
    assume("." not in field and "\udc80" <= max(field) <= "\udcff")  # only names no column can have
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "kinds.parquet"
        pq.write_table(pa.table({"failure_kind": ["cancelled", None]}), path)
        report = audit([str(path)], field, jobs=1)
    assert (report.records, report.with_kind, report.without_kind) == (2, 0, 2)
    assert report.failed_files == []


# A dotted field is a struct path, as in JSON Lines, whatever the top-level columns are called: a column
# literally named "r.failure_kind" shares its dotted name with the field failure_kind of a struct r, and
# the field drawn is often exactly that one.

NAMES = ["r", "failure_kind", "r.failure_kind", "x", "r.x"]


def arrow_types(depth: int) -> st.SearchStrategy[Any]:
    leaves = st.sampled_from(
        [pa.string(), pa.int64(), pa.list_(pa.string()), pa.dictionary(pa.int32(), pa.string())]
    )
    if depth == 0:
        return leaves
    child = st.tuples(st.sampled_from(NAMES), arrow_types(depth - 1))
    children = st.lists(child, min_size=1, max_size=3, unique_by=lambda c: c[0])
    return st.one_of(leaves, children.map(pa.struct))


def values_of(kind: Any) -> st.SearchStrategy[object]:
    if pa.types.is_struct(kind):
        fields = [kind.field(index) for index in range(kind.num_fields)]
        return st.none() | st.fixed_dictionaries({field.name: values_of(field.type) for field in fields})
    if pa.types.is_int64(kind):
        return st.none() | st.integers(min_value=-5, max_value=5)
    if pa.types.is_list(kind):
        return st.none() | st.lists(st.sampled_from(KINDS[:3]), max_size=2)
    return st.none() | st.sampled_from(KINDS)


def dotted_paths(kind: Any, prefix: str = "") -> list[str]:
    paths: list[str] = []
    for index in range(kind.num_fields):
        child = kind.field(index)
        paths.append(prefix + child.name)
        if pa.types.is_struct(child.type):
            paths.extend(dotted_paths(child.type, prefix + child.name + "."))
    return paths


@st.composite
def tables(draw: st.DrawFn) -> tuple[Any, list[dict[str, object]], str]:
    """A schema of nested structs whose names collide when dotted, rows of it (nulls at every level),
    and a field: a path of the schema, or one that runs past it."""
    column = st.tuples(st.sampled_from(NAMES), arrow_types(2))
    columns = draw(st.lists(column, min_size=1, max_size=4, unique_by=lambda c: c[0]))
    row = st.fixed_dictionaries({name: values_of(kind) for name, kind in columns})
    rows = draw(st.lists(row, max_size=12))
    paths = dotted_paths(pa.struct(columns))
    field = draw(st.sampled_from([*paths, *(path + ".failure_kind" for path in paths), "r.failure_kind"]))
    return pa.schema(columns), rows, field


@settings(max_examples=examples(120), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tables(), st.integers(min_value=1, max_value=5))
def test_a_dotted_field_reads_the_struct_path_as_json_lines_does(
    table: tuple[Any, list[dict[str, object]], str], row_group_size: int
) -> None:
    schema, rows, field = table
    with tempfile.TemporaryDirectory() as folder:
        parquet_path = Path(folder) / "rows.parquet"
        pq.write_table(pa.Table.from_pylist(rows, schema=schema), parquet_path, row_group_size=row_group_size)
        lines_path = Path(folder) / "rows.jsonl"
        lines_path.write_text("".join(json.dumps(row) + "\n" for row in rows))
        expected = json.loads(render_json(audit([str(lines_path)], field)))
        report = audit([str(parquet_path)], field, jobs=1)
    assert report.failed_files == []
    read = json.loads(as_lines(render_json(report)))
    # Whether the field exists at all is known better from a schema than from records: a null where JSON
    # Lines has a struct may stand for the field, a string column in a schema never holds one.
    for known_otherwise in ("field_missing", "field_suggestion"):
        del read[known_otherwise], expected[known_otherwise]
    for file in (*read["files"], *expected["files"]):  # kinds_at: from the schema, or from the values
        file.pop("kinds_at", None)
    assert read == expected


@pytest.mark.parametrize("change", ["replaced", "truncated"])
def test_a_parquet_file_replaced_or_cut_short_as_it_is_read_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, change: str
) -> None:
    """Each time pyarrow opens the file (to plan, to read), another job puts a new file in its place; or
    it is cut short once the read has its footer, and the read that then fails is named by the change."""
    path = tmp_path / "rows.parquet"
    pq.write_table(pa.table({"failure_kind": [f"k{index % 3000}" for index in range(60_000)]}), path)
    opened, opens = pq.ParquetFile, []

    def changing(*arguments: Any, **options: Any) -> Any:
        file = opened(*arguments, **options)
        opens.append(path)
        if change == "replaced":
            pq.write_table(pa.table({"failure_kind": ["swapped_in_kind"] * 9}), tmp_path / "new.parquet")
            os.replace(tmp_path / "new.parquet", path)
        elif len(opens) == 2:  # the read's open, after the plan's
            os.truncate(path, path.stat().st_size // 2)
        return file

    monkeypatch.setattr("pyarrow.parquet.ParquetFile", changing)
    report = audit([str(path)], jobs=1)
    # Replaced at the plan's open, the file is never read; cut short at the read's, it is read.
    assert ([file.error for file in report.files], len(opens) > 1) == (
        [changed(change)],
        change == "truncated",
    )
    assert "swapped_in_kind" not in {row.value for row in report.kinds}


def test_a_string_column_that_is_not_utf8_stops_no_search_for_a_missing_field(tmp_path: Path) -> None:
    """The search for where a missing field's kinds are reads every text column; text that is not UTF-8
    there is no kind, and the rows are still counted."""
    broken = pa.array([b"cancelled", b"\xffbad", b"x"], pa.binary()).view(pa.string())
    task = pa.array([b"\xfe", b"session_lost", None], pa.binary()).view(pa.string())
    pq.write_table(pa.table({"failure_kind": broken, "task": task}), tmp_path / "rows.parquet")
    report = audit([str(tmp_path / "rows.parquet")], ["failure_kind", "result.failure_kind"], jobs=1)
    assert (report.records, report.with_kind, report.unparseable, report.failed_files) == (3, 2, 1, [])
    missing = report.also[0]
    assert (missing.field_suggestion, missing.files[0].kinds_at) == ("failure_kind", ["failure_kind", "task"])


@pytest.mark.parametrize(
    "text",
    [lambda: pa.string(), lambda: pa.large_string(), lambda: pa.string_view(),
     lambda: pa.dictionary(pa.int8(), pa.string())],
    ids=["string", "large_string", "string_view", "dictionary"],
)  # fmt: skip
def test_the_paths_holding_kinds_come_in_the_order_json_lines_finds_them(
    tmp_path: Path, text: Callable[[], Any]
) -> None:
    """A field the schema lacks: the text columns of every type where the rows hold registered kinds,
    the one whose first such row comes first listed first, as JSON Lines lists them; the one closest to
    the field suggested."""
    rows = [
        {"task": "cancelled", "r": {"failure_kind": None}},
        {"task": "x", "r": {"failure_kind": "shutdown"}},
    ]
    schema = pa.schema([("task", text()), ("r", pa.struct([("failure_kind", text())]))])
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), tmp_path / "rows.parquet")
    (tmp_path / "rows.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    for name in ("rows.parquet", "rows.jsonl"):
        report = audit([str(tmp_path / name)], jobs=1)
        assert (report.field_suggestion, report.files[0].kinds_at) == (
            "r.failure_kind",
            ["task", "r.failure_kind"],
        )


def test_running_out_of_memory_in_arrow_is_named_as_such(monkeypatch: pytest.MonkeyPatch) -> None:
    """pyarrow's own out-of-memory error (a MemoryError) is what the file's error says, not a file that
    cannot be read, and the rows read before it are counted."""
    columns = importlib.import_module("failure_kinds.audit.parquet")._columns
    calls: list[int] = []

    def failing(*arguments: Any) -> Any:
        calls.append(1)
        if len(calls) > 1:
            raise pa.lib.ArrowMemoryError("realloc of size 196608 failed")
        return columns(*arguments)

    monkeypatch.setattr("failure_kinds.audit.parquet._columns", failing)
    monkeypatch.setattr(BATCH_ROWS, 100)
    report = audit([str(EXAMPLE)], jobs=1)
    assert ([file.error for file in report.files], report.records) == (["out of memory while reading"], 100)


def test_a_parquet_file_without_the_field_names_where_its_rows_hold_kinds(tmp_path: Path) -> None:
    rows = [{"result": {"failure_kind": "cancelled", "reward": 1}, "step": index} for index in range(50)]
    path = tmp_path / "rollouts.parquet"
    pq.write_table(pa.Table.from_pylist(rows), path, row_group_size=7)
    missing = run_cli("audit", str(path), "--field", "result.failure_knd", "--strict")
    assert missing.returncode == 1
    meant = "did you mean result.failure_kind? (the records hold registered kinds there)"
    assert (
        missing.stderr == f"failure-kinds audit: note: no record has the field result.failure_knd; {meant}\n"
    )
    there = run_cli("audit", str(path), "--field", "result.failure_kind", "--strict")
    assert (there.returncode, there.stderr) == (0, "")
    # Worker processes, each reading a run of row groups: the same finding.
    in_parts = audit([str(path)], "result.failure_knd", jobs=2, chunk_bytes=1)
    assert (in_parts.field_missing, in_parts.field_suggestion) == (True, "result.failure_kind")
    assert in_parts.files[0].kinds_at == ["result.failure_kind"]
    assert not audit([str(path)], "result.failure_kind", jobs=2, chunk_bytes=1).field_missing
    # A column whose name holds the dots of the field is no field: absent, as a JSON key with dots is.
    pq.write_table(pa.table({"r.failure_kind": ["agent_timeout", "x"]}), tmp_path / "dotted.parquet")
    dotted = audit([str(tmp_path / "dotted.parquet")], "r.failure_kind")
    assert (dotted.absent, dotted.field_missing, dotted.files[0].kinds_at) == (2, True, [])
