"""One report, any engine (docs/audit.md): workers give the one-pass report however the input is cut, and
failing ones never cost it or leave a process; partials merge into it in any grouping."""

from __future__ import annotations

import doctest
import functools
import gzip
import itertools
import json
import multiprocessing
import os
import pickle
import pty
import re
import resource
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from audit_support import (
    CHANGES,
    CONSTANTS,
    ON_OPEN,
    assert_adds_up,
    changed,
    jsonl,
    many_shards,
    on_open,
    read_terminal,
)
from helpers import command, examples, run_cli, run_cli_bytes
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import failure_kinds.audit
from failure_kinds.audit import (
    INVALID,
    UNPARSEABLE,
    AuditError,
    AuditSettings,
    PartialReport,
    audit,
    audit_file,
    audit_lines,
    merge,
    render_json,
    render_text,
    settings_for,
)
from failure_kinds.audit.settings import rank
from failure_kinds.history import OLDER_LABELS

KINDS = ["transport_timeout", "judge_faild", None, 3, ["a"], "swe_env:patch_apply_failed", {"kind": "x"}]
LINE_POOL = [
    *(json.dumps({"failure_kind": value}).encode() for value in KINDS),
    b'{"failure_kind": "cancelled", "failure_reason": "caller went away"}',
    *[
        b"{}",
        b"not json",
        b"[1, 2]",
        b'{"failure_kind": "cancelled"} {"failure_kind": "shutdown"}',
        b"",
        b"   ",
    ],
    *[b"\t", b"\xff\xfe{}", b'{"failure_kind": "caf\xc3\xa9"}', b'  {"failure_kind": "shutdown"}  '],
    b'{"failure_kind": "' + b"y" * 300 + b'"}',
    b" " * 50,  # white space over the 40-byte cap: blank wherever a range starts
    b"\t \x0c" * 80,
]


def one_pass(inputs: list[str], **caps: int) -> str:
    return render_json(audit(inputs, jobs=1, **caps))  # type: ignore[arg-type]


def write_big(path: Path, copies: int) -> Path:
    """A file of many copies of every pool line, with one distinct bad value near its end."""
    path.write_bytes((b"\n".join(LINE_POOL) + b"\n") * copies + jsonl(["only_near_the_end"]))
    return path


def test_two_thousand_shards_with_workers_give_the_one_pass_report_byte_for_byte(tmp_path: Path) -> None:
    inputs = many_shards(tmp_path, seed=7, files=2000, lines=12)
    expected = audit(inputs, jobs=1)
    # A chunk of 16 KB: about 70 batches of some 30 shards each, run by two workers.
    several = audit(inputs, jobs=2, chunk_bytes=16 << 10)
    assert (render_json(several), render_text(several)) == (render_json(expected), render_text(expected))
    assert expected.records == 24_000


LINES = st.one_of(
    st.sampled_from(LINE_POOL),
    st.sampled_from(sorted(OLDER_LABELS)).map(lambda value: jsonl([value]).strip()),
    st.text(alphabet="abcdefgh_:", min_size=1, max_size=6).map(lambda value: jsonl([value]).strip()),
    st.integers(1, 3000).map(lambda length: b'{"failure_kind": "' + b"z" * length + b'"}'),
)


@st.composite
def log_files(draw: st.DrawFn) -> bytes:
    ending = draw(st.sampled_from([b"\n", b"\r\n"]))
    body = ending.join(draw(st.lists(LINES, max_size=40)))
    body += ending if body and draw(st.booleans()) else b""  # a trailing line end, or not
    return b"\xef\xbb\xbf" + body if draw(st.booleans()) else body


