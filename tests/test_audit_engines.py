"""The engines that run tasks apart (--jobs workers, Ray) on real log shapes: thousands of shards with
thousands of distinct values merge in time linear in the parts, workers never outgrow what the process
may open, and a file that changes while it is read is named, never counted as two files."""

from __future__ import annotations

import json
import os
import random
import resource
import tempfile
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import pytest
from audit_support import run_here
from helpers import examples, needs, run_cli
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import failure_kinds.audit.engine as parallel
import failure_kinds.audit.tasks as tasks_module
from failure_kinds.audit import (
    AuditSettings,
    PartialReport,
    Pins,
    audit,
    audit_lines,
    expand_inputs,
    merge,
    render_json,
    render_text,
    settings_for,
)
from failure_kinds.audit.engine import check_objects
from failure_kinds.audit.render import ByteProgress
from failure_kinds.audit.tally import Tally
from failure_kinds.audit.tasks import OrderedMerge, audit_tasks, batched, changed_error, plan

TYPE_CHECKING = False
if TYPE_CHECKING:
    from failure_kinds.audit.tasks import Batch, Runner

# The forking runner is called from pytest's own process here, where earlier tests may have left
# pyarrow's thread pool running (Python 3.12 and later warn of that; see test_audit_parallel).
FORK_IN_TEST_PROCESS = pytest.mark.filterwarnings(
    "ignore:This process .* is multi-threaded, use of fork\\(\\) may lead to deadlocks:DeprecationWarning"
)


def write_shards(folder: Path, shards: int, distinct: int, lines: int = 12, seed: int = 7) -> list[str]:
    """``shards`` small files of rollouts whose kinds are drawn from ``distinct`` values (namespaced,
    misspelled and registered ones), with a bad line here and there: what a sharded log looks like."""
    rng = random.Random(seed)
    folder.mkdir(parents=True, exist_ok=True)
    registered = ["transport_timeout", "cancelled", "judge_failed"]
    for index in range(shards):
        rows: list[bytes] = []
        for _ in range(lines):
            roll = rng.random()
            if roll < 0.4:
                kind: object = f"env{rng.randrange(distinct)}:step_failed"
            elif roll < 0.8:
                kind = f"judge_faild_{rng.randrange(distinct)}"
            elif roll < 0.95:
                kind = rng.choice(registered)
            else:
                kind = None
            rows.append(json.dumps({"failure_kind": kind}).encode())
        if index % 97 == 0:
            rows.append(b"{not json")
        (folder / f"shard-{index:05d}.jsonl").write_bytes(b"\n".join(rows) + b"\n")
    return [str(folder)]


def both_reports(inputs: list[str], **options: int) -> tuple[str, str]:
    report = audit(inputs, **options)  # type: ignore[arg-type]
    return render_json(report), render_text(report)


# Merging: linear in the parts


def test_two_thousand_shards_with_workers_give_the_one_pass_report_byte_for_byte(tmp_path: Path) -> None:
    inputs = write_shards(tmp_path / "logs", 2000, 1500)
    one_pass = both_reports(inputs, jobs=1)
    # A chunk of 16 KB: about 70 batches of some 30 shards each, run by two forked workers.
    assert both_reports(inputs, jobs=2, chunk_bytes=16 << 10) == one_pass
    assert json.loads(one_pass[0])["records"] > 24_000
    # Past the distinct cap: parts overflow, the merge is inexact and the second, pinned pass runs.
    capped = both_reports(inputs, jobs=1, distinct_limit=50)
    assert both_reports(inputs, jobs=2, chunk_bytes=16 << 10, distinct_limit=50) == capped


shard_lines = st.lists(
    st.one_of(
        st.sampled_from(["cancelled", "judge_faild", "env:one", "env:two", "web:three", "x" * 30]),
        st.text(alphabet="abc_:", min_size=1, max_size=4),
        st.none(),
    ).map(lambda kind: json.dumps({"failure_kind": kind}).encode()),
    max_size=12,
)


