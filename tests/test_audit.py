"""The audit's counting, in process: every line accounted for, whatever the input holds."""

from __future__ import annotations

import gzip
import io
import json
import os
import socket
import zlib
from collections.abc import Sequence
from pathlib import Path

import pytest
from conftest import refuse_to_open
from helpers import examples, needs
from hypothesis import example, given, settings
from hypothesis import strategies as st

from failure_kinds import audit
from failure_kinds.audit import AuditError, Report

EXAMPLES = Path(__file__).parent.parent / "examples"


def write_lines(path: Path, lines: Sequence[str | bytes]) -> Path:
    data = b"".join(line if isinstance(line, bytes) else line.encode() for line in lines)
    path.write_bytes(data)
    return path


def row(kind: object = "absent", **extra: object) -> str:
    record: dict[str, object] = {"rollout_id": "r-1", **extra}
    if kind != "absent":
        record["failure_kind"] = kind
    return json.dumps(record) + "\n"


def kinds(report: Report) -> dict[str | None, tuple[int, str]]:
    return {entry.value: (entry.count, entry.category) for entry in report.kinds}


def assert_accounted(report: Report) -> None:
    assert report.records == report.with_kind + report.without_kind + report.invalid + report.unparseable
    assert sum(entry.count for entry in report.kinds) == report.with_kind
    assert sum(file.records for file in report.files) == report.records


# Without msgspec, fast=True reads with the standard library too: the comparison would prove nothing.
WITH_MSGSPEC = needs("msgspec")


@pytest.fixture(params=[False, pytest.param(True, marks=WITH_MSGSPEC)], ids=["stdlib", "msgspec"])
def fast(request: pytest.FixtureRequest) -> bool:
    value: bool = request.param
    return value


@WITH_MSGSPEC
def test_fast_decoder_is_really_msgspec() -> None:
    assert type(audit.make_decoder(["failure_kind"], fast=True)) is audit.FastDecoder
    assert type(audit.make_decoder(["failure_kind"], fast=False)) is audit.Decoder


def test_categories_and_totals(tmp_path: Path, fast: bool) -> None:
    path = write_lines(
        tmp_path / "rollouts.jsonl",
        [
            row("transport_timeout"),
            row("transport_timeout"),
            row("my_env:quota_hit"),
            row("browser:tab_crashed"),
            row("judge_faild"),
            row(None),
            row(),
            row(7),
            row(True),
            row({"code": 1}),
            row(["a"]),
            "not json\n",
            "[1, 2]\n",
            '"just a string"\n',
        ],
    )
    report = audit.audit([str(path)], fast=fast)
    assert (report.records, report.with_kind, report.without_kind, report.invalid, report.unparseable) == (
        14,
        5,
        2,
        4,
        3,
    )
    assert kinds(report) == {
        "transport_timeout": (2, "registered"),
        "my_env:quota_hit": (1, "namespaced"),
        "browser:tab_crashed": (1, "namespaced"),
        "judge_faild": (1, "unregistered"),
    }
    (unregistered,) = report.unregistered
    assert unregistered.suggestion == "judge_failed"
    assert unregistered.first_seen == f"{path}:5"
    assert report.namespaces == {"browser": 1, "my_env": 1}
    assert_accounted(report)


def test_rows_sorted_by_count_then_value(tmp_path: Path) -> None:
    path = write_lines(
        tmp_path / "a.jsonl", [row("shutdown"), row("cancelled"), row("cancelled"), row("b:c")]
    )
    assert [entry.value for entry in audit.audit([str(path)]).kinds] == ["cancelled", "b:c", "shutdown"]


def test_blank_lines_are_not_records_but_count_as_lines(tmp_path: Path, fast: bool) -> None:
    path = write_lines(tmp_path / "a.jsonl", ["\n", "   \n", row("cancelled"), "\t\r\n", row("judge_faild")])
    report = audit.audit([str(path)], fast=fast)
    assert report.records == 2
    assert report.unregistered[0].first_seen == f"{path}:5"
    assert_accounted(report)


@pytest.mark.parametrize("content", [b"", b"\n\n  \n\r\n"], ids=["empty", "blank-only"])
def test_empty_inputs(tmp_path: Path, fast: bool, content: bytes) -> None:
    path = tmp_path / "a.jsonl"
    path.write_bytes(content)
    report = audit.audit([str(path)], fast=fast)
    assert report.records == 0
    assert report.kinds == []
    assert report.failed_files == []