@settings(max_examples=examples(50), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.tuples(log_files(), st.booleans(), st.sampled_from([".jsonl", ".NDJSON"]), st.booleans()),
        min_size=1,
        max_size=6,
    ),
    st.integers(min_value=1, max_value=400),
    st.fixed_dictionaries(
        {
            "distinct_limit": st.integers(min_value=1, max_value=5),
            "line_bytes": st.sampled_from([3, 40, 100, 200, 64 << 20]),
            "value_chars": st.sampled_from([20, 256]),
        }
    ),
)
def test_any_cut_of_any_files_gives_the_one_pass_report(
    files: list[tuple[bytes, bool, str, bool]], chunk_bytes: int, caps: dict[str, int]
) -> None:
    """Plain or gzip, any suffix a walk reads, UTF-8 or (a BOM, then NUL-interleaved) UTF-16, empty, lines
    past the cap across many ranges, in byte ranges and batches of any size."""
    with tempfile.TemporaryDirectory() as folder:
        for number, (body, compressed, suffix, wide) in enumerate(files):
            if wide:
                body = b"\xff\xfe" + body.decode("latin-1").encode("utf-16-le")  # each byte, then a NUL
            name = Path(folder, f"part{number}{suffix}" + (".gz" if compressed else ""))
            name.write_bytes(gzip.compress(body) if compressed else body)
        several = audit([folder], jobs=2, chunk_bytes=chunk_bytes, **caps)  # type: ignore[arg-type]
        assert render_json(several) == one_pass([folder], **caps)


@pytest.mark.parametrize("distinct", [20, 200])  # the same values in every part, or other ones
def test_parts_past_the_distinct_cap_merge_into_the_one_pass_report(tmp_path: Path, distinct: int) -> None:
    path = tmp_path / "many.jsonl"
    path.write_bytes(jsonl([f"bad_{index % distinct}" for index in range(3000)][::-1]))
    data = path.read_bytes()
    ranges = list(
        itertools.pairwise(
            [0, *[index + 1 for index, byte in enumerate(data) if byte == 10][79::80], len(data)]
        )
    )
    capped = settings_for("failure_kind", distinct_limit=7)
    parts = merge(audit_file(str(path), capped, start=start, stop=stop) for start, stop in ranges)
    expected = one_pass([str(path)], distinct_limit=7)
    assert render_json(parts.report()) == expected
    assert render_json(audit([str(path)], jobs=2, chunk_bytes=2000, distinct_limit=7)) == expected


def test_streams_are_read_in_this_process_beside_the_workers(tmp_path: Path) -> None:
    path = write_big(tmp_path / "big.jsonl", 10)
    arguments, data = ("audit", "-", str(path), "--format", "json"), jsonl(["cancelled"])
    result = run_cli_bytes(*arguments, "--jobs", "2", stdin=data)
    assert result.stdout == run_cli_bytes(*arguments, stdin=data).stdout  # in one process
    assert (result.returncode, json.loads(result.stdout)["files"][0]["path"]) == (0, "<stdin>")


