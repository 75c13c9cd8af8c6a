"""The failure-kinds command as a user runs it: help, list, usage errors with a "did you mean", the audit,
and the standard streams as a shell hands them over (broken stdout, closed or non-blocking stdin, a locale
that cannot show a name)."""

from __future__ import annotations

import argparse
import itertools
import json
import os
import re
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from helpers import ROOT, command, examples, non_blocking_pipe, run_cli, run_cli_bytes, write_later
from hypothesis import given, settings
from hypothesis import strategies as st

from failure_kinds import FAILURE_KINDS, FailureKind, Stage
from failure_kinds.cli import build_parser
from failure_kinds.commands.listing import STAGES_HEADING

EXAMPLE = "examples/rollout_failures.jsonl"
ALIASES = "examples/aliases.toml"
RELEASES = [str(ROOT / "exports" / "0.1.0.json"), str(ROOT / "exports" / "0.2.0.json")]
SUBCOMMANDS: dict[str, argparse.ArgumentParser] = dict(build_parser().subcommands)  # type: ignore[attr-defined]


def assert_one_line_usage_error(result: subprocess.CompletedProcess[str]) -> str:
    assert (result.returncode, result.stdout) == (2, "")
    assert "Traceback" not in result.stderr
    (line,) = result.stderr.splitlines()
    assert re.match(r"failure-kinds( [a-z]+)?: error: ", line)
    return line


@pytest.mark.parametrize("arguments", [[], *([name] for name in SUBCOMMANDS)], ids=str)
def test_help_explains_every_command(arguments: list[str]) -> None:
    result = run_cli(*arguments, "--help", env={"COLUMNS": "80"})
    assert result.returncode == 0
    assert result.stdout.startswith("usage: failure-kinds")
    # One line says what the command does, then a few more at most: the details are in the reference.
    blocks = result.stdout.split("\n\n")[1:]
    description = list(itertools.takewhile(lambda block: not re.match(r"[a-z ]+:\n", block), blocks))
    assert len(description[0].splitlines()) == 1, description
    assert len("\n\n".join(description).splitlines()) < 10, description
    if arguments == ["audit"]:
        options = ["--field", "--alias", "--aliases", "--strict", "--decoder", "--max-line-bytes", "--config"]
        assert [option for option in options if option not in result.stdout] == []


def test_generate_output_help_gives_the_reason_its_error_gives(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.failure-kinds.namespaces]\nsim = ["crash"]\n')
    error = run_cli("generate", "--output", "pyproject.toml", cwd=tmp_path).stderr
    reason = "the module needs a file of its own"
    assert reason in error
    assert f"not the configuration this run reads: {reason}" in " ".join(
        run_cli("generate", "-h").stdout.split()
    )


def test_the_exit_code_line_names_every_command_that_exits_1() -> None:
    # As each command's own help says it; one that exits 1 only with an option is named with that option.
    listed = re.search(r"1 findings \(([^)]*)\)", build_parser().epilog or "")
    assert listed is not None
    expected: set[str] = set()
    for name, subparser in SUBCOMMANDS.items():
        said = re.search(
            r"\b1 (?:with (--[a-z-]+)|when|otherwise)\b", f"{subparser.description} {subparser.epilog}"
        )
        if said is not None:
            expected.add(name if said[1] is None else f"{name} {said[1]}")
    assert expected >= {"check", "audit --strict", "lint", "generate --check", "diff"}
    assert set(listed[1].split(", ")) == expected
    assert f"1 findings ({listed[1]})" in " ".join(run_cli("--help").stdout.split())


