"""failure-kinds lint: which literals it reports, where, and how it says so."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest
from helpers import ROOT, examples, needs, run_cli
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from failure_kinds import lint
from failure_kinds.cli import main
from failure_kinds.commands.lint import github_command


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
    # A --field typed in bytes that are not UTF-8 holds a surrogate escape: looked for, never a crash.
    assert [line for line, _ in codes_by_line(source, ("kind", "\udcff"))] == [1]


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


@pytest.mark.parametrize(
    ("encoding", "said", "iconv"),
    [
        ("utf-16", "UTF-16 (little-endian)", "UTF-16"),
        ("utf-16-be", "UTF-16 (big-endian)", "UTF-16BE"),
        ("utf-32-le", "UTF-32 (little-endian)", "UTF-32LE"),
    ],
)
def test_wide_text_is_fk000_naming_its_encoding(encoding: str, said: str, iconv: str) -> None:
    (finding,) = lint.Checker().check_source('row = {"failure_kind": "bad"}\n'.encode(encoding), "w.py")
    assert finding.message == (
        f"cannot parse: {said} text; Python source is read as UTF-8 unless it declares another encoding: "
        f"convert it with iconv -f {iconv} -t UTF-8"
    )


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
    return run_cli("lint", *arguments, cwd=cwd)


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
    assert missing.stderr == f"failure-kinds lint: {tmp_path / 'missing.py'}: no such file\n"
    assert "Traceback" not in missing.stderr
    assert run().returncode == 2


def test_fk000_does_not_stop_the_other_files(tmp_path: Path) -> None:
    (tmp_path / "a_broken.py").write_text("def f(:\n")
    (tmp_path / "b_bad.py").write_text('row = {"failure_kind": "bad"}\n')
    result = run(str(tmp_path))
    assert result.returncode == 1
    assert [line.split(": ")[1].split()[0] for line in result.stdout.splitlines()] == ["FK000", "FK001"]


@pytest.mark.interpreter_independent
@needs("pre_commit")
def test_pre_commit_hook_definition(tmp_path: Path) -> None:
    """The hooks, installed by pre-commit itself from this repository, fail on a misspelled or undeclared
    kind and on a missing generated module, with the declaration read from the project's pyproject.toml."""
    pre_commit = Path(sys.executable).parent / "pre-commit"
    project = tmp_path / "project"
    project.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    (project / "bad.py").write_text('row = {"failure_kind": "judge_faild"}\n')
    (project / "good.py").write_text('row = {"failure_kind": "judge_failed"}\n')
    (project / "pyproject.toml").write_text(
        '[tool.failure-kinds]\ngenerate = "declared.py"\n'
        '[tool.failure-kinds.namespaces]\nswe_env = ["patch_apply_failed"]\n'
    )
    (project / "undeclared.py").write_text('row = {"failure_kind": "swe_env:patch_aply_failed"}\n')
    environment = {
        "PRE_COMMIT_HOME": str(tmp_path / "cache"),
        "PATH": str(Path(shutil.which("git") or "git").parent),
    }
    # Every hook the repository defines, on the files given.
    command = [str(pre_commit), "try-repo", str(ROOT), "--files"]
    failing = subprocess.run(
        [*command, "bad.py", "good.py", "undeclared.py", "pyproject.toml"],
        cwd=project,
        capture_output=True,
        text=True,
        env=environment,
    )
    assert failing.returncode == 1, failing.stdout + failing.stderr
    assert "bad.py:1:24: FK001 unregistered failure kind 'judge_faild'" in failing.stdout
    assert "undeclared.py:1:24: FK003 undeclared failure kind 'swe_env:patch_aply_failed'" in failing.stdout
    assert "declared.py is missing; run failure-kinds generate" in failing.stdout
    written = run_cli("generate", cwd=project)
    assert written.returncode == 0, written.stderr
    passing = subprocess.run(
        [*command, "good.py", "pyproject.toml", "declared.py"],
        cwd=project,
        capture_output=True,
        text=True,
        env=environment,
    )
    assert passing.returncode == 0, passing.stdout + passing.stderr