@pytest.fixture(scope="module")
def above_the_threshold(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """Past the size from which the command starts workers by itself (mostly blank lines, which cost
    little), and its one-pass report."""
    path = tmp_path_factory.mktemp("big") / "forty.jsonl"
    block = (b"\n".join(LINE_POOL) + b"\n") * 2000
    path.write_bytes(block + b"\n" * (34 << 20) + block + jsonl(["only_near_the_end"]))
    return path, one_pass([str(path)])


@pytest.mark.parametrize("cores", [None, {0}], ids=["every-core", "one-core"])
def test_the_command_uses_every_core_it_may_run_on_with_the_same_report(
    above_the_threshold: tuple[Path, str], cores: set[int] | None
) -> None:
    path, expected = above_the_threshold
    leader, follower = pty.openpty()
    try:
        process = subprocess.Popen(
            command("audit", str(path), "--format", "json"),
            stdout=subprocess.PIPE,
            stderr=follower,
            preexec_fn=None if cores is None else lambda: os.sched_setaffinity(0, cores),
        )
        os.close(follower)
        shown = read_terminal(leader, process)
    finally:
        os.close(leader)
    assert process.stdout is not None
    with process.stdout:
        assert (process.returncode, process.stdout.read().decode()) == (0, expected)
    # Only the engine that runs tasks in workers counts bytes; one core is one process.
    workers = re.search(rb"audited [\d.,]+ [kMG]?B of [\d.,]+ [kMG]?B \([\d.,]+ [kMG]?B/s\)", shown)
    assert bool(workers) == (cores is None and len(os.sched_getaffinity(0)) > 1)
    assert shown.endswith(b"\r\x1b[K") or not workers  # the line is cleared before the report's output


NOT_JOBS = "expected a whole number of processes from 1 to 999999"


@pytest.mark.parametrize(
    ("arguments", "said"),
    [(["x.jsonl", "--jobs", jobs], f"argument --jobs: {jobs!r}: {NOT_JOBS}")
     for jobs in ("0", "-3", "x", "²", "٢", " 2", "+2", "1000000", "9" * 20)]
    + [(["--format", "json"], ""), (["x", "--jobs", "2", "--ray"], "--jobs and --ray")],
)  # fmt: skip
def test_usage_errors_of_the_engines_are_one_line(arguments: list[str], said: str) -> None:
    result = run_cli("audit", *arguments)
    assert (result.returncode, result.stderr.count("\n")) == (2, 1)
    assert said in result.stderr


@pytest.mark.parametrize("descriptors", [64, 12])
def test_many_jobs_under_a_low_descriptor_limit_give_the_report(tmp_path: Path, descriptors: int) -> None:
    """--jobs 300 on 400 files (past the size below which one process reads all) with 64 descriptors,
    or 12 (too few for even one worker): the workers that fit, or none; never Too many open files."""
    body = jsonl(["judge_faild"] * 1000, failure_reason="r" * 60)
    for index in range(400):
        (tmp_path / f"{index:03d}.jsonl").write_bytes(body + jsonl([f"k{index}"]))

    def limited() -> None:
        resource.setrlimit(
            resource.RLIMIT_NOFILE, (descriptors, resource.getrlimit(resource.RLIMIT_NOFILE)[1])
        )

    result = run_cli("audit", str(tmp_path), "--jobs", "300", "--format", "json", preexec_fn=limited)
    assert (result.returncode, result.stderr, result.stdout) == (0, "", one_pass([str(tmp_path)]))


def assert_no_worker_left() -> None:
    for child in multiprocessing.active_children():
        child.join(5)
    assert multiprocessing.active_children() == []


@pytest.mark.parametrize(("failing", "before"), [("process", 0), ("process", 1), ("pool", 0)])
def test_when_workers_cannot_start_the_audit_stops_with_one_line_and_leaves_no_worker(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, failing: str, before: int
) -> None:
    """A process start failing as past RLIMIT_NPROC (EAGAIN), after ``before`` workers started, or a pool
    that cannot start at all (no descriptor): one line (exit 2 from the command), no worker left."""
    import concurrent.futures

    start, started = multiprocessing.process.BaseProcess.start, []

    def failing_start(process: multiprocessing.process.BaseProcess) -> None:
        if len(started) >= before:
            raise BlockingIOError(11, "Resource temporarily unavailable")
        started.append(start(process))

    def no_pool(*arguments: object, **options: object) -> None:
        raise OSError(24, "Too many open files")

    if failing == "process":
        monkeypatch.setattr(multiprocessing.process.BaseProcess, "start", failing_start)
    else:
        monkeypatch.setattr(concurrent.futures, "ProcessPoolExecutor", no_pool)
    with pytest.raises(AuditError) as raised:
        audit(many_shards(tmp_path, seed=3, files=60, lines=12), jobs=4, chunk_bytes=256)
    assert len(started) == before
    reason = "(too many open files)" if failing == "pool" else "("
    assert str(raised.value).startswith(f"--jobs 4: cannot start the worker processes {reason}")
    assert "\n" not in str(raised.value)
    assert_no_worker_left()


# RLIMIT_NPROC counts threads and processes alike: past it, the pool's manager thread (submit raises) or its
# call queue's feeder thread (the manager thread dies of it) may not start.
@pytest.mark.parametrize("limit", range(2, 8))
def test_a_pool_whose_threads_cannot_start_leaves_the_audit_to_this_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], limit: int
) -> None:
    """As ``ulimit -u`` low: no traceback, no hang, no worker left, and the one-process report."""
    path = write_big(tmp_path / "big.jsonl", 300)
    expected = one_pass([str(path)])
    capsys.readouterr()
    start = threading.Thread.start

    def counted(thread: threading.Thread) -> None:
        if threading.active_count() + len(multiprocessing.active_children()) >= limit:
            raise RuntimeError("can't start new thread")
        start(thread)

    monkeypatch.setattr(threading.Thread, "start", counted)
    report = audit([str(path)], jobs=2, chunk_bytes=30_000)
    monkeypatch.undo()
    assert render_json(report) == expected
    assert_no_worker_left()
    assert "Traceback" not in capsys.readouterr().err


