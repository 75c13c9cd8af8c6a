"""lint --fix and --diff rewrite older labels exactly, and --format github speaks the runner's syntax."""

from __future__ import annotations

import ast
import json
import os
import re
import signal
import subprocess
import sys
import time
import warnings
from pathlib import Path

import pytest
from helpers import examples, run_cli
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from failure_kinds import _fix, lint
from failure_kinds.commands.lint import github_command

# A label and its replacement, as the fixer sees them; the command tests below use the real history.
OLD, NEW = "peer_drop", "transport_peer_drop"


def fixes_for(source: bytes, old: str = OLD, new: str = NEW) -> list[lint.Fix]:
    """A fix for every literal holding ``old``, placed where the parser puts it."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the filler's invalid escapes are the generated file's business
        tree = ast.parse(source)
    return [
        lint.Fix(node.lineno, node.col_offset, node.end_lineno or 0, node.end_col_offset or 0, old, new)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and node.value == old
    ]


@pytest.mark.parametrize(
    ("literal", "rewritten"),
    [
        ("'peer_drop'", "'transport_peer_drop'"),
        ('"peer_drop"', '"transport_peer_drop"'),
        ("'''peer_drop'''", "'''transport_peer_drop'''"),
        ('"""peer_drop"""', '"""transport_peer_drop"""'),
        ("r'peer_drop'", "r'transport_peer_drop'"),
        ('U"peer_drop"', 'U"transport_peer_drop"'),
    ],
)
def test_the_quote_style_and_prefix_are_kept(literal: str, rewritten: str) -> None:
    source = f"row = {{'failure_kind': {literal}}}  # é\n".encode()
    after, applied = _fix.apply(source, fixes_for(source))
    assert after == source.replace(literal.encode(), rewritten.encode())
    assert len(applied) == 1


@pytest.mark.parametrize(
    "literal", ['"peer\\x5fdrop"', '"peer" "_drop"', '("peer"\n "_drop")', '"peer_\\\ndrop"']
)
def test_literals_that_are_not_the_plain_label_are_left_alone(literal: str) -> None:
    source = f"row = {{'failure_kind': {literal}}}\n".encode()
    fixes = fixes_for(source)
    assert fixes, "the parser reads the label"
    assert _fix.apply(source, fixes) == (source, [])


@pytest.mark.parametrize("line_end", [b"\n", b"\r\n", b"\r"])
def test_line_ends_and_a_missing_last_one_are_kept(line_end: bytes) -> None:
    # A declared encoding is read at any line end, as the parser reads it.
    lines = [
        b"# coding: latin-1",
        b"a = {'failure_kind': 'peer_drop'}",
        b"b = {'failure_kind': \"peer_drop\"}  # \xe9",
    ]
    source = line_end.join(lines)
    after, applied = _fix.apply(source, fixes_for(source))
    assert after == source.replace(b"'peer_drop'", b"'transport_peer_drop'").replace(
        b'"peer_drop"', b'"transport_peer_drop"'
    )
    assert [fix.line for fix in applied] == [2, 3]


def test_a_declared_encoding_and_a_byte_order_mark_are_kept() -> None:
    latin = "# -*- coding: latin-1 -*-\nnote = 'café'; row = {'failure_kind': 'peer_drop'}\n".encode(
        "latin-1"
    )
    after, _ = _fix.apply(latin, fixes_for(latin))
    assert after == latin.replace(b"'peer_drop'", b"'transport_peer_drop'")
    marked = b"\xef\xbb\xbfrow = {'failure_kind': 'peer_drop'}  # \xc3\xa9\n"
    after, _ = _fix.apply(marked, fixes_for(marked))
    assert after == marked.replace(b"'peer_drop'", b"'transport_peer_drop'")


def test_bytes_that_do_not_survive_their_encoding_are_unfixable() -> None:
    broken = b"row = {'failure_kind': 'peer_drop'}  # \xff\n"
    with pytest.raises(_fix.Unfixable):
        _fix.apply(broken, fixes_for(broken.replace(b"\xff", b"")))


FILLER = st.text(
    st.characters(codec="utf-8", exclude_categories=("Cs",), exclude_characters="\r\n"), max_size=30
)


@settings(max_examples=examples(200), deadline=None)
@given(FILLER, FILLER, st.sampled_from(["'", '"', "'''", '"""']), st.sampled_from(["\n", "\r\n", "\r"]))
def test_everything_but_the_literal_is_kept_byte_for_byte(
    before: str, after_text: str, quote: str, line_end: str
) -> None:
    assume(after_text != "peer_drop")  # then the second literal is one more fix, which this does not count
    source = (
        f"# {before}{line_end}x = {{'failure_kind': {quote}peer_drop{quote}}}  # {after_text}{line_end}"
        f"y = '{after_text}'{line_end}"
    ).encode("utf-8", "surrogatepass")
    try:
        fixes = fixes_for(source)
    except SyntaxError:
        return  # the filler made the module invalid; a file that does not parse is never fixed
    fixed, applied = _fix.apply(source, fixes)
    old, new = f"{quote}peer_drop{quote}".encode(), f"{quote}transport_peer_drop{quote}".encode()
    assert len(applied) == 1
    assert fixed == source.replace(old, new, 1)


