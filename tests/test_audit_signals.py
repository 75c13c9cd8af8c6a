"""The audit under what schedulers and the kernel do to it (docs/audit.md, "Signals and limits"): SIGTERM,
SIGHUP and Ctrl-C at controlled points, a worker killed as it hands its result back, and memory that runs
out anywhere end it with the signal's status or one line, never a traceback, a hang or a process left."""

from __future__ import annotations

import contextlib
import os
import random
import resource
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from audit_support import CONSTANTS, TESTS, change_file, changed, jsonl, on_open, search_path
from helpers import command

from failure_kinds.audit import audit, audit_file, render_json, settings_for
from failure_kinds.audit.tasks import LocalFiles

# Both files cut into ranges, so that two workers read them.
CUT = "failure_kinds.audit.engine.PARALLEL_MIN_BYTES=0,failure_kinds.audit.tasks.MIN_CHUNK_BYTES=1"
OUT_OF_MEMORY = "out of memory while reading"


def logs(folder: Path, copies: int = 3000) -> list[Path]:
    paths = [folder / "quick.jsonl", folder / "slow.jsonl"]
    for path in paths:
        path.write_bytes(jsonl(["judge_faild", "cancelled", None] * copies, failure_reason="r" * 40))
    return paths


def start(arguments: list[str], environment: dict[str, str]) -> subprocess.Popen[bytes]:
    """The command in a process group of its own, with the three signals' default handling."""

    def defaults() -> None:
        for number in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(number, signal.SIG_DFL)

    return subprocess.Popen(
        command(*arguments),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, **environment},
        start_new_session=True,
        preexec_fn=defaults,
    )


def finish(process: subprocess.Popen[bytes]) -> tuple[int, str, str]:
    """Its status, stdout and stderr once both streams are closed (a worker left holding them fails the
    test here), after checking that no process of its group is left."""
    try:
        stdout, stderr = process.communicate(timeout=60)
        deadline = time.monotonic() + 5  # the bound the docs give for the workers to be gone
        while time.monotonic() < deadline:
            try:
                os.killpg(process.pid, 0)
            except ProcessLookupError:
                return process.returncode, stdout.decode(), stderr.decode()
            time.sleep(0.05)
        pytest.fail("a process of the audit was left")
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()


def stalled(marker: Path, process: subprocess.Popen[bytes]) -> None:
    while not marker.exists():
        assert process.poll() is None, process.communicate()
        time.sleep(0.01)


@pytest.mark.parametrize(
    ("number", "group"), [(signal.SIGTERM, False), (signal.SIGHUP, False), (signal.SIGTERM, True)]
)
def test_sigterm_or_sighup_while_a_worker_reads_ends_every_worker_with_the_signal_status(
    tmp_path: Path, number: int, group: bool
) -> None:
    quick, slow = logs(tmp_path)
    process = start(
        ["audit", "--jobs", "2", str(quick), str(slow)],
        {**on_open(tmp_path, slow, [1], "wait"), CONSTANTS: CUT},
    )
    stalled(tmp_path / "hook-site" / "opened" / "1", process)  # a worker waits in the slow file
    (os.killpg if group else os.kill)(process.pid, number)
    assert finish(process) == (-number, "", "")


def test_ctrl_c_to_the_process_group_stops_the_audit_with_one_line(tmp_path: Path) -> None:
    """A terminal's Ctrl-C reaches every process of the group: the workers ignore it, as the audit stops
    them, so the one line said is the audit's own, and no worker is left."""
    quick, slow = logs(tmp_path)
    process = start(
        ["audit", "--jobs", "2", str(quick), str(slow)],
        {**on_open(tmp_path, slow, [1], "wait"), CONSTANTS: CUT},
    )
    stalled(tmp_path / "hook-site" / "opened" / "1", process)
    os.killpg(process.pid, signal.SIGINT)
    assert finish(process) == (130, "", "failure-kinds: interrupted\n")


# In a worker, the first message sent to the audit's process: a message longer than one write to a pipe
# delivers whole (PIPE_BUF) goes only in part, as when the kernel cuts a write short; then the worker
# waits, its process id in the marker, to be killed.
SEND_HOOK = """
import multiprocessing, multiprocessing.connection as connection, os, time
send = connection.Connection._send
def stalling(self, buffer, *arguments):
    if multiprocessing.parent_process() is None:
        return send(self, buffer, *arguments)
    try:
        os.close(os.open(os.environ["MARKER"] + ".taken", os.O_CREAT | os.O_EXCL))
    except FileExistsError:
        return send(self, buffer, *arguments)
    send(self, bytes(buffer)[: select.PIPE_BUF], *arguments)
    with open(os.environ["MARKER"] + ".new", "w") as file:
        file.write(str(os.getpid()))
    os.rename(os.environ["MARKER"] + ".new", os.environ["MARKER"])
    time.sleep(60)
import select
connection.Connection._send = stalling
"""