AUDIT_IN_WORKERS = """
import sys, threading, warnings
from failure_kinds.audit import audit, render_json
stop = threading.Event()
threading.Thread(target=stop.wait).start()  # a fork from here could copy a lock that thread holds
warnings.simplefilter("error", DeprecationWarning)  # as Python 3.12 and later warn of such a fork
try:
    print(render_json(audit(sys.argv[2:], jobs=2, chunk_bytes=int(sys.argv[1]))), end="")
finally:
    stop.set()
"""


def in_workers(chunk_bytes: int, paths: list[Path], environment: dict[str, str]) -> dict[str, Any]:
    """The audit of ``paths`` by two workers, from a process with another thread running."""
    run = [sys.executable, "-c", AUDIT_IN_WORKERS, str(chunk_bytes), *map(str, paths)]
    result = subprocess.run(
        run, capture_output=True, text=True, env={**os.environ, **environment}, timeout=120, check=False
    )
    assert (result.returncode, result.stderr) == (0, "")
    report: dict[str, Any] = json.loads(result.stdout)
    return report


@pytest.mark.parametrize("opening", [2, 3], ids=["after-planning", "between-ranges"])
def test_files_changed_while_workers_read_them_are_named_and_never_counted_whole(
    tmp_path: Path, opening: int
) -> None:
    """The plan opens a file once (its line starts); each change lands as the first, or the second, of
    its ranges is opened by a worker. Each file is named and nothing of its new content counts."""
    paths, other = [tmp_path / f"{change}.jsonl" for change in CHANGES], tmp_path / "whole.jsonl"
    hooks = []
    for path, change in zip(paths, CHANGES, strict=True):
        path.write_bytes(jsonl(["sesion_lost"] * 400, n=1))
        (tmp_path / change).mkdir()
        hooks.append(on_open(tmp_path / change, path, [opening], change))
    other.write_bytes(jsonl(["cancelled"] * 10))
    environment = {**hooks[0], ON_OPEN: ";".join(hook[ON_OPEN] for hook in hooks)}
    report = in_workers(2048, [*paths, other], environment)
    *files, whole = report["files"]
    assert whole == {"path": str(other), "records": 10, "error": None, "with_kind": 10}
    assert [(file["path"], file["error"]) for file in files] == [
        (str(path), changed(change)) for path, change in zip(paths, CHANGES, strict=True)
    ]
    assert all(file["records"] < 400 for file in files)
    assert {row["value"] for row in report["kinds"]} <= {"cancelled", "sesion_lost"}


def test_the_command_names_a_file_changed_while_workers_read_it_and_exits_2(tmp_path: Path) -> None:
    path = tmp_path / "day1.jsonl"
    # Past the size from which the command uses workers: records, then blank lines, which cost little.
    path.write_bytes(jsonl(["sesion_lost"] * 3000) + b"\n" * (34 << 20) + jsonl(["cancelled"]))
    result = run_cli("audit", "--jobs", "2", str(path), env=on_open(tmp_path, path, [2], "grown"))
    assert (result.returncode, result.stderr) == (2, f"failure-kinds audit: {path}: {changed('grown')}\n")
    assert "appended_kind" not in result.stdout


