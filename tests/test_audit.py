"""The audit's report: every line counted in exactly one category, the rows and their order, the text and
JSON output, and the two decoders agreeing."""

from __future__ import annotations

import importlib
import inspect
import io
import json
import os
import subprocess
import sys
import threading
import unicodedata
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from audit_support import assert_adds_up, jsonl
from helpers import examples, needs, run_cli
from hypothesis import example, given, settings
from hypothesis import strategies as st

import failure_kinds
from failure_kinds.audit import AuditError, Report, audit, audit_lines, render_json, render_text, settings_for
from failure_kinds.audit.render import indented_json
from failure_kinds.audit.sources import ABSENT, BLANK, make_decoder
from failure_kinds.history import OLDER_LABELS

EXAMPLES = Path(__file__).parent.parent / "examples"
REGISTERED = sorted(failure_kinds.FAILURE_KINDS)
# Without msgspec, fast=True reads with the standard library too: the comparison would prove nothing.
WITH_MSGSPEC = needs("msgspec")


def row(kind: object = "absent", **extra: object) -> bytes:
    record: dict[str, object] = {"rollout_id": "r-1", **extra}
    if kind != "absent":
        record["failure_kind"] = kind
    return json.dumps(record).encode() + b"\n"


def audited(tmp_path: Path, data: bytes, **options: object) -> Report:
    path = tmp_path / "a.jsonl"
    path.write_bytes(data)
    return audit([str(path)], **options)  # type: ignore[arg-type]


def kinds(report: Report) -> dict[str | None, tuple[int, str]]:
    return {entry.value: (entry.count, entry.category) for entry in report.kinds}


@pytest.fixture(params=[False, pytest.param(True, marks=WITH_MSGSPEC)], ids=["stdlib", "msgspec"])
def fast(request: pytest.FixtureRequest) -> bool:
    value: bool = request.param
    return value


@WITH_MSGSPEC
def test_fast_reads_with_msgspec_and_the_standard_library_without_it() -> None:
    code = (
        "import sys; from failure_kinds.audit import audit_lines, settings_for\n"
        "for fast in (False, True):\n"
        "    audit_lines([b'{\"failure_kind\": \"cancelled\"}'], 'a', settings_for(), fast=fast)\n"
        "    print('msgspec' in sys.modules)\n"
    )
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert loaded.split() == ["False", "True"]


MIXED = [
    row("transport_timeout"),
    row("transport_timeout"),
    row("my_env:quota_hit"),
    row("browser:tab_crashed"),
]
MIXED += [row("judge_faild"), row(None), row(), *map(row, [7, True, {"code": 1}, ["a"]])]
MIXED += [b"not json\n", b"[1, 2]\n", b'"just a string"\n']
RESPONSES = [
    {"failure_kind": "verifier_error"},
    {"failure_kind": None},
    None,
    "a string, not an object",
    [1, 2],
]
NESTED = [
    json.dumps({"response": response}).encode() + b"\n" for response in [*RESPONSES, {"failure_kind": 3}]
]
NESTED.append(b'{"failure_kind": "cancelled"}\n')
R, N, U = "registered", "namespaced", "unregistered"
BOM = b"\xef\xbb\xbf"
F = "failure_kind"
COUNTED = {  # lines, field, (records, with a kind, without, invalid, unparseable), rows
    "categories": (MIXED, F, (14, 5, 2, 4, 3), {"transport_timeout": (2, R), "judge_faild": (1, U)}),
    "empty": ([], F, (0, 0, 0, 0, 0), {}),
    "blank-only": ([b"\n\n  \n\r\n"], F, (0, 0, 0, 0, 0), {}),
    "bom-and-crlf": ([BOM + row("cancelled").replace(b"\n", b"\r\n"), b'{"failure_kind": "x:y"}\r\n'], F,
                     (2, 2, 0, 0, 0), {"x:y": (1, N)}),
    "bom-only-at-the-start": ([row("cancelled"), BOM + row("cancelled")], F,
                              (2, 1, 0, 0, 1), {"cancelled": (1, R)}),
    "invalid-utf8-outside-the-field": (
        [b'{"failure_kind": "cancelled", "x": "\xff\xfe"}\n', row("cancelled"),
         b'{"failure_kind": "caf\xc3\xa9"}\n'],
        F, (3, 2, 0, 0, 1), {"cancelled": (1, R), "café": (1, U)},
    ),
    "five-megabyte-line": ([row("cancelled"), row("cancelled", reason="x" * 5_000_000)], F,
                           (2, 2, 0, 0, 0), {}),
    "nested-too-deep": ([b"[" * 100_000 + b"]" * 100_000 + b"\n", row("cancelled")], F, (2, 1, 0, 0, 1), {}),
    "dotted-field": (NESTED, "response.failure_kind", (7, 1, 5, 1, 0), {"verifier_error": (1, R)}),
}  # fmt: skip