def hooked_with(folder: Path, code: str) -> dict[str, str]:
    """An environment whose every process runs ``code``, and sets CONSTANTS (CUT: workers for small files)."""
    site = folder / "site"
    site.mkdir(exist_ok=True)
    hook = "import audit_support\naudit_support.install_open_hook()\n"
    (site / "sitecustomize.py").write_text(f"import sys\nsys.path.insert(0, {str(TESTS)!r})\n{hook}{code}")
    return {"PYTHONPATH": search_path(site), CONSTANTS: CUT}


def test_a_worker_killed_as_it_hands_its_result_back_never_hangs_the_audit(tmp_path: Path) -> None:
    paths = logs(tmp_path)
    for path in paths:  # distinct values: a partial longer than one write delivers whole
        path.write_bytes(jsonl([f"made_up_{number}" for number in range(3000)]))
    marker = tmp_path / "worker"
    environment = {**hooked_with(tmp_path, SEND_HOOK), "MARKER": str(marker)}
    process = start(["audit", "--jobs", "2", "--format", "json", *map(str, paths)], environment)
    stalled(marker, process)
    os.kill(int(marker.read_text()), signal.SIGKILL)
    assert finish(process) == (0, render_json(audit(list(map(str, paths)), jobs=1)), "")


# The first call of a function in the audit's process (main) or in a worker, in any of them, raises
# MemoryError: an allocation that fails there.
NO_MEMORY = """
import importlib, multiprocessing, os
spec, where, marker = os.environ["NO_MEMORY"].split("|")
module, _, path = spec.partition(":")
*outer, name = path.split(".")
owner = importlib.import_module(module)
for part in outer:
    owner = getattr(owner, part)
real = getattr(owner, name)
def failing(*arguments, **options):
    if (multiprocessing.parent_process() is None) == (where == "main"):
        try:
            os.close(os.open(marker, os.O_CREAT | os.O_EXCL))
        except FileExistsError:
            pass
        else:
            raise MemoryError
    return real(*arguments, **options)
setattr(owner, name, failing)
"""


@pytest.mark.parametrize(
    ("point", "where", "jobs", "named"),
    [
        ("failure_kinds.audit.sources:Decoder.batch", "main", "1", True),  # in one process
        ("failure_kinds.audit.sources:Decoder.batch", "worker", "2", True),
        ("multiprocessing.reduction:ForkingPickler.dumps", "worker", "2", True),  # the result sent
        ("multiprocessing.reduction:ForkingPickler.dumps", "main", "2", True),  # a batch sent
        ("pickle:load", "main", "2", True),  # a partial read back
        ("concurrent.futures.process:_ExecutorManagerThread.add_call_item_to_queue", "main", "2", False),
        ("multiprocessing.connection:Connection.recv_bytes", "main", "2", False),  # the manager's read
        ("failure_kinds.audit.partial:PartialReport.absorb", "main", "2", False),  # the merge
    ],
)
def test_an_allocation_that_fails_anywhere_names_the_input_or_changes_nothing(
    tmp_path: Path, point: str, where: str, jobs: str, named: bool
) -> None:
    """One line naming the input lost and exit 2, or the report as if nothing failed (a pool that breaks
    runs its batches again, alone or in this process); no traceback, no hang."""
    paths = logs(tmp_path, 300)
    environment = hooked_with(tmp_path, NO_MEMORY)
    environment["NO_MEMORY"] = f"{point}|{where}|{tmp_path / 'failed'}"
    status, stdout, stderr = finish(
        start(["audit", "--jobs", jobs, "--format", "json", *map(str, paths)], environment)
    )
    assert (tmp_path / "failed").exists()
    if named:
        lines = {f"failure-kinds audit: {path}: {OUT_OF_MEMORY}" for path in paths}
        assert status == 2
        assert set(stderr.splitlines()) <= lines
        assert stderr
    else:
        assert (status, stderr, stdout) == (0, "", render_json(audit(list(map(str, paths)), jobs=1)))


