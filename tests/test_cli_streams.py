"""The command's standard streams, as a shell hands them over: a reader that went away, a full or closed
stdout, a closed stdin; and mistyped subcommands and options, which get a one-line "did you mean".

Every invocation is run as a user runs it, in a subprocess, first with stdout captured (what it earns),
then with its stdout broken in each way.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from helpers import ROOT, command, examples, non_blocking_pipe, run_cli, run_cli_bytes, write_later
from hypothesis import given, settings
from hypothesis import strategies as st

from failure_kinds import FAILURE_KINDS
from failure_kinds.cli import build_parser

EXAMPLE = "examples/rollout_failures.jsonl"
ALIASES = "examples/aliases.toml"

# Source whose lint finds one misspelled kind per line.
LINT_SOURCE = "".join(f'record(failure_kind="{kind}x")\n' for kind in sorted(FAILURE_KINDS))
# Names for `check -`: every kind and a misspelling of each, far more than a pipe holds.
CHECK_NAMES = "".join(f"{kind}\n{kind[:-1]}\n" for kind in sorted(FAILURE_KINDS)) * 400


@dataclass(frozen=True)
class Invocation:
    arguments: tuple[str, ...]
    stdin: str = ""

    def __str__(self) -> str:
        return " ".join(self.arguments)


# Each subcommand with output to write, ending clean, with findings, or with an unreadable input. LINT_FILE
# stands for a file of misspelled kinds.
LINT_FILE = "<lint file>"
RELEASES = [str(ROOT / "exports" / "0.1.0.json"), str(ROOT / "exports" / "0.2.0.json")]
INVOCATIONS = [
    Invocation(("--version",)),
    Invocation(("--help",)),
    Invocation(("audit", "--help")),
    Invocation(("list",)),
    Invocation(("list", "--format", "json")),
    Invocation(("list", "--format", "markdown")),
    Invocation(("check", "cancelled", "shutdown")),
    Invocation(("check", "cancelled", "judge_faild")),
    Invocation(("check", "-", "--format", "json"), stdin=CHECK_NAMES),
    Invocation(("audit", EXAMPLE, "--aliases", ALIASES)),
    Invocation(("audit", EXAMPLE, "--strict")),
    Invocation(("audit", "missing.jsonl", EXAMPLE, "--strict")),
    Invocation(("audit", "-", "--format", "json"), stdin=(ROOT / EXAMPLE).read_text(encoding="utf-8")),
    Invocation(("lint", LINT_FILE)),
    Invocation(("lint", LINT_FILE, "--format", "json")),
    Invocation(("lint", LINT_FILE, "--format", "github")),
    Invocation(("export",)),
    Invocation(("export", "--format", "jsonschema")),
]


@pytest.fixture(scope="module", autouse=True)
def lint_file(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    path = tmp_path_factory.mktemp("lint") / "producer.py"
    path.write_text(LINT_SOURCE, encoding="utf-8")
    LINT_PATHS.append(str(path))
    yield
    LINT_PATHS.remove(str(path))


LINT_PATHS: list[str] = []


def arguments_of(invocation: Invocation) -> list[str]:
    return [LINT_PATHS[-1] if argument == LINT_FILE else argument for argument in invocation.arguments]


def run(
    invocation: Invocation, preexec_fn: Callable[[], object] | None = None
) -> subprocess.CompletedProcess[str]:
    return run_cli(*arguments_of(invocation), stdin=invocation.stdin, preexec_fn=preexec_fn)


# What the child does with its own descriptors before the command starts, as a shell redirection would.


def closed_pipe_stdout() -> None:
    """Standard output is a pipe whose reader is already gone: the first write fails with EPIPE."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    os.dup2(write_end, 1)
    os.close(write_end)


def full_stdout() -> None:
    """`>/dev/full`: every write fails with ENOSPC."""
    full = os.open("/dev/full", os.O_WRONLY)
    os.dup2(full, 1)
    os.close(full)


def closed_stdout() -> None:
    """`>&-`."""
    os.close(1)


def closed_stdin() -> None:
    """`<&-`."""
    os.close(0)


