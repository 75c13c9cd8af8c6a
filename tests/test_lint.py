"""failure-kinds lint: which literals it reports, where and how (text, JSON, GitHub, SARIF), its inputs."""

from __future__ import annotations

import itertools
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
import types
from pathlib import Path
from typing import Any
from urllib.parse import unquote_to_bytes

import pytest
from helpers import ROOT, TIMEOUT, examples, needs, run_cli
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import failure_kinds
from failure_kinds import _shapes, lint
from failure_kinds._runtime import category
from failure_kinds.cli import main
from failure_kinds.commands.lint import github_command

SWE = {"swe_env": ("patch_apply_failed", "test_collection_error")}
OLDER = 'row = {"failure_kind": "peer_drop"}\n'
OLDER_FOUND = "FK004 older failure kind 'peer_drop': use 'transport_peer_drop'"
BAD = 'row = {"failure_kind": "bad"}\n'


def findings(source: str, fields: tuple[str, ...] = lint.DEFAULT_FIELDS, namespaces: Any = None) -> list[Any]:
    checker = lint.Checker(fields, namespaces)
    found = checker.check_source(textwrap.dedent(source).encode(), "example.py")
    return [(item.line, item.col, item.code, item.message) for item in found]


def codes(source: str, fields: tuple[str, ...] = lint.DEFAULT_FIELDS, namespaces: Any = None) -> list[Any]:
    return [(line, code) for line, _, code, _ in findings(source, fields, namespaces)]


def run(*arguments: str, cwd: Path = ROOT, **options: Any) -> subprocess.CompletedProcess[str]:
    return run_cli("lint", *arguments, cwd=cwd, **options)


# Where a kind stands. Each shape holds VALUE once, where the literal goes; a finding points at it.
SHAPES = {
    "keyword": "record(failure_kind=VALUE)\n",
    "dict call": "dict(failure_kind=VALUE)\n",
    "display": 'row = {"failure_kind": VALUE}\n',
    "subscript": 'row["failure_kind"] = VALUE\n',
    "attribute": "result.failure_kind = VALUE\n",
    "annotated attribute": "result.failure_kind: str = VALUE\n",
    "eq": 'if row["failure_kind"] == VALUE: pass\n',
    "ne": "if result.failure_kind != VALUE: pass\n",
    "reversed": 'if VALUE == row["failure_kind"]: pass\n',
    "in tuple": 'if row["failure_kind"] in ("cancelled", VALUE): pass\n',
    "not in list": 'if row["failure_kind"] not in [VALUE]: pass\n',
    "in set": "if result.failure_kind in {VALUE}: pass\n",
    "validate": "validate_failure_kind(VALUE)\n",
    "metric label": "fk.metric_label(VALUE)\n",
    "is registered": "is_registered(VALUE)\n",
    "is namespaced": "failure_kinds.is_namespaced(VALUE)\n",
    "conditional keyword": "record(failure_kind=VALUE if failed else None)\n",
    "conditional keyword, else branch": "record(failure_kind=None if ok else VALUE)\n",
    "conditional dict value": 'row = {"failure_kind": VALUE if failed else None}\n',
    "get or fallback": 'kind = row.get("failure_kind") or VALUE\n',
    "get default": 'kind = row.get("failure_kind", VALUE)\n',
    "pop default": 'kind = row.pop("failure_kind", VALUE)\n',
    "plain assignment": "failure_kind = VALUE\n",
    "annotated plain assignment": "failure_kind: str | None = VALUE\n",
    "returned from a kind function": "def classify(error) -> FailureKindName:\n    return VALUE\n",
    "returned conditionally": (
        "def classify(error) -> 'FailureKindName | None':\n    return VALUE if error else None\n"
    ),
    "case": 'match row["failure_kind"]:\n    case "cancelled" | ("shutdown" | VALUE) as kind: pass\n',
    "mapping case": 'match row:\n    case {"failure_kind": VALUE}:\n        pass\n',
    "class case": "match failure:\n    case Failure(failure_kind=VALUE):\n        pass\n",
    "class case alternatives": 'match failure:\n    case Failure(failure_kind="cancelled" | VALUE): pass\n',
    "walrus comparison": 'if (kind := row["failure_kind"]) == VALUE:\n    pass\n',
    "walrus name compared later": 'if (kind := row.get("failure_kind")) and kind == VALUE:\n    pass\n',
    "name read from the field": 'kind = row.get("failure_kind")\nif kind in ("cancelled", VALUE): pass\n',
    "get compared": 'if row.get("failure_kind") != VALUE:\n    pass\n',
    "keyword default": "def report(failure_kind: str | None = VALUE) -> None:\n    pass\n",
    "module constant": "TIMED_OUT = VALUE\n\n\ndef report():\n    record(failure_kind=TIMED_OUT)\n",
    "annotated module constant": "TIMED_OUT: Final = VALUE\nresult = {'failure_kind': TIMED_OUT}\n",
    "annotated name": "from failure_kinds import AnyFailureKind\ndef f(k: AnyFailureKind):\n    k == VALUE\n",
    "enum value": "def f(e: FailureKind):\n    if e.value == VALUE: pass\n",
    "quoted annotation": 'def f(p: "ProjectFailureKind"):\n    if VALUE == p: pass\n',
    "optional": "def f(o: Optional[fk.FailureKindName]):\n    if o in ('cancelled', VALUE): pass\n",
    "union with None": "def f(n: FailureKindName | None):\n    if n not in {VALUE}: pass\n",
    "final": "limit: Final[FailureKindName] = VALUE\n",
    "class field": "class Row:\n    kind: FailureKindName\nif row.kind == VALUE: pass\n",
    "kind name reassigned": "saved: FailureKindName = 'cancelled'\nsaved = VALUE\n",
    "kind attribute assigned": "class Row:\n    kind: FailureKindName\nrow.kind = VALUE\n",
    "match on a kind name": "def f(k: FailureKindName):\n    match k:\n        case VALUE: pass\n",
}


def where(shape: str) -> tuple[int, int]:
    for number, line in enumerate(shape.splitlines(), start=1):
        if "VALUE" in line:
            return number, line.index("VALUE") + 1
    raise AssertionError(shape)


def expected_code(value: str) -> str | None:
    found = category(value)
    if found == "registered":
        return None if failure_kinds.FailureKind(value).replaced_by is None else "FK005"
    return {"namespaced": None, "legacy": "FK004"}.get(found, "FK002" if ":" in value else "FK001")


ODD = "judge_faild Transport-Timeout tiemout usersim: :judge tb4:Crash a:b:c My_env:x usersim:persona_drift"
SPACED = ["peer_drop", "agent_timeout ", "safe child:x", "env :kind"]
VALUES = st.one_of(
    st.sampled_from([*sorted(failure_kinds.FAILURE_KINDS), *ODD.split(), *SPACED]),
    st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=20),
)