def test_replace_file_keeps_the_mode_and_refuses_a_file_that_changed(tmp_path: Path) -> None:
    target = tmp_path / "tool.py"
    target.write_bytes(b"old")
    target.chmod(0o755)
    _fix.replace_file(str(target), b"old", b"new")
    assert target.read_bytes() == b"new"
    assert os.stat(target).st_mode & 0o777 == 0o755
    with pytest.raises(_fix.Unfixable, match="changed while being fixed"):
        _fix.replace_file(str(target), b"old", b"newer")
    assert target.read_bytes() == b"new"


# --format github


ESCAPES = {"%25": "%", "%0D": "\r", "%0A": "\n", "%3A": ":", "%2C": ","}


def unescape(text: str, codes: tuple[str, ...]) -> str:
    """The runner's decoding: each escape read once, left to right."""
    return re.sub("|".join(codes), lambda match: ESCAPES[match.group()], text)


def unescape_data(text: str) -> str:
    return unescape(text, ("%25", "%0D", "%0A"))


def unescape_property(text: str) -> str:
    return unescape(text, tuple(ESCAPES))


def parse_command(line: str) -> tuple[dict[str, str], str]:
    """A workflow command read the way the runner reads one."""
    assert line.startswith("::error ")
    assert line.endswith("\n")
    assert "\n" not in line[:-1]
    properties, _, message = line[len("::error ") : -1].partition("::")
    fields = dict(item.split("=", 1) for item in properties.split(","))
    return {name: unescape_property(value) for name, value in fields.items()}, unescape_data(message)


def test_github_command_shape() -> None:
    finding = lint.Finding("src/app.py", 3, 21, "FK001", "unregistered failure kind 'x'")
    assert github_command(finding) == (
        "::error file=src/app.py,line=3,col=21,title=FK001::unregistered failure kind 'x'\n"
    )


@settings(max_examples=examples(300), deadline=None)
@given(st.text(min_size=1, max_size=40), st.text(max_size=80))
def test_github_commands_round_trip_through_the_runners_escaping(path: str, message: str) -> None:
    finding = lint.Finding(path, 7, 3, "FK004", message)
    properties, text = parse_command(github_command(finding))
    assert (properties["line"], properties["col"], properties["title"]) == ("7", "3", "FK004")
    assert properties["file"] == path
    if message.replace("\r", "").replace("\n", "").isprintable():
        assert text == message
    else:
        assert text.replace("\r", "").replace("\n", "").isprintable()


