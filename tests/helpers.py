"""What many test modules share: one way to run the command, the package's warnings, optional extras."""

from __future__ import annotations

import contextlib
import importlib.util
import logging
import os
import re
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from failure_kinds import FailureKind, _runtime

ROOT = Path(__file__).parent.parent
# Where the prose lives: the README and the documentation site's pages.
DOCUMENTS = (ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")))

# A regression that blocks on a FIFO, a device or a pipe fails the test instead of hanging the suite.
TIMEOUT = 120


def run_cli(*arguments: str, **options: Any) -> subprocess.CompletedProcess[str]:
    """:func:`run_cli_bytes` with its output decoded as UTF-8, surrogate escapes keeping any other byte."""
    result = run_cli_bytes(*arguments, **options)
    stdout, stderr = (stream.decode("utf-8", "surrogateescape") for stream in (result.stdout, result.stderr))
    return subprocess.CompletedProcess(result.args, result.returncode, stdout, stderr)


def run_cli_bytes(
    *arguments: str,
    cwd: Path | str = ROOT,
    stdin: str | bytes | int | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float = TIMEOUT,
    preexec_fn: Callable[[], object] | None = None,
    process: bool = False,
) -> subprocess.CompletedProcess[bytes]:
    """``python -m failure_kinds ARGUMENTS`` as a fresh process runs it, its output as bytes. ``stdin`` is
    text or bytes to feed, a file descriptor to read from, or None for an empty input; ``env`` adds to
    this process's environment. It runs in this process (:func:`in_process`) unless something given
    needs a process of its own: ``process=True``, a descriptor as stdin, ``preexec_fn``, a variable the
    interpreter reads as it starts, or an option in IN_PROCESS_REFUSED."""
    data = stdin.encode("utf-8") if isinstance(stdin, str) else stdin
    # The interpreter reads PYTHON* and the locale's variables as it starts, so they need a new one.
    starts_interpreter = any(name.startswith(("PYTHON", "LC_", "LANG")) for name in env or {})
    needs_process = process or preexec_fn is not None or isinstance(data, int) or starts_interpreter
    if not (needs_process or IN_PROCESS_REFUSED & set(arguments)):
        return in_process(
            arguments, cwd=cwd, stdin=data if isinstance(data, bytes) else b"", env=env or {}, timeout=timeout
        )
    return subprocess.run(
        command(*arguments),
        input=data if isinstance(data, bytes) else None,
        stdin=data if isinstance(data, int) else (None if isinstance(data, bytes) else subprocess.DEVNULL),
        capture_output=True,
        cwd=cwd,
        env={**os.environ, "PYTHONIOENCODING": "utf-8", **(env or {})},
        timeout=timeout,
        preexec_fn=preexec_fn,
        check=False,
    )


# Options with which the command starts worker processes or joins a Ray cluster: run in a process of its
# own, as a user's command is, so no worker is forked from the test runner.
IN_PROCESS_REFUSED = frozenset({"--jobs", "--ray"})


class _Overdue(Exception):
    """An in-process command ran past its time (what a subprocess's timeout would have stopped)."""


def in_process(
    arguments: tuple[str, ...], cwd: Path | str, stdin: bytes, env: Mapping[str, str], timeout: float
) -> subprocess.CompletedProcess[bytes]:
    """``failure_kinds.cli.main(arguments)`` as a fresh process would run it: in ``cwd``, with ``env``
    added, ``stdin`` as standard input, UTF-8 streams and a fresh runtime, all put back afterwards. It
    saves a new interpreter and the command's imports per call, which the suite makes hundreds of."""
    import io
    import signal

    from failure_kinds.cli import main

    output, errors = io.BytesIO(), io.BytesIO()
    streams = (
        io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8"),
        io.TextIOWrapper(output, encoding="utf-8", write_through=True),
        io.TextIOWrapper(errors, encoding="utf-8", errors="backslashreplace", write_through=True),
    )
    saved_streams = (sys.stdin, sys.stdout, sys.stderr)
    saved_environment = dict(os.environ)
    saved_directory = os.getcwd()
    saved_runtime = _runtime.snapshot()
    # A command that hangs fails its test, as the subprocess's timeout would: the alarm interrupts it.
    alarmed = threading.current_thread() is threading.main_thread()

    def overdue(signum: int, frame: object) -> None:
        raise _Overdue(f"{arguments} took more than {timeout} s")

    previous = signal.signal(signal.SIGALRM, overdue) if alarmed else None
    try:
        _runtime.forget_reports()
        os.environ.update(env)
        os.chdir(cwd)
        sys.stdin, sys.stdout, sys.stderr = streams
        if alarmed:
            signal.setitimer(signal.ITIMER_REAL, timeout)
        code = main(list(arguments))
    finally:
        if alarmed:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous if previous is not None else signal.SIG_DFL)
        sys.stdin, sys.stdout, sys.stderr = saved_streams
        os.chdir(saved_directory)
        os.environ.clear()
        os.environ.update(saved_environment)
        _runtime.restore(saved_runtime)
    return subprocess.CompletedProcess(
        ["failure-kinds", *arguments], code, output.getvalue(), errors.getvalue()
    )