@settings(
    max_examples=examples(120), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.lists(shard_lines, min_size=1, max_size=8),
    st.integers(1, 300),
    st.integers(0, 2000),
    st.integers(1, 4),
)
def test_any_batching_of_small_shards_gives_the_one_pass_report(
    tmp_path: Path, shards: list[list[bytes]], chunk_bytes: int, batch_bytes: int, limit: int
) -> None:
    folder = Path(tempfile.mkdtemp(dir=tmp_path))
    for index, lines in enumerate(shards):
        (folder / f"{index:03d}.jsonl").write_bytes(b"\n".join(lines))
    audit_settings = settings_for("failure_kind", distinct_limit=limit, value_chars=20)
    planned = plan(expand_inputs([str(folder)], []), 2, chunk_bytes)
    merged = audit_tasks(planned, audit_settings, run_here, None, batch_bytes)
    one_pass = audit([str(folder)], jobs=1, distinct_limit=limit, value_chars=20)
    report = merged.report()
    check_objects(report, audit_settings)  # what the entry point adds when no record was read
    assert render_json(report) == render_json(one_pass)


class CountingDict(dict[str, object]):
    """A dict that counts every read, write and element visited: the work a merge does on it."""

    operations = 0

    def get(self, key: str, default: object = None) -> object:
        CountingDict.operations += 1
        return super().get(key, default)

    def __getitem__(self, key: str) -> object:
        CountingDict.operations += 1
        return super().__getitem__(key)

    def __setitem__(self, key: str, value: object) -> None:
        CountingDict.operations += 1
        super().__setitem__(key, value)

    def __contains__(self, key: object) -> bool:
        CountingDict.operations += 1
        return super().__contains__(key)

    def __iter__(self) -> Iterator[str]:
        for key in super().__iter__():
            CountingDict.operations += 1
            yield key

    def keys(self) -> list[str]:  # type: ignore[override]
        return list(iter(self))

    def items(self) -> list[tuple[str, object]]:  # type: ignore[override]
        return [(key, self.get(key)) for key in iter(self)]


def test_each_merge_costs_the_part_merged_not_the_table_so_far() -> None:
    """Two thousand parts of fifty values each, a thousand of them new to the whole: every part is folded
    into the same accumulator, whose tables are never rebuilt, and the work on them grows with the parts
    merged (a merge that copied or re-sorted the table so far would visit it two thousand times)."""
    audit_settings = AuditSettings(distinct_limit=100_000)

    def part(index: int) -> PartialReport:
        values = [f"seen_{index % 40}" for _ in range(3)] + [f"new_{index}_{n}" for n in range(10)]
        lines = [json.dumps({"failure_kind": value}).encode() for value in values]
        return audit_lines(lines, f"shard-{index}.jsonl", audit_settings)

    parts = [part(index) for index in range(2000)]
    ordered = OrderedMerge()
    ordered.add(0, parts[0])
    accumulator = ordered.merged
    assert accumulator is not None
    tables = accumulator.values
    for name in ("counts", "first", "categories"):
        setattr(tables, name, CountingDict(getattr(tables, name)))
    CountingDict.operations = 0
    for index in reversed(range(1, 2000)):  # they arrive last first, as from workers
        ordered.add(index, parts[index])
    assert ordered.merged is accumulator
    assert accumulator.values is tables
    assert isinstance(tables.counts, CountingDict)
    entries = sum(len(later.values.counts) for later in parts[1:])  # 13 per part
    assert CountingDict.operations <= 8 * entries  # a few reads and writes per entry merged
    assert len(tables.counts) == 40 + 10 * 2000
    expected = merge(parts)  # the library's merge folds into one copy of the first part the same way
    assert render_json(ordered.result(audit_settings).report()) == render_json(expected.report())


def test_merge_copies_the_first_part_once_and_changes_no_input(monkeypatch: pytest.MonkeyPatch) -> None:
    audit_settings = settings_for("failure_kind")
    parts = [
        audit_lines([json.dumps({"failure_kind": f"bad_{index}"}).encode()], "a.jsonl", audit_settings)
        for index in range(300)
    ]
    before = [json.dumps(partial.to_json()) for partial in parts]
    copies: list[int] = []
    copy = Tally.copy

    def counted(tally: Tally) -> Tally:
        copies.append(1)
        return copy(tally)

    monkeypatch.setattr(Tally, "copy", counted)
    merged = merge(parts)
    assert len(copies) == 2  # the values and the servers of the first part
    assert [json.dumps(partial.to_json()) for partial in parts] == before
    assert merged.records == 300
    assert merged.report().files[-1].path == "a.jsonl"