def test_list_in_each_format() -> None:
    lines = run_cli("list").stdout.splitlines()
    for kind in FailureKind:
        assert any(line.split()[:1] == [kind.value] and kind.description in line for line in lines)
    headers = [line for line in lines if line and not line.startswith(" ")]
    assert headers == [*dict.fromkeys(kind.domain for kind in FailureKind), STAGES_HEADING]
    stages = [line for line in lines[lines.index(STAGES_HEADING) + 1 :] if line]
    assert [line.split()[0] for line in stages] == [stage.value for stage in Stage]
    assert all(line.endswith(stage.description) for stage, line in zip(Stage, stages, strict=True))
    listed = json.loads(run_cli("list", "--format", "json").stdout)
    assert [entry["value"] for entry in listed["kinds"]] == [kind.value for kind in FailureKind]
    assert listed["kinds"][0] == {
        "name": "TRANSPORT_UNREACHABLE",
        "value": "transport_unreachable",
        "domain": "transport",
        "description": FailureKind.TRANSPORT_UNREACHABLE.description,
        "since": "0.1.0",
        "replaced_by": None,
    }
    assert listed["stages"] == [{"value": stage.value, "description": stage.description} for stage in Stage]
    # The rest of the markdown is the docs' vocabulary table (tests/test_docs.py).
    markdown = run_cli("list", "--format", "markdown").stdout.splitlines()
    assert all(f"| `{stage.value}` | {stage.description} |" in markdown for stage in Stage)


@pytest.mark.parametrize(
    ("arguments", "stdin", "code", "output"),
    [
        (["check", "cancelled", "my_env:quota"], None, 0,
         "cancelled     registered\nmy_env:quota  namespaced\n"),
        (["check", "judge_faild", "nonsense_label"], None, 1,
         "judge_faild     unregistered, did you mean 'judge_failed'?\nnonsense_label  unregistered\n"),
        (["check", "bad\x1b[2Jname"], None, 1, "'bad\\x1b[2Jname'  unregistered\n"),
        (["check", "-", "--format", "json"], "Transport-Timeout\r\n\nsession_lost\n", 1, json.dumps([
            {"name": "Transport-Timeout", "category": "unregistered", "suggestion": "transport_timeout",
             "replacement": None},
            {"name": "session_lost", "category": "registered", "suggestion": None, "replacement": None}],
            indent=2) + "\n"),
        (["check", "-"], None, 0, ""),  # empty stdin is not a closed one
    ],
)  # fmt: skip
def test_check(arguments: list[str], stdin: str | None, code: int, output: str) -> None:
    result = run_cli(*arguments, stdin=stdin)
    assert (result.returncode, result.stdout, result.stderr) == (code, output, "")


@pytest.mark.parametrize(
    ("arguments", "says"),
    [
        ([], "failure-kinds: error: choose a command (see failure-kinds --help)"),
        (["list", "--format", "xml"], "invalid choice: 'xml' (choose from text, json, markdown)"),
        (["check", "cancelled", "-"], "- reads names from stdin and cannot be mixed with names"),
        (["check"], "the following arguments are required: NAME"),
        (["audit", EXAMPLE, "--alias", "old=transport_timout"], "did you mean 'transport_timeout'?"),
        (["audit", EXAMPLE, "--alias", "nonsense"], "--alias 'nonsense': expected OLD=NEW"),
        (["audit", EXAMPLE, "--aliases", "no/such/aliases.toml"], "no such file"),
        (["audit", EXAMPLE, "--field", "a..b"], "--field 'a..b' has an empty segment"),
        (["audit", EXAMPLE, "--format", "yaml"], "invalid choice: 'yaml'"),
        (["audit", EXAMPLE, "--max-line-bytes", "12Q"], "'12Q': expected a positive number of bytes"),
        (["audit", EXAMPLE, "--max-line-bytes", "0"], "'0': expected a positive number of bytes"),
        (["audit", EXAMPLE, "--max-line-bytes", "²M"], "'²M': expected a positive number of bytes"),
        (["audit", EXAMPLE, "--max-line-bytes", "٢M"], "'٢M': expected a positive number of bytes"),
        (["audit", EXAMPLE, "--alias", "x=agent_timeout", "--alias", "x=judge_failed"], "is given twice"),
        (["audit", EXAMPLE, "--alias", "legacy=cancelled", "--alias", "o=shutdown", "--alias", "legacy=x"],
         "is given twice"),
        (["list", "--format", "jsno"], "did you mean 'json'?"),
        (["list", "--format", "makrdown"], "did you mean 'markdown'?"),
        (["check", "--format", "txet", "cancelled"], "did you mean 'text'?"),
        (["audit", EXAMPLE, "--decoder", "msgpsec"], "did you mean 'msgspec'?"),
        (["audit", EXAMPLE, "--decoder", "stdilb"], "did you mean 'stdlib'?"),
        (["frobnicate"], None),  # nothing close: no suggestion
        (["list", "--frobnicate"], None),
    ],
)  # fmt: skip
def test_usage_errors_are_one_line(arguments: list[str], says: str | None) -> None:
    # The usage line of a missing command is printed first; every other error is the one line.
    result = run_cli(*arguments)
    if not arguments:
        assert result.stderr.splitlines()[0].startswith("usage: failure-kinds")
        result.stderr = result.stderr.splitlines()[-1]
    line = assert_one_line_usage_error(result)
    assert (says in line) if says else ("did you mean" not in line)