# Each value in every shape; the examples are a typo and a registered kind.
@settings(max_examples=examples(100), deadline=None)
@given(VALUES)
@example("judge_faild")
@example("judge_failed")
def test_every_shape_reports_a_wrong_value_at_its_literal(value: str) -> None:
    code = expected_code(value)
    for name, shape in SHAPES.items():
        got = [(line, col, found) for line, col, found, _ in findings(shape.replace("VALUE", repr(value)))]
        assert got == ([] if code is None else [(*where(shape), code)]), name


NOT_KINDS = """\
    record(failure_kind=kind)
    record(failure_kind=f"{prefix}_timeout")
    record(failure_kind=choose("bad"))
    record(failure_kind=b"bytes_are_not_kinds")
    record(other_field="not_a_kind")
    row = {"reason": "not_a_kind", "failure_kind": None}
    row["reason"] = "not_a_kind"
    if row["failure_kind"] == other or row["failure_kind"] in allowed: pass
    if row["reason"] == "not_a_kind": pass
    validate_failure_kind(kind)
    print("failure_kind")
    kind = row.get("reason") or "not_a_kind"
    label = row.get("failure_kind", {}).get("label", "not_a_kind")
    other = row.get("status", "not_a_kind")
    lower_case = "not_a_kind"
    record(failure_kind=lower_case)
    def describe(error) -> str:
        return "not_a_kind"
    def classify(error, plain: str, many: list[FailureKindName], k: FailureKindName) -> FailureKindName:
        def inner():
            return "not_a_kind"
        if plain == "not_a_kind" or plain.value == "not_a_kind" or many == ["not_a_kind"]: pass
        if k == f"{prefix}_timeout" or k in (prefix, choose("bad")): pass
        match k:
            case Constants.BAD:
                pass
            case [x, y]:
                pass
            case {"failure_kind": other_kind}:
                pass
        match plain:
            case "not_a_kind":
                pass
        return inner()
    match row:
        case {"reason": "not_a_kind"} | Failure(reason="not_a_kind"):
            pass
    if (reason := row["reason"]) == "not_a_kind" or row.get("failure_kind") and reason == "not_a_kind": pass
    if row.other == "not_a_kind" or self.current == "not_a_kind": pass
    STATUS = "first"
    STATUS = "second"
    record(failure_kind=STATUS)
    import failure_kinds as fk
    import other_module as om
    from failure_kinds import FAILURE_KINDS, OTHER_LABEL, TRANSPORT_TIMEOUT, FailureKind, FailureKindName
    from other_module import TRANSPORT_TIMOUT
    kinds = (fk.AGENT_TIMEOUT, fk.FAILURE_KINDS, fk.OTHER_LABEL, FailureKind.JUDGE_FAILED)
    others = (om.AGENT_TIMOUT, om.TRANSPORT_TIMOUT, fk.FailureKind.AGENT_TIMEOUT.value, fk.__version__)
    # Names the package lacks that are nothing like a kind fail at import on their own.
    from failure_kinds import ACTIVE_FAILURE_KINDS, FAILURE_KIND_REGISTRY
    registry = fk.RESERVED_FAILURE_KINDS
"""


def test_what_is_not_a_kind_is_never_reported() -> None:
    assert findings(NOT_KINDS) == []


def test_messages_name_the_value_and_a_suggestion() -> None:
    source = """\
        record(failure_kind="judge_faild")
        record(failure_kind="invented_thing")
        record(failure_kind="my_env:Quota")
        record(failure_kind="swe_env:patch_aply_failed")
        record(failure_kind="swe_env:patch_apply_failed")
        record(failure_kind="web_env:anything_goes")
        record(failure_kind="swe_env:invented_here")
        row = {"failure_kind": "swe_env:test_colection_error"}  # noqa: FK003
        a = {"failure_kind": "timeout_exceeded"}
        TIMED_OUT = "transport_timout"
        if row["failure_kind"] == TIMED_OUT: record(failure_kind=TIMED_OUT)
        import failure_kinds as fk
        c, d = fk.OOM_KILLED, fk.TIMEOUT_EXCEEDED
        """
    found = [
        f"{line}:{col}: {code} {message}" for line, col, code, message in findings(source, namespaces=SWE)
    ]
    assert found == [
        "1:21: FK001 unregistered failure kind 'judge_faild'; did you mean 'judge_failed'?",
        "2:21: FK001 unregistered failure kind 'invented_thing'",
        "3:21: FK002 malformed namespaced failure kind 'my_env:Quota': expected <server>:<kind>, each "
        "[a-z][a-z0-9_]*",
        "4:21: FK003 undeclared failure kind 'swe_env:patch_aply_failed': swe_env declares no such kind; did "
        "you mean 'swe_env:patch_apply_failed'?",
        "7:21: FK003 undeclared failure kind 'swe_env:invented_here': swe_env declares no such kind",
        # What the label meant, in the audit's words (failure_kinds.history).
        "9:22: FK004 older failure kind 'timeout_exceeded' has no single replacement: used for a task's own "
        "time budget (nearest agent_timeout) and for other deadlines; not mapped",
        # A module constant used as a kind twice is one literal, reported once.
        "10:13: FK001 unregistered failure kind 'transport_timout'; did you mean 'transport_timeout'?",
        "13:11: FK004 failure_kinds.OOM_KILLED names the older failure kind 'oom_killed'; use "
        "PROVIDER_OOM_KILLED",
        "13:26: FK004 failure_kinds.TIMEOUT_EXCEEDED names the older failure kind 'timeout_exceeded'; it has "
        "no single replacement: used for a task's own time budget (nearest agent_timeout) and for other "
        "deadlines; not mapped",
    ]
    # Without the declaration every well-formed namespaced kind passes.
    assert [code for _, code in codes(source)] == [
        "FK001",
        "FK001",
        "FK002",
        "FK004",
        "FK001",
        "FK004",
        "FK004",
    ]


def test_a_deprecated_kind_is_fk005_and_a_noqa_for_fk001_still_silences_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # None is deprecated today; a later release sets replaced_by on the member, as here.
    kind = failure_kinds.FailureKind
    monkeypatch.setattr(
        kind, "replaced_by", property(lambda k: kind.AGENT_TIMEOUT if k == "cancelled" else None)
    )
    source = (
        'row = {"failure_kind": "cancelled"}\nother = {"failure_kind": "agent_timeout"}\n'
        'old = {"failure_kind": "cancelled"}  # noqa: FK001\n'
    )
    assert findings(source) == [(1, 24, "FK005", "deprecated failure kind 'cancelled': use 'agent_timeout'")]


