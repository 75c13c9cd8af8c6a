"""failure-kinds check: each name's category, with a project's declarations, whatever a shell hands it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import deprecated, examples, run_cli, run_cli_bytes
from hypothesis import given, settings
from hypothesis import strategies as st
from test_validation import watched

import failure_kinds
from failure_kinds import FAILURE_KINDS, FailureKind
from failure_kinds.commands.check import CHECK_BATCH, NAME_LIMIT, check_name
from failure_kinds.history import OLDER_LABELS

DECLARED = {"swe_env": ("patch_apply_failed", "test_collection_error")}
MALFORMED_NOTE = "malformed (expected <server>:<kind> in lower case)"


def run(*arguments: str, cwd: Path, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return run_cli("check", *arguments, cwd=cwd, stdin=stdin)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text(
        '[tool.failure-kinds.namespaces]\nswe_env = ["patch_apply_failed", "test_collection_error"]\n'
    )
    return tmp_path


# Each row: the arguments, stdin, the exit code and the lines printed.
@pytest.mark.parametrize(("arguments", "stdin", "code", "lines"), [
    ("swe_env:patch_aply_failed swe_env:patch_apply_failed web_env:page_load_failed", None, 1, [
        "swe_env:patch_aply_failed   undeclared, did you mean 'swe_env:patch_apply_failed'?",
        "swe_env:patch_apply_failed  namespaced", "web_env:page_load_failed    namespaced"]),
    ("swe_env:test_collection_error", None, 0, ["swe_env:test_collection_error  namespaced"]),
    ("peer_drop timeout_exceeded transport_peer_drop", None, 1, [
        "peer_drop            legacy, use 'transport_peer_drop'",
        "timeout_exceeded     legacy, no single replacement", "transport_peer_drop  registered"]),
    ("My_Env:Quota swe_env:Patch_Apply_Failed cancelled", None, 1, [
        f"My_Env:Quota                {MALFORMED_NOTE}",
        f"swe_env:Patch_Apply_Failed  {MALFORMED_NOTE}, did you mean 'swe_env:patch_apply_failed'?",
        "cancelled                   registered"]),
    ("-", "a:b:c\n", 1, [f"a:b:c  {MALFORMED_NOTE}"]),
    ("-", "swe_env:patch_apply_failed\r\n\n  \nswe_env:test_colection_error\n", 1, [
        "swe_env:patch_apply_failed    namespaced",
        "swe_env:test_colection_error  undeclared, did you mean 'swe_env:test_collection_error'?"]),
    ("- --format json", "\n \n", 0, ["[]"]),
    # A malformed name's JSON is docs/cli.md's example (tests/test_docs.py).
    ("--format json swe_env:invented", None, 1, [json.dumps([{"name": "swe_env:invented",
     "category": "undeclared", "suggestion": None, "replacement": None}], indent=2)]),
])  # fmt: skip
def test_each_name_gets_one_line_and_the_exit_code_says_whether_all_are_known(
    project: Path, arguments: str, stdin: str | None, code: int, lines: list[str]
) -> None:
    result = run(*arguments.split(), cwd=project, stdin=stdin)
    assert (result.returncode, result.stdout, result.stderr) == (
        code,
        "".join(f"{line}\n" for line in lines),
        "",
    )


def test_every_older_label_is_legacy_with_its_replacement(tmp_path: Path) -> None:
    result = run("--format", "json", *OLDER_LABELS, cwd=tmp_path)
    assert result.returncode == 1
    assert json.loads(result.stdout) == [
        {"name": label, "category": "legacy", "suggestion": None, "replacement": entry.replacement}
        for label, entry in OLDER_LABELS.items()
    ]


def test_a_deprecated_kind_is_registered_and_names_its_replacement(tmp_path: Path) -> None:
    with deprecated(FailureKind.CANCELLED, FailureKind.AGENT_TIMEOUT):  # run in this process
        text, as_json = run("cancelled", cwd=tmp_path), run("cancelled", "--format", "json", cwd=tmp_path)
    assert (text.returncode, text.stdout) == (0, "cancelled  registered, deprecated: use 'agent_timeout'\n")
    assert json.loads(as_json.stdout)[0]["replacement"] == "agent_timeout"


def test_declarations_come_from_config_option_too(
    project: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    config = tmp_path_factory.mktemp("elsewhere") / "kinds.toml"
    config.write_text('[namespaces]\nweb_env = ["page_load_failed"]\n')
    result = run("--config", str(config), "web_env:page_lod_failed", "swe_env:anything", cwd=project)
    assert result.returncode == 1
    assert result.stdout.splitlines() == [
        "web_env:page_lod_failed  undeclared, did you mean 'web_env:page_load_failed'?",
        "swe_env:anything         namespaced",
    ]


def test_malformed_declaration_is_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[tool.failure-kinds.namespaces]\nswe_env = "patch_apply_failed"\n'
    )
    result = run("cancelled", cwd=tmp_path)
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == (
        "failure-kinds check: error: pyproject.toml: [tool.failure-kinds.namespaces] 'swe_env': "
        "must be a list of kind names (strings)\n"
    )


@pytest.mark.parametrize(
    "content",
    [b"[tool.ruff\n", b"\xff\xfe not UTF-8", b"a = [" * 2000, b"x = 1\nx = 2\n"],
    ids=["unclosed-table", "not-utf-8", "nested-too-deep", "duplicate-key"],
)
def test_an_unreadable_pyproject_found_above_points_to_config_and_config_gets_past_it(
    tmp_path: Path, content: bytes
) -> None:
    # The nearest pyproject.toml may be another tool's, broken in a way that has nothing to do with us.
    (tmp_path / "pyproject.toml").write_bytes(content)
    found = run("cancelled", cwd=tmp_path)
    assert found.returncode == 2
    assert found.stderr.startswith("failure-kinds check: error: pyproject.toml: ")
    assert found.stderr.endswith(" (name the project's configuration with --config FILE)\n")
    assert found.stderr.count("\n") == 1
    (tmp_path / "failure-kinds.toml").write_text('[namespaces]\nswe_env = ["patch_apply_failed"]\n')
    named = run("cancelled", "--config", "failure-kinds.toml", cwd=tmp_path)
    assert (named.returncode, named.stdout, named.stderr) == (0, "cancelled  registered\n", "")
    (tmp_path / "broken.toml").write_bytes(content)
    broken = run("cancelled", "--config", "broken.toml", cwd=tmp_path)
    assert broken.returncode == 2
    assert "--config FILE" not in broken.stderr


NAMESPACED = st.from_regex(r"[a-z][a-z0-9_]{0,10}:[a-z][a-z0-9_]{0,20}", fullmatch=True)
# Meant as <server>:<kind> and written wrong, mostly: capitals, a hyphen, a space, a second colon, an empty
# side, a line end (a few come out well-formed, which the tests below allow for).
MALFORMED = st.from_regex(r"[A-Za-z0-9_\- ]{0,10}:[A-Za-z0-9_:\- ]{0,20}\n?", fullmatch=True)


@settings(max_examples=examples(300), deadline=None)
@given(st.one_of(NAMESPACED, MALFORMED, st.text(max_size=40), st.sampled_from(sorted(FAILURE_KINDS))))
def test_category_follows_the_declaration_and_agrees_with_the_lint_and_the_warning(name: str) -> None:
    """Malformed exactly when the lint says FK002 and the run-time warning says malformed; undeclared
    exactly when the server is declared and the kind is not."""
    from failure_kinds.lint import Checker

    verdict = check_name(name, DECLARED)
    server, colon, kind = name.partition(":")
    if name in FAILURE_KINDS:
        expected = "registered"
    elif verdict["category"] in ("namespaced", "undeclared"):
        assert colon
        expected = "undeclared" if server in DECLARED and kind not in DECLARED[server] else "namespaced"
    elif verdict["category"] == "legacy":
        expected = "legacy"  # an older label: tested with the history
    else:
        expected = "malformed" if colon else "unregistered"
    assert verdict["category"] == expected
    if verdict["category"] == "undeclared" and verdict["suggestion"] is not None:
        assert verdict["suggestion"].startswith(f"{server}:")
    assert check_name(name, {})["category"] != "undeclared"
    malformed = verdict["category"] == "malformed"
    linted = Checker(namespaces=DECLARED).verdict(name)
    assert malformed == (linted is not None and linted[0] == "FK002")
    with watched() as (messages, _):
        failure_kinds.declare_namespace("swe_env", DECLARED["swe_env"])
        assert failure_kinds.validate_failure_kind(name) is name
    warned = [message for message in messages if "; a malformed namespaced kind: the " in message]
    assert len(warned) == malformed


def test_json_is_one_array_across_batches(project: Path) -> None:
    names = [f"swe_env:kind_{index}" if index % 3 else "cancelled" for index in range(CHECK_BATCH * 2 + 7)]
    result = run("-", "--format", "json", cwd=project, stdin="\n".join(names) + "\n")
    assert result.returncode == 1
    assert result.stdout == json.dumps([check_name(name, DECLARED) for name in names], indent=2) + "\n"


def test_endless_or_huge_stdin_costs_bounded_memory(project: Path) -> None:
    """A line of 300 MB without a newline, under a 1 GiB address-space limit: cut, reported, exit 1."""
    script = (
        "import resource, runpy, sys;"
        "resource.setrlimit(resource.RLIMIT_AS, (1024 ** 3, 1024 ** 3));"
        "sys.argv = ['failure-kinds', 'check', '-'];"
        "runpy.run_module('failure_kinds', run_name='__main__')"
    )
    pipes = {"stdin": subprocess.PIPE, "stdout": subprocess.PIPE, "stderr": subprocess.PIPE}
    with subprocess.Popen([sys.executable, "-c", script], cwd=project, **pipes) as process:  # type: ignore[call-overload]
        try:
            for _ in range(300):
                process.stdin.write(b"x" * (1024 * 1024))
            process.stdin.write(b"\ncancelled\n")
            process.stdin.close()
        except BrokenPipeError:
            pass
        # The output is two short lines, so reading it after the input cannot deadlock.
        stdout, stderr = process.stdout.read(), process.stderr.read()
        process.wait(timeout=300)
    assert process.returncode == 1, stderr
    lines = stdout.decode().splitlines()
    assert len(lines) == 2
    assert lines[0].endswith("...  unregistered")
    assert len(lines[0]) < 2 * 1024 * 4
    assert lines[1].startswith("cancelled")


@pytest.mark.parametrize("form", ["text", "json"])
def test_a_huge_name_on_the_command_line_is_cut_as_one_read_from_stdin(project: Path, form: str) -> None:
    name = "judge_" + "x" * 100_000
    given = run(name, "--format", form, cwd=project)
    read = run("-", "--format", form, cwd=project, stdin=name + "\n")
    assert (given.returncode, given.stdout, given.stderr) == (read.returncode, read.stdout, read.stderr)
    assert given.returncode == 1
    if form == "json":
        assert json.loads(given.stdout)[0]["name"] == name[:NAME_LIMIT] + "..."
    else:
        assert given.stdout == f"{name[:NAME_LIMIT]}...  unregistered\n"


# Names around the cut, with the characters that must not reach a terminal raw (a byte that is not UTF-8
# is \udcff once read); a byte-order mark, which stdin drops at its start, only inside.
_CHARACTERS = st.one_of(
    st.sampled_from("ab_:\x1b\u202e\t \x00\udcff"),
    # No lone surrogate but those of undecodable bytes (\udc80-\udcff): stdin's bytes cannot hold another.
    st.characters(exclude_characters="\r\n\ufeff", exclude_categories=["Cs"]),
)
LONG_NAMES = st.one_of(
    st.text(_CHARACTERS, max_size=40),
    st.builds(str.__mul__, st.text(_CHARACTERS, min_size=1, max_size=8), st.integers(1, 700)),
    st.just("\x1b]0;owned\x07\u202ea\tfake  registered" + "y" * 5000),
)


@settings(max_examples=examples(100), deadline=None)
@given(LONG_NAMES.filter(lambda name: name != "-"))
def test_a_name_is_checked_and_shown_alike_from_the_command_line_and_stdin(name: str) -> None:
    # One cut: an argument and the same line read from stdin are checked alike, shown as one bounded line.
    given = run_cli_bytes("check", "--", name)
    read = run_cli_bytes("check", "-", stdin=name.encode("utf-8", "surrogateescape") + b"\n")
    if name.strip() or len(name) > NAME_LIMIT:
        assert (read.returncode, read.stdout) == (given.returncode, given.stdout)
    shown = given.stdout.decode()
    assert shown.count("\n") == 1
    assert len(shown) < 12 * NAME_LIMIT
    assert shown[:-1].isprintable()


@pytest.mark.parametrize("end", [b"\n", b""])
def test_white_space_up_to_the_cut_is_no_name_however_the_last_line_ends(end: bytes) -> None:
    """A line of white space as long as the cut is blank, ended or not: only a longer one is a name."""
    for length, names in ((NAME_LIMIT, 1), (NAME_LIMIT + 1, 2)):
        result = run_cli_bytes("check", "-", stdin=b"cancelled\n" + b" " * length + end)
        lines = result.stdout.decode().splitlines()
        assert (result.returncode, len(lines), lines[0].split()) == (
            names - 1,
            names,
            ["cancelled", "registered"],
        )