@pytest.mark.parametrize("case", COUNTED)
def test_every_line_counts_in_exactly_one_category(tmp_path: Path, fast: bool, case: str) -> None:
    lines, field, totals, rows = COUNTED[case]
    report = audited(tmp_path, b"".join(lines), field_path=field, fast=fast)
    counts = (report.records, report.with_kind, report.without_kind, report.invalid, report.unparseable)
    assert counts == totals
    cancelled = sum(line.count(b'"cancelled"') for line in lines[:3] if b"\xff" not in line)
    expected = {"cancelled": (cancelled, R)}
    expected |= {"my_env:quota_hit": (1, N), "browser:tab_crashed": (1, N)} if case == "categories" else {}
    assert kinds(report) == {key: value for key, value in (expected | rows).items() if value[0]}
    assert (report.field, report.failed_files) == (field, [])
    assert_adds_up(report)


def test_rows_say_where_they_were_first_seen_and_what_was_meant(tmp_path: Path) -> None:
    data = b"\n   \n" + b"".join(MIXED) + b"\t\r\n" + row("shutdown") + row("b:c") + row("b:c")
    report = audited(tmp_path, data)
    path = tmp_path / "a.jsonl"
    (unregistered,) = report.unregistered
    assert (unregistered.suggestion, unregistered.first_seen) == ("judge_failed", f"{path}:7")
    assert (report.first_invalid, report.first_unparseable) == (f"{path}:10", f"{path}:14")
    assert report.namespaces == {"b": 2, "browser": 1, "my_env": 1}
    # By count, then value.
    assert [entry.value for entry in report.kinds][:3] == ["b:c", "transport_timeout", "browser:tab_crashed"]


@pytest.mark.parametrize(
    ("inputs", "options", "message"),
    [(["-"], {"field_path": "response..failure_kind"}, "empty segment"), (["-", "-"], {}, "only once"),
     ([], {}, None)],
)  # fmt: skip
def test_arguments_that_cannot_be_audited_raise_before_anything_is_read(
    inputs: list[str], options: dict[str, object], message: str | None
) -> None:
    with pytest.raises(AuditError, match=message):
        audit(inputs, **options)  # type: ignore[arg-type]
    assert issubclass(AuditError, failure_kinds.FailureKindsError)


def test_the_example_data_exercises_every_category() -> None:
    inputs = [str(EXAMPLES / "rollout_failures.jsonl")]
    aliases = {"timeout_exceeded": "agent_timeout", "transient": "transport_peer_drop"}
    aliases["judge_parse_error"] = "judge_unparseable"
    report = audit(inputs, aliases=aliases)
    assert {entry.category for entry in report.kinds} == {R, N, "aliased", U}
    assert (len(report.namespaces), report.unparseable) == (2, 1)
    assert report.without_kind
    assert report.invalid
    assert 200 <= report.records <= 1000
    assert_adds_up(report)
    # The example's aliases file holds those aliases.
    command = run_cli("audit", *inputs, "--aliases", str(EXAMPLES / "aliases.toml"), "--format", "json")
    assert command.stdout == render_json(report)
    # Without aliases, its older labels are legacy, not typos; its own label stays unregistered.
    plain = audit(inputs)
    assert {entry.value for entry in plain.legacy} == {"timeout_exceeded", "transient"}
    assert "judge_parse_error" in {entry.value for entry in plain.unregistered}


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_is_shown_only_on_a_terminal_and_cleared(tmp_path: Path) -> None:
    """A stream fed slowly (a FIFO), so the line is due more than once while it is read."""
    shown = []
    for stream in (Terminal(), io.StringIO()):
        fifo = tmp_path / f"slow{len(shown)}.jsonl"
        os.mkfifo(fifo)

        def feed(fifo: Path = fifo) -> None:
            with fifo.open("wb") as pipe:
                for _ in range(6):
                    pipe.write(row("cancelled") * 50)
                    pipe.flush()
                    threading.Event().wait(0.15)

        writer = threading.Thread(target=feed)
        writer.start()
        assert audit([str(fifo)], progress=stream).records == 300
        writer.join()
        shown.append(stream.getvalue())
    assert "reading " in shown[0]
    assert "records" in shown[0]
    assert shown[0].endswith("\r\033[K")
    assert shown[1] == ""