def test_unreadable_file_is_named_the_rest_linted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    secret = tmp_path / "a_secret.py"
    secret.write_text("x = 1\n")
    (tmp_path / "b_bad.py").write_text('row = {"failure_kind": "bad"}\n')
    refuse(monkeypatch, secret)
    findings, unreadable = lint.lint_paths([str(tmp_path)])
    assert unreadable == [f"{secret}: permission denied"]
    assert [Path(finding.path).name for finding in findings] == ["b_bad.py"]


# Declared namespaces (FK003)

SWE = {"swe_env": ("patch_apply_failed", "test_collection_error")}


def declared_findings(source: str) -> list[tuple[int, int, str, str]]:
    checker = lint.Checker(lint.DEFAULT_FIELDS, SWE)
    return [
        (finding.line, finding.col, finding.code, finding.message)
        for finding in checker.check_source(textwrap.dedent(source).encode(), "example.py")
    ]


def test_undeclared_kind_of_a_declared_server_is_fk003_with_suggestion() -> None:
    source = """\
        record(failure_kind="swe_env:patch_aply_failed")
        record(failure_kind="swe_env:patch_apply_failed")
        record(failure_kind="web_env:anything_goes")
        record(failure_kind="swe_env:invented_here")
        record(failure_kind="swe_env:Bad")
        row = {"failure_kind": "swe_env:test_colection_error"}  # noqa: FK003
        """
    assert declared_findings(source) == [
        (
            1,
            21,
            "FK003",
            "undeclared failure kind 'swe_env:patch_aply_failed': swe_env declares no such kind; "
            "did you mean 'swe_env:patch_apply_failed'?",
        ),
        (4, 21, "FK003", "undeclared failure kind 'swe_env:invented_here': swe_env declares no such kind"),
        (
            5,
            21,
            "FK002",
            "malformed namespaced failure kind 'swe_env:Bad': expected <server>:<kind>, each [a-z][a-z0-9_]*",
        ),
    ]
    # Without the declaration every well-formed namespaced kind passes, as before.
    assert codes_by_line(source) == [(5, "FK002")]


# Where lint sees kinds that checkers cannot: match statements and annotated names


def test_match_cases_on_a_kind_are_checked() -> None:
    source = """\
        match row["failure_kind"]:
            case "transport_timout":
                pass
            case "cancelled" | "judge_faild" | "swe_env:patch_aply_failed":
                pass
            case ("verifer_error" | "shutdown") as kind:
                pass
            case other:
                pass
        match result.failure_kind:
            case "sesion_lost":
                pass
        match something_else:
            case "not_a_kind":
                pass
        match row["reason"]:
            case "not_a_kind":
                pass
        """
    assert [(line, code) for line, _, code, _ in declared_findings(source)] == [
        (2, "FK001"),
        (4, "FK001"),
        (4, "FK003"),
        (6, "FK001"),
        (11, "FK001"),
    ]


def test_names_and_attributes_annotated_as_kinds_are_checked() -> None:
    source = """\
        from typing import Final, Optional
        import failure_kinds as fk
        from failure_kinds import AnyFailureKind, FailureKind, FailureKindName
        from myenv.failure_kinds_declared import ProjectFailureKind


        class Row:
            kind: FailureKindName
            other: str


        def handle(k: AnyFailureKind, e: FailureKind, p: "ProjectFailureKind",
                   o: Optional[fk.FailureKindName], n: FailureKindName | None, plain: str,
                   many: list[FailureKindName]) -> None:
            if k == "transport_timout": pass
            if e != "cancel" or e.value == "cancell" or plain.value == "not_a_kind": pass
            if "verifer_error" == p: pass
            if o in ("cancelled", "judge_faild"): pass
            if n not in {"shutdwn"}: pass
            if plain == "not_a_kind": pass
            if many == ["not_a_kind"]: pass
            match k:
                case "agent_timout":
                    pass
            match plain:
                case "not_a_kind":
                    pass


        limit: Final[FailureKindName] = "cohort_incomplete"
        saved: FailureKindName = "persistance_failed"
        row = Row()
        if row.kind == "kill_shapd": pass
        if row.other == "not_a_kind": pass
        if self.current == "not_a_kind": pass
        saved = "persistence_faild"
        row.kind = "cohort_incomplete"
        row.kind = "cohort_incompleet"
        row.other = "not_a_kind"
        unrelated = "not_a_kind"
        """
    expected = [15, 16, 16, 17, 18, 19, 23, 31, 33, 36, 38]
    assert codes_by_line(source) == [(line, "FK001") for line in expected]


