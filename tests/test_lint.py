"""failure-kinds lint: which literals it reports, where, and how it says so."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from failure_kinds import lint

ROOT = Path(__file__).parent.parent


def refuse(monkeypatch: pytest.MonkeyPatch, *refused: Path) -> None:
    """Make the lint's open refuse ``refused`` as it would for a user without access. Permissions mean
    nothing to root, as CI runs, so the refusal is what opening raises."""
    real_open = lint._open_descriptor

    def refusing_open(path: str) -> int:
        if path in {str(item) for item in refused}:
            raise PermissionError(13, "Permission denied", path)
        return real_open(path)

    monkeypatch.setattr(lint, "_open_descriptor", refusing_open)


def findings_in(
    source: str, fields: tuple[str, ...] = lint.DEFAULT_FIELDS
) -> list[tuple[int, int, str, str]]:
    checker = lint.Checker(fields)
    return [
        (finding.line, finding.col, finding.code, finding.message)
        for finding in checker.check_source(textwrap.dedent(source).encode(), "example.py")
    ]


def codes_by_line(source: str, fields: tuple[str, ...] = lint.DEFAULT_FIELDS) -> list[tuple[int, str]]:
    return [(line, code) for line, _, code, _ in findings_in(source, fields)]


def test_every_position_is_recognised() -> None:
    source = """\
        record(failure_kind="bad_keyword")
        dict(failure_kind="bad_dict_call")
        row = {"failure_kind": "bad_display"}
        row["failure_kind"] = "bad_subscript"
        result.failure_kind = "bad_attribute"
        result.failure_kind: str = "bad_annotated"
        if row["failure_kind"] == "bad_eq": pass
        if result.failure_kind != "bad_ne": pass
        if "bad_reversed" == row["failure_kind"]: pass
        if row["failure_kind"] in ("cancelled", "bad_in_tuple"): pass
        if row["failure_kind"] not in ["bad_in_list"]: pass
        if result.failure_kind in {"bad_in_set"}: pass
        validate_failure_kind("bad_validate")
        fk.metric_label("bad_metric")
        is_registered("bad_registered")
        failure_kinds.is_namespaced("bad_namespaced")
        """
    assert codes_by_line(source) == [(line, "FK001") for line in range(1, 17)]


def test_registered_namespaced_and_non_literals_are_clean() -> None:
    source = """\
        record(failure_kind="transport_timeout")
        record(failure_kind="my_env:quota_hit")
        record(failure_kind=kind)
        record(failure_kind=f"{prefix}_timeout")
        record(failure_kind=choose("bad"))
        record(failure_kind=b"bytes_are_not_kinds")
        record(other_field="not_a_kind")
        row = {"reason": "not_a_kind", "failure_kind": None}
        row["reason"] = "not_a_kind"
        if row["failure_kind"] == other: pass
        if row["failure_kind"] in allowed: pass
        if row["reason"] == "not_a_kind": pass
        validate_failure_kind(kind)
        print("failure_kind")
        """
    assert findings_in(source) == []


def test_messages_name_value_and_suggestion() -> None:
    (first, second, third) = findings_in(
        'record(failure_kind="judge_faild")\nrecord(failure_kind="my_env:Quota")\n'
        'record(failure_kind="invented_thing")\n'
    )
    assert first == (1, 21, "FK001", "unregistered failure kind 'judge_faild'; did you mean 'judge_failed'?")
    assert second[2] == "FK002"
    assert "'my_env:Quota'" in second[3]
    assert third[3] == "unregistered failure kind 'invented_thing'"


@pytest.mark.parametrize("value", ["my_env:", ":kind", "a:b:c", "My_env:x", "env:Kind", "env :kind"])
def test_malformed_namespaced_is_fk002(value: str) -> None:
    assert codes_by_line(f"record(failure_kind={value!r})\n") == [(1, "FK002")]


def test_columns_are_characters_not_bytes() -> None:
    assert findings_in('é = {"failure_kind": "bad"}\n')[0][:2] == (1, 22)


def test_noqa() -> None:
    source = """\
        a = {"failure_kind": "bad_one"}  # noqa
        b = {"failure_kind": "bad_two"}  # noqa: FK001
        c = {"failure_kind": "bad_three"}  # NOQA:FK002,FK001
        d = {"failure_kind": "bad:Four"}  # noqa: FK001
        e = {"failure_kind": "bad_five"}  # noqa: E501
        f = {"failure_kind": "bad_six"}
        """
    assert codes_by_line(source) == [(4, "FK002"), (5, "FK001"), (6, "FK001")]


def test_field_option_replaces_the_default() -> None:
    source = 'record(failure_kind="bad_one", kind="bad_two", error_kind="bad_three")\n'
    assert [line for line, _ in codes_by_line(source, ("kind", "error_kind"))] == [1, 1]
    assert len(codes_by_line(source)) == 1


def test_file_that_does_not_parse_is_fk000() -> None:
    ((line, _, code, message),) = findings_in("def broken(:\n    pass\n")
    assert (line, code) == (1, "FK000")
    assert message.startswith("cannot parse")


def test_null_bytes_and_bad_encoding_are_fk000(tmp_path: Path) -> None:
    (tmp_path / "nul.py").write_bytes(b"x = 1\x00\n")
    (tmp_path / "latin.py").write_bytes(b'x = "caf\xe9"\n')
    findings, unreadable = lint.lint_paths([str(tmp_path)])
    assert [(Path(finding.path).name, finding.code) for finding in findings] == [
        ("latin.py", "FK000"),
        ("nul.py", "FK000"),
    ]
    assert unreadable == []


def test_directories_are_searched_recursively(tmp_path: Path) -> None:
    (tmp_path / "pkg" / "sub").mkdir(parents=True)
    (tmp_path / ".hidden").mkdir()
    (tmp_path / "pkg" / "a.py").write_text('row = {"failure_kind": "bad_a"}\n')
    (tmp_path / "pkg" / "sub" / "b.pyi").write_text('X = dict(failure_kind="bad_b")\n')
    (tmp_path / "pkg" / "sub" / "c.txt").write_text('row = {"failure_kind": "bad_c"}\n')
    (tmp_path / ".hidden" / "d.py").write_text('row = {"failure_kind": "bad_d"}\n')
    findings, _ = lint.lint_paths([str(tmp_path)])
    assert [Path(finding.path).name for finding in findings] == ["a.py", "b.pyi"]


def run(*arguments: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "failure_kinds", "lint", *arguments], capture_output=True, text=True, cwd=cwd
    )


def test_command_text_output_and_exit_codes(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text('x = 1\nrow = {"failure_kind": "verifer_error"}\n')
    good = tmp_path / "good.py"
    good.write_text('row = {"failure_kind": "verifier_error"}\n')
    result = run(str(bad), str(good))
    assert result.returncode == 1
    assert result.stdout == (
        f"{bad}:2:24: FK001 unregistered failure kind 'verifer_error'; did you mean 'verifier_error'?\n"
    )
    clean = run(str(good))
    assert (clean.returncode, clean.stdout) == (0, "")


def test_command_json_output(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text('row = {"failure_kind": "a:B"}\n')
    result = run(str(bad), "--format", "json")
    assert result.returncode == 1
    assert json.loads(result.stdout) == [
        {
            "path": str(bad),
            "line": 1,
            "col": 24,
            "code": "FK002",
            "message": "malformed namespaced failure kind 'a:B': "
            "expected <server>:<kind>, each [a-z][a-z0-9_]*",
        }
    ]


def test_command_usage_errors(tmp_path: Path) -> None:
    missing = run(str(tmp_path / "missing.py"))
    assert missing.returncode == 2
    assert "no such file or directory" in missing.stderr
    assert "Traceback" not in missing.stderr
    assert run().returncode == 2


def test_fk000_does_not_stop_the_other_files(tmp_path: Path) -> None:
    (tmp_path / "a_broken.py").write_text("def f(:\n")
    (tmp_path / "b_bad.py").write_text('row = {"failure_kind": "bad"}\n')
    result = run(str(tmp_path))
    assert result.returncode == 1
    assert [line.split(": ")[1].split()[0] for line in result.stdout.splitlines()] == ["FK000", "FK001"]


def test_pre_commit_hook_definition(tmp_path: Path) -> None:
    """The hook, installed by pre-commit itself from this repository, fails on a misspelled kind."""
    pre_commit = Path(sys.executable).parent / "pre-commit"
    assert pre_commit.exists(), "pre-commit is a test dependency"
    project = tmp_path / "project"
    project.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    (project / "bad.py").write_text('row = {"failure_kind": "judge_faild"}\n')
    (project / "good.py").write_text('row = {"failure_kind": "judge_failed"}\n')
    environment = {
        "PRE_COMMIT_HOME": str(tmp_path / "cache"),
        "PATH": str(Path(shutil.which("git") or "git").parent),
    }
    command = [str(pre_commit), "try-repo", str(ROOT), "failure-kinds-lint", "--files"]
    failing = subprocess.run(
        [*command, "bad.py", "good.py"], cwd=project, capture_output=True, text=True, env=environment
    )
    assert failing.returncode == 1, failing.stdout + failing.stderr
    assert "bad.py:1:24: FK001 unregistered failure kind 'judge_faild'" in failing.stdout
    passing = subprocess.run(
        [*command, "good.py"], cwd=project, capture_output=True, text=True, env=environment
    )
    assert passing.returncode == 0, passing.stdout + passing.stderr


def test_unreadable_file_is_named_the_rest_linted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    secret = tmp_path / "a_secret.py"
    secret.write_text("x = 1\n")
    (tmp_path / "b_bad.py").write_text('row = {"failure_kind": "bad"}\n')
    refuse(monkeypatch, secret)
    findings, unreadable = lint.lint_paths([str(tmp_path)])
    assert unreadable == [f"{secret}: Permission denied"]
    assert [Path(finding.path).name for finding in findings] == ["b_bad.py"]