def with_closed_pipe(invocation: Invocation) -> subprocess.CompletedProcess[str]:
    return run(invocation, preexec_fn=closed_pipe_stdout)


def assert_no_traceback(result: subprocess.CompletedProcess[str]) -> None:
    assert "Traceback" not in result.stderr
    assert "Exception ignored" not in result.stderr


@pytest.fixture(scope="module")
def earned() -> dict[Invocation, subprocess.CompletedProcess[str]]:
    """What each invocation prints on stderr and exits with when its output is read to the end."""
    results = {invocation: run(invocation) for invocation in INVOCATIONS}
    for result in results.values():
        assert result.stdout, "every invocation here has output to write"
        assert_no_traceback(result)
    codes = {result.returncode for result in results.values()}
    assert codes == {0, 1, 2}, "the invocations cover every exit code"
    return results


@pytest.mark.parametrize("invocation", INVOCATIONS, ids=str)
def test_closed_pipe_keeps_the_exit_code_and_the_diagnostics(
    invocation: Invocation, earned: dict[Invocation, subprocess.CompletedProcess[str]]
) -> None:
    expected = earned[invocation]
    result = with_closed_pipe(invocation)
    assert_no_traceback(result)
    assert result.returncode == expected.returncode, result.stderr
    assert result.stderr == expected.stderr


def test_closed_pipe_later_in_the_stream(earned: dict[Invocation, subprocess.CompletedProcess[str]]) -> None:
    """A reader that takes the first bytes and goes: the writer meets the closed pipe mid-stream."""
    for arguments, stdin in [
        (("check", "-"), CHECK_NAMES),
        (("list", "--format", "json"), ""),
        (("audit", EXAMPLE, "--strict", "--format", "json"), ""),
    ]:
        script = '"$@" | head -c 10 >/dev/null; echo "${PIPESTATUS[0]}"'
        result = subprocess.run(
            ["bash", "-c", script, "bash", *command(*arguments)],
            input=stdin,
            capture_output=True,
            text=True,
            cwd=ROOT,
            env={**os.environ, "PYTHONIOENCODING": "utf-8"},
            timeout=120,
        )
        normal = run(Invocation(arguments, stdin))
        assert_no_traceback(result)
        assert result.stdout.strip() == str(normal.returncode), arguments
        assert result.stderr == normal.stderr


@pytest.mark.parametrize(
    ("redirection", "message"),
    [
        (full_stdout, "failure-kinds: error: cannot write to standard output: No space left on device"),
        (closed_stdout, "failure-kinds: error: standard output is closed"),
    ],
    ids=["full", "closed"],
)
@pytest.mark.parametrize("invocation", INVOCATIONS, ids=str)
def test_full_or_closed_stdout_is_one_line_and_exit_2(
    invocation: Invocation,
    earned: dict[Invocation, subprocess.CompletedProcess[str]],
    redirection: Callable[[], None],
    message: str,
) -> None:
    expected = earned[invocation]
    result = run(invocation, preexec_fn=redirection)
    assert_no_traceback(result)
    assert result.returncode == 2
    # The run's own diagnostics first, then the one line about the output that could not be written.
    assert result.stderr.splitlines() == [*expected.stderr.splitlines(), message]


@pytest.mark.parametrize(
    "arguments",
    [
        ("check", "-"),
        ("check", "-", "--format", "json"),
        ("audit", "-"),
        ("audit", "-", EXAMPLE),
        ("audit", EXAMPLE, "-", "--strict", "--format", "json"),
    ],
)
def test_closed_stdin_is_one_line_and_exit_2(arguments: tuple[str, ...]) -> None:
    result = run(Invocation(arguments), preexec_fn=closed_stdin)
    assert_no_traceback(result)
    assert result.returncode == 2
    assert result.stdout == ""
    (line,) = result.stderr.splitlines()
    assert line == f"failure-kinds {arguments[0]}: error: - reads standard input, which is closed"


def test_empty_stdin_is_not_closed_stdin() -> None:
    result = run_cli("check", "-", stdin=subprocess.DEVNULL)
    assert result.returncode == 0
    assert result.stderr == ""


