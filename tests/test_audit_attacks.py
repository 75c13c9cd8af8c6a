"""Audit defects found by attacking it, each kept from coming back: a file changed while the one-process
engine reads it is named with exit 2, as the workers name it; a file that several inputs name (a link
beside its target, one path twice) is read once, with a note; and a --strict gate over records whose keys
no --field can spell (flattened dotted keys, empty keys, empty objects) fails instead of passing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import pytest
from audit_support import run_here
from helpers import examples, needs, run_cli
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import failure_kinds.audit.tasks as reader
from failure_kinds._display import shown_text
from failure_kinds.audit import PartialReport, Source, audit, expand_inputs, render_json, settings_for
from failure_kinds.audit.sources import STDIN_NAME, read_once
from failure_kinds.audit.tasks import audit_tasks, changed_error, plan

KINDS = ["cancelled", "judge_faild", "env:quota_hit", "agent_timeout"]
EXAMPLES = settings(
    max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


def log_lines(kinds: list[str]) -> bytes:
    return b"".join(
        json.dumps({"failure_kind": kind, "n": n}).encode() + b"\n" for n, kind in enumerate(kinds)
    )


kind_lists = st.lists(st.sampled_from(KINDS), min_size=1, max_size=60)


# 1. A file changed while the one-process engine reads it


CHANGES = ["truncated", "grown", "rewritten", "replaced"]


def change_file(path: Path, change: str, amount: int) -> None:
    """Change ``path`` as another job would; ``amount`` (at least 1) says by how much."""
    status = path.stat()
    if change == "truncated":
        os.truncate(path, max(0, status.st_size - amount))
    elif change == "grown":
        with path.open("ab") as file:
            file.write(b"\n" * amount)
    elif change == "rewritten":  # as many bytes, written later
        path.write_bytes(path.read_bytes())
        os.utime(path, ns=(status.st_atime_ns, status.st_mtime_ns + amount * 1_000_000_000))
    else:
        other = path.with_name(path.name + ".new")
        other.write_bytes(log_lines(["swapped_in"] * amount))
        os.replace(other, path)


@EXAMPLES
@given(
    st.lists(kind_lists, min_size=1, max_size=4),
    st.data(),
    st.sampled_from(CHANGES),
    st.integers(1, 5000),
)
def test_a_file_changed_during_a_one_process_read_is_named_and_the_others_are_not(
    tmp_path: Path, files: list[list[str]], data: st.DataObject, change: str, amount: int
) -> None:
    folder = Path(tempfile.mkdtemp(dir=tmp_path))  # one per example: hypothesis shares tmp_path
    paths = []
    for index, kinds in enumerate(files):
        paths.append(folder / f"{index:02d}.jsonl")
        paths[-1].write_bytes(log_lines(kinds))
    target = data.draw(st.integers(0, len(files) - 1))
    count_input = reader.count_input

    def changing_midway(partial: PartialReport, *arguments: object, **options: object) -> None:
        if partial.files[-1].path == str(paths[target]):
            change_file(paths[target], change, amount)  # the descriptor is open, its bytes not yet read
        count_input(partial, *arguments, **options)  # type: ignore[arg-type]

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(reader, "count_input", changing_midway)
        report = audit([str(folder)], jobs=1)
    errors = [file.error for file in report.files]
    assert errors == [changed_error(change) if index == target else None for index in range(len(files))]
    for index, file in enumerate(report.files):
        if index != target:
            assert file.records == len(files[index])


def test_unchanged_inputs_are_never_named_changed(tmp_path: Path) -> None:
    """Many files, stdin and a FIFO: nothing changes, so nothing is named, and every record counts."""
    for index in range(300):
        (tmp_path / f"shard-{index:04d}.jsonl").write_bytes(log_lines([KINDS[index % 4]] * (index % 7 + 1)))
    report = audit([str(tmp_path)], jobs=1)
    assert [file.error for file in report.files] == [None] * 300
    assert report.records == sum(index % 7 + 1 for index in range(300))
    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)

    def write() -> None:
        with fifo.open("wb") as stream:
            stream.write(log_lines(["cancelled"] * 5))

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    result = run_cli(
        "audit", "--jobs", "1", "--format", "json", str(fifo), "-", stdin=log_lines(["cancelled"])
    )
    writer.join(timeout=60)
    assert (result.returncode, result.stderr) == (0, "")
    assert [(file["records"], file["error"]) for file in json.loads(result.stdout)["files"]] == [
        (5, None),
        (1, None),
    ]


TRUNCATED_WHILE_READ = """
import os, sys
import failure_kinds.audit.tasks as reader
from failure_kinds.cli import main