def command(*arguments: str) -> list[str]:
    """The argument vector that runs the command with this interpreter."""
    return [sys.executable, "-m", "failure_kinds", *arguments]


# `make test` runs the whole suite on the first supported Python with every property's full number of
# examples, and sets this variable for the others: there they add an interpreter, not inputs, and run a
# quarter of the examples (at least ten), which shortens those runs by much of their time.
FEWER_EXAMPLES = "FAILURE_KINDS_FEWER_EXAMPLES"


def examples(count: int) -> int:
    """How many examples a property given ``count`` of them runs here (see FEWER_EXAMPLES)."""
    return max(count // 4, min(count, 10)) if os.environ.get(FEWER_EXAMPLES) else count


def fresh_environment(folder: Path) -> Path:
    """A new virtual environment of this Python, with pip: its bin directory. Made by virtualenv where
    installed (`make test` installs it), which links a pip it keeps where venv installs pip anew."""
    maker = ["virtualenv", "--quiet"] if importable("virtualenv") else ["venv"]
    subprocess.run([sys.executable, "-m", *maker, str(folder)], check=True)
    return folder / "bin"


def warnings_of(caplog: pytest.LogCaptureFixture) -> list[str]:
    """The warnings the package logged during the test, as their messages."""
    return [
        record.getMessage()
        for record in caplog.records
        if record.name == "failure_kinds" and record.levelno == logging.WARNING
    ]


def importable(name: str) -> bool:
    """Whether the module ``name`` is installed. A namespace package that is only a folder at the top of
    the checkout does not count: run from it, the project's own ``build/`` would pass for the build tool."""
    spec = importlib.util.find_spec(name)
    if spec is None:
        return False
    if spec.origin not in (None, "namespace"):
        return True
    locations = spec.submodule_search_locations or []
    return any(Path(location).resolve().parent != ROOT.resolve() for location in locations)


def needs(*modules: str) -> pytest.MarkDecorator:
    """Skip a test (or, as ``pytestmark``, a module) unless every named module can be imported: only on
    a machine with fewer extras, since ``make test`` installs them all and fails on any skip."""
    missing = [name for name in modules if not importable(name)]
    return pytest.mark.skipif(bool(missing), reason=f"needs {', '.join(missing)} (an optional extra)")


def commands_shown(block: str) -> list[tuple[str, str]]:
    """Each `$ COMMAND` of a documented terminal session, with the output the page shows under it."""
    chunks = [chunk.partition("\n") for chunk in ("\n" + block).split("\n$ ")[1:]]
    return [(command, output) for command, _, output in chunks]


def doc_recipes() -> dict[str, str]:
    """The documentation's recipes by name: each python block right after a `<!-- recipe: NAME -->` line
    of the README or of a page in docs/. A name used twice is an error, so no recipe hides another."""
    found: dict[str, str] = {}
    for document in DOCUMENTS:
        text = document.read_text(encoding="utf-8")
        for match in re.finditer(r"<!-- recipe: (\w+) -->\n```python\n(.*?)```", text, flags=re.DOTALL):
            assert match[1] not in found, f"recipe {match[1]!r} is defined twice"
            found[match[1]] = match[2]
    return found


def non_blocking_pipe() -> tuple[int, int]:
    """A pipe whose read end has O_NONBLOCK set, as an event loop would hand it to a child."""
    read_end, write_end = os.pipe()
    os.set_blocking(read_end, False)
    return read_end, write_end


def write_later(descriptor: int, chunks: list[bytes], pause: float) -> threading.Thread:
    """Write each chunk ``pause`` seconds after the last, then close ``descriptor`` (the reader's end of
    input), from a thread that is already started."""

    def writer() -> None:
        try:
            for chunk in chunks:
                time.sleep(pause)
                os.write(descriptor, chunk)
        finally:
            os.close(descriptor)

    thread = threading.Thread(target=writer)
    thread.start()
    return thread


@contextlib.contextmanager
def deprecated(kind: FailureKind, replacement: FailureKind) -> Iterator[FailureKind]:
    """``kind`` deprecated in favour of ``replacement`` while the block runs, as a later release would
    declare it in the enum (no kind is deprecated today), and registered again as it was afterwards."""

    def register() -> None:
        # What src/failure_kinds/__init__.py hands the runtime at import.
        pairs = [(member.value, member.replaced_by and member.replaced_by.value) for member in FailureKind]
        _runtime.register(pairs)

    saved = _runtime.snapshot()
    kind._replacement = replacement.value  # pyright: ignore[reportPrivateUsage]
    register()
    try:
        yield kind
    finally:
        kind._replacement = ""  # pyright: ignore[reportPrivateUsage]
        register()
        _runtime.restore(saved)


# What the integrations (failure_kinds.otel, failure_kinds.prometheus) must label each kind of value, and
# whether validate_failure_kind reports it; the test declares swe_env's patch_apply_failed first.
KIND_CASES = [
    pytest.param("transport_timeout", "transport_timeout", False, id="registered"),
    pytest.param(FailureKind.CANCELLED, "cancelled", False, id="member"),
    pytest.param("my_env:quota_hit", "my_env:quota_hit", False, id="namespaced"),
    pytest.param("swe_env:patch_apply_failed", "swe_env:patch_apply_failed", False, id="declared"),
    pytest.param("swe_env:quota_hit", "_other", True, id="undeclared"),
    pytest.param("peer_drop", "transport_peer_drop", True, id="older-label"),
    pytest.param("judge_faild", "_other", True, id="misspelled"),
    pytest.param("my_env:" + "x" * 200, "_other", False, id="long"),
    pytest.param(42, "_other", True, id="number"),
    pytest.param(None, "_other", False, id="none"),
]

# The most distinct labels metric_label gives, as its docstring says: one per registered kind, per
# declared kind (swe_env's one, above) and the other label, and 512 namespaced values of undeclared servers.
LABEL_BOUND = len(FailureKind) + 1 + 1 + 512


def garbage_kinds(count: int) -> list[object]:
    """``count`` distinct values no producer should send, of each shape a label must be bounded against:
    misspellings, namespaced values of ever new servers, undeclared kinds of the declared swe_env, texts
    too long for a label, escapes and other types."""
    shapes: list[Callable[[int], object]] = [
        lambda index: f"judge_faild_{index}",
        lambda index: f"server{index}:quota_hit",
        lambda index: f"swe_env:kind_{index}",
        lambda index: f"my_env:{'x' * 100}{index}",
        lambda index: f"Bad Value\n{index}",
        lambda index: index,
    ]
    return [shapes[index % len(shapes)](index) for index in range(count)]