def test_non_literals_stay_silent_in_the_new_positions() -> None:
    source = """\
        def handle(k: FailureKindName, prefix: str) -> None:
            if k == f"{prefix}_timeout": pass
            if k in (prefix, choose("bad")): pass
            match k:
                case Constants.BAD:
                    pass
                case [x, y]:
                    pass
                case {"failure_kind": other_kind}:
                    pass
        """
    assert findings_in(source) == []


# Lint never aborts the run

DEEP_SOURCES = {
    "attribute chain": "y = a" + ".b" * 5000 + "\n",
    "long attribute chain": "y = a" + ".b" * 100_000 + "\n",
    "operator chain": "y = 1" + " + 1" * 100_000 + "\n",
    "call chain": "y = f" + "()" * 50_000 + "\n",
    "subscript chain": "y = a" + "[0]" * 100_000 + "\n",
    "nested brackets": "y = " + "[" * 5000 + "]" * 5000 + "\n",
    "unary chain": "y = " + "-" * 100_000 + "x\n",
    "not chain": "y = " + "not " * 100_000 + "x\n",
    "nested lambdas": "y = " + "lambda: " * 20_000 + "x\n",
    "nested blocks": "".join(" " * depth + "if x:\n" for depth in range(200)) + " " * 200 + "pass\n",
    "annotation chain": "k: " + " | ".join(["FailureKindName"] * 20_000) + ' = "bad"\n',
}


@pytest.mark.parametrize("name", sorted(DEEP_SOURCES))
def test_deeply_nested_source_is_fk000_or_linted_never_a_crash(name: str) -> None:
    source = '{"failure_kind": "bad"}\n' + DEEP_SOURCES[name]
    findings = lint.Checker().check_source(source.encode(), "deep.py")
    codes = [finding.code for finding in findings]
    # Either the parser copes (and the finding on line 1 is reported) or the file is FK000 with the reason.
    assert codes in (["FK000"], ["FK001"], ["FK001", "FK001"]), codes
    if codes == ["FK000"]:
        assert findings[0].message.startswith("cannot parse")


def test_hostile_files_do_not_stop_the_run(tmp_path: Path) -> None:
    """Through the command, with bounded memory and time: every deep file is FK000 or linted, and the
    ordinary file after them is still reported."""
    for index, name in enumerate(sorted(DEEP_SOURCES)):
        (tmp_path / f"a_{index:02d}.py").write_text(DEEP_SOURCES[name])
    (tmp_path / "z_last.py").write_text('row = {"failure_kind": "judge_faild"}\n')
    limit = (
        "import resource, runpy, sys;"
        "resource.setrlimit(resource.RLIMIT_AS, (2 * 1024 ** 3, 2 * 1024 ** 3));"
        "sys.argv = ['failure-kinds', 'lint', sys.argv[1]];"
        "runpy.run_module('failure_kinds', run_name='__main__')"
    )
    result = subprocess.run(
        [sys.executable, "-c", limit, str(tmp_path)], capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    assert result.stdout.splitlines()[-1].startswith(f"{tmp_path / 'z_last.py'}:1:")
    assert all(": FK000 cannot parse" in line for line in result.stdout.splitlines()[:-1])


def test_only_regular_files_are_read(tmp_path: Path) -> None:
    (tmp_path / "a_fifo.py").parent.mkdir(exist_ok=True)
    os.mkfifo(tmp_path / "a_fifo.py")
    (tmp_path / "b_device.py").symlink_to("/dev/zero")
    (tmp_path / "c_bad.py").write_text('row = {"failure_kind": "bad"}\n')
    # Inside a directory walk they are skipped: nobody meant them, and reading would hang or never end.
    findings, unreadable = lint.lint_paths([str(tmp_path)])
    assert [Path(finding.path).name for finding in findings] == ["c_bad.py"]
    assert unreadable == []
    # Named directly they are an error, not a hang and not a MemoryError.
    result = run(str(tmp_path / "a_fifo.py"), "/dev/zero", str(tmp_path / "c_bad.py"))
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        f"failure-kinds lint: {tmp_path / 'a_fifo.py'}: not a regular file",
        "failure-kinds lint: /dev/zero: not a regular file",
    ]
    assert result.stdout.startswith(f"{tmp_path / 'c_bad.py'}:1:")