def test_bom_and_crlf(tmp_path: Path, fast: bool) -> None:
    path = tmp_path / "windows.jsonl"
    path.write_bytes(
        b"\xef\xbb\xbf" + row("cancelled").encode().replace(b"\n", b"\r\n") + b'{"failure_kind": "x:y"}\r\n'
    )
    report = audit.audit([str(path)], fast=fast)
    assert kinds(report) == {"cancelled": (1, "registered"), "x:y": (1, "namespaced")}
    assert report.unparseable == 0


def test_bom_only_counts_at_the_start_of_a_file(tmp_path: Path, fast: bool) -> None:
    path = write_lines(tmp_path / "a.jsonl", [row("cancelled"), b"\xef\xbb\xbf" + row("cancelled").encode()])
    report = audit.audit([str(path)], fast=fast)
    assert (report.with_kind, report.unparseable) == (1, 1)


def test_invalid_utf8_is_unparseable_even_outside_the_field(tmp_path: Path, fast: bool) -> None:
    path = write_lines(
        tmp_path / "a.jsonl",
        [
            b'{"failure_kind": "cancelled", "note": "\xff\xfe"}\n',
            row("cancelled"),
            b'{"failure_kind": "caf\xc3\xa9"}\n',
        ],
    )
    report = audit.audit([str(path)], fast=fast)
    assert report.unparseable == 1
    assert kinds(report) == {"cancelled": (1, "registered"), "café": (1, "unregistered")}


def test_five_megabyte_line(tmp_path: Path, fast: bool) -> None:
    big = row("transport_timeout", failure_reason="x" * 5_000_000)
    path = write_lines(tmp_path / "big.jsonl", [row("cancelled"), big, row("cancelled")])
    report = audit.audit([str(path)], fast=fast)
    assert kinds(report) == {"cancelled": (2, "registered"), "transport_timeout": (1, "registered")}


def test_deeply_nested_line_is_unparseable_not_a_crash(tmp_path: Path, fast: bool) -> None:
    path = write_lines(tmp_path / "deep.jsonl", ["[" * 100_000 + "]" * 100_000 + "\n", row("cancelled")])
    report = audit.audit([str(path)], fast=fast)
    assert (report.unparseable, report.with_kind) == (1, 1)


def test_dotted_field(tmp_path: Path, fast: bool) -> None:
    path = write_lines(
        tmp_path / "nested.jsonl",
        [
            json.dumps({"response": {"failure_kind": "verifier_error"}}) + "\n",
            json.dumps({"response": {"failure_kind": None}}) + "\n",
            json.dumps({"response": None}) + "\n",
            json.dumps({"response": "a string, not an object"}) + "\n",
            json.dumps({"response": [1, 2]}) + "\n",
            json.dumps({"response": {"failure_kind": 3}}) + "\n",
            json.dumps({"failure_kind": "cancelled"}) + "\n",
        ],
    )
    report = audit.audit([str(path)], field_path="response.failure_kind", fast=fast)
    assert kinds(report) == {"verifier_error": (1, "registered")}
    assert (report.without_kind, report.invalid) == (5, 1)
    assert report.field == "response.failure_kind"


def test_empty_field_segment_is_a_usage_error() -> None:
    with pytest.raises(AuditError, match="empty segment"):
        audit.audit(["-"], field_path="response..failure_kind")


