"""What the audit's test modules share: logs written as JSON Lines, a reader of what the command shows on
a terminal, and files that change (or workers that die) as an input is opened, in any process."""

from __future__ import annotations

import builtins
import io
import itertools
import json
import os
import random
import select
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

TESTS = Path(__file__).parent
CHANGES = ["truncated", "grown", "rewritten", "replaced"]


def changed(change: str) -> str:
    """The error of a file that changed while it was read, as the report and stderr give it."""
    return f"changed while it was read ({change}): audit it again once nothing writes to it"


def jsonl(values: Sequence[object], **extra: object) -> bytes:
    return b"".join(json.dumps({"failure_kind": value, **extra}).encode() + b"\n" for value in values)


def assert_adds_up(report: Any) -> None:
    """Every total of a report adds up, under every cap."""
    assert report.records == report.with_kind + report.without_kind + report.invalid + report.unparseable
    assert sum(row.count for row in report.kinds) == report.with_kind
    assert all(sum(count for _, count in row.by_stage) == row.count for row in report.kinds)
    assert report.absent + report.null == report.without_kind
    assert sum(file.records for file in report.files) == report.records
    servers = sum(report.namespaces.values()) + report.namespaces_overflow
    assert servers == sum(row.count for row in report.kinds if row.category in ("namespaced", "undeclared"))


def many_shards(folder: Path, seed: int, files: int = 80, lines: int = 120) -> list[str]:
    """Shards of older labels among some 3,000 distinct typos, the registered kinds and no kind at all."""
    import failure_kinds
    from failure_kinds.history import OLDER_LABELS

    chooser = random.Random(seed)
    folder.mkdir(parents=True, exist_ok=True)
    for number in range(files):
        values: list[object] = []
        for line in range(lines):
            roll = chooser.random()
            if roll < 0.2:
                values.append(chooser.choice(sorted(OLDER_LABELS)))
            elif roll < 0.5:
                values.append(chooser.choice(sorted(failure_kinds.FAILURE_KINDS)))
            elif roll < 0.95:
                values.append(f"made_up_{chooser.randrange(3000)}")
            else:
                values.append(None if line % 2 else 7)
        (folder / f"shard{number:04}.jsonl").write_bytes(jsonl(values))
    return [str(folder)]


def read_terminal(leader: int, process: subprocess.Popen[bytes]) -> bytes:
    """Everything ``process`` writes to the terminal whose leader side is ``leader``, until it exits."""
    shown = b""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        ready, _, _ = select.select([leader], [], [], 0.1)
        if ready:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # the other side closed
                break
            if not chunk:
                break
            shown += chunk
        elif process.poll() is not None:
            break
    process.wait(timeout=60)
    return shown


def change_file(path: str, change: str, amount: int = 1) -> None:
    """Change ``path`` as another job would. Through os alone, so an open hook never sees it."""
    status = os.stat(path)
    if change == "truncated":
        os.truncate(path, max(0, status.st_size - amount))
    elif change == "grown":
        descriptor = os.open(path, os.O_WRONLY | os.O_APPEND)
        os.write(descriptor, b'{"failure_kind": "appended_kind"}\n')
        os.close(descriptor)
    elif change == "rewritten":  # as many bytes, written later
        descriptor = os.open(path, os.O_RDWR)
        os.pwrite(descriptor, os.read(descriptor, status.st_size), 0)
        os.close(descriptor)
        os.utime(path, ns=(status.st_atime_ns, status.st_mtime_ns + amount * 1_000_000_000))
    else:
        descriptor = os.open(f"{path}.new", os.O_WRONLY | os.O_CREAT)
        os.write(descriptor, jsonl(["swapped_in_kind"] * 9))
        os.close(descriptor)
        os.replace(f"{path}.new", path)


# "PATH|N,M+|ACTION|FOLDER": the Nth, the Mth and later... opening of PATH for reading, counted over
# every process through the files made in FOLDER, changes it (ACTION one of CHANGES) just after it is
# opened, or kills (ACTION "die") or stalls ("wait") the worker process that opened it. Specs of several
# files join with ";".
ON_OPEN = "FAILURE_KINDS_TEST_ON_OPEN"
# "MODULE.NAME=NUMBER,...": constants set in every process, so that small inputs meet cuts made only
# past millions of rows (Parquet's runs of row groups, its batches).
CONSTANTS = "FAILURE_KINDS_TEST_CONSTANTS"