@pytest.mark.parametrize(
    "arguments",
    ["lint missing", "lint --config missing .", "check --config missing cancelled", "export --config missing",
     "generate --config missing", "audit missing", "audit --config missing .", "audit --aliases missing .",
     "diff missing missing"],
)  # fmt: skip
def test_every_command_says_no_such_file_alike(tmp_path: Path, arguments: str) -> None:
    result = run_cli(*arguments.split(), cwd=tmp_path)
    assert result.returncode == 2
    (line,) = result.stderr.splitlines()
    assert line.startswith(f"failure-kinds {arguments.split()[0]}: ")
    assert line.endswith("missing: no such file")
    for option in ("--config", "--aliases"):  # a file given by an option is named with it
        assert (f"{option} missing: no such file" in line) == (option in arguments)


def test_audit_text_report_and_aliases(tmp_path: Path) -> None:
    result = run_cli("audit", EXAMPLE)
    assert (result.returncode, result.stderr) == (0, "")  # no progress line when stderr is not a terminal
    for said in ["registered: 22 distinct", "namespaced: 4 distinct", "by server: swe_env",
                 "did you mean 'transport_timeout'?", f"first seen {EXAMPLE}:"]:  # fmt: skip
        assert said in result.stdout
    assert "regrouped" not in result.stdout  # nothing aliased
    aliased = run_cli("audit", EXAMPLE, "--aliases", ALIASES, "--alias", "Judge-Failed=judge_failed").stdout
    for said in ["timeout_exceeded", "-> agent_timeout", "-> judge_failed", "regrouped by canonical kind"]:
        assert said in aliased
    # The quickstart shows this report.
    quickstart = (ROOT / "docs" / "quickstart.md").read_text(encoding="utf-8")
    start = quickstart.index("```\n", quickstart.index("<!-- main job output")) + len("```\n")
    shown = quickstart[start : quickstart.index("```", start)]
    assert shown == run_cli("audit", EXAMPLE, "--aliases", ALIASES).stdout
    path = tmp_path / "evil.jsonl"
    path.write_text(json.dumps({"failure_kind": "bad\x1b[2J\nkind"}) + "\n" + '{"failure_kind": "\\ud800"}\n')
    escaped = run_cli("audit", str(path))
    assert escaped.returncode == 0
    assert "\x1b" not in escaped.stdout
    assert "'bad\\x1b[2J\\nkind'" in escaped.stdout
    assert "'\\ud800'" in escaped.stdout