# did you mean


def slips(word: str) -> Iterator[str]:
    """Typing slips of a word: each pair of neighbouring letters swapped, and each letter doubled."""
    for index in range(len(word) - 1):
        if word[index] != word[index + 1]:
            yield word[:index] + word[index + 1] + word[index] + word[index + 2 :]
    for index in range(len(word)):
        yield word[: index + 1] + word[index] + word[index + 1 :]


SUBCOMMANDS = dict(build_parser().subcommands)  # type: ignore[attr-defined]
# A positional argument that each subcommand accepts, so only the slip is wrong.
POSITIONALS = {"check": ["cancelled"], "audit": [EXAMPLE], "lint": ["examples"], "diff": RELEASES}


def mistyped_subcommands() -> list[tuple[str, str]]:
    cases = []
    for name in SUBCOMMANDS:
        for slip in slips(name):
            if slip not in SUBCOMMANDS:
                cases.append((slip, name))
    return cases


def long_options(parser: argparse.ArgumentParser) -> list[str]:
    return [option for action in parser._actions for option in action.option_strings if option[:2] == "--"]


def mistyped_options() -> list[tuple[str, str, str]]:
    """(subcommand, slip, option) for every long option of every subcommand, the top level's included."""
    cases = []
    everywhere = [("", ["--help", "--version"])]
    everywhere += [(name, long_options(parser)) for name, parser in SUBCOMMANDS.items()]
    for name, options in everywhere:
        for option in options:
            for slip in slips(option[2:]):
                typed = "--" + slip
                # A slip that starts another option would be taken as its abbreviation.
                if not any(other.startswith(typed) for other in options):
                    cases.append((name, typed, option))
    return cases


def test_slips_cover_every_subcommand_and_option() -> None:
    assert {name for _, name in mistyped_subcommands()} == set(SUBCOMMANDS)
    assert len(mistyped_options()) > 50


@pytest.mark.parametrize(("typed", "meant"), mistyped_subcommands())
def test_mistyped_subcommand_says_what_was_meant(typed: str, meant: str) -> None:
    result = run(Invocation((typed, *POSITIONALS.get(meant, []))))
    assert result.returncode == 2
    assert result.stdout == ""
    (line,) = result.stderr.splitlines()
    assert line.startswith(f"failure-kinds: error: argument COMMAND: invalid choice: {typed!r}, ")
    assert f"did you mean {meant!r}?" in line


def one_edit_apart(typed: str, option: str) -> bool:
    """Whether one letter added, dropped or replaced, or one swap of neighbours, turns one into the other."""
    if typed in slips(option):
        return True
    shorter, longer = sorted((typed, option), key=len)
    if len(longer) - len(shorter) == 1:
        return any(longer[:index] + longer[index + 1 :] == shorter for index in range(len(longer)))
    return len(typed) == len(option) and sum(a != b for a, b in zip(typed, option, strict=True)) == 1


@pytest.mark.parametrize(("subcommand", "typed", "meant"), mistyped_options())
def test_mistyped_option_says_what_was_meant(subcommand: str, typed: str, meant: str) -> None:
    arguments = [subcommand, *POSITIONALS.get(subcommand, [])] if subcommand else []
    result = run(Invocation((*arguments, typed)))
    assert result.returncode == 2
    assert result.stdout == ""
    (line,) = result.stderr.splitlines()
    prog = f"failure-kinds {subcommand}".strip()
    assert line.startswith(f"{prog}: error: unrecognized arguments: {typed}")
    # A slip of one option can be a slip of another too (--aliass: --alias or --aliases); either is right.
    parser = SUBCOMMANDS.get(subcommand) if subcommand else build_parser()
    assert parser is not None
    suggested = line.removesuffix(f"? (see {prog} --help)").rpartition("; did you mean ")[2]
    assert suggested == meant or (
        suggested in long_options(parser) and one_edit_apart(typed[2:], suggested[2:])
    ), line