def test_a_directory_walk_reads_its_logs_whatever_the_case_and_names_every_entry_it_skips(
    tmp_path: Path, fast: bool
) -> None:
    folder = tmp_path / "logs"
    (folder / "day2").mkdir(parents=True)
    write_lines(folder / "a_failures.jsonl", [row("cancelled")])
    with gzip.open(folder / "day2" / "b.jsonl.gz", "wb") as file:
        file.write(row("shutdown").encode() * 3)
    for name in ("B.JSONL", "c.NDJSON", "day2/d.ndjson.gz", "e.JsonL.Gz"):
        (folder / name).write_bytes(gzip.compress(row("cancelled").encode()))
    for name in ("notes.txt", "c.json", "g.json.gz", "e.log"):
        write_lines(folder / name, [row("cancelled")])
    (folder / "broken.jsonl").symlink_to(tmp_path / "nowhere")
    (folder / "again").symlink_to(folder / "day2")
    (folder / "a_loop.jsonl").symlink_to(folder / "b_loop.txt")
    (folder / "b_loop.txt").symlink_to(folder / "a_loop.jsonl")
    os.mkfifo(folder / "f.jsonl")
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(folder / "s.jsonl"))
        single = write_lines(tmp_path / "single.jsonl", [row("kill_shaped")])
        report = audit.audit([str(single), str(folder)], fast=fast)
    read = [
        "single.jsonl",
        "B.JSONL",
        "a_failures.jsonl",
        "c.NDJSON",
        "b.jsonl.gz",
        "d.ndjson.gz",
        "e.JsonL.Gz",
    ]
    assert [Path(file.path).name for file in report.files] == read
    assert kinds(report) == {
        "cancelled": (5, "registered"),
        "shutdown": (3, "registered"),
        "kill_shaped": (1, "registered"),
    }
    skipped = [
        "a_loop.jsonl (a symbolic link loop)",
        "again (a link to a directory)",
        "b_loop.txt (a symbolic link loop)",
    ]
    skipped += ["broken.jsonl (a dangling symbolic link)", "c.json", "e.log", "f.jsonl (a FIFO)", "g.json.gz"]
    skipped += ["notes.txt", "s.jsonl (a socket)"]
    suffixes = "*.jsonl, *.ndjson, *.jsonl.gz, *.ndjson.gz or *.parquet"
    named = ", ".join(f"{folder}/{name}" for name in skipped[:5])
    note = f"10 entries found in directories are not {suffixes} regular files and were skipped: {named}"
    assert report.notes == [note + " and 5 more"]


def test_gzip_is_recognised_by_content_too(tmp_path: Path) -> None:
    path = tmp_path / "misnamed.jsonl"
    path.write_bytes(gzip.compress(row("cancelled").encode()))
    assert kinds(audit.audit([str(path)])) == {"cancelled": (1, "registered")}


@pytest.mark.parametrize("engine", [{"jobs": 1}, {"jobs": 2, "chunk_bytes": 4096}], ids=["one", "jobs"])
def test_truncated_gzip_counts_the_whole_lines_before_the_break_and_reports_the_error(
    tmp_path: Path, fast: bool, engine: dict[str, int]
) -> None:
    data = gzip.compress(b"".join(row("cancelled", rollout=index).encode() for index in range(2000)))
    path = tmp_path / "cut.jsonl.gz"
    path.write_bytes(data[: len(data) * 3 // 4])
    good = write_lines(tmp_path / "good.jsonl", [row("shutdown")])
    report = audit.audit([str(path), str(good)], fast=fast, **engine)  # type: ignore[arg-type]
    cut, whole = report.files
    assert cut.error is not None
    assert "truncated gzip" in cut.error
    # The line cut off by the break is no record: not one more unparseable line to blame on its producer.
    before_break = zlib.decompressobj(wbits=31).decompress(path.read_bytes())
    assert (cut.records, report.unparseable) == (before_break.count(b"\n"), 0)
    assert (whole.records, whole.error) == (1, None)
    assert_accounted(report)


def test_corrupt_gzip_is_reported(tmp_path: Path) -> None:
    path = tmp_path / "corrupt.jsonl.gz"
    path.write_bytes(b"\x1f\x8b\x08\x00" + b"\x00" * 6 + b"garbage that is not deflate" * 10)
    (file,) = audit.audit([str(path)]).files
    assert file.error is not None
    assert "gzip" in file.error


def test_not_gzip_despite_name(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "plain.jsonl.gz", [row("cancelled")])
    (file,) = audit.audit([str(path)]).files
    assert file.error is not None
    assert "not a gzip file" in file.error


def test_missing_file_next_to_a_good_one(tmp_path: Path) -> None:
    good = write_lines(tmp_path / "good.jsonl", [row("cancelled")])
    report = audit.audit([str(tmp_path / "missing.jsonl"), str(good)])
    assert [(file.records, file.error) for file in report.files] == [(0, "no such file"), (1, None)]
    assert report.records == 1


def test_unreadable_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    good = write_lines(tmp_path / "good.jsonl", [row("cancelled")])
    secret = write_lines(tmp_path / "secret.jsonl", [row("cancelled")])
    refuse_to_open(monkeypatch, audit.sources, secret)
    report = audit.audit([str(secret), str(good)])
    assert [(file.records, file.error) for file in report.files] == [(0, "permission denied"), (1, None)]


def test_stdin(monkeypatch: pytest.MonkeyPatch, fast: bool) -> None:
    data = (row("cancelled") + row("cancelled") + "oops\n").encode()
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BufferedReader(io.BytesIO(data))))
    report = audit.audit(["-"], fast=fast)
    assert (report.with_kind, report.unparseable) == (2, 1)
    assert report.files[0].path == "<stdin>"