@pytest.mark.parametrize("dying", [["1+"], [2]], ids=["always", "once"])
def test_a_worker_that_dies_fails_only_what_it_cannot_read_and_nothing_hangs(
    tmp_path: Path, dying: list[int | str]
) -> None:
    """A file that kills every worker that reads it fails; one that killed a worker once (breaking the
    pool, and with it every range the pool held: each runs again, alone) is read whole, as is the other."""
    path, copy_of = write_big(tmp_path / "big.jsonl", 100), write_big(tmp_path / "copy.jsonl", 100)
    report = in_workers(20_000, [path, copy_of], on_open(tmp_path, path, dying, "die"))
    if dying == [2]:
        assert report == json.loads(one_pass([str(path), str(copy_of)]))
    else:
        died, whole = report["files"]
        assert died == {"path": str(path), "records": 0, "error": "a worker process died", "with_kind": 0}
        assert whole["error"] is None


def interrupted(
    arguments: list[str],
    ready: Callable[[subprocess.Popen[bytes]], bool],
    delay: float,
    environment: dict[str, str] | None = None,
) -> tuple[int, str]:
    """Ctrl-C at a terminal ``delay`` s after ``ready`` holds: SIGINT to the command's whole process group.
    Its exit status and stderr; the test fails if any process of the group is left behind."""
    process = subprocess.Popen(
        command(*arguments),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=environment,
        start_new_session=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and process.poll() is None and not ready(process):
            time.sleep(0.005)
        time.sleep(delay)
        os.killpg(process.pid, signal.SIGINT)
        _, stderr = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            os.killpg(process.pid, 0)
        except ProcessLookupError:
            return process.returncode, stderr.decode()
        time.sleep(0.05)
    os.killpg(process.pid, signal.SIGKILL)
    pytest.fail(f"a worker was left after Ctrl-C {delay} s after {' '.join(arguments)} was ready")


def test_ctrl_c_as_the_workers_start_is_one_line_exit_130_and_leaves_no_process(tmp_path: Path) -> None:
    path = write_big(tmp_path / "big.jsonl", 60_000)  # about 16 MB: read for longer than the delays

    def a_worker_started(process: subprocess.Popen[bytes]) -> bool:  # pgrep lists the group's processes
        return len(subprocess.run(["pgrep", "-g", str(process.pid)], capture_output=True).stdout.split()) >= 2

    for delay in [0.0, 0.01, 0.03, 0.06, 0.1, 0.2]:
        result = interrupted(["audit", "--jobs", "2", "--format", "json", str(path)], a_worker_started, delay)
        assert (delay, *result) == (delay, 130, "failure-kinds: interrupted\n")


def test_ctrl_c_while_one_worker_waits_for_work_and_one_reads_is_one_line(tmp_path: Path) -> None:
    """A worker idle between tasks gets the terminal's SIGINT too: it ignores it, so it prints nothing."""
    quick, slow = write_big(tmp_path / "quick.jsonl", 100), write_big(tmp_path / "slow.jsonl", 100)
    # Both files cut into ranges, so that one worker reads the rest while the other waits in the first.
    constants = "failure_kinds.audit.engine.PARALLEL_MIN_BYTES=0,failure_kinds.audit.tasks.MIN_CHUNK_BYTES=1"
    environment = {**os.environ, **on_open(tmp_path, slow, [1], "wait"), CONSTANTS: constants}
    stalled = tmp_path / "hook-site" / "opened" / "1"  # made when a worker opens the slow file
    # Half a second after, the other worker has read its ranges and waits for more.
    result = interrupted(
        ["audit", "--jobs", "2", str(quick), str(slow)], lambda _: stalled.exists(), 0.5, environment
    )
    assert result == (130, "failure-kinds: interrupted\n")


# The mergeable partial report

POOL = [*OLDER_LABELS, "cancelled", "transport_timeout", "judge_faild", "legacy_timeout", "web:page_gone"]
POOL += ["swe:patch_failed", "swe:patch_faild", "x" * 40, "cancelled" + "!" * 30, "y" * 40]  # declared, not
POOL += ["SWE_env:patch"]
STAGES = [None, 3, "agent", "verifier", "request", "participant", "stage_" + "q" * 30]
ALIASES = {"legacy_timeout": "transport_timeout", "y" * 40: "cancelled", "unreachable": "transport_peer_drop"}
NAMESPACES = {"swe": ("patch_failed",)}
PARTIAL_LINES = st.one_of(
    st.sampled_from(POOL).map(lambda value: jsonl([value]).strip()),
    st.sampled_from(
        [b"{}", b'{"failure_kind": null}', b'{"failure_kind": 3}', b"oops", b"", b"  \r", b"{" * 90]
    ),
    st.text(max_size=6).map(lambda value: jsonl([value]).strip()),
    st.tuples(st.sampled_from(POOL), st.sampled_from(STAGES) | st.text(max_size=4), st.booleans()).map(
        lambda drawn: json.dumps(
            {"failure": {"failure_kind": drawn[0], "stage": drawn[1]}}
            if drawn[2]
            else {"failure_kind": drawn[0], "stage": drawn[1]}
        ).encode()
    ),
)
Parts = list[tuple[list[bytes], str, bool]]


@st.composite
def cut_files(draw: st.DrawFn) -> tuple[AuditSettings, Parts]:
    """Settings under small caps (so overflow rows, cut values and overlong lines all occur), one or two
    fields, and up to three files, each cut into up to three parts: (lines, path, continuation)."""
    audit_settings = settings_for(
        draw(st.sampled_from([["failure_kind"], ["failure_kind", "failure.failure_kind"]])),
        draw(st.sampled_from([ALIASES, {}])),
        NAMESPACES,
        distinct_limit=draw(st.integers(min_value=1, max_value=4)),
        value_chars=draw(st.sampled_from([3, 8, 20, 256])),  # down to 3: older labels are kept cut too
        line_bytes=draw(st.sampled_from([64, 1 << 20])),
    )
    parts: Parts = []
    for number, lines in enumerate(
        draw(st.lists(st.lists(PARTIAL_LINES, max_size=25), min_size=1, max_size=3))
    ):
        cuts = sorted(draw(st.lists(st.integers(min_value=0, max_value=len(lines)), max_size=2)))
        for index, (start, stop) in enumerate(itertools.pairwise([0, *cuts, len(lines)])):
            parts.append((lines[start:stop], f"day{number}.jsonl", index > 0))
    return audit_settings, parts


def audited(audit_settings: AuditSettings, parts: Parts) -> list[PartialReport]:
    """The parts audited apart, each sent pickled as the engines send them."""
    return [
        pickle.loads(pickle.dumps(audit_lines(lines, path, audit_settings, continuation=later)))
        for lines, path, later in parts
    ]


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cut_files())
def test_partials_merged_in_any_grouping_give_the_one_pass_report(drawn: tuple[AuditSettings, Parts]) -> None:
    audit_settings, parts = drawn
    whole = PartialReport(audit_settings)
    for lines, path, later in parts:
        if not later:
            whole.start_file(path)
        whole.add_lines(lines)
    expected = whole.report()
    left = merge(audited(audit_settings, parts)).report()
    right = functools.reduce(
        lambda later, earlier: earlier.merge(later), reversed(audited(audit_settings, parts))
    )
    for report in (left, right.report()):
        assert (render_json(report), render_text(report)) == (render_json(expected), render_text(expected))
    for report in (expected, *expected.also):
        assert_adds_up(report)
    # A cut older label still names its replacement and its note (no two share their first three
    # characters and their length).
    cut = audit_settings.value_chars
    by_start = {(label[:cut], len(label)): older for label, older in OLDER_LABELS.items()}
    for row in expected.kinds:
        older = by_start.get((row.value, row.length)) if row.category in ("legacy", "aliased") else None
        if older is not None:
            assert (row.replacement, row.note) == (older.replacement, older.note)
            assert row.category == "aliased" or row.canonical == older.replacement