@pytest.mark.parametrize(
    ("arguments", "meant"),
    [
        (("list", "--format", "jsno"), "json"),
        (("list", "--format", "makrdown"), "markdown"),
        (("check", "--format", "txet", "cancelled"), "text"),
        (("audit", EXAMPLE, "--decoder", "msgpsec"), "msgspec"),
        (("audit", EXAMPLE, "--decoder", "stdilb"), "stdlib"),
    ],
)
def test_mistyped_choice_says_what_was_meant(arguments: tuple[str, ...], meant: str) -> None:
    result = run(Invocation(arguments))
    assert result.returncode == 2
    (line,) = result.stderr.splitlines()
    assert f"did you mean {meant!r}?" in line


def test_nothing_close_suggests_nothing() -> None:
    result = run(Invocation(("frobnicate",)))
    assert result.returncode == 2
    (line,) = result.stderr.splitlines()
    assert "did you mean" not in line
    result = run(Invocation(("list", "--frobnicate")))
    (line,) = result.stderr.splitlines()
    assert "did you mean" not in line


# hostile arguments


HOSTILE = [
    "\x1b[31mred",
    "line\nbreak",
    "carriage\rreturn",
    "\u202eright-to-left",
    "x" * 100_000,
    "nul\x7fdel\x07bell",
]


def hostile_invocations() -> list[list[bytes]]:
    """Each hostile text (and a byte that is not UTF-8) where a subcommand, an option, a choice and a
    stray argument go."""
    texts = [text.encode("utf-8") for text in HOSTILE] + [b"\xff\xfe", b"a" * 50_000 + b"\xff"]
    cases: list[list[bytes]] = []
    for text in texts:
        cases += [[text], [b"list", b"--" + text], [b"list", b"--format", text], [b"list", text]]
        cases += [[b"check", b"--format", text, b"cancelled"], [b"audit", EXAMPLE.encode(), b"--" + text]]
    return cases


@pytest.mark.parametrize("arguments", hostile_invocations(), ids=lambda arguments: repr(arguments)[:40])
def test_hostile_argument_is_one_escaped_bounded_line(arguments: list[bytes]) -> None:
    # os.fsdecode gives back the same bytes when the child's argument vector is encoded.
    result = run_cli_bytes(*map(os.fsdecode, arguments))
    assert result.returncode == 2
    assert result.stdout == b""
    assert result.stderr.endswith(b"\n")
    (line,) = result.stderr.decode("utf-8").splitlines()
    assert line.isprintable()
    assert len(line) < 600
    assert line.startswith("failure-kinds")


# The locale's encoding: names it cannot show are written escaped, and stdin is read as UTF-8 whatever
# the locale says, so neither ends a run or loses its findings.

ASCII_LOCALE = {"PYTHONIOENCODING": "ascii", "LC_ALL": "C", "PYTHONUTF8": "0"}


def run_with(
    arguments: list[str], env: dict[str, str], data: bytes | None = None, cwd: Path = ROOT
) -> subprocess.CompletedProcess[bytes]:
    return run_cli_bytes(*arguments, stdin=data, env=env, cwd=cwd)


@given(
    st.lists(
        st.text(min_size=1, max_size=12).filter(
            lambda text: text.strip() and "\n" not in text and "\r" not in text
        ),
        min_size=1,
        max_size=5,
    )
)
@settings(max_examples=examples(15), deadline=None)
def test_check_from_stdin_in_an_ascii_locale_reports_every_name(names: list[str]) -> None:
    data = "".join(f"{name}\n" for name in names).encode("utf-8", "surrogatepass")
    result = run_with(["check", "-"], ASCII_LOCALE, data)
    assert result.returncode in (0, 1), result.stderr
    assert result.stderr == b""
    lines = result.stdout.decode("ascii").splitlines()
    assert len(lines) == len([name for name in names if name.strip()])


@pytest.mark.parametrize(
    "raw", [b"\xff\xfe", b"caf\xc3\xa9", b"\xef\xbb\xbftransport_timeout", b"judge_faild\r"]
)
def test_check_reads_stdin_bytes_as_utf8_and_drops_a_leading_byte_order_mark(raw: bytes) -> None:
    result = run_with(["check", "-"], ASCII_LOCALE, raw + b"\n")
    assert result.stderr == b""
    (line,) = result.stdout.decode("ascii").splitlines()
    if raw.startswith(b"\xef\xbb\xbf"):
        assert (result.returncode, line) == (0, "transport_timeout  registered")
    else:
        assert result.returncode == 1
        assert "unregistered" in line


