"""The failure-kinds command, run as a user runs it."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from failure_kinds import FailureKind, cli

ROOT = Path(__file__).parent.parent


def run(*arguments: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "failure_kinds", *arguments],
        input=stdin,
        capture_output=True,
        text=True,
        cwd=ROOT,
    )


def assert_one_line_usage_error(result: subprocess.CompletedProcess[str]) -> None:
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert result.stderr.strip().splitlines()[-1].startswith("failure-kinds")
    assert "error:" in result.stderr


def test_version() -> None:
    result = run("--version")
    assert result.returncode == 0
    assert re.fullmatch(r"failure-kinds \d+\.\d+\.\d+\n", result.stdout)


@pytest.mark.parametrize("command", [[], ["list"], ["check"]])
def test_help_explains_every_command(command: list[str]) -> None:
    result = run(*command, "--help")
    assert result.returncode == 0
    assert "usage: failure-kinds" in result.stdout
    assert len(result.stdout.splitlines()) > 4


def test_no_command_is_a_usage_error() -> None:
    assert_one_line_usage_error(run())


def test_list_text_groups_by_domain() -> None:
    result = run("list")
    assert result.returncode == 0
    lines = result.stdout.splitlines()
    assert lines[0] == "transport"
    for kind in FailureKind:
        assert any(line.split()[:1] == [kind.value] and kind.description in line for line in lines)
    headers = [line for line in lines if line and not line.startswith(" ")]
    assert headers == list(dict.fromkeys(kind.domain for kind in FailureKind))


def test_list_json_is_every_kind() -> None:
    result = run("list", "--format", "json")
    entries = json.loads(result.stdout)
    assert [entry["value"] for entry in entries] == [kind.value for kind in FailureKind]
    assert entries[0] == {
        "name": "TRANSPORT_UNREACHABLE",
        "value": "transport_unreachable",
        "domain": "transport",
        "description": FailureKind.TRANSPORT_UNREACHABLE.description,
    }


def test_readme_table_is_current() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    start = readme.index("<!-- vocabulary table")
    start = readme.index("\n", start) + 1
    end = readme.index("<!-- end of vocabulary table -->")
    assert readme[start:end] == cli.render_list_markdown()


def test_bad_format_is_a_usage_error() -> None:
    assert_one_line_usage_error(run("list", "--format", "xml"))


def test_check_clean_names_exit_zero() -> None:
    result = run("check", "cancelled", "my_env:quota")
    assert result.returncode == 0
    assert result.stdout.splitlines() == ["cancelled     registered", "my_env:quota  namespaced"]


def test_check_unregistered_exits_one_with_suggestion() -> None:
    result = run("check", "judge_faild", "cancelled", "nonsense_label")
    assert result.returncode == 1
    assert result.stdout.splitlines() == [
        "judge_faild     unregistered, did you mean 'judge_failed'?",
        "cancelled       registered",
        "nonsense_label  unregistered",
    ]


def test_check_reads_stdin_and_speaks_json() -> None:
    result = run("check", "-", "--format", "json", stdin="Transport-Timeout\r\n\nsession_lost\n")
    assert result.returncode == 1
    assert json.loads(result.stdout) == [
        {"name": "Transport-Timeout", "category": "unregistered", "suggestion": "transport_timeout"},
        {"name": "session_lost", "category": "registered", "suggestion": None},
    ]


def test_check_escapes_control_characters() -> None:
    result = run("check", "bad\x1b[2Jname")
    assert result.returncode == 1
    assert "\x1b" not in result.stdout
    assert "'bad\\x1b[2Jname'" in result.stdout


def test_check_dash_mixed_with_names_is_a_usage_error() -> None:
    assert_one_line_usage_error(run("check", "cancelled", "-"))


def test_check_without_names_is_a_usage_error() -> None:
    assert_one_line_usage_error(run("check"))


def test_closed_pipe_is_quiet(tmp_path: Path) -> None:
    names = tmp_path / "names.txt"
    names.write_text("cancelled\n" * 200_000)
    # Far more output than a pipe buffers, so the writer meets the closed pipe mid-stream.
    script = (
        f"{sys.executable} -m failure_kinds check - < {names} | head -c 10 >/dev/null; "
        "echo ${PIPESTATUS[0]}"
    )
    result = subprocess.run(["bash", "-c", script], capture_output=True, text=True, cwd=ROOT)
    assert result.stderr == ""
    assert result.stdout.strip() == "0"