def test_files_past_the_size_cap_are_fk000_unread(tmp_path: Path) -> None:
    big = tmp_path / "big.py"
    with big.open("wb") as file:
        file.write(b'row = {"failure_kind": "bad"}\n')
        file.truncate(lint.SIZE_LIMIT + 1)  # sparse: costs no disk
    findings, _ = lint.lint_paths([str(big)])
    assert [(finding.code, finding.message) for finding in findings] == [
        ("FK000", f"larger than {lint.SIZE_LIMIT // (1024 * 1024)} MiB; not read")
    ]


def test_missing_paths_and_unreadable_directories_are_named_the_rest_linted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "locked").mkdir()
    (tmp_path / "locked" / "hidden.py").write_text('row = {"failure_kind": "bad"}\n')
    (tmp_path / "open").mkdir()
    (tmp_path / "open" / "bad.py").write_text('row = {"failure_kind": "bad"}\n')
    real_scandir = os.scandir
    locked = str(tmp_path / "locked")

    def refusing_scandir(path: str) -> object:
        if str(path) == locked:
            raise PermissionError(13, "Permission denied", path)
        return real_scandir(path)

    # Permissions mean nothing to root, as CI runs, so the refusal is what listing raises.
    monkeypatch.setattr(os, "scandir", refusing_scandir)
    findings, unreadable = lint.lint_paths([str(tmp_path / "missing.py"), str(tmp_path)])
    assert unreadable == [
        f"{tmp_path / 'missing.py'}: no such file",
        f"{locked}: permission denied",
    ]
    assert [Path(finding.path).name for finding in findings] == ["bad.py"]


def test_missing_path_is_exit_2_with_the_rest_reported(tmp_path: Path) -> None:
    (tmp_path / "bad.py").write_text('row = {"failure_kind": "bad"}\n')
    result = run(str(tmp_path / "missing.py"), str(tmp_path / "bad.py"))
    assert result.returncode == 2
    assert result.stderr == f"failure-kinds lint: {tmp_path / 'missing.py'}: no such file\n"
    assert result.stdout.count("FK001") == 1


def test_unknown_coding_cookie_is_fk000() -> None:
    (finding,) = lint.Checker().check_source(
        b'# -*- coding: klingon -*-\nrow = {"failure_kind": "bad"}\n', "x.py"
    )
    assert (finding.code, finding.line, finding.col) == ("FK000", 1, 1)
    assert "unknown encoding" in finding.message


ENCODABLE = st.text(alphabet=st.characters(codec="latin-1", exclude_categories=("Cc", "Cs")), max_size=30)


@settings(max_examples=examples(200), deadline=None)
@given(
    prefix=ENCODABLE,
    encoding=st.sampled_from(["latin-1", "utf-8", "cp1252", "iso-8859-15"]),
    bom=st.booleans(),
)
def test_columns_count_characters_in_the_declared_encoding(prefix: str, encoding: str, bom: bool) -> None:
    line = f"x = {prefix!r}, {{'failure_kind': 'bad'}}"
    try:
        body = line.encode(encoding)
    except UnicodeEncodeError:
        return
    cookie = f"# -*- coding: {encoding} -*-\n".encode()
    if bom:
        if encoding != "utf-8":
            return
        cookie = b"\xef\xbb\xbf" + cookie
    (finding,) = lint.Checker().check_source(cookie + body + b"\n", "x.py")
    assert finding.code == "FK001"
    assert (finding.line, finding.col) == (2, line.index("'bad'") + 1)


def test_file_names_are_shown_escaped(tmp_path: Path) -> None:
    crafted = "x\nforged.py:1:1: FK001 unregistered failure kind 'fake'\x1b[2J.py"
    (tmp_path / crafted).write_text('row = {"failure_kind": "bad"}\n')
    raw = os.fsencode(tmp_path) + b"/caf\xe9.py"
    with open(raw, "wb") as file:
        file.write(b'row = {"failure_kind": "bad"}\n')
    result = run(str(tmp_path))
    assert result.returncode == 1, result.stderr
    lines = result.stdout.splitlines()
    assert len(lines) == 2
    assert all(": FK001 unregistered failure kind 'bad'" in line for line in lines)
    assert "\x1b" not in result.stdout
    assert "\\x1b" in result.stdout
    assert "\\n" in result.stdout
    assert "\\udce9" in result.stdout or "\\xe9" in result.stdout