def test_audit_json_report_and_exit_codes(tmp_path: Path) -> None:
    # Its fields, files and namespaces are the audit page's annotated report (tests/test_docs.py).
    report = json.loads(run_cli("audit", EXAMPLE, "--aliases", ALIASES, "--format", "json").stdout)
    assert report["records"] == sum(
        report[key] for key in ["with_kind", "without_kind", "invalid", "unparseable"]
    )
    fields = {
        "value",
        "length",
        "count",
        "category",
        "suggestion",
        "replacement",
        "note",
        "canonical",
        "by_stage",
    }
    for entry in report["kinds"]:
        assert set(entry) == fields | {"first_seen"}
        assert entry["length"] == len(entry["value"])
        assert entry["category"] in {"registered", "namespaced", "unregistered", "aliased"}
    aliased = {entry["value"]: entry["canonical"] for entry in report["kinds"] if entry["canonical"]}
    assert aliased["timeout_exceeded"] == "agent_timeout"
    stdin = json.loads(
        run_cli("audit", "-", "--format", "json", stdin='{"failure_kind": "cancelled"}\n{}\n').stdout
    )
    assert [stdin[key] for key in ("records", "with_kind", "without_kind")] == [2, 1, 1]
    assert stdin["files"][0]["path"] == "<stdin>"
    assert run_cli("audit", EXAMPLE, "--strict").returncode == 1
    fixes = ["--alias", "Judge-Failed=judge_failed", "--alias", "sesion_lost=session_lost"]
    fixes += ["--alias", "transport_timout=transport_timeout", "--alias", "verifer_error=verifier_error"]
    assert run_cli("audit", EXAMPLE, "--aliases", ALIASES, *fixes, "--strict").returncode == 0
    missing = run_cli("audit", str(tmp_path / "missing.jsonl"), EXAMPLE, "--format", "json")
    assert missing.returncode == 2
    assert missing.stderr == f"failure-kinds audit: {tmp_path / 'missing.jsonl'}: no such file\n"
    files = json.loads(missing.stdout)["files"]
    assert files[0]["error"] == "no such file"
    assert files[1]["records"] > 0


def slips(word: str) -> Iterator[str]:
    """Typing slips of a word: each pair of neighbouring letters swapped, and each letter doubled."""
    for index in range(len(word) - 1):
        if word[index] != word[index + 1]:
            yield word[:index] + word[index + 1] + word[index] + word[index + 2 :]
    for index in range(len(word)):
        yield word[: index + 1] + word[index] + word[index + 1 :]


# A positional argument that each subcommand accepts, so only the slip is wrong.
POSITIONALS = {"check": ["cancelled"], "audit": [EXAMPLE], "lint": ["examples"], "diff": RELEASES}
MISTYPED_SUBCOMMANDS = [
    (slip, name) for name in SUBCOMMANDS for slip in slips(name) if slip not in SUBCOMMANDS
]


def long_options(parser: argparse.ArgumentParser) -> list[str]:
    return [option for action in parser._actions for option in action.option_strings if option[:2] == "--"]


def mistyped_options() -> list[tuple[str, str, str]]:
    """(subcommand, slip, option) for every long option of every subcommand, the top level's included."""
    cases = []
    everywhere = [
        ("", ["--help", "--version"]),
        *((name, long_options(parser)) for name, parser in SUBCOMMANDS.items()),
    ]
    for name, options in everywhere:
        for option in options:
            for typed in ("--" + slip for slip in slips(option[2:])):
                # A slip that starts another option would be taken as its abbreviation.
                if not any(other.startswith(typed) for other in options):
                    cases.append((name, typed, option))
    return cases


def test_slips_cover_every_subcommand_and_option() -> None:
    assert {name for _, name in MISTYPED_SUBCOMMANDS} == set(SUBCOMMANDS)
    assert len(mistyped_options()) > 50


@pytest.mark.parametrize(("typed", "meant"), MISTYPED_SUBCOMMANDS)
def test_mistyped_subcommand_says_what_was_meant(typed: str, meant: str) -> None:
    line = assert_one_line_usage_error(run_cli(typed, *POSITIONALS.get(meant, [])))
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
    line = assert_one_line_usage_error(run_cli(*arguments, typed))
    prog = f"failure-kinds {subcommand}".strip()
    assert line.startswith(f"{prog}: error: unrecognized arguments: {typed}")
    # A slip of one option can be a slip of another too (--aliass: --alias or --aliases); either is right.
    parser = SUBCOMMANDS[subcommand] if subcommand else build_parser()
    suggested = line.removesuffix(f"? (see {prog} --help)").rpartition("; did you mean ")[2]
    assert suggested == meant or (
        suggested in long_options(parser) and one_edit_apart(typed[2:], suggested[2:])
    )


