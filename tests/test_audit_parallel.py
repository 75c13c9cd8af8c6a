"""--jobs: whatever the files and wherever the byte ranges fall, the parallel report is the one-pass one."""

from __future__ import annotations

import gzip
import json
import multiprocessing
import os
import pty
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from audit_support import read_terminal, run_here
from helpers import command, examples, run_cli_bytes
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from failure_kinds.audit import Report, audit, expand_inputs, render_json, settings_for
from failure_kinds.audit.engine import check_field, check_objects, default_jobs
from failure_kinds.audit.render import ByteProgress
from failure_kinds.audit.tasks import LINES, STREAM, audit_tasks, batched, line_starts, plan, read_sources

TYPE_CHECKING = False
if TYPE_CHECKING:
    from failure_kinds.audit import PartialReport
    from failure_kinds.audit.tasks import Batch

LINE_POOL = [
    b'{"failure_kind": "transport_timeout"}',
    b'{"failure_kind": "cancelled", "failure_reason": "caller went away"}',
    b'{"failure_kind": "judge_faild"}',
    b'{"failure_kind": "swe_env:patch_apply_failed"}',
    b'{"failure_kind": "web_env:page_load_failed"}',
    b'{"failure_kind": null}',
    b"{}",
    b'{"failure_kind": 3}',
    b'{"failure_kind": ["a"]}',
    b'{"failure_kind": {"kind": "x"}}',
    b"not json",
    b"[1, 2]",
    b'{"failure_kind": "cancelled"} {"failure_kind": "shutdown"}',
    b"",
    b"   ",
    b"\t",
    b"\xff\xfe{}",
    b'{"failure_kind": "caf\xc3\xa9"}',
    b'{"failure_kind": "' + b"y" * 300 + b'"}',
    b'  {"failure_kind": "shutdown"}  ',
    b" " * 50,  # white space over the 40-byte cap: blank wherever a range starts
    b"\t \x0c" * 80,
]

distinct_lines = st.text(alphabet="abcdefgh_:", min_size=1, max_size=6).map(
    lambda value: json.dumps({"failure_kind": value}).encode()
)
line_strategy = st.one_of(st.sampled_from(LINE_POOL), distinct_lines)


@st.composite
def jsonl_files(draw: st.DrawFn) -> bytes:
    lines = draw(st.lists(line_strategy, max_size=40))
    ending = draw(st.sampled_from([b"\n", b"\r\n"]))
    body = ending.join(lines)
    trailing = draw(st.booleans())
    if lines and trailing:
        body += ending  # a trailing line end, or not
    if draw(st.booleans()):
        body = b"\xef\xbb\xbf" + body
    return body


def one_pass(inputs: list[str], **caps: int) -> str:
    return render_json(audit(inputs, jobs=1, **caps))  # type: ignore[arg-type]


def in_ranges(inputs: list[str], chunk_bytes: int, **caps: int) -> str:
    settings = settings_for("failure_kind", None, None, **caps)
    sources = expand_inputs(inputs, [])
    tasks = plan(sources, 2, chunk_bytes)
    report = audit_tasks(tasks, settings, run_here, None).report()
    # What the entry point adds when no record has a kind: whether the field is there at all.
    check_field(report, sources, settings)
    check_objects(report, settings)
    return render_json(report)


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    files=st.lists(
        st.tuples(jsonl_files(), st.booleans(), st.sampled_from([".jsonl", ".NDJSON"]), st.booleans()),
        min_size=1,
        max_size=3,
    ),
    chunk_bytes=st.integers(min_value=1, max_value=400),
    distinct_limit=st.integers(min_value=1, max_value=5),
    line_bytes=st.sampled_from([40, 200, 64 << 20]),
)
def test_any_cut_of_any_files_gives_the_one_pass_report(
    files: list[tuple[bytes, bool, str, bool]], chunk_bytes: int, distinct_limit: int, line_bytes: int
) -> None:
    """Plain or gzip, any suffix a walk reads, UTF-8 or (a BOM, then NUL-interleaved) UTF-16."""
    with tempfile.TemporaryDirectory() as folder:
        for number, (body, compressed, suffix, wide) in enumerate(files):
            if wide:
                body = b"\xff\xfe" + body.decode("latin-1").encode("utf-16-le")  # each byte, then a NUL
            name = Path(folder, f"part{number}{suffix}" + (".gz" if compressed else ""))
            name.write_bytes(gzip.compress(body) if compressed else body)
        caps = {"distinct_limit": distinct_limit, "line_bytes": line_bytes}
        assert in_ranges([folder], chunk_bytes, **caps) == one_pass([folder], **caps)