def test_github_commands_name_the_file_itself_escaped_by_githubs_rules(tmp_path: Path) -> None:
    # GitHub's workflow-command rules: %, CR and LF in the message; those and ":" and "," in a property.
    # The runner decodes them, so a name with a line break must arrive as %0A, not display-escaped.
    for name in ("n\nl.py", "c\rr,1:2%.py"):
        (tmp_path / name).write_text('row = {"failure_kind": "bad"}\n')
    result = run("--format", "github", ".", cwd=tmp_path)
    assert result.stdout == (
        "::error file=./c%0Dr%2C1%3A2%25.py,line=1,col=24,title=FK001::unregistered failure kind 'bad'\n"
        "::error file=./n%0Al.py,line=1,col=24,title=FK001::unregistered failure kind 'bad'\n"
    )
    parser = lint.Finding("a.py", 1, 1, "FK000", "cannot parse: 50%\r\nof \x1b[2J")
    assert (
        github_command(parser)
        == "::error file=a.py,line=1,col=1,title=FK000::cannot parse: 50%25%0D%0Aof \\x1b[2J\n"
    )


# Configuration through the command


def test_command_reads_the_nearest_pyproject_and_the_config_option(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / "src").mkdir(parents=True)
    (project / "pyproject.toml").write_text(
        '[tool.failure-kinds.namespaces]\nswe_env = ["patch_apply_failed"]\n'
    )
    producer = project / "src" / "producer.py"
    producer.write_text('row = {"failure_kind": "swe_env:patch_aply_failed"}\n')
    found = run("producer.py", cwd=project / "src")
    assert found.returncode == 1
    assert found.stdout == (
        "producer.py:1:24: FK003 undeclared failure kind 'swe_env:patch_aply_failed': swe_env declares no "
        "such kind; did you mean 'swe_env:patch_apply_failed'?\n"
    )
    elsewhere = tmp_path / "kinds.toml"
    elsewhere.write_text('[namespaces]\nswe_env = ["patch_aply_failed"]\n')
    assert run(str(producer), "--config", str(elsewhere), cwd=tmp_path).returncode == 0
    elsewhere.write_text('[namespaces]\nswe_env = ["Patch"]\n')
    malformed = run(str(producer), "--config", str(elsewhere), cwd=tmp_path)
    assert malformed.returncode == 2
    assert malformed.stdout == ""
    assert malformed.stderr == (
        "failure-kinds lint: error: kinds.toml: [namespaces] 'swe_env': the kind 'Patch' does not match "
        "[a-z][a-z0-9_]*\n"
    )


SOURCE_PIECES = st.sampled_from(
    [
        'row = {"failure_kind": "bad"}\n',
        "match k:\n    case 'x' | 'y':\n        pass\n",
        "def f(k: FailureKindName):\n    return k == 'nope'\n",
        "# -*- coding: latin-1 -*-\n",
        "\ufeff",
        "\r\n",
        "\x00",
        "é",
        "(" * 300,
        "[" * 100,
        "x = a" + ".b" * 3000 + "\n",
        '"""',
        "\\",
        "\t",
        "\x0c",
        "k: FailureKindName = ",
        "'swe_env:patch_aply_failed'\n",
    ]
)


@settings(max_examples=examples(300), deadline=None)
@given(
    st.one_of(
        st.binary(max_size=400),
        st.lists(SOURCE_PIECES, max_size=12).map(
            lambda pieces: "".join(pieces).encode("utf-8", "surrogatepass")
        ),
        st.lists(SOURCE_PIECES, max_size=12).map(lambda pieces: "".join(pieces).encode("latin-1", "replace")),
    )
)
def test_any_bytes_give_findings_never_an_exception(source: bytes) -> None:
    findings = lint.Checker(lint.DEFAULT_FIELDS, SWE).check_source(source, "any.py")
    for finding in findings:
        assert finding.line >= 1
        assert finding.col >= 1
        assert finding.code in ("FK000", "FK001", "FK002", "FK003")
        assert "\n" not in str(finding)
    if any(finding.code == "FK000" for finding in findings):
        assert len(findings) == 1