# Workers: capped by what the process may open


def descriptor_limit(limit: int) -> Callable[[], None]:
    def apply() -> None:
        _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        resource.setrlimit(resource.RLIMIT_NOFILE, (limit, hard))

    return apply


@pytest.mark.parametrize("descriptors", [64, 12])
def test_many_jobs_under_a_low_descriptor_limit_give_the_report(tmp_path: Path, descriptors: int) -> None:
    """--jobs 300 on 400 files (past the size below which one process reads all) with 64 descriptors,
    or with 12 (too few for even one worker beside this process's own): the workers that fit, or none,
    and the one-process report; never Too many open files."""
    folder = tmp_path / "logs"
    folder.mkdir()
    line = json.dumps({"failure_kind": "judge_faild", "failure_reason": "r" * 60}).encode() + b"\n"
    body = line * (85_000 // len(line))
    for index in range(400):
        (folder / f"{index:03d}.jsonl").write_bytes(body + json.dumps({"failure_kind": f"k{index}"}).encode())
    expected = run_cli("audit", str(folder), "--jobs", "1", "--format", "json")
    assert expected.returncode == 0
    result = run_cli(
        "audit", str(folder), "--jobs", "300", "--format", "json", preexec_fn=descriptor_limit(descriptors)
    )
    assert "Traceback" not in result.stderr
    assert (result.returncode, result.stderr) == (0, "")
    assert result.stdout == expected.stdout


WORKER_LIMIT_PROBE = """
import resource
from failure_kinds.audit.engine import worker_limit
_, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (48, hard))
print(worker_limit(300, 1000, 2), worker_limit(300, 5, 2), worker_limit(300, 1000, 100))
"""


def test_workers_are_capped_by_the_tasks_and_the_free_descriptors() -> None:
    import subprocess
    import sys

    result = subprocess.run([sys.executable, "-c", WORKER_LIMIT_PROBE], capture_output=True, text=True)
    many, few, none = map(int, result.stdout.split())
    assert 0 < many <= (48 - 3 - 16) // 2  # three standard streams at least
    assert few == 5
    assert none == 0


@FORK_IN_TEST_PROCESS
@pytest.mark.parametrize("workers_before_failure", [0, 1])
def test_when_no_more_processes_can_start_the_audit_stops_with_one_line_and_leaves_no_worker(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, workers_before_failure: int
) -> None:
    """fork failing as it does past RLIMIT_NPROC (EAGAIN): one line (exit 2 from the command), and the
    workers that did start are stopped."""
    import multiprocessing

    from failure_kinds.audit import AuditError

    inputs = write_shards(tmp_path / "logs", 60, 30)
    fork = os.fork
    started: list[int] = []

    def failing_fork() -> int:
        if len(started) >= workers_before_failure:
            raise BlockingIOError(11, "Resource temporarily unavailable")
        started.append(1)
        return fork()

    monkeypatch.setattr(os, "fork", failing_fork)
    planned = plan(expand_inputs(inputs, []), 4, 256)
    runner = parallel._pool_runner(4, True, multiprocessing.get_context("fork"))
    with pytest.raises(AuditError) as raised:
        audit_tasks(planned, settings_for("failure_kind"), runner, None, 2048)
    assert len(started) == workers_before_failure
    assert str(raised.value).startswith("--jobs 4: cannot start the worker processes (")
    assert "\n" not in str(raised.value)
    for child in multiprocessing.active_children():
        child.join(5)
    assert multiprocessing.active_children() == []


def test_a_pool_that_cannot_start_its_workers_is_a_one_line_error(monkeypatch: pytest.MonkeyPatch) -> None:
    import concurrent.futures

    from failure_kinds.audit import AuditError

    def no_pool(*arguments: object, **options: object) -> None:
        raise OSError(24, "Too many open files")

    monkeypatch.setattr(concurrent.futures, "ProcessPoolExecutor", no_pool)
    tasks = [
        tasks_module.Task(0, tasks_module.LINES, "a", "a"),
        tasks_module.Task(1, tasks_module.LINES, "b", "b"),
    ]
    import multiprocessing

    runner = parallel._pool_runner(3, True, multiprocessing.get_context("spawn"))
    with pytest.raises(AuditError) as raised:
        runner(batched(tasks, 0), settings_for("failure_kind"), None, ByteProgress(None, 0))
    message = str(raised.value)
    assert "\n" not in message
    assert message.startswith("--jobs 3: cannot start the worker processes (too many open files)")


# Files that change while they are read


def write_log(path: Path, kind: str, lines: int = 400) -> bytes:
    body = b"".join(json.dumps({"failure_kind": kind, "n": index}).encode() + b"\n" for index in range(lines))
    path.write_bytes(body)
    return body


def change_file(path: Path, change: str) -> None:
    """Change the file as another job would: replace it, truncate it, append to it, or rewrite it in
    place with as many bytes (its modification time moved on, as any write moves it)."""
    status = path.stat()
    if change == "replaced":
        other = path.with_suffix(".new")
        write_log(other, "swapped_in_kind", 500)
        os.replace(other, path)
    elif change == "truncated":
        os.truncate(path, status.st_size // 3)
    elif change == "grown":
        with path.open("ab") as file:
            file.write(json.dumps({"failure_kind": "appended_kind"}).encode() + b"\n")
    else:
        data = path.read_bytes().replace(b"sesion_lost", b"sesion_gone")
        path.write_bytes(data)
        os.utime(path, ns=(status.st_atime_ns, status.st_mtime_ns + 1_000_000_000))


CHANGES = ["replaced", "truncated", "grown", "rewritten"]
NEW_VALUES = {"swapped_in_kind", "appended_kind", "sesion_gone"}


def changed_between_plan_and_read(tmp_path: Path, change: str, runner: Runner) -> PartialReport:
    path = tmp_path / "day1.jsonl"
    write_log(path, "sesion_lost")
    other = tmp_path / "day2.jsonl"
    write_log(other, "cancelled", 10)
    planned = plan(expand_inputs([str(path), str(other)], []), 2, 2048)  # ranges of the first file
    assert sum(task.path == str(path) for task in planned) > 3
    change_file(path, change)
    return audit_tasks(planned, settings_for("failure_kind"), runner, None)


def assert_refused(merged: PartialReport, change: str) -> None:
    report = merged.report()
    assert [(file.records, file.error) for file in report.files] == [(0, changed_error(change)), (10, None)]
    assert {row.value for row in report.kinds} == {"cancelled"}


@pytest.mark.parametrize("change", CHANGES)
def test_a_file_changed_after_planning_is_named_and_not_counted_in_this_process(
    tmp_path: Path, change: str
) -> None:
    assert_refused(changed_between_plan_and_read(tmp_path, change, run_here), change)


@FORK_IN_TEST_PROCESS
@pytest.mark.parametrize("change", CHANGES)
def test_a_file_changed_after_planning_is_named_and_not_counted_in_workers(
    tmp_path: Path, change: str
) -> None:
    import multiprocessing

    runner = parallel._pool_runner(2, True, multiprocessing.get_context("fork"))
    assert_refused(changed_between_plan_and_read(tmp_path, change, runner), change)


@pytest.mark.parametrize("change", CHANGES)
def test_a_file_changed_between_its_ranges_keeps_only_the_ranges_read_before(
    tmp_path: Path, change: str
) -> None:
    """The first range is read from the old file, then the file changes: the later ranges are refused,
    so the file's counts are those of its first range and nothing of the new content."""
    path = tmp_path / "day1.jsonl"
    original = write_log(path, "sesion_lost")
    planned = plan(expand_inputs([str(path)], []), 2, 2048)

    def first_then_change(
        batches: Sequence[Batch], audit_settings: AuditSettings, pins: Pins | None, meter: ByteProgress
    ) -> PartialReport:
        ordered = OrderedMerge()
        for index, batch in enumerate(batches):
            ordered.add(index, tasks_module.run_batch(batch, audit_settings, None, True))
            if index == 0:
                change_file(path, change)
        return ordered.result(audit_settings)

    report = audit_tasks(planned, settings_for("failure_kind"), first_then_change, None).report()
    (file,) = report.files
    assert file.error == changed_error(change)
    assert file.records == original[: planned[0].stop].count(b"\n")  # the first range, and no more
    assert [(row.value, row.count) for row in report.kinds] == [("sesion_lost", file.records)]


@pytest.mark.parametrize("change", ["truncated", "grown", "rewritten", "replaced"])
def test_a_file_changed_during_its_read_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, change: str
) -> None:
    """The change lands while the range is being read (after its descriptor was checked): the check
    after the read names the file."""
    path = tmp_path / "day1.jsonl"
    write_log(path, "sesion_lost")
    planned = plan(expand_inputs([str(path)], []), 1, None)
    count_input = getattr(tasks_module, "count_input")  # noqa: B009  # what the module reads through

    def changing_midway(partial: PartialReport, data: object, limit: int | None = None) -> None:
        change_file(path, change)
        count_input(partial, data, limit)

    monkeypatch.setattr(tasks_module, "count_input", changing_midway)
    report = audit_tasks(planned, settings_for("failure_kind"), run_here, None).report()
    assert [file.error for file in report.files] == [changed_error(change)]


@needs("pyarrow")
def test_a_parquet_file_replaced_after_planning_is_named(tmp_path: Path) -> None:
    import pyarrow as pa  # type: ignore[import-untyped]
    import pyarrow.parquet as pq  # type: ignore[import-untyped]

    path = tmp_path / "rows.parquet"
    pq.write_table(pa.table({"failure_kind": ["cancelled"] * 40}), path, row_group_size=10)
    planned = plan(expand_inputs([str(path)], []), 2, None)
    assert len(planned) >= 1
    pq.write_table(pa.table({"failure_kind": ["swapped_in_kind"] * 90}), tmp_path / "new.parquet")
    os.replace(tmp_path / "new.parquet", path)
    report = audit_tasks(planned, settings_for("failure_kind"), run_here, None).report()
    assert [file.error for file in report.files] == [changed_error("replaced")]
    assert report.records == 0


CHANGED_AFTER_PLANNING = """
import sys
import failure_kinds.audit.engine as engine
import failure_kinds.audit.engine as parallel
from failure_kinds.cli import main

engine.PARALLEL_MIN_BYTES = 0  # the small file below is cut into ranges for the workers
planned = parallel.plan

def plan_then_change(*arguments, **options):
    tasks = planned(*arguments, **options)
    with open(sys.argv[1], "ab") as file:  # another job appends as the workers start
        file.write(b'{"failure_kind": "appended_kind"}\\n')
    return tasks

parallel.plan = plan_then_change
sys.exit(main(["audit", "--jobs", "2", sys.argv[1], sys.argv[2]]))
"""


def test_the_command_names_a_file_changed_while_workers_read_it_and_exits_2(tmp_path: Path) -> None:
    import subprocess
    import sys

    path = tmp_path / "day1.jsonl"
    write_log(path, "sesion_lost", 3000)
    write_log(tmp_path / "day2.jsonl", "cancelled", 3000)  # two files: two tasks, so workers read them
    run = [sys.executable, "-c", CHANGED_AFTER_PLANNING, str(path), str(tmp_path / "day2.jsonl")]
    result = subprocess.run(run, capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 2
    assert result.stderr == f"failure-kinds audit: {path}: {changed_error('grown')}\n"
    assert "appended_kind" not in result.stdout


@needs("pyarrow")
@pytest.mark.parametrize("change", ["truncated", "grown", "rewritten"])
def test_a_remote_file_changed_after_planning_is_named(tmp_path: Path, change: str) -> None:
    """A file:// URI, read through pyarrow's filesystem as a Ray task reads it: its size and modification
    time are checked as a local file's identity is."""
    from failure_kinds.audit import ray_engine

    path = tmp_path / "day1.jsonl"
    write_log(path, "sesion_lost")
    planned = ray_engine._plan_all([f"file://{path}"], [], 2048)
    assert len(planned) > 3
    change_file(path, change)
    audit_settings = settings_for("failure_kind")

    def remote(task: tasks_module.Task) -> PartialReport:
        return ray_engine.run_remote_task(task, audit_settings, None, True)

    merge_in_order = OrderedMerge()
    for index, batch in enumerate(batched(planned, 0)):
        merge_in_order.add(index, tasks_module.run_batch(batch, audit_settings, None, True, remote))
    report = merge_in_order.result(audit_settings).report()
    assert [(file.records, file.error) for file in report.files] == [(0, changed_error(change))]