@settings(max_examples=examples(60), deadline=None)
@given(
    length=st.integers(min_value=1, max_value=3000),
    chunk_bytes=st.integers(min_value=1, max_value=500),
    newline=st.sampled_from([b"\n", b"\r\n", b""]),
)
def test_one_huge_line_across_many_ranges(length: int, chunk_bytes: int, newline: bytes) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder, "huge.jsonl")
        path.write_bytes(b'{"failure_kind": "' + b"z" * length + b'"}' + newline + b'{"failure_kind": 1}')
        for line_bytes in (100, 64 << 20):
            caps = {"line_bytes": line_bytes}
            assert in_ranges([str(path)], chunk_bytes, **caps) == one_pass([str(path)], **caps)


@settings(max_examples=examples(100), deadline=None)
@given(body=jsonl_files(), chunk_bytes=st.integers(min_value=1, max_value=200))
def test_ranges_start_at_line_starts_cover_the_file_and_are_never_empty(
    body: bytes, chunk_bytes: int
) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder, "cut.jsonl")
        path.write_bytes(body)
        with path.open("rb") as file:
            starts = line_starts(file, len(body), chunk_bytes)
    assert starts[0] == 0
    assert starts == sorted(set(starts))
    assert all(start < len(body) or start == 0 for start in starts)
    assert all(body[start - 1 : start] == b"\n" for start in starts[1:])


def write_big(path: Path, copies: int) -> Path:
    """A file of many copies of every pool line, with one distinct bad value near its end."""
    block = b"\n".join(LINE_POOL) + b"\n"
    with path.open("wb") as file:
        for _ in range(copies):
            file.write(block)
        file.write(b'{"failure_kind": "only_near_the_end"}\n')
    return path


def test_worker_processes_give_the_one_pass_report(tmp_path: Path) -> None:
    big = write_big(tmp_path / "big.jsonl", 3000)
    (tmp_path / "small.jsonl.gz").write_bytes(gzip.compress(b'{"failure_kind": "sesion_lost"}\nbad\n'))
    (tmp_path / "empty.jsonl").write_bytes(b"")
    inputs = [str(tmp_path), str(big), str(tmp_path / "missing.jsonl")]
    report = audit(inputs, jobs=2, chunk_bytes=100_000)
    assert render_json(report) == one_pass(inputs)
    assert [file.path for file in report.failed_files] == [str(tmp_path / "missing.jsonl")]


def test_a_part_past_the_distinct_cap_is_counted_again_pinned(tmp_path: Path) -> None:
    lines = [json.dumps({"failure_kind": f"bad_{index % 200}"}).encode() for index in range(3000)]
    path = tmp_path / "many.jsonl"
    path.write_bytes(b"\n".join(lines[::-1]) + b"\n")
    settings = settings_for("failure_kind", distinct_limit=7)
    tasks = plan(expand_inputs([str(path)], []), 2, 2000)
    assert len(tasks) > 10
    first = run_here(batched(tasks, 0), settings, None, ByteProgress(None, 0))
    # Each part of about 80 lines holds more distinct values than a part keeps (PART_DISTINCT_FACTOR
    # times the cap), so the engine must run the parts again, pinned.
    assert not first.exact
    report = audit([str(path)], jobs=2, chunk_bytes=2000, distinct_limit=7)
    assert render_json(report) == one_pass([str(path)], distinct_limit=7)


