"""failure-kinds check with a project's declared namespaces, and with the inputs a shell can hand it."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import command, examples, run_cli
from hypothesis import given, settings
from hypothesis import strategies as st

from failure_kinds import FAILURE_KINDS
from failure_kinds.commands.check import (
    CHECK_BATCH,
    NAME_LIMIT,
    bounded,
    check_name,
    render_text,
    stdin_names,
)

DECLARED = {"swe_env": ("patch_apply_failed", "test_collection_error")}


def run(*arguments: str, cwd: Path, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return run_cli("check", *arguments, cwd=cwd, stdin=stdin)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text(
        '[tool.failure-kinds.namespaces]\nswe_env = ["patch_apply_failed", "test_collection_error"]\n'
    )
    return tmp_path


def test_undeclared_kinds_are_named_with_a_suggestion_and_exit_1(project: Path) -> None:
    result = run(
        "swe_env:patch_aply_failed", "swe_env:patch_apply_failed", "web_env:page_load_failed", cwd=project
    )
    assert result.returncode == 1
    assert result.stdout == (
        "swe_env:patch_aply_failed   undeclared, did you mean 'swe_env:patch_apply_failed'?\n"
        "swe_env:patch_apply_failed  namespaced\n"
        "web_env:page_load_failed    namespaced\n"
    )
    declared_only = run("swe_env:test_collection_error", "cancelled", cwd=project)
    assert (declared_only.returncode, declared_only.stderr) == (0, "")


def test_json_names_the_category(project: Path) -> None:
    result = run("--format", "json", "swe_env:invented", cwd=project)
    assert result.returncode == 1
    assert json.loads(result.stdout) == [
        {"name": "swe_env:invented", "category": "undeclared", "suggestion": None, "replacement": None}
    ]


def test_older_labels_are_legacy_with_their_replacement_and_exit_1(tmp_path: Path) -> None:
    from failure_kinds.history import OLDER_LABELS

    renamed = sorted(label for label, entry in OLDER_LABELS.items() if entry.replacement is not None)
    unmapped = sorted(label for label, entry in OLDER_LABELS.items() if entry.replacement is None)
    assert "peer_drop" in renamed
    assert "timeout_exceeded" in unmapped
    result = run("--format", "json", *renamed, *unmapped, cwd=tmp_path)
    assert result.returncode == 1
    verdicts = json.loads(result.stdout)
    assert [verdict["category"] for verdict in verdicts] == ["legacy"] * len(OLDER_LABELS)
    assert {verdict["name"]: verdict["replacement"] for verdict in verdicts} == {
        label: entry.replacement for label, entry in OLDER_LABELS.items()
    }
    assert all(verdict["suggestion"] is None for verdict in verdicts)
    text = run("peer_drop", "timeout_exceeded", "transport_peer_drop", cwd=tmp_path)
    assert text.returncode == 1
    assert text.stdout == (
        "peer_drop            legacy, use 'transport_peer_drop'\n"
        "timeout_exceeded     legacy, no single replacement\n"
        "transport_peer_drop  registered\n"
    )


def test_a_deprecated_kind_is_registered_and_names_its_replacement(monkeypatch: pytest.MonkeyPatch) -> None:
    from failure_kinds import FailureKind
    from failure_kinds.commands.check import check_name, render_text

    # None is deprecated today; a later release sets replaced_by on the member, as here.
    monkeypatch.setattr(
        FailureKind,
        "replaced_by",
        property(lambda kind: FailureKind.AGENT_TIMEOUT if kind == "cancelled" else None),
    )
    verdict = check_name("cancelled")
    assert verdict == {
        "name": "cancelled",
        "category": "registered",
        "suggestion": None,
        "replacement": "agent_timeout",
    }
    assert render_text([verdict]) == "cancelled  registered, deprecated: use 'agent_timeout'\n"


def test_declarations_come_from_config_option_too(
    project: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    config = elsewhere / "kinds.toml"
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
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr == (
        "failure-kinds check: error: pyproject.toml: [tool.failure-kinds.namespaces] 'swe_env': "
        "must be a list of kind names (strings)\n"
    )


def test_stdin_closed_is_one_line_and_exit_2(project: Path) -> None:
    # The shell closes descriptor 0 before the interpreter starts, so sys.stdin is None.
    shell = subprocess.run(
        f"{shlex.join(command('check', '-'))} <&-",
        shell=True,
        capture_output=True,
        text=True,
        cwd=project,
    )
    assert shell.returncode == 2
    assert shell.stdout == ""
    assert shell.stderr == "failure-kinds check: error: - reads standard input, which is closed\n"


def test_stdin_names_include_undeclared(project: Path) -> None:
    result = run("-", cwd=project, stdin="swe_env:patch_apply_failed\nswe_env:test_colection_error\n")
    assert result.returncode == 1
    assert (
        "swe_env:test_colection_error  undeclared, did you mean 'swe_env:test_collection_error'?"
        in result.stdout
    )


NAMESPACED = st.from_regex(r"[a-z][a-z0-9_]{0,10}:[a-z][a-z0-9_]{0,20}", fullmatch=True)
# Meant as <server>:<kind> and written wrong, mostly: capitals, a hyphen, a space, a second colon, an empty
# side, a line end (a few come out well-formed, which the tests below allow for).
MALFORMED = st.from_regex(r"[A-Za-z0-9_\- ]{0,10}:[A-Za-z0-9_:\- ]{0,20}\n?", fullmatch=True)


@settings(max_examples=examples(300), deadline=None)
@given(st.one_of(NAMESPACED, MALFORMED, st.text(max_size=40), st.sampled_from(sorted(FAILURE_KINDS))))
def test_category_follows_the_declaration(name: str) -> None:
    verdict = check_name(name, DECLARED)
    server, colon, kind = name.partition(":")
    if name in FAILURE_KINDS:
        expected = "registered"
    elif verdict["category"] in ("namespaced", "undeclared"):
        # Well-formed namespaced: undeclared exactly when the server is declared and the kind is not.
        assert colon
        expected = "undeclared" if server in DECLARED and kind not in DECLARED[server] else "namespaced"
    elif verdict["category"] == "legacy":
        expected = "legacy"  # an older label: tested with the history
    else:
        expected = "malformed" if colon else "unregistered"
    assert verdict["category"] == expected
    if verdict["category"] == "undeclared" and verdict["suggestion"] is not None:
        assert verdict["suggestion"].startswith(f"{server}:")
    # Without a declaration nothing is ever undeclared.
    assert check_name(name)["category"] != "undeclared"


def test_json_is_one_array_across_batches(project: Path) -> None:
    names = [f"swe_env:kind_{index}" if index % 3 else "cancelled" for index in range(CHECK_BATCH * 2 + 7)]
    result = run("-", "--format", "json", cwd=project, stdin="\n".join(names) + "\n")
    assert result.returncode == 1
    expected = [check_name(name, DECLARED) for name in names]
    assert result.stdout == json.dumps(expected, indent=2) + "\n"
    empty = run("-", "--format", "json", cwd=project, stdin="\n \n")
    assert (empty.returncode, empty.stdout) == (0, "[]\n")


def test_endless_or_huge_stdin_costs_bounded_memory(project: Path) -> None:
    """A line of 300 MB without a newline, under a 1 GiB address-space limit: cut, reported, exit 1."""
    script = (
        "import resource, runpy, sys;"
        "resource.setrlimit(resource.RLIMIT_AS, (1024 ** 3, 1024 ** 3));"
        "sys.argv = ['failure-kinds', 'check', '-'];"
        "runpy.run_module('failure_kinds', run_name='__main__')"
    )
    with subprocess.Popen(
        [sys.executable, "-c", script],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=project,
    ) as process:
        assert process.stdin is not None
        chunk = b"x" * (1024 * 1024)
        try:
            for _ in range(300):
                process.stdin.write(chunk)
            process.stdin.write(b"\ncancelled\n")
            process.stdin.close()
        except BrokenPipeError:
            pass
        # The output is two short lines, so reading it after the input cannot deadlock.
        assert process.stdout is not None
        assert process.stderr is not None
        stdout, stderr = process.stdout.read(), process.stderr.read()
        process.wait(timeout=300)
    assert process.returncode == 1, stderr
    lines = stdout.decode().splitlines()
    assert len(lines) == 2
    assert lines[0].endswith("...  unregistered")
    assert len(lines[0]) < 2 * 1024 * 4
    assert lines[1].startswith("cancelled")


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


def test_a_malformed_namespaced_name_is_malformed_in_text_and_json_and_exit_1(project: Path) -> None:
    result = run("My_Env:Quota", "swe_env:Patch_Apply_Failed", "cancelled", cwd=project)
    assert result.returncode == 1
    assert result.stdout == (
        "My_Env:Quota                malformed (expected <server>:<kind> in lower case)\n"
        "swe_env:Patch_Apply_Failed  malformed (expected <server>:<kind> in lower case), did you mean "
        "'swe_env:patch_apply_failed'?\n"
        "cancelled                   registered\n"
    )
    data = run("--format", "json", "My_Env:Quota", cwd=project)
    assert data.returncode == 1
    assert json.loads(data.stdout) == [
        {"name": "My_Env:Quota", "category": "malformed", "suggestion": None, "replacement": None}
    ]
    alone = run("-", cwd=project, stdin="a:b:c\n")
    assert (alone.returncode, alone.stdout) == (
        1,
        "a:b:c  malformed (expected <server>:<kind> in lower case)\n",
    )


@settings(max_examples=examples(300), deadline=None)
@given(st.one_of(MALFORMED, NAMESPACED, st.text(max_size=30)))
def test_check_the_lint_and_the_warning_agree_on_what_is_malformed(name: str) -> None:
    """One value, three tools: check says malformed exactly when the lint says FK002 and the run-time
    warning calls it a malformed namespaced kind, and validate_failure_kind still returns it unchanged."""
    import logging

    import failure_kinds
    from failure_kinds._runtime import restore, snapshot
    from failure_kinds.lint import Checker

    malformed = check_name(name, DECLARED)["category"] == "malformed"
    verdict = Checker(namespaces=DECLARED).verdict(name)
    assert malformed == (verdict is not None and verdict[0] == "FK002")
    messages: list[str] = []

    class Recorder(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            messages.append(record.getMessage())

    handler = Recorder(logging.WARNING)
    saved = snapshot()
    failure_kinds.logger.addHandler(handler)
    try:
        failure_kinds.declare_namespace("swe_env", DECLARED["swe_env"])
        assert failure_kinds.validate_failure_kind(name) is name
    finally:
        failure_kinds.logger.removeHandler(handler)
        restore(saved)
    warned = [message for message in messages if message.startswith("malformed namespaced failure kind ")]
    assert len(warned) == malformed
    if malformed:
        assert "(expected <server>:<kind> in lower case)" in warned[0]


@pytest.mark.parametrize("form", ["text", "json"])
def test_a_huge_name_on_the_command_line_is_cut_as_one_read_from_stdin(project: Path, form: str) -> None:
    name = "judge_" + "x" * 100_000
    given = run(name, "--format", form, cwd=project)
    read = run("-", "--format", form, cwd=project, stdin=name + "\n")
    assert (given.returncode, given.stdout, given.stderr) == (read.returncode, read.stdout, read.stderr)
    assert given.returncode == 1
    assert len(given.stdout) < 2 * NAME_LIMIT
    if form == "json":
        assert json.loads(given.stdout)[0]["name"] == name[:NAME_LIMIT] + "..."
    else:
        assert given.stdout == f"{name[:NAME_LIMIT]}...  unregistered\n"


def test_a_crafted_name_on_the_command_line_is_one_escaped_line(project: Path) -> None:
    name = "\x1b]0;owned\x07" + "\u202e" + "a\nfake  registered" + "y" * 5000
    result = run(name, cwd=project)
    assert result.returncode == 1
    (line,) = result.stdout.splitlines()
    assert "\x1b" not in line
    assert "\u202e" not in line
    assert line.endswith("  unregistered")
    assert len(line) < 4 * NAME_LIMIT


# Names around the cut, with the characters that must not reach a terminal raw (a byte that is not UTF-8
# is \udcff once read); a byte-order mark, which stdin drops at its start, only inside.
_CHARACTERS = st.one_of(
    st.sampled_from("ab_:\x1b\u202e\t \x00\udcff"),
    # No lone surrogate but those of undecodable bytes (\udc80-\udcff): stdin's bytes cannot hold another.
    st.characters(exclude_characters="\r\n\ufeff", exclude_categories=["Cs"]),
)


def _repeated(text: str, times: int) -> str:
    return text * times


LONG_NAMES = st.one_of(
    st.text(_CHARACTERS, max_size=40),
    st.builds(_repeated, st.text(_CHARACTERS, min_size=1, max_size=8), st.integers(1, 700)),
)


@settings(max_examples=examples(200), deadline=None)
@given(LONG_NAMES)
def test_a_name_is_checked_and_shown_alike_from_the_command_line_and_stdin(name: str) -> None:
    """The one cut: a name given as an argument (bounded) and the same line read from stdin are the same
    name, checked the same, and shown as one line of bounded length."""
    import io

    read = list(stdin_names(io.BytesIO(name.encode("utf-8", "surrogateescape") + b"\n")))
    cut = bounded(name)
    assert read == ([cut] if name.strip() or len(name) > NAME_LIMIT else [])
    assert cut == name if len(name) <= NAME_LIMIT else cut == name[:NAME_LIMIT] + "..."
    shown = render_text([check_name(cut, DECLARED)])
    assert shown.count("\n") == 1
    assert shown.endswith("\n")
    assert len(shown) < 12 * NAME_LIMIT
    assert shown[:-1].isprintable()