def install_open_hook(monkeypatch: pytest.MonkeyPatch | None = None) -> None:
    """Wrap ``open`` as ON_OPEN says, and set CONSTANTS (sitecustomize calls this in every process)."""
    import importlib

    for assignment in filter(None, os.environ.get(CONSTANTS, "").split(",")):
        name, _, value = assignment.partition("=")
        module, _, constant = name.rpartition(".")
        setattr(importlib.import_module(module), constant, int(value))
    spec = os.environ.get(ON_OPEN)
    if not spec:
        return
    main = int(os.environ.setdefault(f"{ON_OPEN}_MAIN", str(os.getpid())))
    hooks: dict[object, tuple[list[tuple[int, bool]], str, str]] = {}
    for one in spec.split(";"):
        target, numbers, action, folder = one.split("|")
        # "N+" is every opening from the Nth on.
        hooks[target] = ([(int(n.rstrip("+")), n.endswith("+")) for n in numbers.split(",")], action, folder)
    real_open = builtins.open

    def opened(file: Any, mode: str = "r", *arguments: Any, **options: Any) -> Any:
        handle = real_open(file, mode, *arguments, **options)
        target = os.fspath(file) if isinstance(file, (str, os.PathLike)) else None
        wanted, action, folder = hooks.get(target, ([], "", ""))
        if wanted and "r" in mode and (action not in ("die", "wait") or os.getpid() != main):
            for count in itertools.count(1):
                try:
                    os.close(os.open(os.path.join(folder, str(count)), os.O_CREAT | os.O_EXCL))
                    break
                except FileExistsError:
                    continue
            hit = any(count == number or (onwards and count > number) for number, onwards in wanted)
            if hit and action == "die":
                os._exit(3)  # as a worker killed by the kernel would, with nothing sent back
            if hit and action == "wait":
                time.sleep(60)  # busy for longer than a test waits for it
                return handle
            if hit:
                change_file(str(target), action, 1 + (count * 7919) % 4000)
        return handle

    for module in (builtins, io):
        if monkeypatch is None:
            module.open = opened
        else:
            monkeypatch.setattr(module, "open", opened)


def hooked(folder: Path) -> dict[str, str]:
    """An environment whose every process runs install_open_hook."""
    site = folder / "hook-site"
    (site / "opened").mkdir(parents=True, exist_ok=True)
    (site / "sitecustomize.py").write_text(
        f"import sys\nsys.path.insert(0, {str(TESTS)!r})\nimport audit_support\n"
        "audit_support.install_open_hook()\n"
    )
    return {"PYTHONPATH": search_path(site)}


def on_open(folder: Path, target: Path, numbers: Sequence[int | str], action: str) -> dict[str, str]:
    """The environment under which every process of a command runs the open hook (ON_OPEN)."""
    spec = f"{target}|{','.join(map(str, numbers))}|{action}|{folder / 'hook-site' / 'opened'}"
    return {**hooked(folder), ON_OPEN: spec}


def hook_here(
    monkeypatch: pytest.MonkeyPatch, folder: Path, target: Path, numbers: Sequence[int | str], action: str
) -> None:
    """The open hook in this process, undone with ``monkeypatch``."""
    for name, value in on_open(folder, target, numbers, action).items():
        if name != "PYTHONPATH":
            monkeypatch.setenv(name, value)
    monkeypatch.delenv(f"{ON_OPEN}_MAIN", raising=False)
    install_open_hook(monkeypatch)


def without_pyarrow(folder: Path) -> dict[str, str]:
    """An environment whose processes (workers included) cannot import pyarrow, as after a plain
    ``pip install .``."""
    site = folder / "no-pyarrow-site"
    site.mkdir(exist_ok=True)
    (site / "sitecustomize.py").write_text("import sys\nsys.modules['pyarrow'] = None\n")
    return {"PYTHONPATH": search_path(site)}


def search_path(site: Path) -> str:
    """PYTHONPATH with ``site`` first (where its sitecustomize is found)."""
    return os.pathsep.join(filter(None, [str(site), os.environ.get("PYTHONPATH")]))