@pytest.mark.parametrize("mebibytes", [32, 40, 48, 56, 64, 96, 128, 256])
def test_under_any_address_space_limit_the_audit_reports_or_names_what_it_could_not_read(
    tmp_path: Path, mebibytes: int
) -> None:
    path = tmp_path / "big.jsonl"
    path.write_bytes(jsonl(["judge_faild", "cancelled"] * 8000, failure_reason="r" * 2900))  # 48 MB
    limit = mebibytes << 20

    def limited() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    result = subprocess.run(
        command("audit", "--jobs", "2", "--format", "json", str(path)),
        capture_output=True, text=True, preexec_fn=limited, timeout=120, check=False,
    )  # fmt: skip
    assert "Traceback" not in result.stderr
    if result.returncode == 0:
        assert (result.stdout, result.stderr) == (render_json(audit([str(path)], jobs=1)), "")
    else:
        assert (result.returncode, result.stderr) == (2, f"failure-kinds audit: {path}: {OUT_OF_MEMORY}\n")


def test_past_the_cap_under_an_address_space_limit_no_traceback(tmp_path: Path) -> None:
    # Values past the distinct cap: the merge in this process ranks them, short of memory.
    path = tmp_path / "distinct.jsonl"
    line = (
        '{"failure_kind":"kind_%d","stage":"stage_%d","failure":{"failure_kind":"s%d:k%d","stage":"t%d"}}\n'
    )
    chosen, lines = random.Random(5), []
    for round_ in range(3):
        numbers = list(range(100_000))
        chosen.shuffle(numbers)
        lines += [
            line % (n, (n * 7 + round_) % 100_000, n % 20_000, n, chosen.randrange(100_000)) for n in numbers
        ]
    path.write_text("".join(lines))

    def limited() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (200_000 << 10, 200_000 << 10))

    result = subprocess.run(
        command("audit", "--jobs", "2", "--format", "json", str(path)),
        capture_output=True, text=True, preexec_fn=limited, timeout=120, check=False,
    )  # fmt: skip
    assert "Traceback" not in result.stderr
    assert result.returncode in (0, 2)
    if result.returncode == 2:  # the report could not be made or written: said in one line
        assert result.stderr.count("\n") == 1
        assert "out of memory" in result.stderr


def test_a_line_past_the_memory_left_in_one_process_is_named_as_a_worker_names_it(tmp_path: Path) -> None:
    path = tmp_path / "long.jsonl"
    path.write_bytes(jsonl(["cancelled"]) + jsonl(["x" * (30 << 20)]) + jsonl(["cancelled"]))

    def limited() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (60 << 20, 60 << 20))

    result = subprocess.run(
        command("audit", "--jobs", "1", str(path)), capture_output=True, text=True, preexec_fn=limited,
        timeout=120, check=False,
    )  # fmt: skip
    assert (result.returncode, result.stderr) == (2, f"failure-kinds audit: {path}: {OUT_OF_MEMORY}\n")


# msgspec's decoder, made with a SIGINT arriving inside the call (marked when it raises there).
INTERRUPTED_DECODER = """
import msgspec.json, os, signal
real = msgspec.json.Decoder
def interrupted(*arguments, **options):
    try:
        os.kill(os.getpid(), signal.SIGINT)
        return real(*arguments, **options)
    except KeyboardInterrupt:
        open(os.environ["MARKER"], "w").close()
        raise
msgspec.json.Decoder = interrupted
"""


def test_ctrl_c_as_msgspec_makes_its_decoder_is_acted_on_once_the_call_returns(tmp_path: Path) -> None:
    pytest.importorskip("msgspec")
    path, marker = logs(tmp_path, 10)[0], tmp_path / "interrupted-inside"
    environment = {**hooked_with(tmp_path, INTERRUPTED_DECODER), "MARKER": str(marker)}
    result = finish(start(["audit", "--jobs", "1", "--decoder", "msgspec", str(path)], environment))
    assert (result, marker.exists()) == ((130, "", "failure-kinds: interrupted\n"), False)


def test_the_last_range_of_a_file_grown_after_it_was_opened_is_never_read_past_its_planned_end(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A worker read to the end of a file another worker's range had grown: named as changed, and what
    was appended counted too."""
    path = tmp_path / "day1.jsonl"
    path.write_bytes(jsonl(["cancelled"] * 10))
    opened = LocalFiles.opened

    def growing(files: LocalFiles, raw: Any, name: str) -> Any:
        identity = opened(files, raw, name)
        change_file(name, "grown")
        return identity

    monkeypatch.setattr(LocalFiles, "opened", growing)
    start = len(jsonl(["cancelled"]))
    report = audit_file(str(path), settings_for("failure_kind", None, None), start=start).report()
    assert [(row.value, row.count) for row in report.kinds] == [("cancelled", 9)]
    assert report.files[0].error == changed("grown")