# The two decoders agree on every line, whatever it holds.

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=5), children, max_size=3)
    ),
    max_leaves=8,
)
kind_values = st.one_of(
    st.sampled_from(["cancelled", "my_env:x", "judge_faild", "", "\ud800", "a\nb"]), json_values, st.text()
)
json_lines = st.one_of(
    st.builds(lambda value: json.dumps({"failure_kind": value}), kind_values),
    st.builds(lambda value: json.dumps({"response": {"failure_kind": value}}), kind_values),
    st.builds(json.dumps, json_values),
    st.text(max_size=30),
)
# Number tokens of any size and shape, valid or not: huge integers, huge exponents, leading zeros.
number_tokens = st.one_of(
    st.text(alphabet="0123456789", min_size=1, max_size=6000),
    st.builds(
        lambda sign, digits, exponent: f"{sign}{digits}e{exponent}",
        st.sampled_from(["", "-"]),
        st.text(alphabet="0123456789", min_size=1, max_size=30),
        st.integers(-100_000, 100_000),
    ),
    st.sampled_from(["-0", "0.0e-400", "1.", ".5", "-", "1e", "Infinity", "-Infinity", "NaN"]),
)
# Escapes inside strings, odd ones included: lone and paired surrogates, truncated and unknown escapes,
# raw control characters.
escapes = st.lists(
    st.sampled_from(
        ["\\ud800", "\\udfff", "\\ud83d\\ude00", "\\u12", "\\x41", "\\q", "\\/", "\\u0000", "\t", "\x01", "a"]
    ),
    max_size=6,
).map("".join)


def nested(depth: int, kind: str) -> str:
    return {"array": "[" * depth + "1" + "]" * depth, "object": '{"a":' * depth + "1" + "}" * depth}[kind]


def with_bytes_inserted(line: bytes, junk: bytes, position: int) -> bytes:
    cut = position % (len(line) + 1)
    return line[:cut] + junk + line[cut:]


depths = st.tuples(st.integers(0, 11_000), st.sampled_from(["array", "object"]))
hostile_lines = st.one_of(
    st.builds(lambda number: f'{{"failure_kind": "cancelled", "n": {number}}}'.encode(), number_tokens),
    st.builds(lambda number: f'{{"failure_kind": {number}}}'.encode(), number_tokens),
    st.builds(lambda text: f'{{"failure_kind": "{text}"}}'.encode(), escapes),
    st.builds(lambda text: f'{{"failure_kind": "cancelled", "{text}": 1}}'.encode(), escapes),
    # Nesting to past every parser's limit, beside the field and at it.
    depths.map(lambda depth: f'{{"failure_kind": "cancelled", "deep": {nested(*depth)}}}'.encode()),
    depths.map(lambda depth: f'{{"failure_kind": {nested(*depth)}}}'.encode()),
    # Bytes that are not UTF-8 anywhere in a line that would otherwise count.
    st.builds(
        with_bytes_inserted,
        json_lines.map(str.encode),
        st.sampled_from([b"\xff", b"\xc3", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\xc0\xaf", b"\x80\x80"]),
        st.integers(0, 200),
    ),
)
raw_lines = st.one_of(
    json_lines.map(str.encode),
    st.binary(max_size=30),
    st.builds(lambda line: b"  " + line.encode() + b" \r", json_lines),
    st.sampled_from(
        [b"", b" ", b"\t", b'{"failure_kind": NaN}', b'{"failure_kind":"\\ud800"}', b"{} {}", b"{\n"]
    ),
    st.sampled_from([b'{"failure_kind": "x", "failure_kind": "y:z"}', b'"failure_kind": "cancelled"}']),
    hostile_lines,
)


def both_ways(lines: list[bytes], field: str) -> list[str]:
    return [
        render_json(audit_lines(lines, "log.jsonl", settings_for(field), fast=fast).report())
        for fast in (True, False)
    ]


@WITH_MSGSPEC
@settings(max_examples=examples(300), deadline=None)
@given(st.lists(raw_lines, max_size=12), st.sampled_from(["failure_kind", "response.failure_kind"]))
def test_fast_and_stdlib_decoders_agree_on_every_line(lines: list[bytes], field: str) -> None:
    cleaned = [line.replace(b"\n", b" ") for line in lines]
    fast, careful = both_ways(cleaned, field)
    assert fast == careful
    for line in cleaned:  # line by line too: two differences cannot cancel out
        assert len(set(both_ways([line], field))) == 1


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(), children, max_size=4),
    max_leaves=30,
)