def test_the_command_prints_github_commands(tmp_path: Path) -> None:
    (tmp_path / "a,b:c.py").write_text('row = {"failure_kind": "judge_faild"}\nk = "100%"\n')
    result = run_cli("lint", "--format", "github", ".", cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    assert result.stdout == (
        "::error file=./a%2Cb%3Ac.py,line=1,col=24,title=FK001::unregistered failure kind 'judge_faild'; "
        "did you mean 'judge_failed'?\n"
    )
    (tmp_path / "a,b:c.py").write_text('row = {"failure_kind": "judge_failed"}\n')
    clean = run_cli("lint", "--format", "github", ".", cwd=tmp_path)
    assert (clean.returncode, clean.stdout, clean.stderr) == (0, "", "")


# Older labels and deprecated kinds in the lint (FK004, FK005), and the command's --fix and --diff


def test_older_labels_are_fk004_naming_the_replacement_or_saying_there_is_none() -> None:
    source = (
        "import failure_kinds as fk\n"
        'a = {"failure_kind": "peer_drop"}\n'
        'b = {"failure_kind": "timeout_exceeded"}\n'
        "c = fk.OOM_KILLED\n"
    )
    found = [
        (item.line, item.col, item.code, item.message)
        for item in lint.Checker().check_source(source.encode(), "x.py")
    ]
    assert found == [
        (2, 22, "FK004", "older failure kind 'peer_drop': use 'transport_peer_drop'"),
        (
            3,
            22,
            "FK004",
            "older failure kind 'timeout_exceeded' has no single replacement; choose the kind that fits",
        ),
        (
            4,
            8,
            "FK004",
            "failure_kinds.OOM_KILLED names the older failure kind 'oom_killed'; use PROVIDER_OOM_KILLED",
        ),
    ]
    fixes = [item.fix for item in lint.Checker().check_source(source.encode(), "x.py")]
    assert [fix.new if fix else None for fix in fixes] == ["transport_peer_drop", None, None]


def test_a_deprecated_kind_is_fk005_naming_its_replacement(monkeypatch: pytest.MonkeyPatch) -> None:
    from failure_kinds import FailureKind

    # None is deprecated today; a later release sets replaced_by on the member, as here.
    monkeypatch.setattr(
        FailureKind,
        "replaced_by",
        property(lambda kind: FailureKind.AGENT_TIMEOUT if kind == "cancelled" else None),
    )
    # A noqa for FK001, which the code was before 0.3.0, still silences it.
    source = (
        'row = {"failure_kind": "cancelled"}\nother = {"failure_kind": "agent_timeout"}\n'
        'old = {"failure_kind": "cancelled"}  # noqa: FK001\n'
    )
    (finding,) = lint.Checker().check_source(source.encode(), "x.py")
    assert (finding.line, finding.col, finding.code) == (1, 24, "FK005")
    assert finding.message == "deprecated failure kind 'cancelled': use 'agent_timeout'"
    assert finding.fix is None


PRODUCER = """\
import failure_kinds as fk

DROPPED = 'peer_drop'


def classify(error) -> fk.FailureKindName:
    if error.timed_out:
        return "timeout"  # the older transport label
    return "judge_faild" if error.judge else r'oom_killed'


record(failure_kind=DROPPED, reason="x")
row = {"failure_kind": "timeout_exceeded", "stage": "agent"}  # no single replacement
"""


def test_fix_rewrites_only_older_labels_with_one_replacement(tmp_path: Path) -> None:
    target = tmp_path / "producer.py"
    target.write_bytes(PRODUCER.encode())
    result = run_cli("lint", "--fix", "producer.py", cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    lines = result.stdout.splitlines()
    assert lines[:3] == [
        "producer.py:3:11 peer_drop -> transport_peer_drop",
        "producer.py:8:16 timeout -> transport_timeout",
        "producer.py:9:46 oom_killed -> provider_oom_killed",
    ]
    # What has no certain fix is still reported: a typo and a label without a single replacement.
    assert [line.split(" ")[1] for line in lines[3:]] == ["FK001", "FK004"]
    assert lines[3].startswith("producer.py:9:12: FK001")
    assert lines[4].startswith("producer.py:13:24: FK004")
    expected = (
        PRODUCER.replace("'peer_drop'", "'transport_peer_drop'")
        .replace('"timeout"', '"transport_timeout"')
        .replace("r'oom_killed'", "r'provider_oom_killed'")
    )
    assert target.read_bytes() == expected.encode()
    again = run_cli("lint", "--fix", "producer.py", cwd=tmp_path)
    assert again.stdout.splitlines() == lines[3:]


def test_fix_of_everything_exits_0_and_json_reports_fixes_on_stderr(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text('row = {"failure_kind": "unreachable"}\n')
    result = run_cli("lint", "--fix", "--format", "json", ".", cwd=tmp_path)
    assert (result.returncode, json.loads(result.stdout)) == (0, [])
    assert result.stderr == "./a.py:1:24 unreachable -> transport_unreachable\n"
    assert (tmp_path / "a.py").read_text() == 'row = {"failure_kind": "transport_unreachable"}\n'


def test_diff_shows_the_fix_and_writes_nothing(tmp_path: Path) -> None:
    target = tmp_path / "producer.py"
    target.write_bytes(PRODUCER.encode())
    result = run_cli("lint", "--diff", "producer.py", cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    assert target.read_bytes() == PRODUCER.encode()
    assert result.stdout.startswith("--- producer.py\n+++ producer.py\n")
    removed = [
        line for line in result.stdout.splitlines() if line.startswith("-") and not line.startswith("---")
    ]
    added = [
        line for line in result.stdout.splitlines() if line.startswith("+") and not line.startswith("+++")
    ]
    assert len(removed) == len(added) == 3
    assert "+DROPPED = 'transport_peer_drop'" in added
    clean = run_cli("lint", "--diff", "producer.py", cwd=tmp_path)
    assert clean.returncode == 1  # still nothing written
    target.write_text('row = {"failure_kind": "judge_faild"}\n')
    nothing = run_cli("lint", "--diff", "producer.py", cwd=tmp_path)
    assert (nothing.returncode, nothing.stdout) == (0, "")


@pytest.mark.parametrize(
    "options", [["--fix", "--diff"], ["--unsafe-fixes"], ["--format=sarif", "--unsafe-fixes"], ["--field="]]
)
def test_options_that_do_not_go_together_are_a_usage_error(tmp_path: Path, options: list[str]) -> None:
    result = run_cli("lint", *options, ".", cwd=tmp_path)
    assert result.returncode == 2
    assert len(result.stderr.splitlines()) == 1


LINES = [
    'row = {"failure_kind": "peer_drop"}',
    "record(failure_kind='unreachable' if failed else None)",
    'kind = row.get("failure_kind", "oom_killed")',
    'row = {"failure_kind": "timeout_exceeded"}',
    'row = {"failure_kind": "judge_faild"}',
    'row = {"failure_kind": "transport_timeout"}',
    "# é comment with 'peer_drop' in it",
    'note = "peer_drop"',
    'row = {"failure_kind": "peer_drop"}  # noqa: FK004',
    'if row["failure_kind"] in ("resource", "timeout"):\n    pass',
]


@settings(max_examples=examples(150), deadline=None)
@given(st.lists(st.sampled_from(LINES), max_size=12), st.sampled_from(["\n", "\r\n"]))
def test_fixing_generated_producers_leaves_only_what_has_no_certain_fix(
    lines: list[str], line_end: str
) -> None:
    source = line_end.join(line.replace("\n", line_end) for line in lines).encode()
    checker = lint.Checker()
    before = checker.check_source(source, "generated.py")
    fixes = [finding.fix for finding in before if finding.fix is not None]
    after, applied = _fix.apply(source, fixes)
    assert len(applied) == len(fixes)
    ast.parse(after)
    remaining = checker.check_source(after, "generated.py")
    assert all(finding.fix is None for finding in remaining)
    assert sorted(finding.code for finding in remaining) == sorted(
        finding.code for finding in before if finding.fix is None
    )
    # Only the fixed literals changed: a line without a fix is byte for byte the same, and a fixed line
    # turns back into the original when each replacement is read as its older label again.
    fixed_lines = {fix.line for fix in applied}
    old_lines, new_lines = source.split(line_end.encode()), after.split(line_end.encode())
    assert len(old_lines) == len(new_lines)
    for number, (old, new) in enumerate(zip(old_lines, new_lines, strict=True), start=1):
        if number not in fixed_lines:
            assert new == old
            continue
        restored = new.decode()
        for fix in applied:
            if fix.line == number:
                restored = restored.replace(fix.new, fix.old)
        assert restored.encode() == old


# What --fix prints after rewriting: every position is one in the file as it now is.

COMPARED = 'if row["failure_kind"] in ("timeout", "sandbox"):\n    pass\n'
SANDBOX = "older failure kind 'sandbox' has no single replacement; choose the kind that fits"


@pytest.mark.parametrize(
    ("output", "changes_on", "left"),
    [
        ("text", "stdout", f"a.py:1:49: FK004 {SANDBOX}\n"),
        ("json", "stderr", None),
        ("github", "stderr", f"::error file=a.py,line=1,col=49,title=FK004::{SANDBOX}\n"),
    ],
    ids=["text", "json", "github"],
)
def test_fix_reports_what_is_left_where_the_rewrite_moved_it(
    tmp_path: Path, output: str, changes_on: str, left: str | None
) -> None:
    # "sandbox" has no single replacement, and moves right by as much as "timeout" grew before it.
    (tmp_path / "a.py").write_text(COMPARED)
    result = run_cli("lint", "--fix", "--unsafe-fixes", "--format", output, "a.py", cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    assert (tmp_path / "a.py").read_text() == COMPARED.replace('"timeout"', '"transport_timeout"')
    change = "a.py:1:28 timeout -> transport_timeout\n"
    if changes_on == "stdout":
        assert result.stdout == change + str(left)
    else:
        assert result.stderr == change
    if output == "json":
        (finding,) = json.loads(result.stdout)
        assert (finding["line"], finding["col"], finding["code"]) == (1, 49, "FK004")
    elif output == "github":
        assert result.stdout == left
    # What was left is what the lint says of the rewritten file next time.
    again = run_cli("lint", "--format", output, "a.py", cwd=tmp_path)
    assert (again.returncode, again.stderr) == (1, "")
    assert again.stdout == (result.stdout[len(change) :] if changes_on == "stdout" else result.stdout)


# Literals that share a line: fixable older labels (of different lengths, so their neighbours move),
# an older label without a single replacement, a typo, a registered kind; a non-ASCII prefix counts in
# characters, not bytes.
ON_ONE_LINE = [
    '"peer_drop"',
    "'timeout'",
    '"unreachable"',
    "'oom_killed'",
    '"sandbox"',
    "'judge_faild'",
    '"cancelled"',
]


def positioned(lines: list[str], line: int, col: int, value: str) -> bool:
    """Whether a literal holding ``value`` starts at ``line``, ``col`` (1-based characters)."""
    text = lines[line - 1][col - 1 :]
    return text.startswith((f'"{value}"', f"'{value}'"))


@settings(max_examples=examples(60), deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["", "'é' and ", "'ü€' != note and "]),
            st.lists(st.sampled_from(ON_ONE_LINE), min_size=1, max_size=5),
        ),
        min_size=1,
        max_size=4,
    )
)
def test_every_position_fix_prints_is_in_the_rewritten_file(rows: list[tuple[str, list[str]]]) -> None:
    import contextlib
    import io
    import tempfile

    from failure_kinds.cli import main
    from failure_kinds.lint import Checker

    source = "".join(
        f'found = {prefix}row["failure_kind"] in ({", ".join(literals)},)\n' for prefix, literals in rows
    )
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "generated.py")
        with open(path, "w", encoding="utf-8") as file:
            file.write(source)
        stdout, stderr = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
            code = main(["lint", "--fix", "--unsafe-fixes", "--format", "json", path])
        with open(path, encoding="utf-8") as file:
            rewritten = file.read()
        checked = Checker().check_source(rewritten.encode(), path)
    left = json.loads(stdout.getvalue())
    assert code == (1 if left else 0)
    lines = rewritten.splitlines()
    # The findings left are the rewritten file's own, each at its literal there.
    assert left == [finding.to_json() for finding in checked]
    for finding in left:
        value = re.search(r"'([^']*)'", finding["message"])
        assert value is not None
        assert positioned(lines, finding["line"], finding["col"], value[1]), finding
    # Each change is at its new literal in the rewritten file, one per older label with a replacement.
    changes = stderr.getvalue().splitlines()
    fixable = {"peer_drop", "timeout", "unreachable", "oom_killed"}
    assert len(changes) == sum(literal.strip("'\"") in fixable for _, row in rows for literal in row)
    for change in changes:
        where, _, replacement = change.rpartition(" -> ")
        position, _, old = where.rpartition(" ")
        _, line, col = position.rsplit(":", 2)
        assert old in fixable
        assert positioned(lines, int(line), int(col), replacement), change


@pytest.mark.parametrize("output", ["text", "json", "github"])
def test_diff_is_the_whole_output_in_every_format(tmp_path: Path, output: str) -> None:
    (tmp_path / "a.py").write_text(COMPARED)
    result = run_cli("lint", "--diff", "--unsafe-fixes", "--format", output, "a.py", cwd=tmp_path)
    assert (result.returncode, result.stderr) == (1, "")
    assert result.stdout == (
        "--- a.py\n+++ a.py\n@@ -1,2 +1,2 @@\n"
        f"-{COMPARED.splitlines()[0]}\n"
        f"+{COMPARED.splitlines()[0].replace('timeout', 'transport_timeout')}\n"
        "     pass\n"
    )
    assert (tmp_path / "a.py").read_text() == COMPARED
    # And --help says so, so nobody waits for findings there.
    shown = " ".join(run_cli("lint", "--help").stdout.split())
    assert "the diff is the whole output (no findings, whatever --format says)" in shown
    assert "every position printed is in the rewritten file" in shown


# What --fix touches: where code writes a kind, not where it reads one (ruff's --unsafe-fixes for those)

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
    ("# noqa: FK001 still silences what was FK001 before 0.3.0: FK004 and FK005", True),
    ('row = {"failure_kind": "peer_drop"}  # noqa: FK001', False),
]