HOSTILE = ["\x1b[31mred", "line\nbreak", "carriage\rreturn", "\u202eright-to-left", "x" * 100_000,
           "nul\x7fdel\x07bell"]  # fmt: skip


def hostile_invocations() -> list[list[bytes]]:
    """Each hostile text, and bytes not UTF-8, as a subcommand, an option, a choice and an argument."""
    cases: list[list[bytes]] = []
    for text in [text.encode("utf-8") for text in HOSTILE] + [b"\xff\xfe", b"a" * 50_000 + b"\xff"]:
        cases += [[text], [b"list", b"--" + text], [b"list", b"--format", text], [b"list", text]]
        cases += [[b"check", b"--format", text, b"cancelled"], [b"audit", EXAMPLE.encode(), b"--" + text]]
    return cases


@pytest.mark.parametrize("arguments", hostile_invocations(), ids=lambda arguments: repr(arguments)[:40])
def test_hostile_argument_is_one_escaped_bounded_line(arguments: list[bytes]) -> None:
    # os.fsdecode gives back the same bytes when the child's argument vector is encoded.
    result = run_cli_bytes(*map(os.fsdecode, arguments))
    assert (result.returncode, result.stdout) == (2, b"")
    assert result.stderr.endswith(b"\n")
    (line,) = result.stderr.decode("utf-8").splitlines()
    assert line.isprintable()
    assert len(line) < 600
    assert line.startswith("failure-kinds")


# Standard streams: each invocation runs in a subprocess, first with its stdout captured (what it earns),
# then with its stdout broken in each way.
LINT_FILE = "<lint file>"  # stands for a file of misspelled kinds, one a line
CHECK_NAMES = (
    "".join(f"{kind}\n{kind[:-1]}\n" for kind in sorted(FAILURE_KINDS)) * 400
)  # more than a pipe holds
INVOCATIONS = [
    ("--version",), ("--help",), ("audit", "--help"), ("list",), ("list", "--format", "json"),
    ("list", "--format", "markdown"), ("check", "cancelled", "shutdown"),
    ("check", "cancelled", "judge_faild"), ("check", "-", "--format", "json"),
    ("audit", EXAMPLE, "--aliases", ALIASES), ("audit", EXAMPLE, "--strict"),
    ("audit", "missing.jsonl", EXAMPLE, "--strict"), ("audit", "-", "--format", "json"), ("lint", LINT_FILE),
    ("lint", LINT_FILE, "--format", "json"), ("lint", LINT_FILE, "--format", "github"), ("export",),
    ("export", "--format", "jsonschema"),
]  # fmt: skip
STDIN = {"check": CHECK_NAMES, "audit": (ROOT / EXAMPLE).read_text(encoding="utf-8")}