def test_stdin_only_once() -> None:
    with pytest.raises(AuditError, match="only once"):
        audit.audit(["-", "-"])


def test_empty_directory_is_noted(tmp_path: Path) -> None:
    report = audit.audit([str(tmp_path)])
    assert report.files == []
    assert report.notes == [
        f"{tmp_path}: no *.jsonl, *.ndjson, *.jsonl.gz, *.ndjson.gz or *.parquet files in this directory",
        "no input file was found, so --field failure_kind was never seen",
    ]
    assert report.field_missing


def test_aliases_regroup(tmp_path: Path) -> None:
    path = write_lines(
        tmp_path / "a.jsonl",
        [row("timeout_exceeded"), row("timeout_exceeded"), row("transport_timeout"), row("transient")],
    )
    report = audit.audit(
        [str(path)], aliases={"timeout_exceeded": "transport_timeout", "transient": "transport_peer_drop"}
    )
    assert kinds(report) == {
        "timeout_exceeded": (2, "aliased"),
        "transport_timeout": (1, "registered"),
        "transient": (1, "aliased"),
    }
    assert report.canonical_totals() == {"transport_timeout": 3, "transport_peer_drop": 1}
    assert report.unregistered == []


@pytest.mark.parametrize(
    ("aliases", "message"),
    [
        ({"old": "transport_timout"}, "not a registered kind; did you mean 'transport_timeout'"),
        ({"old": "my_env:x"}, "not a registered kind"),
        ({"cancelled": "shutdown"}, "already a registered kind"),
    ],
)
def test_bad_aliases(aliases: dict[str, str], message: str) -> None:
    with pytest.raises(AuditError, match=message):
        audit.audit(["-"], aliases=aliases)


def test_alias_option_parsing() -> None:
    assert audit.parse_alias_option("old=transport_timeout") == ("old", "transport_timeout")
    for bad in ["old", "=new", "old="]:
        with pytest.raises(AuditError, match="expected OLD=NEW"):
            audit.parse_alias_option(bad)


def test_alias_file(tmp_path: Path) -> None:
    assert audit.load_alias_file(str(EXAMPLES / "aliases.toml")) == {
        "timeout_exceeded": "agent_timeout",
        "transient": "transport_peer_drop",
        "judge_parse_error": "judge_unparseable",
    }
    cases = {
        "missing": None,
        "broken.toml": "[aliases\n",
        "no_table.toml": 'timeout = "transport_timeout"\n',
        "not_string.toml": "[aliases]\ntimeout = 3\n",
    }
    messages = {}
    for name, text in cases.items():
        path = tmp_path / name
        if text is not None:
            path.write_text(text)
        with pytest.raises(AuditError) as caught:
            audit.load_alias_file(str(path))
        messages[name] = str(caught.value)
    assert "no such file" in messages["missing"]
    assert "not valid TOML" in messages["broken.toml"]
    assert "no [aliases] table" in messages["no_table.toml"]
    assert "must be a string" in messages["not_string.toml"]


def test_distinct_values_are_bounded(tmp_path: Path, fast: bool) -> None:
    lines = [row(f"bad_{index}") for index in range(12)] + [row(f"env:kind_{index}") for index in range(8)]
    path = write_lines(tmp_path / "flood.jsonl", [*lines, row("bad_11"), row("cancelled")])
    report = audit.audit([str(path)], fast=fast, distinct_limit=5)
    by_category: dict[str, list[str | None]] = {}
    for entry in report.kinds:
        by_category.setdefault(entry.category, []).append(entry.value)
    assert len(by_category["unregistered"]) == 6  # five kept and the overflow row
    overflow = [entry for entry in report.kinds if entry.value is None]
    assert [(entry.category, entry.count) for entry in overflow] == [("unregistered", 8), ("namespaced", 3)]
    assert overflow[0].first_seen == f"{path}:6"
    assert report.namespaces == {"env": 8}
    assert_accounted(report)