def test_fix_rewrites_where_code_writes_a_kind_and_reads_only_with_unsafe_fixes(tmp_path: Path) -> None:
    lines = ["from failure_kinds import FailureKindName", *(line for line, _ in SHAPES)]
    (tmp_path / "a.py").write_text("\n".join(lines) + "\n")
    result = run_cli("lint", "--fix", "a.py", cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    written = (tmp_path / "a.py").read_text()
    for line, writes in SHAPES:
        assert (line.replace('"peer_drop"', '"transport_peer_drop"') if writes else line) in written
    left = result.stdout.splitlines()[5:]
    assert len(left) == sum(not writes and "noqa" not in line for line, writes in SHAPES)
    assert all(
        line.endswith(f"FK004 older failure kind 'peer_drop': use 'transport_peer_drop'; {UNSAFE}")
        for line in left
    )
    unsafe = run_cli("lint", "--fix", "--unsafe-fixes", "a.py", cwd=tmp_path)
    assert (unsafe.returncode, unsafe.stdout.count(" -> ")) == (0, len(left))
    assert (tmp_path / "a.py").read_text().endswith(f"\n{SHAPES[-1][0]}\n"), "its noqa leaves it alone"


# --fix on anyone's tree: owner, links, a save made meanwhile, long names, an interrupt

FIXABLE = b'x = dict(failure_kind="peer_drop")\n'
FIXED = FIXABLE.replace(b"peer_drop", b"transport_peer_drop")


def test_fix_keeps_owner_group_and_mode_or_leaves_the_file_alone() -> None:
    import shutil
    import tempfile
    import urllib.parse  # noqa: F401  (SARIF's, imported while the user it runs as can read the stdlib)

    # Root (CI containers, pre-commit in Docker) gives the files another owner and then fixes one as a
    # third user; anyone else checks the owner and the setuid and setgid bits of their own files.
    root = os.geteuid() == 0
    owner = (1234, 5678) if root else (os.geteuid(), os.getegid())
    # Not under tmp_path, whose folders only root may enter.
    folder = Path(tempfile.mkdtemp())
    try:
        folder.chmod(0o777)
        for name in ("kept.py", "other.py"):
            (folder / name).write_bytes(FIXABLE)
            os.chown(folder / name, *owner)
            (folder / name).chmod(0o6755)
        assert run_cli("lint", "--fix", "kept.py", cwd=folder).returncode == 0
        if root:
            # Another user may replace a file in a folder anyone writes to, but not make it theirs.
            os.seteuid(4321)
            try:
                other = run_cli("lint", "--fix", "other.py", cwd=folder)
                # --diff and SARIF offer no fix that --fix refuses.
                shown = run_cli("lint", "--diff", "other.py", cwd=folder)
                sarif = run_cli("lint", "--format", "sarif", "other.py", cwd=folder)
            finally:
                os.seteuid(0)
            for result in (other, shown, sarif):
                assert result.returncode == 1
                assert (
                    "other.py: not fixed: its owner 1234:5678 cannot be kept; nothing written"
                    in result.stderr
                )
            assert (shown.stdout, '"fixes"' in sarif.stdout) == ("", False)
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
    # Fixed, it would grow past what the lint reads, and be FK000 on every later run.
    "too large": (
        FIXABLE + b"#" * (lint.SIZE_LIMIT - len(FIXABLE) - 1) + b"\n",
        "its fixed text would be larger than 8 MiB",
    ),
}


