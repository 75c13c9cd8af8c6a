"""lint --fix and --diff: older labels rewritten exactly where code writes a kind, safely on any tree."""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import types
from pathlib import Path
from typing import Any

import pytest
from helpers import examples, run_cli, run_cli_bytes
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from failure_kinds import lint
from failure_kinds.cli import main

WRITE = 'x = dict(failure_kind="peer_drop")'
FIXABLE = f"{WRITE}\n".encode()
FIXED = FIXABLE.replace(b"peer_drop", b"transport_peer_drop")


def run(*arguments: str, cwd: Path, **options: Any) -> subprocess.CompletedProcess[str]:
    return run_cli("lint", *arguments, cwd=cwd, **options)


@pytest.mark.parametrize(
    ("literal", "rewritten"),
    [
        ("'peer_drop'", "'transport_peer_drop'"),
        ('"peer_drop"', '"transport_peer_drop"'),
        ("'''peer_drop'''", "'''transport_peer_drop'''"),
        ('"""peer_drop"""', '"""transport_peer_drop"""'),
        ("r'peer_drop'", "r'transport_peer_drop'"),
        ('U"peer_drop"', 'U"transport_peer_drop"'),
        # Not the plain label: rewriting would be a guess, so the file is left as it is.
        ('"peer\\x5fdrop"', None),
        ('"peer" "_drop"', None),
        ('("peer"\n "_drop")', None),
        ('"peer_\\\ndrop"', None),
    ],
)
def test_the_quotes_and_prefix_are_kept_and_other_literals_left_alone(
    tmp_path: Path, literal: str, rewritten: str | None
) -> None:
    source = f"row = {{'failure_kind': {literal}}}  # é\n".encode()
    (tmp_path / "a.py").write_bytes(source)
    result = run("--fix", "a.py", cwd=tmp_path)
    assert result.returncode == (1 if rewritten is None else 0), result.stdout
    assert (tmp_path / "a.py").read_bytes() == source.replace(
        literal.encode(), (rewritten or literal).encode()
    )


PRODUCER = """\
import failure_kinds as fk

DROPPED = 'peer_drop'


def classify(error) -> fk.FailureKindName:
    if error.timed_out:
        return "timeout"  # the older transport label
    return "judge_faild" if error.judge else r'oom_killed'


record(failure_kind=DROPPED, reason="x")
row = {"failure_kind": "timeout_exceeded", "stage": "agent", "other": fk.OOM_KILLED}  # no single fix
"""