def test_merging_costs_the_parts_merged_not_the_table_so_far_and_changes_no_input() -> None:
    """Parts of thirteen values, ten of them new to the whole: four times the parts cost about four times
    the time (a merge that copied or re-sorted the table so far each time would cost sixteen)."""
    audit_settings = AuditSettings(distinct_limit=100_000)
    parts = [
        audit_lines(jsonl([f"seen_{index % 40}"] * 3 + [f"new_{index}_{n}" for n in range(10)]).splitlines(),
                    f"shard-{index}.jsonl", audit_settings)
        for index in range(4000)
    ]  # fmt: skip
    before = [pickle.dumps(part) for part in parts[:50]]

    def cost(count: int) -> float:
        times = []
        for _ in range(3):
            start = time.process_time()
            merge(parts[:count])
            times.append(time.process_time() - start)
        return min(times)

    assert cost(4000) < 9 * cost(1000)
    assert [pickle.dumps(part) for part in parts[:50]] == before
    assert len(merge(parts[:200]).report().kinds) == 40 + 10 * 200  # every new value kept


def test_line_numbers_stay_physical_across_parts_and_a_later_overflow_keeps_the_same_rows() -> None:
    audit_settings = settings_for()
    parts = [
        audit_lines([b"", b'{"failure_kind": "cancelled"}'], "a.jsonl", audit_settings),
        audit_lines([b"{oops", b'{"failure_kind": 1}'], "a.jsonl", audit_settings, continuation=True),
        audit_lines([b'{"failure_kind": "judge_faild"}'], "a.jsonl", audit_settings, continuation=True),
        audit_lines([b'{"failure_kind": "judge_faild"}'], "b.jsonl", audit_settings),
    ]
    report = merge(parts).report()
    assert [(row.value, row.first_seen) for row in report.kinds] == [
        ("judge_faild", "a.jsonl:5"),
        ("cancelled", "a.jsonl:2"),
    ]
    assert (report.first_unparseable, report.first_invalid) == ("a.jsonl:3", "a.jsonl:4")
    assert [(file.path, file.records) for file in report.files] == [("a.jsonl", 4), ("b.jsonl", 1)]
    # A value one part keeps and a later part counts past the cap: the merge is exact all the same.
    capped = AuditSettings(distinct_limit=2)
    rows, later = jsonl(["bad_a", "bad_b"]).splitlines(), jsonl(["bad_c", "bad_d", "bad_a"]).splitlines()
    cut = audit_lines(rows, "a.jsonl", capped).merge(audit_lines(later, "a.jsonl", capped, continuation=True))
    whole = audit_lines(rows + later, "a.jsonl", capped)
    assert render_json(cut.report()) == render_json(whole.report())
    kept = sorted(["bad_a", "bad_b", "bad_c", "bad_d"], key=rank)[:2]
    counts = {"bad_a": 2, "bad_b": 1, "bad_c": 1, "bad_d": 1}
    expected = {value: counts[value] for value in kept} | {None: 5 - sum(counts[value] for value in kept)}
    assert {row.value: row.count for row in cut.report().kinds} == expected


def test_values_already_decoded_rows_and_what_merge_refuses() -> None:
    partial = PartialReport(settings_for())
    partial.start_file("t.parquet", unit="row")
    values: list[object] = ["cancelled", None, INVALID, UNPARSEABLE, "judge_faild", 7]
    partial.add_columns([values, [None, None, None, UNPARSEABLE, None, None]])
    report = partial.report()
    assert (report.records, report.with_kind, report.invalid, report.unparseable) == (6, 2, 2, 1)
    assert (report.unregistered[0].first_seen, report.first_invalid) == ("t.parquet:row 5", "t.parquet:row 3")
    one = audit_lines([], "a.jsonl", settings_for())
    with pytest.raises(ValueError, match="different settings"):
        one.merge(audit_lines([], "a.jsonl", settings_for("other")))
    with pytest.raises(ValueError, match="continues a file"):
        one.merge(audit_lines([], "b.jsonl", settings_for(), continuation=True))
    with pytest.raises(ValueError, match="at least one"):
        merge([])
    results = doctest.testmod(failure_kinds.audit)  # the documented engine example
    assert (results.attempted > 5, results.failed) == (True, 0)