def test_a_part_within_the_wider_part_cap_needs_no_second_pass(tmp_path: Path) -> None:
    """Parts keep more distinct values than the cap, so thousands of values spread over every part do
    not make the merge inexact: one pass, the one-pass report."""
    lines = [json.dumps({"failure_kind": f"bad_{index % 20}"}).encode() for index in range(600)]
    path = tmp_path / "many.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    settings = settings_for("failure_kind", distinct_limit=7)  # each part sees all 20: past 7, within 28
    tasks = plan(expand_inputs([str(path)], []), 2, 2000)
    merged = run_here(batched(tasks, 0), settings, None, ByteProgress(None, 0))
    assert merged.exact
    assert render_json(merged.report()) == one_pass([str(path)], distinct_limit=7)


def test_streams_and_one_job_are_read_in_one_pass(tmp_path: Path) -> None:
    path = write_big(tmp_path / "big.jsonl", 10)
    sources = expand_inputs(["-", str(path)], [])
    assert plan(sources, 2, 10)[0].kind == STREAM
    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)
    assert plan(expand_inputs([str(fifo)], []), 2, 10)[0].kind == STREAM
    assert plan(expand_inputs([str(path)], []), 2, 1 << 30)[0].kind == LINES
    data = b'{"failure_kind": "cancelled"}\n'
    result = run_cli_bytes("audit", "-", str(path), "--jobs", "2", "--format", "json", stdin=data)
    expected = run_cli_bytes("audit", "-", str(path), "--jobs", "1", "--format", "json", stdin=data)
    assert result.returncode == expected.returncode == 0
    assert result.stdout == expected.stdout
    assert json.loads(result.stdout)["files"][0]["path"] == "<stdin>"


def cli(*arguments: str) -> subprocess.CompletedProcess[bytes]:
    return run_cli_bytes("audit", *arguments)