def test_fix_rewrites_older_labels_with_one_replacement_and_diff_shows_the_same(tmp_path: Path) -> None:
    target = tmp_path / "producer.py"
    target.write_text(PRODUCER)
    diff = run("--diff", "producer.py", cwd=tmp_path)
    assert (diff.returncode, diff.stderr, target.read_text()) == (1, "", PRODUCER)
    changed = [line for line in diff.stdout.splitlines() if line[:1] in "+-"]
    assert changed[:2] == ["--- producer.py", "+++ producer.py"]
    assert changed[2:4] == ["-DROPPED = 'peer_drop'", "+DROPPED = 'transport_peer_drop'"]
    assert len(changed) == 2 + 6
    result = run("--fix", "producer.py", cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    lines = result.stdout.splitlines()
    assert lines[:3] == [
        "producer.py:3:11 peer_drop -> transport_peer_drop",
        "producer.py:8:16 timeout -> transport_timeout",
        "producer.py:9:46 oom_killed -> provider_oom_killed",
    ]
    # What has no certain fix is still reported: a typo, a label without a single replacement, a constant.
    assert [line.split(" ")[:2] for line in lines[3:]] == [
        ["producer.py:9:12:", "FK001"],
        ["producer.py:13:24:", "FK004"],
        ["producer.py:13:74:", "FK004"],
    ]
    expected = (
        PRODUCER.replace("'peer_drop'", "'transport_peer_drop'")
        .replace('"timeout"', '"transport_timeout"')
        .replace("r'oom_killed'", "r'provider_oom_killed'")
    )
    assert target.read_text() == expected
    assert "".join(line[1:] + "\n" for line in diff.stdout.splitlines()[3:] if line[:1] in " +") in expected
    again = run("--fix", "producer.py", cwd=tmp_path)
    assert again.stdout.splitlines() == lines[3:]
    nothing = run("--diff", "producer.py", cwd=tmp_path)
    assert (nothing.returncode, nothing.stdout) == (0, "")
    shown = " ".join(run("--help", cwd=tmp_path).stdout.split())  # --help says what --diff prints
    assert "the diff is the whole output (no findings, whatever --format says)" in shown
    assert "every position printed is in the rewritten file" in shown


@pytest.mark.parametrize(
    "options", [["--fix", "--diff"], ["--unsafe-fixes"], ["--format=sarif", "--unsafe-fixes"], ["--field="]]
)
def test_options_that_do_not_go_together_are_a_usage_error(tmp_path: Path, options: list[str]) -> None:
    result = run(*options, ".", cwd=tmp_path)
    assert (result.returncode, len(result.stderr.splitlines())) == (2, 1)


COMPARED = 'if row["failure_kind"] in ("timeout", "sandbox"):\n    pass\n'
SANDBOX = (
    "older failure kind 'sandbox' has no single replacement: any failure of the sandbox; a provider_ or "
    "session_ kind depending on what failed"
)


@pytest.mark.parametrize(
    ("output", "left"),
    [
        ("text", f"a.py:1:49: FK004 {SANDBOX}\n"),
        ("json", None),
        ("github", f"::warning file=a.py,line=1,col=49,title=FK004::{SANDBOX}\n"),
    ],
)
def test_the_diff_is_the_whole_output_and_fix_reports_what_is_left_where_the_rewrite_moved_it(
    tmp_path: Path, output: str, left: str | None
) -> None:
    (tmp_path / "a.py").write_text(COMPARED)
    diff = run("--diff", "--unsafe-fixes", "--format", output, "a.py", cwd=tmp_path)
    assert (diff.returncode, diff.stderr) == (1, "")
    first = COMPARED.splitlines()[0]
    assert diff.stdout == (
        f"--- a.py\n+++ a.py\n@@ -1,2 +1,2 @@\n-{first}\n"
        f"+{first.replace('timeout', 'transport_timeout')}\n     pass\n"
    )
    assert (tmp_path / "a.py").read_text() == COMPARED
    # "sandbox" has no single replacement, and moves right by as much as "timeout" grew before it.
    result = run("--fix", "--unsafe-fixes", "--format", output, "a.py", cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    assert (tmp_path / "a.py").read_text() == COMPARED.replace('"timeout"', '"transport_timeout"')
    change = "a.py:1:28 timeout -> transport_timeout\n"
    assert result.stdout == change + str(left) if output == "text" else result.stderr == change
    assert output != "github" or result.stdout == left
    if output == "json":
        (finding,) = json.loads(result.stdout)
        assert (finding["line"], finding["col"], finding["code"]) == (1, 49, "FK004")
    again = run("--format", output, "a.py", cwd=tmp_path)
    assert (again.returncode, again.stderr) == (1, "")
    assert again.stdout == result.stdout.removeprefix(change)


UNSAFE = "not fixed by default: code that reads older data compares with it; --unsafe-fixes rewrites it"
# Each line, and whether code writes a kind there (a rewrite is safe) or reads one (it is not).
SHAPES = [
    ('record(failure_kind="peer_drop")', True),
    ('row = {"failure_kind": "peer_drop"}', True),
    ('row["failure_kind"] = "peer_drop"', True),
    ('def default(failure_kind="peer_drop"): pass', True),
    ('def kind() -> FailureKindName: return "peer_drop"', True),
    ('if row["failure_kind"] == "peer_drop": row["failure_kind"] = "transport_peer_drop"', False),
    ('if row["failure_kind"] != "peer_drop": pass', False),
    ('if row["failure_kind"] in ("peer_drop", "agent_timeout"): pass', False),
    ('match row["failure_kind"]:\n    case "peer_drop": pass', False),
    ('match row:\n    case {"failure_kind": "peer_drop"}: pass', False),
    # A literal anywhere under a compared operand is read: a dict display, a call, a generator's test.
    ('if row == {"failure_kind": "peer_drop"}: pass', False),
    ('assert {"failure_kind": "peer_drop"} in rows', False),
    ('assert migrate(old) == Failure(failure_kind="peer_drop")', False),
    ('any(r is not dict(failure_kind="peer_drop") for r in rows)', False),
    # A module constant used in both kinds of place counts as read.
    ('DROPPED = "peer_drop"\nrecord(failure_kind=DROPPED)\nif row["failure_kind"] == DROPPED: pass', False),
    ('row = {"failure_kind": "peer_drop"}  # noqa: FK001', False),
]


def test_fix_rewrites_where_code_writes_a_kind_and_reads_only_with_unsafe_fixes(tmp_path: Path) -> None:
    lines = ["from failure_kinds import FailureKindName", *(line for line, _ in SHAPES)]
    (tmp_path / "a.py").write_text("\n".join(lines) + "\n")
    result = run("--fix", "a.py", cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    written = (tmp_path / "a.py").read_text()
    for line, writes in SHAPES:
        assert (line.replace('"peer_drop"', '"transport_peer_drop"') if writes else line) in written
    left = result.stdout.splitlines()[sum(writes for _, writes in SHAPES) :]
    assert len(left) == sum(not writes and "noqa" not in line for line, writes in SHAPES)
    assert all(
        line.endswith(f"FK004 older failure kind 'peer_drop': use 'transport_peer_drop'; {UNSAFE}")
        for line in left
    )
    unsafe = run("--fix", "--unsafe-fixes", "a.py", cwd=tmp_path)
    assert (unsafe.returncode, unsafe.stdout.count(" -> ")) == (0, len(left))
    assert (tmp_path / "a.py").read_text().endswith(f"\n{SHAPES[-1][0]}\n"), "its noqa leaves it alone"


# Generated files: literals that share a line (fixable older labels of different lengths, so their
# neighbours move; a label without a single replacement; a typo; a registered kind; a silenced one),
# after non-ASCII characters, which count in characters, not bytes.
LITERALS = [
    '"peer_drop"',
    "'timeout'",
    '"unreachable"',
    "'oom_killed'",
    '"sandbox"',
    "'judge_faild'",
    '"cancelled"',
]
FIXABLE_LABELS = {"peer_drop", "timeout", "unreachable", "oom_killed"}
ROWS = st.tuples(
    st.sampled_from(["", "'é' and ", "'ü€' != note and ", "record("]),
    st.lists(st.sampled_from(LITERALS), min_size=1, max_size=5),
    st.sampled_from(["", "  # noqa: FK004", "  # é 'peer_drop'"])
    | st.text(st.characters(exclude_categories=("Cs",), exclude_characters="\r\n\x00"), max_size=20).map(
        "  # ".__add__
    ),
)


def at(lines: list[str], line: int, col: int, value: str) -> bool:
    return lines[line - 1][col - 1 :].startswith((f'"{value}"', f"'{value}'"))


# The example fixes everything: exit 0, no finding left in the JSON, each change on stderr.
@settings(max_examples=examples(100), deadline=None)
@given(st.lists(ROWS, min_size=1, max_size=5), st.sampled_from(["\n", "\r\n", "\r"]), st.booleans())
@example([("record(", ['"unreachable"'], "")], "\n", False)
@example([("record(", ["'timeout'"], "  # transport_timeout")], "\n", False)
def test_fix_changes_only_the_literals_and_every_position_it_prints_is_in_the_rewritten_file(
    rows: list[tuple[str, list[str], str]], line_end: str, unsafe: bool
) -> None:
    source = "".join(
        (
            f"record(failure_kind={literals[0]})"
            if prefix == "record("
            else f'found = {prefix}row["failure_kind"] in ({", ".join(literals)},)'
        )
        + comment
        + line_end
        for prefix, literals, comment in rows
    ).encode()
    checker = lint.Checker(unsafe_fixes=unsafe)
    before = checker.check_source(source, "generated.py")
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "generated.py")
        Path(path).write_bytes(source)
        stdout, stderr = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
            code = main(["lint", "--fix", *(["--unsafe-fixes"] if unsafe else []), "--format", "json", path])
        after = Path(path).read_bytes()
    left = json.loads(stdout.getvalue())
    assert code == (1 if left else 0)
    remaining = checker.check_source(after, path)
    assert left == [finding.to_json() for finding in remaining]
    assert all(finding.fix is None for finding in remaining)
    assert sorted(item.code for item in remaining) == sorted(item.code for item in before if item.fix is None)
    lines = re.split(r"\r\n|\r|\n", after.decode())
    for finding in left:
        assert at(lines, finding["line"], finding["col"], finding["message"].split("'")[1]), finding
    changes = re.findall(r"^.*:(\d+):(\d+) (\w+) -> (\w+)$", stderr.getvalue(), re.MULTILINE)
    assert len(changes) == len(stderr.getvalue().splitlines()) == sum(item.fix is not None for item in before)
    # Every other byte is kept: each change undone where it was printed, right to left, gives the source.
    for line, col, old, new in sorted(changes, key=lambda change: (int(change[0]), int(change[1])))[::-1]:
        assert old in FIXABLE_LABELS
        assert at(lines, int(line), int(col), new), (line, col, new)
        text = lines[int(line) - 1]
        lines[int(line) - 1] = text[: int(col)] + old + text[int(col) + len(new) :]
    assert after.count(line_end.encode()) == source.count(line_end.encode())
    assert lines == re.split(r"\r\n|\r|\n", source.decode())


# --fix on anyone's tree: owner, links, a save made meanwhile, long names, an interrupt


def test_fix_keeps_owner_group_and_mode_or_leaves_the_file_alone() -> None:
    import urllib.parse  # noqa: F401  (SARIF's, imported while the user it runs as can read the stdlib)

    # Root (CI containers, pre-commit in Docker) gives the files another owner and then fixes one as a
    # third user; anyone else checks the owner and the setuid and setgid bits of their own files.
    root = os.geteuid() == 0
    owner = (1234, 5678) if root else (os.geteuid(), os.getegid())
    folder = Path(tempfile.mkdtemp())  # not under tmp_path, whose folders only root may enter
    try:
        folder.chmod(0o777)
        for name in ("kept.py", "other.py"):
            (folder / name).write_bytes(FIXABLE)
            os.chown(folder / name, *owner)
            (folder / name).chmod(0o6755)
        assert run("--fix", "kept.py", cwd=folder).returncode == 0
        if root:
            # Another user may replace a file in a folder anyone writes to, but not make it theirs.
            os.seteuid(4321)
            try:
                # --diff and SARIF offer no fix that --fix refuses.
                results = [
                    run(*option, "other.py", cwd=folder)
                    for option in (["--fix"], ["--diff"], ["--format", "sarif"])
                ]
            finally:
                os.seteuid(0)
            for result in results:
                assert result.returncode == 1
                assert (
                    "other.py: not fixed: its owner 1234:5678 cannot be kept; nothing written"
                    in result.stderr
                )
            assert (results[1].stdout, '"fixes"' in results[2].stdout) == ("", False)
        for name, content in (("kept.py", FIXED), ("other.py", FIXABLE)):
            status = (folder / name).stat()
            assert (status.st_uid, status.st_gid, status.st_mode & 0o7777) == (*owner, 0o6755)
            assert (folder / name).read_bytes() == content
        assert sorted(os.listdir(folder)) == ["kept.py", "other.py"]
    finally:
        shutil.rmtree(folder)


# Files --fix leaves alone, and what --fix, --diff and SARIF say of each: none offers a fix.
LEFT_ALONE = {
    "hard links": (FIXABLE, "it has 2 names (hard links)"),
    "encoding": (
        b'# coding: utf-7\nx = "+AGE-"\n' + FIXABLE,
        "its bytes do not survive decoding as utf-7 and encoding",
    ),
    # Fixed, it would grow past what the lint reads, and be FK000 on every later run.
    "too large": (
        FIXABLE + b"#" * (lint.SIZE_LIMIT - len(FIXABLE) - 1) + b"\n",
        "its fixed text would be larger than 8 MiB",
    ),
}


@pytest.mark.parametrize("case", sorted(LEFT_ALONE))
def test_a_file_fix_refuses_is_left_alone_with_a_note(tmp_path: Path, case: str) -> None:
    source, reason = LEFT_ALONE[case]
    (tmp_path / "a.py").write_bytes(source)
    if case == "hard links":
        os.link(tmp_path / "a.py", tmp_path / "b.py")
    for option in ("--fix", "--diff", "--format=sarif"):
        result = run(option, ".", cwd=tmp_path)
        assert result.returncode == 1, option
        assert f"./a.py: not fixed: {reason}" in result.stderr
        assert ("+++" in result.stdout, '"fixes"' in result.stdout) == (False, False)
        assert (tmp_path / "a.py").read_bytes() == source
        assert (tmp_path / "a.py").stat().st_nlink == (2 if case == "hard links" else 1)


def test_a_file_that_cannot_be_read_again_for_its_fix_is_named_and_left_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A fix reads its file again, so that it rewrites the very bytes it lints: a file that cannot be read
    the second time (removed, or its permission taken away meanwhile) is named, exit 2, and left as it is."""
    (tmp_path / "a.py").write_bytes(FIXABLE)
    read, reads = lint.read_source, []

    def failing_again(path: str, **options: Any) -> bytes | str:
        reads.append(path)
        if len(reads) > 1:
            raise lint._Unreadable("permission denied")  # pyright: ignore[reportPrivateUsage]
        return read(path, **options)

    monkeypatch.setattr(lint, "read_source", failing_again)
    result = run("--fix", "a.py", cwd=tmp_path)
    assert (result.returncode, result.stderr, reads) == (
        2,
        "failure-kinds lint: a.py: permission denied\n",
        ["a.py"] * 2,
    )
    assert (tmp_path / "a.py").read_bytes() == FIXABLE


@pytest.mark.parametrize("save", ["in place", "by a rename"])
def test_a_save_made_while_fix_writes_is_kept_and_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, save: str
) -> None:
    target = tmp_path / "a.py"
    target.write_bytes(FIXABLE)
    create = tempfile.mkstemp

    def saving_meanwhile(*arguments: Any, **options: Any) -> Any:
        made = create(*arguments, **options)
        if save == "in place":
            target.write_bytes(FIXABLE + b"# saved\n")
        else:
            (tmp_path / "saved").write_bytes(FIXABLE)
            os.replace(tmp_path / "saved", target)
        return made

    monkeypatch.setattr(tempfile, "mkstemp", saving_meanwhile)
    result = run("--fix", "a.py", cwd=tmp_path)
    assert result.returncode == 1
    assert "a.py: not fixed: it changed while being fixed; nothing written" in result.stderr
    assert target.read_bytes() == (FIXABLE + b"# saved\n" if save == "in place" else FIXABLE)
    assert os.listdir(tmp_path) == ["a.py"]


def test_a_link_beside_its_target_is_fixed_once_and_a_long_name_is_fixed(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_bytes(FIXABLE)
    (tmp_path / "link.py").symlink_to("a.py")
    long = tmp_path / ("k" * 245 + ".py")  # as long as the file system allows
    long.write_bytes(FIXABLE)
    note = "failure-kinds lint: note: 1 input names a file already read; each file is read once\n"
    diff = run("--diff", ".", cwd=tmp_path)
    assert (diff.returncode, diff.stderr, diff.stdout.count("--- ")) == (1, note, 2)
    assert diff.stdout.startswith("--- a.py\n+++ a.py\n")  # no "./", which git apply refuses
    fixed = run("--fix", ".", cwd=tmp_path)
    assert (fixed.returncode, fixed.stderr) == (0, note)
    assert fixed.stdout.startswith("./a.py:1:23 peer_drop -> transport_peer_drop\n")
    assert {path.read_bytes() for path in (tmp_path / "a.py", tmp_path / "link.py", long)} == {FIXED}
    assert (tmp_path / "link.py").is_symlink()


@pytest.mark.parametrize("signal_number", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_an_interrupted_fix_leaves_every_file_whole_and_no_temporary_file(
    tmp_path: Path, signal_number: int
) -> None:
    source = FIXABLE + b"#" * (1 << 20) + b"\n"
    names = [f"m{number:02}.py" for number in range(30)]
    for name in names:
        (tmp_path / name).write_bytes(source)
    command = [sys.executable, "-m", "failure_kinds", "lint", "--fix", "."]
    process = subprocess.Popen(command, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    # Sent while a temporary file is there, where an unguarded run leaves it behind.
    deadline = time.monotonic() + 60
    while process.poll() is None and time.monotonic() < deadline:
        if any(name.startswith(".") for name in os.listdir(tmp_path)):
            break
    process.send_signal(signal_number)
    process.wait(60)
    assert sorted(os.listdir(tmp_path)) == names
    assert {(tmp_path / name).read_bytes() for name in names} <= {
        source,
        source.replace(b"peer_drop", b"transport_peer_drop"),
    }


# --diff: headers and lines as patch reads them, whatever the file's name and line ends

NAMES = (
    st.lists(
        st.text(
            alphabet=st.characters(blacklist_characters="/\x00", blacklist_categories=("Cs",)), max_size=8
        )
        | st.sampled_from(["\n", "\r", "\x1b[2J", "\u202e", "+++ ", "@@ -1 +1 @@", "%", "::"]),
        min_size=1,
        max_size=5,
    )
    .map("".join)
    .filter(lambda name: not name.startswith(".") and len(os.fsencode(name + ".py")) < 250)
)


@settings(
    max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(name=NAMES)
def test_a_crafted_file_name_makes_exactly_one_pair_of_headers(tmp_path: Path, name: str) -> None:
    folder = Path(tempfile.mkdtemp(dir=tmp_path))
    (folder / f"{name}.py").write_bytes(FIXABLE)
    lines = run("--diff", str(folder), cwd=tmp_path).stdout.splitlines()
    assert [line[:4] for line in lines if line.startswith(("--- ", "+++ "))] == ["--- ", "+++ "]
    assert all(line.removesuffix("\t").isprintable() for line in lines[:2])
    assert lines[2:] == ["@@ -1 +1 @@", f"-{WRITE}", f"+{WRITE.replace('peer_drop', 'transport_peer_drop')}"]


# Files whose diff once did not apply.
AWKWARD = {
    "bom.py": b"\xef\xbb\xbf" + WRITE.encode() + b"  # \xc3\xa9\n",
    "latin.py": f"# -*- coding: latin-1 -*-\nnote = 'café'; {WRITE}\n".encode("latin-1"),
    "latin-cr.py": f"# -*- coding: latin-1 -*-\rnote = 'café'; {WRITE}\r".encode("latin-1"),
    "cr.py": f"{WRITE}\ry = 1\r{WRITE}\r".encode(),
    "crlf.py": f"a = 1\r\n{WRITE}\r\nb = 2".encode(),
    "mixed.py": f"a = 1\r\n{WRITE}\ny = 2\r{WRITE}\r\nz = 3\n".encode(),
    "with space.py": FIXABLE,
    "ünï cödé.py": WRITE.encode(),
    # Names git quotes in C's way, which patch reads too.
    '"quoted.py': FIXABLE,
    " leading space.py": FIXABLE,
    "back\\slash.py": FIXABLE,
    "line\nbreak\x1b.py": FIXABLE,
}


@pytest.mark.parametrize("tool", [["patch", "-s", "-p0"], ["git", "apply", "-p0"]], ids=["patch", "git"])
def test_the_diff_applies_and_gives_what_fix_writes(tmp_path: Path, tool: list[str]) -> None:
    fixed, applied = tmp_path / "fixed", tmp_path / "applied"
    for folder in (fixed, applied):
        folder.mkdir()
        for name, source in AWKWARD.items():
            (folder / name).write_bytes(source)
    assert run("--fix", ".", cwd=fixed).returncode == 0
    diff = run_cli_bytes("lint", "--diff", ".", cwd=applied)
    assert diff.returncode == 1, diff.stderr
    # A lone carriage return does not end a line for patch, so it does not end a diff line either.
    assert b'\n-x = dict(failure_kind="peer_drop")\ry = 1\r' in diff.stdout
    subprocess.run(tool, input=diff.stdout, cwd=applied, check=True, capture_output=True)
    for name, source in AWKWARD.items():
        assert (applied / name).read_bytes() == (fixed / name).read_bytes() != source, name


@pytest.mark.parametrize("path", ["../a.py", "{root}/a.py"])
def test_a_diff_of_a_file_outside_the_working_directory_is_named_in_a_note(tmp_path: Path, path: str) -> None:
    (tmp_path / "a.py").write_bytes(FIXABLE)
    (tmp_path / "below").mkdir()
    result = run("--diff", path.format(root=tmp_path), cwd=tmp_path / "below")
    assert result.returncode == 1
    assert "a.py: outside the working directory, so patch -p0 and git apply do not apply" in result.stderr
    assert run("--diff", str(tmp_path / "a.py"), cwd=tmp_path).stdout.startswith("--- a.py\n")


def test_many_fixes_on_one_line_cost_work_in_proportion_to_the_line(monkeypatch: pytest.MonkeyPatch) -> None:
    """The work counted: the characters of each line encoded or sliced as its fixes are applied."""
    from failure_kinds import _fix

    counted: list[int] = []

    class Counted(str):
        def encode(self, *given: Any) -> bytes:
            counted.append(len(self))
            return super().encode(*given)

        def __getitem__(self, key: Any) -> str:
            part = super().__getitem__(key)
            counted.append(len(part))
            return part

    lines = _fix._LINE
    split = types.SimpleNamespace(findall=lambda text: [Counted(line) for line in lines.findall(text)])
    monkeypatch.setattr(_fix, "_LINE", split)
    work = []
    for count in (2000, 4000):
        source = b"x = [" + b'{"failure_kind": "peer_drop"}, ' * count + b"]\n"
        fixes = [finding.fix for finding in lint.Checker().check_source(source, "x.py") if finding.fix]
        counted.clear()
        after, changes = _fix.apply(source, fixes)
        assert (len(changes), after) == (count, source.replace(b"peer_drop", b"transport_peer_drop"))
        work.append(sum(counted))
    assert 0 < work[1] <= 2.2 * work[0]