@given(json_values)
def test_the_json_report_is_indented_as_json_dumps_indents(value: object) -> None:
    assert indented_json(value) == json.dumps(value, indent=2)


def test_a_whole_json_report_is_indented_as_json_dumps_indents() -> None:
    lines = [*MIXED, b'{"failure_kind": "cancelled", "stage": "verifer"}\n']
    report = audit_lines(lines, "log.jsonl", settings_for(["failure_kind", "response.failure_kind"])).report()
    expected = {"fields": [one.to_json() for one in (report, *report.also)]}
    assert render_json(report) == json.dumps(expected, indent=2) + "\n"


@WITH_MSGSPEC
def test_msgspec_reads_paths_of_up_to_64_segments_and_the_standard_library_longer_ones() -> None:
    assert make_decoder([".".join(["a"] * 64)], True)._decode is not None
    assert make_decoder([".".join(["a"] * 65)], True)._decode is None


@WITH_MSGSPEC
def test_a_batch_ending_in_an_empty_line_decodes_each_record_once() -> None:
    # A file's last line is the likeliest empty one: looked at first, it costs no failed decode.
    decoder = make_decoder(["failure_kind", "stage"], True)
    decoded: list[bytes] = []
    inner = decoder._decode
    assert inner is not None
    decoder._decode = lambda line: (decoded.append(line), inner(line))[1]
    lines = [b'{"failure_kind": "cancelled"}\n'] * 3 + [b"\n"]
    assert decoder.batch(lines, True)[0] == ["cancelled"] * 3 + [BLANK]
    assert len(decoded) == 3


@WITH_MSGSPEC
def test_a_line_that_is_not_ascii_leaves_only_itself_to_the_standard_library() -> None:
    # msgspec does not check the UTF-8 of what it skips, so such a batch is read line by line: msgspec
    # still reads the ASCII lines, and only the other goes to the careful reading.
    decoder = make_decoder(["failure_kind", "stage"], True)
    careful: list[bytes] = []
    inner = decoder._careful
    decoder._careful = lambda line: (careful.append(line), inner(line))[1]  # type: ignore[method-assign]
    lines = [b'{"failure_kind": "cancelled", "stage": "agent"}\n'] * 3 + [
        '{"failure_kind": "caf\u00e9"}\n'.encode()
    ]
    assert decoder.batch(lines) == [["cancelled"] * 3 + ["caf\u00e9"], ["agent"] * 3 + [ABSENT]]
    assert careful == lines[3:]


@WITH_MSGSPEC
def test_both_decoders_agree_on_a_deep_line_however_close_to_the_recursion_limit() -> None:
    # msgspec, reading line by line, must run out of stack before the careful reading does, which decides
    # from one depth with either decoder: else a line nested to just past what fits reads two ways.
    lines = [b'{"failure_kind": ' + b"[" * 1977 + b"1" + b"]" * 1977 + b"}", "\u00e9".encode()]
    fast, careful = (make_decoder(["response.failure_kind"], fast) for fast in (True, False))
    here, limit = len(inspect.stack(0)), sys.getrecursionlimit()
    try:
        for headroom in range(1900, 2100):
            sys.setrecursionlimit(here + headroom)
            assert fast.batch(lines) == careful.batch(lines), headroom
    finally:
        sys.setrecursionlimit(limit)