NAME_SHAPES = {
    "from import": ("from failure_kinds import JUDGE_FAILED, TRANSPORT_TIMOUT\n", (1, 41)),
    "import as": ("import failure_kinds as fk\n\nkind = fk.AGENT_TIMOUT\n", (3, 11)),
    "plain import": ("import failure_kinds\nkind = failure_kinds.AGENT_TIMOUT\n", (2, 22)),
    "submodule import": ("import failure_kinds.lint\nkind = failure_kinds.AGENT_TIMOUT\n", (2, 22)),
    "enum member": ("from failure_kinds import FailureKind as FK\nkind = FK.AGENT_TIMOUT\n", (2, 11)),
    "enum of an alias": ("import failure_kinds as fk\nkind = fk.FailureKind.AGENT_TIMOUT\n", (2, 23)),
    "enum of the package": ("import failure_kinds\nkind = failure_kinds.FailureKind.AGENT_TIMOUT\n", (2, 34)),
    # The alias is learned in one statement and used in a later one that mentions no field.
    "alias used far away": (
        "import failure_kinds as fk\n\n\ndef later():\n    return (fk.\n  AGENT_TIMOUT)\n",
        (6, 3),
    ),
    "lone carriage returns": (
        "import failure_kinds as fk\rx = 1\rdef later():\r    return fk.AGENT_TIMOUT\r",
        (4, 15),
    ),
}


@pytest.mark.parametrize("name", sorted(NAME_SHAPES))
def test_a_constant_the_package_lacks_is_reported_at_its_name(name: str) -> None:
    source, position = NAME_SHAPES[name]
    ((line, col, code, message),) = findings(source)
    assert ((line, col), code) == (position, "FK001")
    assert "; did you mean" in message
    assert "TIMEOUT" in message


# A statement is walked only when it mentions a field, a kind type, a checked function, the package or a
# name learned from them; kinds learned anywhere in the file count everywhere: every order, every padding.
@pytest.mark.parametrize("filler", range(4))
def test_names_learned_anywhere_count_in_any_statement_order(filler: int) -> None:
    blocks = [
        "class Row:\n    kind: FailureKindName\n",
        "def first(row):\n    if row.kind == 'kill_shapd':\n        pass\n",
        "def second(k: FailureKindName):\n    pass\n",
        "@decorated(k)\ndef third(k):\n    match k:\n        case 'sesion_lost':\n            pass\n",
    ]
    padding = "".join(f"def pad_{index}():\n    return {index}\n" for index in range(filler))
    for order in itertools.permutations(blocks):
        source = padding + "\n".join(order)
        lines = source.splitlines()
        got = sorted(lines[line - 1][col - 1 :].split("'")[1] for line, col, _, _ in findings(source))
        assert got == ["kill_shapd", "sesion_lost"], source


def test_noqa_and_the_field_option() -> None:
    source = """\
        a = {"failure_kind": "bad_one"}  # noqa
        b = {"failure_kind": "bad_two"}  # noqa: FK001
        c = {"failure_kind": "bad_three"}  # NOQA:FK002,FK001
        d = {"failure_kind": "bad:Four"}  # noqa: FK001
        e = {"failure_kind": "bad_five"}  # noqa: E501
        f = {"failure_kind": "bad_six"}
        record(failure_kind="bad_one", kind="bad_two", error_kind="bad_three")
        g = {"failure_kind": "bad_seven"}; h = "# noqa"
        i = {"failure_kind": "bad_eight", "note": '# noqa: FK001'}  # a comment
        """
    # Only a comment silences a line, not a string that reads like one.
    assert codes(source) == [
        (4, "FK002"),
        (5, "FK001"),
        (6, "FK001"),
        (7, "FK001"),
        (8, "FK001"),
        (9, "FK001"),
    ]
    assert [col for _, col, _, _ in findings(source, ("kind", "error_kind"))] == [37, 59]
    # A --field typed in bytes that are not UTF-8 holds a surrogate escape: looked for, never a crash.
    assert codes(source, ("kind", "\udcff")) == [(7, "FK001")]


ENCODABLE = st.text(alphabet=st.characters(codec="latin-1", exclude_categories=("Cc", "Cs")), max_size=30)


@settings(max_examples=examples(200), deadline=None)
@given(
    ENCODABLE, st.sampled_from(["latin-1", "utf-8", "cp1252", "iso-8859-15"]), st.booleans(), st.booleans()
)
def test_columns_count_characters_in_the_declared_encoding(
    prefix: str, encoding: str, bom: bool, cr: bool
) -> None:
    line = f"x = {prefix!r}, {{'failure_kind': 'bad'}}"
    try:
        body = line.encode(encoding)
    except UnicodeEncodeError:
        return
    # A declared encoding is read at a lone carriage return too, as the parser reads it.
    cookie = f"# -*- coding: {encoding} -*-".encode() + (b"\r" if cr else b"\n")
    if bom and encoding != "utf-8":
        return
    (finding,) = lint.Checker().check_source(
        (b"\xef\xbb\xbf" if bom else b"") + cookie + body + b"\n", "x.py"
    )
    assert (finding.line, finding.col, finding.code) == (2, line.index("'bad'") + 1, "FK001")