@pytest.mark.parametrize("case", sorted(LEFT_ALONE))
@pytest.mark.parametrize("option", ["--fix", "--diff", "--format=sarif"])
def test_a_file_fix_refuses_is_left_alone_with_a_note(tmp_path: Path, case: str, option: str) -> None:
    source, reason = LEFT_ALONE[case]
    (tmp_path / "a.py").write_bytes(source)
    if case == "hard links":
        os.link(tmp_path / "a.py", tmp_path / "b.py")
    result = run_cli("lint", option, ".", cwd=tmp_path)
    assert result.returncode == 1
    assert f"./a.py: not fixed: {reason}" in result.stderr
    assert ("+++" in result.stdout, '"fixes"' in result.stdout) == (False, False)
    assert (tmp_path / "a.py").read_bytes() == source
    assert (tmp_path / "a.py").stat().st_nlink == (2 if case == "hard links" else 1)


@pytest.mark.parametrize("save", ["in place", "by a rename"])
def test_a_save_made_while_fix_writes_is_kept_and_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, save: str
) -> None:
    import tempfile

    target = tmp_path / "a.py"
    target.write_bytes(FIXABLE)
    create = tempfile.mkstemp

    def saving_meanwhile(*arguments: object, **options: object) -> tuple[int, str]:
        made = create(*arguments, **options)  # type: ignore[call-overload]
        if save == "in place":
            target.write_bytes(FIXABLE + b"# saved\n")
        else:
            (tmp_path / "saved").write_bytes(FIXABLE)
            os.replace(tmp_path / "saved", target)
        return made  # type: ignore[no-any-return]

    monkeypatch.setattr(tempfile, "mkstemp", saving_meanwhile)
    result = run_cli("lint", "--fix", "a.py", cwd=tmp_path)
    assert result.returncode == 1
    assert "a.py: not fixed: it changed while being fixed; nothing written" in result.stderr
    assert target.read_bytes() == (FIXABLE + b"# saved\n" if save == "in place" else FIXABLE)
    assert os.listdir(tmp_path) == ["a.py"]


def test_a_name_as_long_as_the_file_system_allows_is_fixed(tmp_path: Path) -> None:
    target = tmp_path / ("k" * 245 + ".py")
    target.write_bytes(FIXABLE)
    assert run_cli("lint", "--fix", ".", cwd=tmp_path).returncode == 0
    assert target.read_bytes() == FIXED


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