@pytest.fixture(scope="module")
def above_the_threshold(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Above the size at which the command starts worker processes by itself: records at both ends and
    blank lines between, which every engine counts without decoding (what is proved here is the choice
    of engine and the report it gives, not reading speed)."""
    path = tmp_path_factory.mktemp("big") / "forty.jsonl"
    block = b"\n".join(LINE_POOL) + b"\n"
    with path.open("wb") as file:
        file.write(block * 2000)
        for _ in range(34):
            file.write(b"\n" * (1 << 20))
        file.write(block * 2000 + b'{"failure_kind": "only_near_the_end"}\n')
    return path


def test_the_command_uses_every_core_by_default_with_the_same_report(above_the_threshold: Path) -> None:
    assert above_the_threshold.stat().st_size > 32 << 20
    leader, follower = pty.openpty()
    try:
        process = subprocess.Popen(
            command("audit", str(above_the_threshold), "--format", "json"),
            stdout=subprocess.PIPE,
            stderr=follower,
        )
        os.close(follower)
        shown = read_terminal(leader, process)
    finally:
        os.close(leader)
    assert process.stdout is not None
    parallel = process.stdout.read()
    process.stdout.close()
    serial = cli(str(above_the_threshold), "--format", "json", "--jobs", "1")
    assert process.returncode == serial.returncode == 0
    assert parallel == serial.stdout
    assert serial.stderr == b""  # stderr is a pipe here: no progress line
    # Only the engine that runs tasks in workers counts bytes: the default did use them.
    assert re.search(rb"audited [\d.,]+ [kMG]?B of [\d.,]+ [kMG]?B \([\d.,]+ [kMG]?B/s\)", shown)
    assert shown.endswith(b"\r\x1b[K")  # the line is cleared before the report's own output


def test_jobs_must_be_positive() -> None:
    result = cli("x.jsonl", "--jobs", "0")
    assert result.returncode == 2
    assert result.stderr.decode().count("\n") == 1
    assert b"--jobs 0" in result.stderr


def test_no_path_is_a_usage_error() -> None:
    result = cli("--format", "json")
    assert result.returncode == 2
    assert result.stderr.decode().count("\n") == 1


def test_default_jobs_is_the_cores_this_process_may_use() -> None:
    assert default_jobs() == len(os.sched_getaffinity(0))


def test_a_directory_that_cannot_be_listed_fails_as_in_one_pass(tmp_path: Path) -> None:
    from failure_kinds.audit.sources import Source

    good = write_big(tmp_path / "good.jsonl", 5)
    unlisted = Source(
        str(tmp_path / "locked"), str(tmp_path / "locked"), PermissionError(13, "Permission denied")
    )
    sources = [Source(str(good), str(good)), unlisted, Source(str(good), str(good))]
    settings = settings_for("failure_kind")
    tasks = plan(sources, 2, 300)
    merged = audit_tasks(tasks, settings, run_here, None)
    assert render_json(merged.report()) == render_json(read_sources(sources, settings).report())
    assert [file.error for file in merged.report().files] == [None, "permission denied", None]


def test_jobs_and_ray_together_are_a_usage_error(tmp_path: Path) -> None:
    result = cli(str(tmp_path), "--jobs", "2", "--ray")
    assert result.returncode == 2
    assert result.stderr.decode().count("\n") == 1
    assert b"--jobs and --ray" in result.stderr


def audit_with_dying_workers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, dying: set[int]) -> Report:
    """Two copies of a file cut into ranges, where the workers running the ``dying`` tasks die."""
    import failure_kinds.audit.engine as parallel

    path = write_big(tmp_path / "big.jsonl", 400)
    copy = write_big(tmp_path / "copy.jsonl", 400)  # a file of its own: one path twice is read once
    run_batch = parallel.run_batch

    def crashing(batch: Batch, *arguments: object) -> PartialReport:
        if batch[0].index in dying:
            os._exit(3)  # as a worker killed by the kernel would, with nothing sent back
        return run_batch(batch, *arguments)  # type: ignore[arg-type]

    monkeypatch.setattr(parallel, "run_batch", crashing)  # the forked workers inherit it
    tasks = plan(expand_inputs([str(path), str(copy)], []), 2, 20_000)
    runner = parallel._pool_runner(2, True, multiprocessing.get_context("fork"))
    return audit_tasks(tasks, settings_for("failure_kind"), runner, None).report()


# These two fork the pool's workers from pytest's own process (so they inherit the patched run_batch),
# where earlier tests may have left pyarrow's thread pool running (Python 3.12 and later warn of that). The
# command itself forks only from a process with no other thread:
# test_workers_are_forked_only_from_a_process_without_other_threads.
FORK_IN_TEST_PROCESS = pytest.mark.filterwarnings(
    "ignore:This process .* is multi-threaded, use of fork\\(\\) may lead to deadlocks:DeprecationWarning"
)


@FORK_IN_TEST_PROCESS
def test_a_worker_that_dies_fails_its_range_and_the_others_finish(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    report = audit_with_dying_workers(tmp_path, monkeypatch, {2})
    assert [file.error for file in report.files] == ["a worker process died", None]
    assert 0 < report.files[0].records < report.files[1].records  # only the lost range is missing


@FORK_IN_TEST_PROCESS
def test_when_every_worker_dies_the_ranges_left_run_again_and_nothing_hangs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Both workers die (the pool breaks): the ranges they did not kill run again, in a pool of their own."""
    report = audit_with_dying_workers(tmp_path, monkeypatch, {1, 2})
    assert [file.error for file in report.files] == ["a worker process died", None]
    assert (
        0 < report.files[0].records < report.files[1].records == audit([str(tmp_path / "copy.jsonl")]).records
    )


@pytest.mark.parametrize("method", ["forkserver", "spawn"])
def test_the_process_pools_give_the_one_pass_report_too(tmp_path: Path, method: str) -> None:
    from failure_kinds.audit.engine import _pool_runner

    path = write_big(tmp_path / "big.jsonl", 300)
    tasks = plan(expand_inputs([str(path)], []), 2, 30_000)
    runner = _pool_runner(2, True, multiprocessing.get_context(method))
    merged = audit_tasks(tasks, settings_for("failure_kind"), runner, None)
    assert render_json(merged.report()) == one_pass([str(path)])


def test_workers_are_forked_only_from_a_process_without_other_threads() -> None:
    import threading

    from failure_kinds.audit.engine import start_method

    probe = "from failure_kinds.audit.engine import start_method; print(start_method())"
    alone = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert alone.stdout == "fork\n"
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        assert start_method() == "forkserver"
    finally:
        stop.set()
        other.join()


# When the pool's threads cannot start (RLIMIT_NPROC counts threads as well as processes): the pool's
# manager thread (submit raises), or its call queue's feeder thread (the manager thread dies at once)


@FORK_IN_TEST_PROCESS
@pytest.mark.parametrize("failing", ["manager", "feeder"])
def test_a_pool_whose_threads_cannot_start_leaves_the_audit_to_this_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], failing: str
) -> None:
    """As ``ulimit -u`` low: no traceback, no hang, no worker left, and the one-process report."""
    import threading
    from concurrent.futures.process import _ExecutorManagerThread
    from multiprocessing.queues import Queue

    import failure_kinds.audit.engine as parallel

    path = write_big(tmp_path / "big.jsonl", 300)
    expected = one_pass([str(path)])
    capsys.readouterr()
    start = threading.Thread.start

    def no_thread(thread: threading.Thread) -> None:
        if failing == "manager" and isinstance(thread, _ExecutorManagerThread):
            raise RuntimeError("can't start new thread")
        if failing == "feeder" and getattr(thread, "_target", None) is Queue._feed:  # type: ignore[attr-defined]
            raise RuntimeError("can't start new thread")
        start(thread)

    monkeypatch.setattr(threading.Thread, "start", no_thread)
    tasks = plan(expand_inputs([str(path)], []), 2, 30_000)
    runner = parallel._pool_runner(2, True, multiprocessing.get_context("fork"))
    merged = audit_tasks(tasks, settings_for("failure_kind"), runner, None)
    monkeypatch.undo()
    report = merged.report()
    check_field(report, expand_inputs([str(path)], []), settings_for("failure_kind"))
    assert render_json(report) == expected
    assert multiprocessing.active_children() == []
    assert "Traceback" not in capsys.readouterr().err