@given(st.text(min_size=1, max_size=6).filter(lambda text: "." not in text))
@example('a"b')
@example("c\\d")
@example("e\tf")
@example("line\nbreak")
@settings(max_examples=examples(60), deadline=None)
@WITH_MSGSPEC
def test_any_legal_key_as_field_gives_the_same_report_with_either_decoder(key: str) -> None:
    # msgspec refuses quotes, backslashes and control characters in field names; such a --field is read
    # by the standard library instead, never a traceback.
    lines = [
        json.dumps({key: "transport_timeout"}).encode(),
        json.dumps({key: None, "other": 1}).encode(),
        json.dumps({"other": key}).encode(),
    ]
    fast, careful = both_ways(lines, key)
    assert fast == careful
    assert (json.loads(fast)["with_kind"], json.loads(fast)["without_kind"]) == (1, 2)


# The text report

ACTIONS = {  # what needs action, and the words each line of it must hold
    "unreadable": ["inputs not read", "under files:"],
    "unregistered": ["--aliases FILE", "failure-kinds lint", "--strict"],
    "undeclared": ["[tool.failure-kinds.namespaces]", "--strict"],
    "legacy": ["failure-kinds lint", "--fix", "--aliases FILE", "--strict"],
    "invalid": ["first at {path}:"],
    "unparseable": ["first at {path}:"],
}
# Paths and values wider than the table: long, and of wide (CJK) and full-width characters.
PATHS = ["a.jsonl", "d/" + "p" * 200 + ".jsonl", "漢" * 40 + ".jsonl", "logs/" + "q" * 85 + ".jsonl"]
LOOKALIKES = ["Peer_Drop", "peer-drop", "peer_dorp", "timeout ", "timeouts", "usersim:timeout", "oom_kiled"]


def columns(line: str) -> int:
    return sum(1 + (unicodedata.east_asian_width(character) in "WF") for character in line)


@settings(max_examples=examples(100), deadline=None)
@given(
    values=st.lists(
        st.sampled_from(
            [*REGISTERED, *OLDER_LABELS, *LOOKALIKES, "swe_env:gone", "swe_env:patch_apply_failed"]
        )
        | st.sampled_from([1, None, "x" * 70, "no json", "漢" * 90, "\uff46\uff55\uff4c\uff4c_" * 12]),
        max_size=30,
    ),
    aliased=st.dictionaries(st.sampled_from(sorted(OLDER_LABELS)), st.sampled_from(REGISTERED), max_size=2),
    line_bytes=st.sampled_from([80, 1000]),
    unreadable=st.booleans(),
    path=st.sampled_from(PATHS),
)
def test_the_text_report_leads_with_what_needs_action_and_fits_in_100_columns(
    values: list[object], aliased: dict[str, str], line_bytes: int, unreadable: bool, path: str
) -> None:
    lines = [value.encode() if value == "no json" else jsonl([value]).strip() for value in values]
    declared = {"swe_env": ("patch_apply_failed",)}
    partial = audit_lines(lines, path, settings_for("failure_kind", aliased, declared, line_bytes=line_bytes))
    if unreadable:  # a read that failed before the end, as a truncated gzip file's
        partial.add_error("truncated gzip: the compressed stream ends early")
    report = partial.report()
    text = render_text(report)
    # A path wider than that stays whole, alone on its line.
    wide = [line for line in text.splitlines() if columns(line) > 100]
    assert all(line.strip(" ;,").rstrip("0123456789").removesuffix(":") == path for line in wide), wide
    counts = Counter({"invalid": report.invalid, "unparseable": report.unparseable, "unreadable": unreadable})
    for entry in report.kinds:
        counts[entry.category] += entry.count
    needed = [category for category in ACTIONS if counts[category]]
    head = text.partition("\n\n")[2].partition("\n\n")[0]
    assert head.startswith("needs action:\n") == bool(needed)
    actions = head.replace("\n   ", " ").splitlines()[1:] if needed else []
    assert [line.split()[0] for line in actions] == needed
    for category, line in zip(needed, actions, strict=True):
        assert all(words.format(path=path) in " ".join(line.split()) for words in ACTIONS[category]), line
        assert ("--max-line-bytes" in line) == (category == "unparseable" and report.overlong > 0)
    totals = [line for line in text.splitlines() if line.startswith("  unparseable ")][-1]  # after the action
    assert totals.endswith(f"; {report.overlong:,} over the line cap") == (report.overlong > 0)
    not_seen = json.loads(render_json(report))["not_seen"]
    assert not_seen == [
        kind for kind in REGISTERED if kind not in {entry.canonical for entry in report.kinds}
    ]
    shown = " ".join(text.partition("\nnot seen: ")[2].partition("\n\n")[0].split())
    assert shown.partition(": ")[2].split(", ") == (not_seen if report.kinds and not_seen else [""])
    regrouped = text.partition("count:\n")[2].partition("\n\n")[0]
    registered = {entry.value: entry.count for entry in report.kinds if entry.category == "registered"}
    changed = [kind for kind, count in report.canonical_totals().items() if registered.get(kind) != count]
    assert [line.split()[0] for line in regrouped.splitlines()] == changed