# Files the lint cannot read as source are FK000, and the other files are still linted.

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
# Where the parser put the error, in characters (1-based), whatever the Python version and encoding.
UNLINTABLE = {
    "syntax": (b"def broken(:\n    pass\n", (1, 12), "cannot parse: invalid syntax"),
    "syntax after non-ASCII": ('x = "😀漢" +\n'.encode(), (1, 11), "cannot parse: invalid syntax"),
    "syntax, byte-order mark": ('\ufeffx = "😀漢" +\n'.encode(), (1, 11), "cannot parse: invalid syntax"),
    "syntax, lone CR": ('x = 1\ry = "é" +\n'.encode(), (2, 10), "cannot parse: invalid syntax"),
    "syntax, declared": (b'# coding: latin-1\nx = "\xe9\xe9" +\n', (2, 11), "cannot parse: invalid syntax"),
    "unmatched bracket": ('x = "😀😀" + )\n'.encode(), (1, 12), "cannot parse: unmatched ')'"),
    "mismatched bracket": ('x = ["😀😀"}\n'.encode(), (1, 10), "cannot parse: closing parenthesis '}'"),
    "unterminated string": ('x = "😀😀"; y = "abc\n'.encode(), (1, 15), "cannot parse: unterminated string"),
    "invalid decimal": ('x = "😀😀"; y = 1abc\n'.encode(), (1, 15), "cannot parse: invalid decimal literal"),
    "invalid character": ('x = "😀" + €\n'.encode(), (1, 11), "cannot parse: invalid character '€'"),
    "vertical tab": ('x = "é"\vy\n'.encode(), (1, 8), "cannot parse: invalid non-printable character"),
    "null byte": (b"x = 1\x00\n", (1, 1), "cannot parse: source code string cannot contain null bytes"),
    # Its column depends on the Python version.
    "latin-1 undeclared": (b'x = "caf\xe9"\n', None, "cannot parse: (unicode error) 'utf-8' codec can't"),
    "unknown coding": (
        b"# -*- coding: klingon -*-\n" + BAD.encode(),
        (1, 1),
        "cannot parse: unknown encoding: klingon",
    ),
    **{
        f"wide {encoding}": (
            BAD.encode(encoding),
            (1, 1),
            f"cannot parse: {said} text; Python source is read as UTF-8 unless it declares another encoding: "
            f"convert it with iconv -f {iconv} -t UTF-8",
        )
        for encoding, said, iconv in [
            ("utf-16", "UTF-16 (little-endian)", "UTF-16"),
            ("utf-16-be", "UTF-16 (big-endian)", "UTF-16BE"),
            ("utf-32-le", "UTF-32 (little-endian)", "UTF-32LE"),
        ]
    },
    # Without a byte order mark, from its NULs, whatever ASCII character it starts with (DEL, 0x7f, too).
    "wide utf-16-le, no mark": (
        ("\x7f" + BAD).encode("utf-16-le"),
        (1, 1),
        "cannot parse: UTF-16 (little-endian) text; Python source is read as UTF-8 unless it declares "
        "another encoding: convert it with iconv -f UTF-16LE -t UTF-8",
    ),
}


@pytest.mark.parametrize("name", sorted(UNLINTABLE))
def test_a_file_that_cannot_be_linted_is_fk000_with_the_reason(name: str) -> None:
    source, place, said = UNLINTABLE[name]
    (finding,) = lint.Checker().check_source(source, "x.py")
    assert (*(place or (1, finding.col)), "FK000") == (finding.line, finding.col, finding.code)
    assert finding.message.startswith(said)