@pytest.mark.parametrize("name", ["\u00e9", "\u6f22\u5b57", "judge_f\u00e4iled", "\U0001f600"])
def test_lint_and_check_findings_survive_an_output_encoding_that_cannot_show_them(
    tmp_path: Path, name: str
) -> None:
    source = tmp_path / "producer.py"
    source.write_text(f'row = {{"failure_kind": "{name}"}}\n', encoding="utf-8")
    lint = run_with(["lint", "producer.py"], ASCII_LOCALE, cwd=tmp_path)
    assert (lint.returncode, lint.stderr) == (1, b"")
    assert lint.stdout.decode("ascii").startswith("producer.py:1:24: FK001 unregistered failure kind ")
    check = run_with(["check", name], ASCII_LOCALE, cwd=tmp_path)
    assert (check.returncode, check.stderr) == (1, b"")
    assert "  unregistered" in check.stdout.decode("ascii")


@pytest.mark.parametrize(
    "aliases",
    [["x=agent_timeout", "x=judge_failed"], ["legacy=cancelled", "other=shutdown", "legacy=shutdown"]],
)
def test_one_label_aliased_to_two_kinds_is_a_usage_error(tmp_path: Path, aliases: list[str]) -> None:
    log = tmp_path / "log.jsonl"
    log.write_text('{"failure_kind": "x"}\n')
    options = [part for alias in aliases for part in ("--alias", alias)]
    result = run_with(["audit", str(log), *options], {})
    assert result.returncode == 2
    assert result.stdout == b""
    assert result.stderr.count(b"\n") == 1
    assert b"is given twice" in result.stderr


# A non-blocking standard input: the parent set O_NONBLOCK on the descriptor it hands over, and its data
# comes later. EAGAIN then is "nothing yet", never the end.


@given(st.lists(st.binary(min_size=1, max_size=70_000), max_size=6))
@settings(max_examples=examples(40), deadline=None)
def test_a_non_blocking_descriptor_is_read_to_its_end_and_left_non_blocking(chunks: list[bytes]) -> None:
    from failure_kinds._streams import _WaitingReader  # pyright: ignore[reportPrivateUsage]

    read_end, write_end = non_blocking_pipe()
    thread = write_later(write_end, chunks, pause=0.002)
    try:
        with io.BufferedReader(_WaitingReader(read_end)) as stream:
            assert stream.read() == b"".join(chunks)
        # The flag belongs to the open file the parent shares; reading must not have cleared it.
        assert not os.get_blocking(read_end)
    finally:
        thread.join()
        os.close(read_end)


NAME_LISTS = st.lists(
    st.one_of(st.sampled_from(sorted(FAILURE_KINDS)), st.from_regex(r"[a-z][a-z_]{2,20}", fullmatch=True)),
    min_size=1,
    max_size=30,
)


@given(NAME_LISTS, st.integers(min_value=1, max_value=4))
@settings(max_examples=examples(6), deadline=None)
def test_check_waits_for_a_non_blocking_stdin_whose_data_comes_later(names: list[str], parts: int) -> None:
    data = "".join(f"{name}\n" for name in names).encode()
    size = -(-len(data) // parts)
    chunks = [data[start : start + size] for start in range(0, len(data), size)]
    read_end, write_end = non_blocking_pipe()
    # The first chunk comes well after the command has started and tried to read.
    thread = write_later(write_end, chunks, pause=0.3)
    try:
        result = run_cli("check", "-", "--format", "json", stdin=read_end)
    finally:
        thread.join()
        os.close(read_end)
    assert result.stderr == ""
    verdicts = json.loads(result.stdout)
    assert [verdict["name"] for verdict in verdicts] == names
    registered = all(name in FAILURE_KINDS for name in names)
    assert result.returncode == (0 if registered else 1)