FILES_LISTED = 20  # every file with an error, and this many others


@pytest.mark.parametrize(
    ("count", "failing"),
    [(0, set()), (1, set()), (1, {0}), (2, set()), (20, set()), (21, set()), (22, {21}), (60, {3, 40, 59})],
)
def test_the_text_report_lists_failed_files_and_a_bounded_number_of_others(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, count: int, failing: set[int]
) -> None:
    monkeypatch.chdir(tmp_path)
    names = [f"part-{index:03}.jsonl" for index in range(count)]
    for index, name in enumerate(names):
        if index not in failing:  # a failing one is missing
            Path(name).write_bytes(row("cancelled") * (index + 1))
    text = render_text(audit(names or ["."]))
    listed = [int(line.split("-")[1][:3]) for line in text.splitlines() if line.startswith("  part-")]
    if count < 2 and not failing:  # one file that was read: its line in the totals says it all
        assert listed == []
        return
    expected = sorted({*range(min(count, FILES_LISTED)), *failing})
    assert listed == expected
    summary = [line for line in text.splitlines() if "more file" in line]
    unlisted = [index for index in range(count) if index not in expected]
    if unlisted:
        (line,) = summary
        assert line.startswith(f"  ({len(unlisted):,} more file")
        assert f"{sum(index + 1 for index in unlisted if index not in failing):,} record" in line
    else:
        assert summary == []


def test_singular_and_plural(tmp_path: Path) -> None:
    text = render_text(audited(tmp_path, row("judge_faild")))
    assert "unregistered: 1 distinct, 1 record\n" in text
    assert "of the 1 record with a kind" in text
    assert "in 1 file\n" in text


def test_each_audit_module_imports_without_its_extra_and_is_cut_to_a_readable_size() -> None:
    """(No import cycle among them: test_imports.)"""
    package = Path(failure_kinds.__file__).parent
    for path in package.rglob("*.py"):
        parts = path.relative_to(package.parent).with_suffix("").parts
        if parts[:2] == ("failure_kinds", "audit"):
            importlib.import_module(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
        assert path.read_text(encoding="utf-8").count("\n") <= 600, path


def test_first_locations_of_a_batch_full_of_new_values_cost_one_pass_not_a_search_each() -> None:
    """Past the distinct cap every value of a batch can be new to the tally: the first locations of a
    batch of n new values must cost about n steps, not n searches of the batch."""
    from failure_kinds.audit.partial import FirstIndex

    class Watched(list[object]):
        searches = 0
        passes = 0

        def index(self, value: object, *bounds: Any) -> int:  # type: ignore[override]
            Watched.searches += 1
            return super().index(value, *bounds)

        def __iter__(self) -> Iterator[object]:
            Watched.passes += 1
            return super().__iter__()

        def __reversed__(self) -> Iterator[object]:
            Watched.passes += 1
            return super().__reversed__()

    values = Watched([None, *(f"v{index}" for index in range(5_000)), "v7"])
    first = FirstIndex(values)
    assert [first(f"v{index}") for index in range(5_000)] == list(range(1, 5_001))
    assert (Watched.searches, Watched.passes) == (8, 1)
    # An invalid value that is a list or an object is no key: the pass steps over it.
    mixed = FirstIndex([{"a": 1}, *(f"v{index % 20}" for index in range(40)), ["b"]])
    assert [mixed(f"v{index}") for index in range(20)] == list(range(1, 21))