def test_running_out_of_memory_makes_a_file_unread_never_a_finding(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    parse = lint.ast.parse

    def starved(source: bytes, *given: Any, **options: Any) -> Any:
        if isinstance(source, bytes) and b"starved" in source:
            raise MemoryError
        return parse(source, *given, **options)

    monkeypatch.setattr(lint.ast, "parse", starved)
    (tmp_path / "a.py").write_text(BAD + "starved = 1\n")
    (tmp_path / "b.py").write_text(BAD)
    result = run(".", cwd=tmp_path)
    if sys.version_info < (3, 12):  # 3.11's parser gives its nesting limit as the same bare MemoryError
        assert result.returncode == 1
        assert "./a.py:1:1: FK000 cannot parse: nested too deeply" in result.stdout
    else:
        assert (result.returncode, result.stdout) == (
            2,
            "./b.py:1:24: FK001 unregistered failure kind 'bad'\n",
        )
        assert result.stderr == "failure-kinds lint: ./a.py: out of memory while reading\n"
    # Output that runs out of memory as it is built ends in one line, not a traceback.
    monkeypatch.setattr(json, "dumps", lambda *given, **options: (_ for _ in ()).throw(MemoryError()))
    result = run("--format", "sarif", "b.py", cwd=tmp_path)
    said = "failure-kinds: error: out of memory\n"
    assert (result.returncode, result.stdout, result.stderr) == (2, "", said)


def test_hostile_files_do_not_stop_the_run(tmp_path: Path) -> None:
    """Through the command, with bounded memory: every deep file is FK000 or linted, the rest reported."""
    for index, name in enumerate(sorted(DEEP_SOURCES)):
        (tmp_path / f"a_{index:02d}.py").write_text(BAD + DEEP_SOURCES[name])
    (tmp_path / "b_broken.py").write_text("def f(:\n")
    big = tmp_path / "c_big.py"
    with big.open("wb") as file:
        file.write(BAD.encode())
        file.truncate(lint.SIZE_LIMIT + 1)  # sparse: costs no disk
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
    assert (result.returncode, result.stderr) == (1, "")
    lines = result.stdout.splitlines()
    assert lines[-1].startswith(f"{tmp_path / 'z_last.py'}:1:24: FK001")
    assert f"{big}:1:1: FK000 larger than 8 MiB; not read" in lines
    assert f"{tmp_path / 'b_broken.py'}:1:7: FK000 cannot parse: invalid syntax" in lines
    # Each deep file is FK000 with the reason, or linted, its first line reported.
    for index in range(len(DEEP_SOURCES)):
        found = [
            line.split(": ")[1] for line in lines if line.startswith(f"{tmp_path / f'a_{index:02d}.py'}:")
        ]
        assert found in (["FK000 cannot parse"], ["FK001 unregistered failure kind 'bad'"] * len(found)), (
            found
        )


def test_a_lone_carriage_return_costs_no_more_than_the_same_file_without_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The work counted: the characters the lint's search for the words of a kind is handed."""
    scanned: list[int] = []

    class Counted:
        def __init__(self, pattern: re.Pattern[bytes]) -> None:
            self.pattern = pattern

        def __getattr__(self, name: str) -> Any:
            method = getattr(self.pattern, name)
            return lambda text, *rest: scanned.append(len(text)) or method(text, *rest)

    counted = types.SimpleNamespace(**{**vars(re), "compile": lambda *given: Counted(re.compile(*given))})
    monkeypatch.setattr(_shapes, "re", counted)
    body = "".join(f"value_{number} = {number}\n" for number in range(20_000)) + BAD
    work = []
    for first in ("y = 1\n", "y = 1\r"):
        scanned.clear()
        (finding,) = lint.Checker().check_source(f"{first}{body}".encode(), "x.py")
        assert (finding.line, finding.code) == (20_002, "FK001")
        work.append(sum(scanned))
    assert 0 < work[1] <= 2 * work[0]


# fmt: off
SOURCE_PIECES = st.sampled_from([
    BAD, "match k:\n    case 'x' | 'y': pass\n", "def f(k: FailureKindName):\n    return k == 'no'\n",
    "# -*- coding: latin-1 -*-\n", "\ufeff", "\r\n", "\r", "\x00", "é", "(" * 300, "[" * 100, '"""', "\\",
    "\t", "x = a" + ".b" * 3000, "\x0c", "k: FailureKindName = ", "'swe_env:patch_aply_failed'\n",
])
# fmt: on


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
    found = lint.Checker(lint.DEFAULT_FIELDS, SWE).check_source(source, "any.py")
    assert all(item.line >= 1 and item.col >= 1 and "\n" not in str(item) for item in found)
    assert all(item.code in ("FK000", "FK001", "FK002", "FK003") for item in found)
    assert len(found) == 1 or "FK000" not in [item.code for item in found]


def test_the_command_prints_none_of_the_linted_files_warnings(tmp_path: Path) -> None:
    crafted = tmp_path / "x\nforged.py:1:1: FK001 unregistered failure kind 'fake'\x1b[2J.py"
    crafted.write_text(f'pattern = "\\d"\nif pattern is "x": pass\n{BAD}')
    # "error" would turn a warning that escaped into a failure; "always" would print it.
    for filters in ("error", "always"):
        result = run(str(crafted), env={"PYTHONWARNINGS": filters})
        assert (result.returncode, result.stderr) == (1, "")
        (line,) = result.stdout.splitlines()
        assert line.isprintable()
        assert line.endswith(":3:24: FK001 unregistered failure kind 'bad'")


# The command: output, exit codes, configuration, inputs


def test_text_and_json_output_and_exit_codes(tmp_path: Path) -> None:
    (tmp_path / "bad.py").write_text(
        'x = 1\nrow = {"failure_kind": "verifer_error"}\ny = {"failure_kind": "a:B"}\n'
    )
    (tmp_path / "good.py").write_text('row = {"failure_kind": "verifier_error"}\n')
    result = run("bad.py", "good.py", cwd=tmp_path)
    assert (result.returncode, result.stderr) == (1, "")
    assert result.stdout == (
        "bad.py:2:24: FK001 unregistered failure kind 'verifer_error'; did you mean 'verifier_error'?\n"
        "bad.py:3:22: FK002 malformed namespaced failure kind 'a:B': expected <server>:<kind>, each "
        "[a-z][a-z0-9_]*\n"
    )
    assert json.loads(run("bad.py", "--format", "json", cwd=tmp_path).stdout)[1] == {
        "path": "bad.py",
        "line": 3,
        "col": 22,
        "code": "FK002",
        "level": "error",
        "message": "malformed namespaced failure kind 'a:B': expected <server>:<kind>, each [a-z][a-z0-9_]*",
    }
    for output in ("text", "json", "github", "sarif"):
        clean = run("good.py", "--format", output, cwd=tmp_path)
        assert (clean.returncode, clean.stderr) == (0, "")
    assert run(cwd=tmp_path).returncode == 2


def test_the_help_leads_with_one_line_and_leaves_the_details_to_the_docs() -> None:
    _, lead, description, _ = run("--help").stdout.split("\n\n", 3)
    assert lead == "Find misspelled failure kinds in Python source."
    assert len(description.splitlines()) < 8
    assert "docs/lint.md" in description


def test_the_command_reads_the_nearest_pyproject_and_the_config_option(tmp_path: Path) -> None:
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
    assert (malformed.returncode, malformed.stdout) == (2, "")
    assert malformed.stderr == (
        "failure-kinds lint: error: kinds.toml: [namespaces] 'swe_env': the kind 'Patch' does not match "
        "[a-z][a-z0-9_]*\n"
    )


def working_tree_commit(into: Path) -> str:
    """A clone of this repository with its uncommitted changes committed, as pre-commit try-repo makes."""
    git = ["git", "-c", "user.name=test", "-c", "user.email=test@example.com", "-c", "commit.gpgsign=false"]
    subprocess.run([*git, "clone", "-q", str(ROOT), str(into)], check=True)
    base = subprocess.run(
        [*git, "rev-parse", "HEAD"], cwd=into, capture_output=True, text=True
    ).stdout.strip()
    # Against the clone's commit, not HEAD, which a commit made meanwhile may have moved.
    changes = subprocess.run([*git, "diff", base, "--binary"], cwd=ROOT, capture_output=True, check=True)
    if changes.stdout:
        subprocess.run([*git, "apply", "--index"], cwd=into, input=changes.stdout, check=True)
    subprocess.run([*git, "commit", "-q", "--allow-empty", "--no-verify", "-m", "tree"], cwd=into, check=True)
    return subprocess.run(
        [*git, "rev-parse", "HEAD"], cwd=into, capture_output=True, text=True
    ).stdout.strip()


@pytest.mark.interpreter_independent
@needs("pre_commit")
def test_pre_commit_hook_definition(tmp_path: Path) -> None:
    """Every hook the repository defines, installed by pre-commit (once, for both runs) from the working
    tree, fails on a misspelled or undeclared kind and a missing generated module, and passes without."""
    hooks = re.findall(r"^- id: (\S+)$", (ROOT / ".pre-commit-hooks.yaml").read_text(), re.MULTILINE)
    repository = {"repo": str(tmp_path / "hooks"), "rev": working_tree_commit(tmp_path / "hooks")}
    config = tmp_path / "config.yaml"  # JSON is YAML
    config.write_text(json.dumps({"repos": [{**repository, "hooks": [{"id": hook} for hook in hooks]}]}))
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
    command = [str(Path(sys.executable).parent / "pre-commit"), "run", "--config", str(config), "--files"]
    options: Any = {"cwd": project, "capture_output": True, "text": True, "env": environment}
    failing = subprocess.run([*command, "bad.py", "good.py", "undeclared.py", "pyproject.toml"], **options)
    assert failing.returncode == 1, failing.stdout + failing.stderr
    assert "bad.py:1:24: FK001 unregistered failure kind 'judge_faild'" in failing.stdout
    assert "undeclared.py:1:24: FK003 undeclared failure kind 'swe_env:patch_aply_failed'" in failing.stdout
    assert "declared.py is missing; run failure-kinds generate" in failing.stdout
    assert run_cli("generate", cwd=project).returncode == 0
    passing = subprocess.run([*command, "good.py", "pyproject.toml", "declared.py"], **options)
    assert passing.returncode == 0, passing.stdout + passing.stderr


def test_a_dash_is_a_usage_error_naming_standard_input(tmp_path: Path) -> None:
    for arguments in (["-"], ["ok.py", "-"], ["--fix", "-"]):
        result = run(*arguments, cwd=tmp_path, stdin=BAD)
        assert (result.returncode, result.stdout) == (2, ""), arguments
        assert result.stderr == (
            "failure-kinds lint: error: - would be standard input, which lint does not read: name files or "
            "directories (a file named - as ./-)\n"
        )
    (tmp_path / "-").write_text(BAD)
    named = run("./-", cwd=tmp_path)
    assert (named.returncode, named.stdout[:20]) == (1, "./-:1:24: FK001 unre")


def test_directories_are_walked_sorted_and_what_is_not_entered_is_said(tmp_path: Path) -> None:
    for name in (".git", "__pycache__", "node_modules", "site-packages", "src", "src/sub"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "a.py").write_text(OLDER)
    (tmp_path / "src" / "link").symlink_to(tmp_path / "node_modules")
    (tmp_path / "src" / "sub" / "b.pyi").write_text(OLDER)
    (tmp_path / "src" / "c.txt").write_text(OLDER)
    result = run(".", cwd=tmp_path)
    assert result.stdout == "".join(
        f"./src/{name}:1:24: {OLDER_FOUND}\n" for name in ("a.py", "sub/a.py", "sub/b.pyi")
    )
    assert result.stderr == (
        "failure-kinds lint: note: 5 directories not entered (hidden, __pycache__, node_modules, "
        "site-packages or a link): ./.git, ./__pycache__, ./node_modules and 2 more\n"
    )
    # A directory named on the command line is walked whatever its name.
    assert run(".git", cwd=tmp_path).stdout == f".git/a.py:1:24: {OLDER_FOUND}\n"


def test_entries_that_are_not_regular_files_are_skipped_in_a_walk_and_errors_when_named(
    tmp_path: Path,
) -> None:
    (tmp_path / "a.py").write_text(OLDER)
    (tmp_path / "b_dangling.py").symlink_to("nowhere.py")
    os.mkfifo(tmp_path / "c_pipe.py")
    (tmp_path / "d_device.py").symlink_to("/dev/null")
    result = run(".", cwd=tmp_path)
    assert (result.returncode, result.stdout) == (1, f"./a.py:1:24: {OLDER_FOUND}\n")
    assert result.stderr == (
        "failure-kinds lint: note: 3 entries found in directories are not regular files "
        "(a FIFO, a device or a dangling symbolic link) and were skipped\n"
    )
    named = run("c_pipe.py", "/dev/zero", "b_dangling.py", "a.py", cwd=tmp_path)
    assert (named.returncode, named.stdout) == (2, f"a.py:1:24: {OLDER_FOUND}\n")
    assert named.stderr.splitlines() == [
        "failure-kinds lint: c_pipe.py: not a regular file",
        "failure-kinds lint: /dev/zero: not a regular file",
        "failure-kinds lint: b_dangling.py: no such file",
    ]
    (tmp_path / "a.py").write_text(OLDER.replace("peer_drop", "transport_peer_drop"))
    for name in ("c_pipe.py", "d_device.py"):
        (tmp_path / name).unlink()
    alone = run(".", cwd=tmp_path)
    assert (alone.returncode, alone.stdout) == (0, "")
    assert alone.stderr == (
        "failure-kinds lint: note: 1 entry found in a directory is not a regular file "
        "(a FIFO, a device or a dangling symbolic link) and was skipped\n"
    )


def test_what_cannot_be_read_is_named_and_the_rest_linted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("locked/hidden.py", "open/bad.py", "open/secret.py"):
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text(BAD)
    real_scandir, real_open = os.scandir, os.open
    locked, secret = str(tmp_path / "locked"), str(tmp_path / "open" / "secret.py")

    # Permissions mean nothing to root, as CI runs, so the refusal is what listing and opening raise.
    def scandir(path: Any) -> Any:
        if str(path) == locked:
            raise PermissionError(13, "Permission denied", path)
        return real_scandir(path)

    def opening(path: Any, *arguments: Any, **options: Any) -> int:
        if str(path) == secret:
            raise PermissionError(13, "Permission denied", path)
        return real_open(path, *arguments, **options)

    monkeypatch.setattr(os, "scandir", scandir)
    monkeypatch.setattr(os, "open", opening)
    result = run(str(tmp_path / "missing.py"), str(tmp_path), cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        f"failure-kinds lint: {tmp_path / 'missing.py'}: no such file",
        f"failure-kinds lint: {locked}: permission denied",
        f"failure-kinds lint: {secret}: permission denied",
    ]
    assert result.stdout == f"{tmp_path / 'open' / 'bad.py'}:1:24: FK001 unregistered failure kind 'bad'\n"


def test_a_file_several_paths_name_is_read_once_the_first_name_winning(tmp_path: Path) -> None:
    (tmp_path / "b.py").write_text(OLDER)
    os.link(tmp_path / "b.py", tmp_path / "a_hard.py")
    (tmp_path / "c_link.py").symlink_to("b.py")
    result = run("b.py", "b.py", ".", cwd=tmp_path)
    assert (result.returncode, result.stdout) == (1, f"b.py:1:24: {OLDER_FOUND}\n")
    assert (
        result.stderr
        == "failure-kinds lint: note: 4 inputs name a file already read; each file is read once\n"
    )
    single = run(".", "c_link.py", cwd=tmp_path)
    assert (single.stdout, single.stderr) == (
        f"./a_hard.py:1:24: {OLDER_FOUND}\n",
        "failure-kinds lint: note: 3 inputs name a file already read; each file is read once\n",
    )


@pytest.mark.parametrize("option", ["--format=text", "--format=github", "--diff", "--fix", "--format=sarif"])
def test_no_input_file_is_an_error_that_fails_the_documented_code_scanning_step(
    tmp_path: Path, option: str
) -> None:
    (tmp_path / "src").mkdir()
    result = run(option, "src", cwd=tmp_path)
    assert (result.returncode, result.stdout[:1]) == (2, "{" if option == "--format=sarif" else "")
    assert result.stderr == (
        "failure-kinds lint: note: src: no *.py or *.pyi files in this directory\n"
        "failure-kinds lint: no input file was found\n"
    )
    if option == "--format=sarif":  # the step as docs/lint.md shows it
        (step,) = re.findall(
            r"- run: (failure-kinds lint --format sarif .*)", (ROOT / "docs/lint.md").read_text()
        )
        path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"
        shell = subprocess.run(
            ["sh", "-c", step], cwd=tmp_path, env={**os.environ, "PATH": path}, timeout=TIMEOUT
        )
        assert shell.returncode != 0  # test $? -eq 1 fails: the step fails


# One entry of a generated directory: a file with a finding or without, a link to an earlier entry
# (symbolic or hard), a dangling link, a FIFO.
ENTRIES = st.lists(
    st.one_of(
        st.sampled_from(["finding", "clean", "dangling", "fifo"]).map(lambda kind: (kind, 0)),
        st.tuples(st.sampled_from(["symlink", "hardlink"]), st.integers(0, 50)),
    ),
    max_size=40,
)


@settings(max_examples=examples(60), deadline=None)
@given(ENTRIES)
def test_every_regular_file_of_a_generated_tree_is_read_once_and_the_rest_is_counted(
    entries: list[tuple[str, int]],
) -> None:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        (root / "sub").mkdir()
        files: list[Path] = []
        skipped = repeated = 0
        for index, (kind, target) in enumerate(entries):
            # Half in a subdirectory, so a link may cross directories; the index keeps the walk's order.
            path = root / ("sub" if index % 2 else "") / f"{index:03}.py"
            if kind in ("finding", "clean"):
                path.write_text(OLDER if kind == "finding" else BAD.replace("bad", "cancelled"))
                files.append(path)
            elif kind in ("dangling", "fifo"):
                path.symlink_to(root / f"missing-{index}.py") if kind == "dangling" else os.mkfifo(path)
                skipped += 1
            elif files:
                original = files[target % len(files)]
                path.symlink_to(original) if kind == "symlink" else os.link(original, path)
                repeated += 1
        # Of the names of one file, the first the walk meets (root's, then sub's, sorted) is kept.
        first_names: dict[tuple[int, int], str] = {}
        for path in sorted(root.glob("*.py")) + sorted((root / "sub").glob("*.py")):
            if path.is_file():
                first_names.setdefault((path.stat().st_dev, path.stat().st_ino), str(path))
        expected = sorted(name for name in first_names.values() if Path(name).read_text() == OLDER)
        notes: list[str] = []
        found, unreadable = lint.lint_paths([folder], lint.Checker(), notes)
    assert (unreadable, sorted(item.path for item in found)) == ([], expected)
    said = [] if files or skipped else [f"{folder}: no *.py or *.pyi files in this directory"]
    if skipped:
        one = "1 entry found in a directory is not a regular file"
        entries = one if skipped == 1 else f"{skipped} entries found in directories are not regular files"
        verb = "was" if skipped == 1 else "were"
        said.append(f"{entries} (a FIFO, a device or a dangling symbolic link) and {verb} skipped")
    if repeated:
        inputs = "1 input names" if repeated == 1 else f"{repeated} inputs name"
        said.append(f"{inputs} a file already read; each file is read once")
    assert notes == said + ([] if files else [lint.NO_INPUT])


# File names: escaped in the text output, encoded in GitHub's and SARIF's

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
        path = Path(folder) / f"{name}.py"
        if problem == "finding":
            path.write_text(BAD)
        elif problem == "unparseable":
            path.write_text("def (:\n\u202e\n")
        elif problem == "fifo":
            os.mkfifo(path)
        elif problem == "directory":
            path = Path(folder) / name
            path.mkdir()
            (path / "bad.py").write_text(BAD)
        code = main(["lint", str(path)])
        out, err = capsys.readouterr()
    (line,) = out.splitlines() + err.splitlines()
    assert line.isprintable(), line
    assert code == (2 if problem in ("missing", "fifo") else 1)
    assert "\\x1b" in line or "\x1b" not in name


def test_github_commands_name_the_file_itself_escaped_by_githubs_rules(tmp_path: Path) -> None:
    # GitHub's workflow-command rules: %, CR and LF in the message; those and ":" and "," in a property.
    for name in ("n\nl.py", "c\rr,1:2%.py"):
        (tmp_path / name).write_text(BAD)
    (tmp_path / "a,b:c.py").write_text('row = {"failure_kind": "judge_faild"}\nk = "100%"\n')
    result = run("--format", "github", ".", cwd=tmp_path)
    assert result.returncode == 1
    assert result.stdout == (
        "::error file=./a%2Cb%3Ac.py,line=1,col=24,title=FK001::unregistered failure kind 'judge_faild'; "
        "did you mean 'judge_failed'?\n"
        "::error file=./c%0Dr%2C1%3A2%25.py,line=1,col=24,title=FK001::unregistered failure kind 'bad'\n"
        "::error file=./n%0Al.py,line=1,col=24,title=FK001::unregistered failure kind 'bad'\n"
    )
    parser = lint.Finding("a.py", 1, 1, "FK000", "cannot parse: 50%\r\nof \x1b[2J")
    assert (
        github_command(parser)
        == "::error file=a.py,line=1,col=1,title=FK000::cannot parse: 50%25%0D%0Aof \\x1b[2J\n"
    )


ESCAPES = {"%25": "%", "%0D": "\r", "%0A": "\n", "%3A": ":", "%2C": ","}


def unescape(text: str, codes: int) -> str:
    """The runner's decoding: each escape read once, left to right (the first ``codes`` of ESCAPES)."""
    return re.sub("|".join(list(ESCAPES)[:codes]), lambda match: ESCAPES[match.group()], text)


@settings(max_examples=examples(300), deadline=None)
@given(st.text(min_size=1, max_size=40), st.text(max_size=80))
def test_github_commands_round_trip_through_the_runners_escaping(path: str, message: str) -> None:
    line = github_command(lint.Finding(path, 7, 3, "FK004", message))
    assert line.startswith("::warning ")
    assert "\n" not in line[:-1]
    assert line.endswith("\n")
    properties, _, text = line[len("::warning ") : -1].partition("::")
    fields = {
        name: unescape(value, 5) for name, value in (item.split("=", 1) for item in properties.split(","))
    }
    assert fields == {"file": path, "line": "7", "col": "3", "title": "FK004"}
    plain = message.replace("\r", "").replace("\n", "")
    assert (
        unescape(text, 3) == message
        if plain.isprintable()
        else unescape(text, 3).replace("\r", "").replace("\n", "").isprintable()
    )


# --format sarif: what GitHub code scanning requires, and Microsoft's validator

# Microsoft's validator (npm @microsoft/sarif-multitool), where `make test` installs it. Its binary is run
# directly: npm's wrapper passes the arguments through a shell.
VALIDATOR = next(
    iter(sorted(ROOT.glob(".venv/npm/node_modules/@microsoft/sarif-multitool-*/Sarif.Multitool"))), None
)
# Two fixes on one line, a prefixed triple-quoted literal, a label without a single replacement, an older
# constant, a non-ASCII character before a finding, and a comparison, which --fix leaves alone.
SARIF_SOURCE = """\
import failure_kinds as fk
row = {"failure_kind": "judge_faild"}
pair = [dict(failure_kind="timeout"), dict(failure_kind='peer_drop')]
x = {"failure_kind": r\"\"\"resource\"\"\"}
y = {"é": 1, "failure_kind": "oom_killed"}
z = {"failure_kind": "sandbox", "other": fk.PEER_DROP}
if row["failure_kind"] == "unreachable":
    pass
"""
NAME = "a b%é,#?.py"


def sarif(tmp_path: Path, *paths: str) -> tuple[Path, dict[str, Any]]:
    """The log of a repository with a file whose name needs escaping in a URI, a file that does not parse,
    a symbolic link to the first, and a file outside the repository beside it."""
    repo = tmp_path / "repo"
    (repo / "src").mkdir(parents=True)
    (repo / "src" / NAME).write_text(SARIF_SOURCE, encoding="utf-8")
    (repo / "src" / "broken.py").write_text("def (:\n")
    os.symlink(NAME, repo / "src" / "link.py")
    (tmp_path / "outside.py").write_text(BAD)
    result = run("--format", "sarif", *paths, cwd=repo)
    assert result.returncode == 1, result.stderr
    return repo, json.loads(result.stdout)


def test_the_sarif_log_holds_what_code_scanning_requires_and_the_fixes_fix_writes(tmp_path: Path) -> None:
    # GitHub's "SARIF support for code scanning": the properties it marks required, and its limits.
    # partialFingerprints is computed by github/codeql-action/upload-sarif when it is absent.
    repo, log = sarif(tmp_path, "src", "../outside.py")
    assert (log["$schema"], log["version"]) == ("https://json.schemastore.org/sarif-2.1.0.json", "2.1.0")
    (run_,) = log["runs"]
    driver = run_["tool"]["driver"]
    assert (driver["name"], driver["version"]) == ("failure-kinds", failure_kinds.__version__)
    rules = driver["rules"]
    assert [rule["id"] for rule in rules] == list(lint.CODES)
    for rule in rules:
        assert 0 < len(rule["shortDescription"]["text"]) <= 1024
        assert 0 < len(rule["fullDescription"]["text"]) <= 1024
        assert rule["help"]["text"]
        assert rule["defaultConfiguration"]["level"] in {"note", "warning", "error"}
    assert run_["columnKind"] == "unicodeCodePoints"
    assert run_["originalUriBaseIds"] == {"%SRCROOT%": {"uri": repo.resolve().as_uri() + "/"}}
    results = run_["results"]
    assert [result["ruleId"] for result in results] == ["FK001", *["FK004"] * 7, "FK000", "FK001"]
    physical = [result["locations"][0]["physicalLocation"] for result in results]
    for result, where_ in zip(results, physical, strict=True):
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"]
        assert result["level"] in {"warning", "error"}
        assert result["message"]["text"]
        assert min(where_["region"]["startLine"], where_["region"]["startColumn"]) >= 1
        location = where_["artifactLocation"]
        base = run_["originalUriBaseIds"][location["uriBaseId"]]["uri"] if "uriBaseId" in location else ""
        assert Path(os.fsdecode(unquote_to_bytes((base + location["uri"]).removeprefix("file://")))).is_file()
    artifacts = [where_["artifactLocation"] for where_ in physical]
    # The link's target, as code scanning cannot show a result in a link; the outside file by its full URI.
    assert artifacts[0] == {"uri": "src/a%20b%25%C3%A9%2C%23%3F.py", "uriBaseId": "%SRCROOT%"}
    assert artifacts[-2] == {"uri": "src/broken.py", "uriBaseId": "%SRCROOT%"}
    assert artifacts[-1] == {"uri": (tmp_path / "outside.py").resolve().as_uri()}
    linked = json.loads(run("--format", "sarif", "src/link.py", cwd=repo).stdout)["runs"][0]["results"][0]
    assert linked["locations"][0]["physicalLocation"]["artifactLocation"] == artifacts[0]
    # Every literal's region runs from its first character to just after its last.
    results = results[:-2]
    lines = SARIF_SOURCE.splitlines(keepends=True)
    texts = [
        lines[region["startLine"] - 1][region["startColumn"] - 1 : region["endColumn"] - 1]
        if "endColumn" in region
        else None
        for region in (where_["region"] for where_ in physical[:-2])
    ]
    assert texts == [
        '"judge_faild"', '"timeout"', "'peer_drop'", 'r"""resource"""', '"oom_killed"', '"sandbox"',
        None, '"unreachable"',  # fk.PEER_DROP, a name: no end
    ]  # fmt: skip
    fixed = [result["message"]["text"].split("'")[1] for result in results if "fixes" in result]
    assert fixed == ["timeout", "peer_drop", "resource", "oom_killed"]
    replacements = [
        replacement
        for result in results
        for fix in result.get("fixes", [])
        for change in fix["artifactChanges"]
        for replacement in change["replacements"]
    ]
    for replacement in sorted(replacements, key=lambda item: tuple(item["deletedRegion"].values()))[::-1]:
        region = replacement["deletedRegion"]
        assert region["endLine"] == region["startLine"]
        line = lines[region["startLine"] - 1]
        start, end = region["startColumn"] - 1, region["endColumn"] - 1
        lines[region["startLine"] - 1] = line[:start] + replacement["insertedContent"]["text"] + line[end:]
    after = run("--fix", "--format", "sarif", "src", cwd=repo)
    assert after.returncode == 1, after.stderr
    assert (repo / "src" / NAME).read_text(encoding="utf-8") == "".join(lines)
    assert not any("fixes" in result for result in json.loads(after.stdout)["runs"][0]["results"])


@pytest.mark.skipif(VALIDATOR is None, reason="needs npm @microsoft/sarif-multitool (make environments)")
def test_microsofts_sarif_validator_finds_nothing_to_fix(tmp_path: Path) -> None:
    _, log = sarif(tmp_path, "src", "../outside.py")
    (tmp_path / "log.sarif").write_text(json.dumps(log))
    del log["runs"][0]["tool"]["driver"]["name"]  # the validator does see a log that is wrong
    (tmp_path / "wrong.sarif").write_text(json.dumps(log))
    report = tmp_path / "report.sarif"
    found: dict[str, list[dict[str, Any]]] = {"log.sarif": [], "wrong.sarif": []}
    command = [str(VALIDATOR), "validate", "--output", str(report), *(str(tmp_path / name) for name in found)]
    # Its exit code says 0 anyway; one run validates both logs.
    subprocess.run(command, check=True, capture_output=True, timeout=TIMEOUT)
    run_ = json.loads(report.read_text())["runs"][0]
    assert run_["invocations"][0]["executionSuccessful"]
    # A result without a level has its rule's, a warning; notes are suggestions (snippets, a help URI).
    for result in run_["results"]:
        if result.get("level", "warning") != "note":
            uri = result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
            found[uri.rsplit("/", 1)[-1]].append(result)
    # Its one warning asks for a home page (informationUri), which the package does not have.
    assert [(result["ruleId"], result["message"]["id"]) for result in found["log.sarif"]] == [
        ("SARIF2005", "Warning_ProvideToolnformationUri")
    ]
    assert any(result.get("level") == "error" for result in found["wrong.sarif"])