# The linted file's own compiler warnings are the file's business: none reaches stderr or the caller.

INVALID_ESCAPES = st.lists(
    st.sampled_from(["\\d", "\\w", "\\.", "\\ ", "\\q", "\\%", "\\/"]), min_size=1, max_size=5
).map("".join)


@settings(max_examples=examples(50), deadline=None)
@given(INVALID_ESCAPES, st.sampled_from(["bad", "cancelled"]))
def test_the_linted_files_warnings_are_captured(escapes: str, kind: str) -> None:
    import warnings

    # "is" with a literal is a SyntaxWarning on every supported Python; an invalid escape is one on 3.12+.
    source = f'pattern = "{escapes}"\nif pattern is "x": pass\nrow = {{"failure_kind": "{kind}"}}\n'
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        findings = lint.Checker().check_source(source.encode(), "escapes.py")
    assert caught == []
    assert [(finding.code, finding.line) for finding in findings] == ([("FK001", 3)] if kind == "bad" else [])


def test_the_command_prints_none_of_the_linted_files_warnings(tmp_path: Path) -> None:
    crafted = tmp_path / "x\nforged.py:1:1: FK001 unregistered failure kind 'fake'\x1b[2J.py"
    crafted.write_text('pattern = "\\d"\nif pattern is "x": pass\nrow = {"failure_kind": "bad"}\n')
    # "error" would turn a warning that escaped into a failure; the default filters would print it.
    for filters in ("default", "error", "always"):
        result = run_cli("lint", str(crafted), env={"PYTHONWARNINGS": filters})
        assert result.stderr == ""
        assert result.returncode == 1
        (line,) = result.stdout.splitlines()
        assert line.isprintable()
        assert line.endswith(":3:24: FK001 unregistered failure kind 'bad'")


# Every path in every message is escaped: a crafted file name cannot forge a finding line.

CRAFTED_NAMES = (
    st.lists(
        st.sampled_from(["a", "\n", "\r", "\x1b", "[2J", "\u202e", "\x07", ":1:1: FK001 forged", "\udcff"]),
        min_size=1,
        max_size=10,
    )
    .map("".join)
    .filter(lambda name: not name.isprintable())
)


@settings(
    max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(CRAFTED_NAMES, st.sampled_from(["finding", "unparseable", "missing", "fifo", "directory"]))
def test_a_crafted_file_name_is_one_escaped_line(
    capsys: pytest.CaptureFixture[str], name: str, problem: str
) -> None:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        path = root / f"{name}.py"
        if problem == "finding":
            path.write_text('row = {"failure_kind": "bad"}\n')
        elif problem == "unparseable":
            path.write_text("def (:\n\u202e\n")
        elif problem == "fifo":
            os.mkfifo(path)
        elif problem == "directory":
            (root / name).mkdir()
            (root / name / "bad.py").write_text('row = {"failure_kind": "bad"}\n')
            path = root / name
        code = main(["lint", str(path)])
        out, err = capsys.readouterr()
    lines = out.splitlines() + err.splitlines()
    (line,) = lines
    assert line.isprintable(), line
    expected = {"finding": 1, "unparseable": 1, "directory": 1, "missing": 2, "fifo": 2}[problem]
    assert code == expected


def test_a_dash_is_a_usage_error_naming_standard_input_and_reads_nothing(tmp_path: Path) -> None:
    (tmp_path / "ok.py").write_text('row = {"failure_kind": "cancelled"}\n')
    for arguments in (["-"], ["ok.py", "-"], ["--fix", "-"]):
        result = run_cli("lint", *arguments, cwd=tmp_path, stdin='row = {"failure_kind": "bad"}\n')
        assert (result.returncode, result.stdout) == (2, ""), arguments
        assert result.stderr == (
            "failure-kinds lint: error: - would be standard input, which lint does not read: name files or "
            "directories (a file named - as ./-)\n"
        )
    # A file that is really named "-" is linted under the name the message gives.
    (tmp_path / "-").write_text('row = {"failure_kind": "bad"}\n')
    named = run_cli("lint", "./-", cwd=tmp_path)
    assert named.returncode == 1
    assert named.stdout.startswith("./-:1:24: FK001 ")