# Ctrl-C as the workers start: a terminal sends SIGINT to the whole process group


def test_ctrl_c_as_the_workers_start_is_one_line_exit_130_and_leaves_no_process(tmp_path: Path) -> None:
    import signal
    import time

    path = write_big(tmp_path / "big.jsonl", 60_000)  # about 16 MB: read for longer than the delays
    for delay in [0.0, 0.01, 0.03, 0.06, 0.1, 0.2]:
        process = subprocess.Popen(
            command("audit", "--jobs", "2", "--format", "json", str(path)),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            start_new_session=True,
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        )
        try:
            # The first worker of the group seen (pgrep lists the group's processes), then the delay.
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline and process.poll() is None:
                group = subprocess.run(["pgrep", "-g", str(process.pid)], capture_output=True, text=True)
                if len(group.stdout.split()) >= 2:
                    break
                time.sleep(0.005)
            time.sleep(delay)
            os.killpg(process.pid, signal.SIGINT)
            _, stderr = process.communicate(timeout=30)
        finally:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
        assert (delay, process.returncode, stderr.decode()) == (delay, 130, "failure-kinds: interrupted\n")
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                os.killpg(process.pid, 0)
            except ProcessLookupError:
                break
            time.sleep(0.05)
        else:
            os.killpg(process.pid, signal.SIGKILL)
            pytest.fail(f"a worker was left after Ctrl-C {delay} s after the workers started")