count_input = reader.count_input

def truncating(partial, *arguments, **options):
    os.truncate(sys.argv[1], 100)  # another job cuts the file as this process reads it
    count_input(partial, *arguments, **options)

reader.count_input = truncating
sys.exit(main(["audit", *sys.argv[2:], sys.argv[1]]))
"""


@pytest.mark.parametrize("jobs", [["--jobs", "1"], []])
def test_the_command_names_a_file_truncated_in_one_process_and_exits_2(
    tmp_path: Path, jobs: list[str]
) -> None:
    path = tmp_path / "log.jsonl"
    path.write_bytes(log_lines(["cancelled"] * 2000))
    run = [sys.executable, "-c", TRUNCATED_WHILE_READ, str(path), *jobs]
    result = subprocess.run(run, capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 2
    assert result.stderr == f"failure-kinds audit: {path}: {changed_error('truncated')}\n"


@needs("pyarrow")
def test_a_parquet_file_replaced_during_a_one_process_read_is_named(tmp_path: Path) -> None:
    import pyarrow as pa  # type: ignore[import-untyped]
    import pyarrow.parquet as pq  # type: ignore[import-untyped]

    import failure_kinds.audit.parquet as parquet

    path = tmp_path / "rows.parquet"
    pq.write_table(pa.table({"failure_kind": ["cancelled"] * 40}), path)
    add_parquet = parquet.add_parquet

    def replacing(partial: PartialReport, name: str, **options: object) -> None:
        pq.write_table(pa.table({"failure_kind": ["swapped_in"] * 9}), tmp_path / "new.parquet")
        os.replace(tmp_path / "new.parquet", path)
        add_parquet(partial, name, **options)  # type: ignore[arg-type]

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(parquet, "add_parquet", replacing)
        report = audit([str(path)], jobs=1)
    assert [file.error for file in report.files] == [changed_error("replaced")]


# 2. A file that several inputs name is read once


def test_read_once_keeps_the_first_of_each_file_and_counts_the_rest(tmp_path: Path) -> None:
    real = tmp_path / "run-1.jsonl"
    real.write_bytes(b"{}\n")
    (tmp_path / "latest.jsonl").symlink_to("run-1.jsonl")
    os.link(real, tmp_path / "hard.jsonl")
    names = [str(tmp_path / name) for name in ("latest.jsonl", "run-1.jsonl", "hard.jsonl", "gone.jsonl")]
    sources = [
        Source(STDIN_NAME, None),
        *(Source(name, name) for name in names),
        Source(names[3], names[3]),
        Source(STDIN_NAME, None),
    ]
    notes: list[str] = []
    kept = read_once(sources, notes)
    # The link comes first, so it is the one read; a path that cannot be looked at and stdin always stay.
    assert [source.display for source in kept] == [STDIN_NAME, names[0], names[3], names[3], STDIN_NAME]
    assert notes == ["2 inputs name a file already read; each file is read once"]
    assert read_once(sources[:2], notes) == sources[:2]
    assert len(notes) == 1


link_plans = st.lists(
    st.tuples(st.sampled_from(["symlink", "hardlink"]), st.integers(0, 7), st.booleans()), max_size=6
)


@EXAMPLES
@given(st.lists(kind_lists, min_size=1, max_size=8), link_plans, st.lists(st.integers(0, 40), max_size=6))
def test_every_file_is_counted_once_however_many_inputs_name_it(
    tmp_path: Path, files: list[list[str]], links: list[tuple[str, int, bool]], extra: list[int]
) -> None:
    folder = Path(tempfile.mkdtemp(dir=tmp_path))
    (folder / "nested").mkdir()
    paths = [folder / f"shard-{index:02d}.jsonl" for index in range(len(files))]
    for path, kinds in zip(paths, files, strict=True):
        path.write_bytes(log_lines(kinds))
    names = [str(path) for path in paths]
    for number, (how, target, nested) in enumerate(links):
        link = folder / ("nested" if nested else "") / f"link-{number}.jsonl"
        target_path = paths[target % len(paths)]
        if how == "symlink":
            link.symlink_to(os.path.relpath(target_path, link.parent))
        else:
            os.link(target_path, link)
        names.append(str(link))
    # The directory, then some of the names again: a file given beside the directory that holds it.
    inputs = [str(folder), *(names[index % len(names)] for index in extra)]
    notes: list[str] = []
    sources = expand_inputs(inputs, notes)
    named = len(paths) + len(links) + len(extra)
    repeated = named - len(paths)
    assert len(sources) == len(paths)
    assert len({os.stat(source.display).st_ino for source in sources}) == len(paths)
    inputs_name = "1 input names" if repeated == 1 else f"{repeated:,} inputs name"
    assert notes == ([f"{inputs_name} a file already read; each file is read once"] if repeated else [])
    one_pass = audit(inputs, jobs=1)
    assert one_pass.records == sum(map(len, files))
    assert one_pass.notes == notes
    merged = audit_tasks(plan(sources, 2, 64), settings_for("failure_kind"), run_here, None).report()
    merged.notes = notes
    assert render_json(merged) == render_json(one_pass)
    from failure_kinds.audit import ray_engine

    ray_notes: list[str] = []
    ray_tasks = ray_engine._plan_all(inputs, ray_notes, 64)
    assert [task.display for task in ray_tasks] == [task.display for task in plan(sources, 1, 64)]
    assert ray_notes == notes


def test_a_link_beside_its_target_is_read_once_and_said_once_on_stderr(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "run-1.jsonl").write_bytes(b'{"failure_kind":"agent_timeout"}\n{"failure_kind":"judge_faild"}\n')
    (logs / "latest.jsonl").symlink_to("run-1.jsonl")
    for arguments in (["logs"], ["logs/run-1.jsonl", "logs/run-1.jsonl"], ["--jobs", "2", "logs", "logs"]):
        result = run_cli("audit", "--format", "json", *arguments, cwd=tmp_path)
        assert result.returncode == 0, result.stderr
        assert json.loads(result.stdout)["records"] == 2
        assert result.stderr.count("each file is read once") == 1
        assert result.stderr.startswith("failure-kinds audit: note: ")


def test_thousands_of_shards_each_linked_once_are_each_read_once(tmp_path: Path) -> None:
    for index in range(2000):
        (tmp_path / f"shard-{index:05d}.jsonl").write_bytes(log_lines([KINDS[index % 4]]))
        (tmp_path / f"alias-{index:05d}.jsonl").symlink_to(f"shard-{index:05d}.jsonl")
    report = audit([str(tmp_path)], jobs=1)
    assert report.records == 2000
    assert len(report.files) == 2000
    assert report.notes == ["2,000 inputs name a file already read; each file is read once"]
    assert all(Path(file.path).name.startswith("alias-") for file in report.files)  # first in sorted order


# 3. --strict over records whose keys no --field can spell

segment = st.text(alphabet="abcxyz_", min_size=1, max_size=6)
fields = st.lists(segment, min_size=1, max_size=3).map(".".join)
dotted_keys = st.lists(segment, min_size=2, max_size=3).map(".".join)
unspellable = st.one_of(dotted_keys, st.just(""))
records = st.lists(
    st.dictionaries(unspellable, st.one_of(st.none(), st.integers(), st.sampled_from(KINDS)), max_size=3),
    min_size=1,
    max_size=30,
)


@EXAMPLES
@given(records, fields)
def test_records_with_only_unspellable_keys_never_pass_as_having_the_field(
    tmp_path: Path, rows: list[dict[str, object]], field: str
) -> None:
    path = tmp_path / "flattened.jsonl"
    path.write_bytes(b"".join(json.dumps(row).encode() + b"\n" for row in rows))
    report = audit([str(path)], field, jobs=1)
    assert (report.records, report.with_kind, report.field_missing) == (len(rows), 0, True)
    (note,) = report.notes
    first_dotted = next((key for row in rows for key in row if "." in key), None)
    if first_dotted is not None:
        assert f'a key "{shown_text(first_dotted, 200)}" containing dots' in note
        assert note.endswith("which --field cannot name because a dot separates levels")


@pytest.mark.parametrize(
    ("body", "field", "said"),
    [
        (
            b'{"response.failure_kind": "agent_timeout"}\n',
            "response.failure_kind",
            'a key "response.failure_kind"',
        ),
        (b'{"": "agent_timeout"}\n', "failure_kind", "no field that --field can name"),
        (b"{}\n{}\n", "failure_kind", "no field that --field can name"),
    ],
)
def test_strict_fails_when_no_record_has_the_field(
    tmp_path: Path, body: bytes, field: str, said: str
) -> None:
    (tmp_path / "log.jsonl").write_bytes(body)
    result = run_cli("audit", "--strict", "--field", field, "log.jsonl", cwd=tmp_path)
    assert result.returncode == 1
    assert result.stderr.startswith(f"failure-kinds audit: note: no record has the field {field}; ")
    assert said in result.stderr
    # The field there, even null, is a field the gate can see: nothing to say, exit 0.
    (tmp_path / "log.jsonl").write_bytes(body + json.dumps({field.split(".")[0]: None}).encode() + b"\n")
    assert run_cli("audit", "--strict", "--field", field, "log.jsonl", cwd=tmp_path).returncode == 0


@needs("pyarrow")
def test_strict_fails_on_a_parquet_file_whose_only_column_has_the_dotted_name(tmp_path: Path) -> None:
    import pyarrow as pa  # type: ignore[import-untyped]
    import pyarrow.parquet as pq  # type: ignore[import-untyped]

    pq.write_table(pa.table({"r.failure_kind": ["agent_timeout", "x"]}), tmp_path / "rows.parquet")
    result = run_cli("audit", "--strict", "--field", "r.failure_kind", "rows.parquet", cwd=tmp_path)
    assert result.returncode == 1
    assert 'a key "r.failure_kind" containing dots' in result.stderr


@needs("pyarrow")
def test_ray_plans_an_object_that_several_uris_name_once(tmp_path: Path) -> None:
    from failure_kinds.audit import ray_engine

    for index in range(30):
        (tmp_path / f"shard-{index:02d}.jsonl").write_bytes(log_lines([KINDS[index % 4]] * (index + 1)))
    uri = f"file://{tmp_path}"
    inputs = [
        uri,
        f"{uri}/shard-03.jsonl",
        str(tmp_path / "shard-04.jsonl"),
        str(tmp_path),
        f"{uri}/shard-03.jsonl",
    ]
    notes: list[str] = []
    tasks = ray_engine._plan_all(inputs, notes, 1 << 20)
    # The URIs' 30 objects, then the local files, the one given alone first (a URI and a path are not
    # compared: a remote object has no inode).
    assert [task.display for task in tasks] == [
        *(f"{uri}/shard-{index:02d}.jsonl" for index in range(30)),
        str(tmp_path / "shard-04.jsonl"),
        *(str(tmp_path / f"shard-{index:02d}.jsonl") for index in range(30) if index != 4),
    ]
    assert notes == ["3 inputs name a file already read; each file is read once"]