def test_example_data_exercises_every_category() -> None:
    report = audit.audit(
        [str(EXAMPLES / "rollout_failures.jsonl")],
        aliases=audit.load_alias_file(str(EXAMPLES / "aliases.toml")),
    )
    categories = {entry.category for entry in report.kinds}
    assert categories == {"registered", "namespaced", "aliased", "unregistered"}
    assert len(report.namespaces) == 2
    assert report.without_kind > 0
    assert report.invalid > 0
    assert report.unparseable == 1
    assert 200 <= report.records <= 1000
    assert_accounted(report)
    # Without the aliases file, its older labels are legacy, not typos; its own label stays unregistered.
    plain = audit.audit([str(EXAMPLES / "rollout_failures.jsonl")])
    assert {row.value for row in plain.legacy} == {"timeout_exceeded", "transient"}
    assert "judge_parse_error" in {row.value for row in plain.unregistered}
    assert_accounted(plain)


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_only_on_a_terminal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(audit.Progress, "INTERVAL", 0.0)
    monkeypatch.setattr(audit.sources, "BATCH_BYTES", 64)
    path = write_lines(tmp_path / "a.jsonl", [row("cancelled")] * 50)
    terminal, pipe = FakeTerminal(), io.StringIO()
    audit.audit([str(path)], progress=terminal)
    audit.audit([str(path)], progress=pipe)
    assert "reading " in terminal.getvalue()
    assert terminal.getvalue().endswith("\r\033[K")
    assert pipe.getvalue() == ""


# The two decoders must agree on every line, whatever it holds.

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


def nested(depth: int, inner: str, kind: str) -> str:
    return {"array": "[" * depth + inner + "]" * depth, "object": '{"a":' * depth + inner + "}" * depth}[kind]


def with_bytes_inserted(line: bytes, junk: bytes, position: int) -> bytes:
    cut = position % (len(line) + 1)
    return line[:cut] + junk + line[cut:]


hostile_lines = st.one_of(
    st.builds(lambda number: f'{{"failure_kind": "cancelled", "n": {number}}}'.encode(), number_tokens),
    st.builds(lambda number: f'{{"failure_kind": {number}}}'.encode(), number_tokens),
    st.builds(lambda text: f'{{"failure_kind": "{text}"}}'.encode(), escapes),
    st.builds(lambda text: f'{{"failure_kind": "cancelled", "{text}": 1}}'.encode(), escapes),
    # Nesting to past every parser's limit, beside the field and at it.
    st.builds(
        lambda depth, kind: f'{{"failure_kind": "cancelled", "deep": {nested(depth, "1", kind)}}}'.encode(),
        st.integers(0, 11_000),
        st.sampled_from(["array", "object"]),
    ),
    st.builds(
        lambda depth, kind: f'{{"failure_kind": {nested(depth, "1", kind)}}}'.encode(),
        st.integers(0, 11_000),
        st.sampled_from(["array", "object"]),
    ),
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
    st.sampled_from([b"", b" ", b"\t", b'{"failure_kind": NaN}', b'{"failure_kind":"\\ud800"}', b"{} {}"]),
    hostile_lines,
)


@WITH_MSGSPEC
@settings(max_examples=examples(300), deadline=None)
@given(st.lists(raw_lines, max_size=12), st.sampled_from(["failure_kind", "response.failure_kind"]))
def test_fast_and_stdlib_decoders_agree(lines: list[bytes], field: str) -> None:
    import msgspec

    cleaned = [line.replace(b"\n", b" ") for line in lines]
    path = field.split(".")
    careful, fast = audit.Decoder(path), audit.FastDecoder(path, msgspec)
    # The fast batch leaves an invalid value as decoded; the tally counts it as INVALID either way.
    assert list(map(audit.hashable, fast.batch(cleaned))) == careful.batch(cleaned)
    for line in cleaned:
        assert fast.line(line) == careful.line(line)


@WITH_MSGSPEC
def test_fast_and_stdlib_reports_are_identical(tmp_path: Path) -> None:
    nasty = [
        row("cancelled"),
        "\n",
        '{"failure_kind": NaN, "x": 1}\n',
        '{"failure_kind": "\\ud800"}\n',
        '{"failure_kind": "a"} {"failure_kind": "b"}\n',
        "{\n",
        '"failure_kind": "cancelled"}\n',
        '  {"failure_kind": "shutdown"}  \n',
        '{"failure_kind": "x", "failure_kind": "y:z"}\n',
    ]
    path = write_lines(tmp_path / "nasty.jsonl", nasty * 3)
    for inputs in ([str(path)], [str(EXAMPLES / "rollout_failures.jsonl")]):
        slow = audit.render_json(audit.audit(inputs, fast=False))
        quick = audit.render_json(audit.audit(inputs, fast=True))
        assert slow == quick


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
    reports = [
        audit.audit_lines(lines, "log.jsonl", audit.settings_for(key), fast=fast).report().to_json()
        for fast in (True, False)
    ]
    assert reports[0] == reports[1]
    assert (reports[0]["with_kind"], reports[0]["without_kind"]) == (1, 2)