@pytest.fixture(scope="module")
def lint_file(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = tmp_path_factory.mktemp("lint") / "producer.py"
    path.write_text(
        "".join(f'record(failure_kind="{kind}x")\n' for kind in sorted(FAILURE_KINDS)), encoding="utf-8"
    )
    return str(path)


def run(
    invocation: tuple[str, ...], lint_file: str = "", preexec_fn: Callable[[], object] | None = None
) -> subprocess.CompletedProcess[str]:
    arguments = [lint_file if argument == LINT_FILE else argument for argument in invocation]
    stdin = STDIN.get(invocation[0], "") if "-" in invocation else ""
    result = run_cli(*arguments, stdin=stdin, preexec_fn=preexec_fn)
    assert not re.search("Traceback|Exception ignored", result.stderr)
    return result


@pytest.fixture(scope="module")
def earned(lint_file: str) -> dict[tuple[str, ...], subprocess.CompletedProcess[str]]:
    results = {invocation: run(invocation, lint_file) for invocation in INVOCATIONS}
    assert all(result.stdout for result in results.values()), "every invocation here has output to write"
    assert {result.returncode for result in results.values()} == {0, 1, 2}, (
        "the invocations cover every exit code"
    )
    return results


def redirect_stdout(descriptor: int) -> None:
    os.dup2(descriptor, 1)
    os.close(descriptor)


def closed_pipe_stdout() -> None:
    read_end, write_end = os.pipe()
    os.close(read_end)
    redirect_stdout(write_end)


@pytest.mark.parametrize(
    ("redirection", "message"),
    [
        (closed_pipe_stdout, None),  # the reader is gone: the first write fails with EPIPE
        (lambda: redirect_stdout(os.open("/dev/full", os.O_WRONLY)),
         "failure-kinds: error: cannot write to standard output: No space left on device"),
        (lambda: os.close(1), "failure-kinds: error: standard output is closed"),
    ],
    ids=["closed-pipe", "full", "closed"],
)  # fmt: skip
@pytest.mark.parametrize("invocation", INVOCATIONS, ids=" ".join)
def test_a_broken_stdout_keeps_the_diagnostics_and_says_so_in_one_line(
    invocation: tuple[str, ...],
    earned: dict[tuple[str, ...], subprocess.CompletedProcess[str]],
    lint_file: str,
    redirection: Callable[[], None],
    message: str | None,
) -> None:
    """A reader that went away keeps the exit code earned; a full or closed stdout is exit 2 with the
    run's own diagnostics first, then one line about the output."""
    expected = earned[invocation]
    result = run(invocation, lint_file, preexec_fn=redirection)
    if message is None:
        assert (result.returncode, result.stderr) == (expected.returncode, expected.stderr)
    else:
        assert result.returncode == 2
        assert result.stderr.splitlines() == [*expected.stderr.splitlines(), message]


@pytest.mark.parametrize(
    "arguments",
    [("check", "-"), ("list", "--format", "json"), ("audit", EXAMPLE, "--strict", "--format", "json")],
)
def test_closed_pipe_later_in_the_stream(arguments: tuple[str, ...]) -> None:
    # A reader that takes the first bytes and goes: the writer meets the closed pipe mid-stream.
    script = '"$@" | head -c 10 >/dev/null; echo "${PIPESTATUS[0]}"'
    stdin = STDIN.get(arguments[0], "") if "-" in arguments else ""
    result = subprocess.run(
        ["bash", "-c", script, "bash", *command(*arguments)],
        input=stdin,
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONIOENCODING": "utf-8"},
        timeout=120,
    )
    normal = run(arguments)
    assert "Traceback" not in result.stderr
    assert (result.stdout.strip(), result.stderr) == (str(normal.returncode), normal.stderr)


@pytest.mark.parametrize(
    "arguments",
    [("check", "-"), ("check", "-", "--format", "json"), ("audit", "-"), ("audit", "-", EXAMPLE),
     ("audit", EXAMPLE, "-", "--strict", "--format", "json")],
)  # fmt: skip
def test_closed_stdin_is_one_line_and_exit_2(arguments: tuple[str, ...]) -> None:
    line = assert_one_line_usage_error(run(arguments, preexec_fn=lambda: os.close(0)))
    assert line == f"failure-kinds {arguments[0]}: error: - reads standard input, which is closed"


NAME_LISTS = st.lists(
    st.one_of(st.sampled_from(sorted(FAILURE_KINDS)), st.from_regex(r"[a-z][a-z_]{2,20}", fullmatch=True)),
    min_size=1,
    max_size=30,
)


@given(NAME_LISTS, st.integers(min_value=1, max_value=4))
@settings(max_examples=examples(6), deadline=None)
def test_check_waits_for_a_non_blocking_stdin_whose_data_comes_later(names: list[str], parts: int) -> None:
    """O_NONBLOCK set on the descriptor handed over and its data later: EAGAIN is "nothing yet", never the
    end, and the flag (the shared open file's) is left as it was."""
    data = "".join(f"{name}\n" for name in names).encode()
    size = -(-len(data) // parts)
    read_end, write_end = non_blocking_pipe()
    # The first chunk comes well after the command has started and tried to read.
    thread = write_later(
        write_end, [data[start : start + size] for start in range(0, len(data), size)], pause=0.3
    )
    try:
        result = run_cli("check", "-", "--format", "json", stdin=read_end)
        assert not os.get_blocking(read_end)
    finally:
        thread.join()
        os.close(read_end)
    assert result.stderr == ""
    assert [verdict["name"] for verdict in json.loads(result.stdout)] == names
    assert result.returncode == (0 if all(name in FAILURE_KINDS for name in names) else 1)


# Names the locale's encoding cannot show are written escaped, and stdin is read as UTF-8 whatever the
# locale says, so neither ends a run or loses its findings.
ASCII_LOCALE = {"PYTHONIOENCODING": "ascii", "LC_ALL": "C", "PYTHONUTF8": "0"}
LINE_TEXT = st.text(min_size=1, max_size=12).filter(
    lambda text: text.strip() and "\n" not in text and "\r" not in text
)


@given(st.lists(LINE_TEXT, min_size=1, max_size=5))
@settings(max_examples=examples(15), deadline=None)
def test_check_from_stdin_in_an_ascii_locale_reports_every_name(names: list[str]) -> None:
    data = "".join(f"{name}\n" for name in names).encode("utf-8", "surrogatepass")
    result = run_cli_bytes("check", "-", stdin=data, env=ASCII_LOCALE)
    assert result.returncode in (0, 1), result.stderr
    assert result.stderr == b""
    assert len(result.stdout.decode("ascii").splitlines()) == len(names)


@pytest.mark.parametrize(
    ("raw", "code", "line"),
    [
        (b"\xef\xbb\xbftransport_timeout", 0, "transport_timeout  registered"),
        (b"\xff\xfe", 1, "'\\udcff\\udcfe'  unregistered"),
        (b"caf\xc3\xa9", 1, "caf\\xe9  unregistered"),
        (b"judge_faild\r", 1, "judge_faild  unregistered, did you mean 'judge_failed'?"),
    ],
)
def test_check_reads_stdin_bytes_as_utf8_and_drops_a_leading_byte_order_mark(
    raw: bytes, code: int, line: str
) -> None:
    result = run_cli_bytes("check", "-", stdin=raw + b"\n", env=ASCII_LOCALE)
    assert (result.returncode, result.stdout.decode("ascii"), result.stderr) == (code, line + "\n", b"")


def test_lint_and_check_findings_survive_an_output_encoding_that_cannot_show_them(tmp_path: Path) -> None:
    names = ["\u00e9", "\u6f22\u5b57", "judge_f\u00e4iled", "\U0001f600"]
    (tmp_path / "producer.py").write_text(
        "".join(f'row = {{"failure_kind": "{name}"}}\n' for name in names), "utf-8"
    )
    lint = run_cli_bytes("lint", "producer.py", env=ASCII_LOCALE, cwd=tmp_path)
    assert (lint.returncode, lint.stderr) == (1, b"")
    lines = lint.stdout.decode("ascii").splitlines()
    assert len(lines) == len(names)
    for number, line in enumerate(lines, start=1):
        assert line.startswith(f"producer.py:{number}:24: FK001 unregistered failure kind ")
    check = run_cli_bytes("check", *names, env=ASCII_LOCALE, cwd=tmp_path)
    assert (check.returncode, check.stderr) == (1, b"")
    lines = check.stdout.decode("ascii").splitlines()
    assert len(lines) == len(names)
    assert all("  unregistered" in line for line in lines)
