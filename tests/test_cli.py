"""The failure-kinds command, run as a user runs it."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
from pathlib import Path

import pytest
from helpers import ROOT, command
from helpers import run_cli as run

from failure_kinds import FailureKind, Stage
from failure_kinds.commands.listing import STAGES_HEADING, render_markdown


def assert_one_line_usage_error(result: subprocess.CompletedProcess[str]) -> None:
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert result.stderr.strip().splitlines()[-1].startswith("failure-kinds")
    assert "error:" in result.stderr


def test_version() -> None:
    result = run("--version")
    assert result.returncode == 0
    assert re.fullmatch(r"failure-kinds \d+\.\d+\.\d+\n", result.stdout)


@pytest.mark.parametrize("command", [[], ["list"], ["check"], ["audit"]])
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
    assert headers == [*dict.fromkeys(kind.domain for kind in FailureKind), STAGES_HEADING]
    stages = lines[lines.index(STAGES_HEADING) + 1 :]
    assert [line.split()[0] for line in stages if line] == [stage.value for stage in Stage]
    for stage, line in zip(Stage, stages, strict=False):
        assert line.endswith(stage.description)


def test_list_json_is_every_kind_and_stage() -> None:
    result = run("list", "--format", "json")
    listed = json.loads(result.stdout)
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


def test_list_markdown_is_the_table() -> None:
    # The docs' vocabulary page is this output, committed in it by docs/vocabulary_table.py.
    result = run("list", "--format", "markdown")
    assert result.returncode == 0
    assert result.stdout == render_markdown()
    for stage in Stage:
        assert f"| `{stage.value}` | {stage.description} |" in result.stdout.splitlines()


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
        {
            "name": "Transport-Timeout",
            "category": "unregistered",
            "suggestion": "transport_timeout",
            "replacement": None,
        },
        {"name": "session_lost", "category": "registered", "suggestion": None, "replacement": None},
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
    script = f"{shlex.join(command('check', '-'))} < {names} | head -c 10 >/dev/null; echo ${{PIPESTATUS[0]}}"
    result = subprocess.run(["bash", "-c", script], capture_output=True, text=True, cwd=ROOT)
    assert result.stderr == ""
    assert result.stdout.strip() == "0"


# audit

EXAMPLE = "examples/rollout_failures.jsonl"
ALIASES = "examples/aliases.toml"


def test_audit_help() -> None:
    result = run("audit", "--help")
    assert result.returncode == 0
    for option in [
        "--field",
        "--alias",
        "--aliases",
        "--strict",
        "--format",
        "--decoder",
        "--max-line-bytes",
        "--config",
    ]:
        assert option in result.stdout


def test_audit_text_report() -> None:
    result = run("audit", EXAMPLE)
    assert result.returncode == 0
    assert result.stderr == ""  # no progress line when stderr is not a terminal
    out = result.stdout
    assert "registered: 22 distinct" in out
    assert "namespaced: 4 distinct" in out
    assert "by server: swe_env" in out
    assert "did you mean 'transport_timeout'?" in out
    assert f"first seen {EXAMPLE}:" in out
    assert "regrouped" not in out  # nothing aliased


def test_audit_with_aliases_regroups() -> None:
    result = run("audit", EXAMPLE, "--aliases", ALIASES, "--alias", "Judge-Failed=judge_failed")
    assert result.returncode == 0
    assert "timeout_exceeded" in result.stdout
    assert "-> agent_timeout" in result.stdout
    assert "-> judge_failed" in result.stdout
    assert "regrouped by canonical kind" in result.stdout


def test_audit_json_schema() -> None:
    result = run("audit", EXAMPLE, "--aliases", ALIASES, "--format", "json")
    assert result.returncode == 0
    report = json.loads(result.stdout)
    assert {
        "records",
        "with_kind",
        "without_kind",
        "invalid",
        "unparseable",
        "kinds",
        "namespaces",
        "namespaces_overflow",
        "first_invalid",
        "first_unparseable",
        "files",
    } <= set(report)
    assert report["records"] == sum(
        report[key] for key in ("with_kind", "without_kind", "invalid", "unparseable")
    )
    for entry in report["kinds"]:
        assert set(entry) == {
            "value",
            "length",
            "count",
            "category",
            "suggestion",
            "replacement",
            "note",
            "canonical",
            "first_seen",
        }
        assert entry["length"] == len(entry["value"])
        assert entry["category"] in {"registered", "namespaced", "unregistered", "aliased"}
    aliased = {
        entry["value"]: entry["canonical"] for entry in report["kinds"] if entry["category"] == "aliased"
    }
    assert aliased["timeout_exceeded"] == "agent_timeout"
    assert report["files"] == [{"path": EXAMPLE, "records": report["records"], "error": None}]
    assert set(report["namespaces"]) == {"swe_env", "web_env"}


def test_audit_strict_exit_codes() -> None:
    assert run("audit", EXAMPLE, "--strict").returncode == 1
    fixes = ["--alias", "Judge-Failed=judge_failed", "--alias", "sesion_lost=session_lost"]
    fixes += ["--alias", "transport_timout=transport_timeout", "--alias", "verifer_error=verifier_error"]
    assert run("audit", EXAMPLE, "--aliases", ALIASES, *fixes, "--strict").returncode == 0
    assert run("audit", EXAMPLE).returncode == 0


def test_audit_unreadable_input_exits_two_but_reports_the_rest(tmp_path: Path) -> None:
    result = run("audit", str(tmp_path / "missing.jsonl"), EXAMPLE, "--format", "json")
    assert result.returncode == 2
    assert result.stderr == f"failure-kinds audit: {tmp_path / 'missing.jsonl'}: no such file\n"
    report = json.loads(result.stdout)
    assert report["files"][0]["error"] == "no such file"
    assert report["files"][1]["records"] > 0


@pytest.mark.parametrize(
    "arguments",
    [
        ["--alias", "old=transport_timout"],
        ["--alias", "nonsense"],
        ["--aliases", "no/such/aliases.toml"],
        ["--field", "a..b"],
        ["--format", "yaml"],
    ],
)
def test_audit_usage_errors(arguments: list[str]) -> None:
    result = run("audit", EXAMPLE, *arguments)
    assert_one_line_usage_error(result)
    assert len(result.stderr.strip().splitlines()) == 1
    assert result.stdout == ""


def test_audit_stdin() -> None:
    result = run("audit", "-", "--format", "json", stdin='{"failure_kind": "cancelled"}\n{}\n')
    assert result.returncode == 0
    report = json.loads(result.stdout)
    assert (report["records"], report["with_kind"], report["without_kind"]) == (2, 1, 1)
    assert report["files"][0]["path"] == "<stdin>"


def test_audit_escapes_control_characters_in_values(tmp_path: Path) -> None:
    path = tmp_path / "evil.jsonl"
    path.write_text(json.dumps({"failure_kind": "bad\x1b[2J\nkind"}) + "\n" + '{"failure_kind": "\\ud800"}\n')
    result = run("audit", str(path))
    assert result.returncode == 0
    assert "\x1b" not in result.stdout
    assert "'bad\\x1b[2J\\nkind'" in result.stdout
    assert "'\\ud800'" in result.stdout


def test_docs_show_current_main_job_output() -> None:
    readme = (ROOT / "docs" / "quickstart.md").read_text(encoding="utf-8")
    start = readme.index("<!-- main job output")
    start = readme.index("```\n", start) + len("```\n")
    end = readme.index("```", start)
    result = run("audit", EXAMPLE, "--aliases", ALIASES)
    assert readme[start:end] == result.stdout


def test_the_exit_code_line_names_every_command_that_exits_1() -> None:
    """The top-level --help lists the commands with findings (exit 1) as each command's own help says
    it: a command that exits 1 only with an option is named with that option."""
    import argparse
    from collections.abc import Mapping
    from typing import cast

    from failure_kinds.cli import build_parser

    parser = build_parser()
    listed = re.search(r"1 findings \(([^)]*)\)", parser.epilog or "")
    assert listed is not None
    subcommands = cast("Mapping[str, argparse.ArgumentParser]", vars(parser)["subcommands"])
    expected: set[str] = set()
    for name, subparser in subcommands.items():
        own = " ".join([subparser.description or "", subparser.epilog or ""])
        said = re.search(r"\b1 (?:with (--[a-z-]+)|when|otherwise)\b", own)
        if said is not None:
            expected.add(name if said[1] is None else f"{name} {said[1]}")
    assert expected >= {"check", "audit --strict", "lint", "generate --check", "diff"}
    assert set(listed[1].split(", ")) == expected
    shown = " ".join(run("--help").stdout.split())
    assert f"1 findings ({listed[1]})" in shown


@pytest.mark.parametrize(
    "arguments",
    [
        ["lint", "missing"],
        ["lint", "--config", "missing", "."],
        ["check", "--config", "missing", "cancelled"],
        ["export", "--config", "missing"],
        ["generate", "--config", "missing"],
        ["audit", "missing"],
        ["audit", "--config", "missing", "."],
        ["audit", "--aliases", "missing", "."],
        ["diff", "missing", "missing"],
    ],
    ids=" ".join,
)
def test_every_command_says_no_such_file_alike(tmp_path: Path, arguments: list[str]) -> None:
    result = run(*arguments, cwd=tmp_path)
    assert result.returncode == 2
    (line,) = result.stderr.splitlines()
    assert line.startswith(f"failure-kinds {arguments[0]}: ")
    assert line.endswith("missing: no such file")
