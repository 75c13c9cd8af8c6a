"""The audit's bounds (docs/audit.md, Bounds): the line cap, values kept cut, the distinct caps, runs of
blank lines; each total still adds up and every location is physical. Inputs far past the bounds run
under a memory limit that could not hold them: a clean exit and a small report, never a MemoryError."""

from __future__ import annotations

import gzip
import io
import json
import resource
import subprocess
import threading
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from audit_support import assert_adds_up, jsonl
from helpers import command, examples, needs, run_cli_bytes
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from failure_kinds.audit import (
    VALUE_CHARS,
    audit,
    audit_file,
    audit_lines,
    render_json,
    render_text,
    settings_for,
)
from failure_kinds.audit.settings import rank
from failure_kinds.history import OLDER_LABELS

HYPOTHESIS = settings(
    max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
BLANK = b" \t\r\x0b\x0c"
# Address space for the whole interpreter: imports take about 100 MiB of it, so this leaves a few
# times the default line cap, and far less than any of the inputs below would need if held whole.
MEMORY_LIMIT = 768 * 1024 * 1024


@pytest.fixture
def small_reads(monkeypatch: pytest.MonkeyPatch) -> None:
    """Reads of a few bytes, so every boundary of the line reader is met on small inputs (no public way
    reads less than a megabyte at a time)."""
    monkeypatch.setattr("failure_kinds.audit.sources.BATCH_BYTES", 7)


def expected(lines: list[bytes], line_bytes: int) -> list[tuple[int, str]]:
    """(line number, what it counts as) for every non-blank line, decided without the audit's reader."""
    outcome: list[tuple[int, str]] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip(BLANK):
            continue  # white space only: blank whatever its length, never over the cap
        try:
            document = json.loads(line) if len(line) <= line_bytes else None
        except ValueError:
            document = None
        if not isinstance(document, dict):
            outcome.append((number, "unparseable"))
        elif isinstance(document.get("failure_kind"), str):
            outcome.append((number, "kind:" + document["failure_kind"]))
        else:
            outcome.append((number, "without" if document.get("failure_kind") is None else "invalid"))
    return outcome


line_pieces = st.one_of(
    st.sampled_from([b"", b" ", b"\t\r", b"\r", b"{}", b"{oops", b'{"failure_kind": 1}', b"   \x0b"]),
    st.sampled_from(["cancelled", "judge_faild", "env:x", "y" * 30]).map(
        lambda value: json.dumps({"failure_kind": value}).encode()
    ),
    st.integers(0, 60).map(
        lambda size: json.dumps({"failure_kind": "cancelled", "pad": "z" * size}).encode()
    ),
    # White space longer than the cap, wherever a read starts or ends in it.
    st.tuples(st.sampled_from([b" ", b"\t", b"\r", b"\x0b", b" \x0c"]), st.integers(1, 90)).map(
        lambda piece: piece[0] * piece[1]
    ),
)


@HYPOTHESIS
@given(st.lists(line_pieces, max_size=30), st.integers(5, 60), st.booleans(), st.booleans())
def test_line_cap_blank_runs_and_locations(
    small_reads: None, tmp_path: Path, lines: list[bytes], line_bytes: int, final_newline: bool, fast: bool
) -> None:
    path = tmp_path / "a.jsonl"
    path.write_bytes(b"\n".join(lines) + (b"\n" if final_newline and lines else b""))
    report = audit([str(path)], fast=fast, line_bytes=line_bytes)
    model = expected(lines, line_bytes)

    def first(what: str) -> str | None:
        return next((f"{path}:{number}" for number, seen in model if seen == what), None)

    assert report.records == len(model)
    assert report.unparseable == sum(1 for _, what in model if what == "unparseable")
    assert report.invalid == sum(1 for _, what in model if what == "invalid")
    assert (report.first_unparseable, report.first_invalid) == (first("unparseable"), first("invalid"))
    overlong = [
        number for number, line in enumerate(lines, 1) if len(line) > line_bytes and line.strip(BLANK)
    ]
    assert report.overlong == len(overlong)
    assert report.first_overlong == (f"{path}:{overlong[0]}" if overlong else None)
    for row in report.kinds:
        assert row.first_seen == first(f"kind:{row.value}")
    assert_adds_up(report)


def test_a_line_over_the_cap_is_never_held(tmp_path: Path) -> None:
    """A line of many reads with no newline is skipped as it streams past; later lines count on."""
    path = tmp_path / "a.jsonl"
    with path.open("wb") as file:
        file.write(b'{"failure_kind": "cancelled"}\n')
        for _ in range(40):
            file.write(b"x" * (1 << 20))
        file.write(b'\n{"failure_kind": "judge_faild"}\n')
    report = audit([str(path)], line_bytes=1 << 20)
    assert (report.records, report.unparseable, report.first_unparseable) == (3, 1, f"{path}:2")
    assert (report.overlong, report.first_overlong) == (1, f"{path}:2")
    assert report.unregistered[0].first_seen == f"{path}:3"


@pytest.mark.parametrize("blank", [b" ", b"\t\r", b"\x0b\x0c "])
@pytest.mark.parametrize("newline", [b"\n", b""])
def test_white_space_over_the_cap_is_blank_in_every_reader(
    tmp_path: Path, blank: bytes, newline: bytes
) -> None:
    """White space of many reads is one blank line, never over the cap: read in one pass, from a byte
    range that starts with it or one that starts before it, and as lines given to audit_lines."""
    path = tmp_path / "a.jsonl"
    spaces = blank * ((3 << 20) // len(blank))
    first = b'{"failure_kind": "cancelled"}\n'
    path.write_bytes(first + spaces + b"\n" + b'{"failure_kind": "judge_faild"}\n' + spaces + newline)
    report = audit([str(path)], line_bytes=1 << 20)
    assert (report.records, report.unparseable, report.overlong) == (2, 0, 0)
    assert report.unregistered[0].first_seen == f"{path}:3"
    capped = settings_for(line_bytes=1 << 20)
    whole = audit_file(str(path), capped)
    split = audit_file(str(path), capped, stop=len(first)).merge(
        audit_file(str(path), capped, start=len(first))
    )
    lines = audit_lines(io.BytesIO(path.read_bytes()).readlines(), str(path), capped)
    for partial in (whole, split, lines):
        assert render_json(partial.report()) == render_json(report)


@HYPOTHESIS
@given(st.lists(st.text(min_size=1, max_size=5), min_size=1, max_size=6), st.integers(1, 400))
def test_long_values_are_kept_cut_with_their_length(tmp_path: Path, stems: list[str], extra: int) -> None:
    """Values longer than the cut keep a bounded prefix and their length; distinct ones stay distinct,
    and a value that spells another's key is not counted as it."""
    values = [stem * (VALUE_CHARS // len(stem) + 1) + "!" * extra for stem in stems]
    forged = [values[0][:VALUE_CHARS] + "\x00" + str(len(values[0]))]
    path = tmp_path / "a.jsonl"
    path.write_bytes(jsonl(values + values + forged))
    report = audit([str(path)])
    # What a row shows (the cut value and the full length) can be the same for the forged value and the
    # one it copies: each shown pair holds the counts of the distinct values behind it.
    rows: dict[tuple[str | None, int], list[int]] = {}
    for row in report.kinds:
        rows.setdefault((row.value, row.length), []).append(row.count)
    wanted: dict[tuple[str | None, int], list[int]] = {}
    for value, count in Counter(values + values + forged).items():
        wanted.setdefault((value[:VALUE_CHARS], len(value)), []).append(count)
    assert {key: sorted(counts) for key, counts in rows.items()} == {
        key: sorted(counts) for key, counts in wanted.items()
    }
    assert len(report.kinds) == len(set(values) | set(forged))
    assert_adds_up(report)
    assert all(len(entry["value"]) <= VALUE_CHARS for entry in json.loads(render_json(report))["kinds"])
    text = render_text(report)
    assert max(len(line) for line in text.splitlines()) < 60 + 200  # 60 columns of a value at most
    assert "..." in text


DECLARED = {"decl": ("kind_0",)}


def category(value: str) -> str:
    """The category of a value the property below draws, from the vocabulary's data."""
    if value in OLDER_LABELS:
        return "legacy"
    if value.startswith("decl:"):
        return "namespaced" if value == "decl:kind_0" else "undeclared"
    return {"cancelled": "registered", "old_label": "aliased"}.get(
        value, "namespaced" if ":" in value else "unregistered"
    )


@HYPOTHESIS
@given(
    st.lists(
        st.one_of(
            st.integers(0, 30).map(lambda index: f"bad_{index}"),
            st.tuples(st.integers(0, 8), st.integers(0, 4)).map(lambda pair: f"env{pair[0]}:kind_{pair[1]}"),
            st.integers(0, 4).map(lambda index: f"decl:kind_{index}"),
            st.sampled_from(["cancelled", "old_label", "peer_drop", "skipped", "sandbox", "timeout"]),
        ),
        max_size=60,
    ),
    st.integers(1, 5),
)
def test_every_total_adds_up_under_every_cap(
    small_reads: None, tmp_path: Path, values: list[str], limit: int
) -> None:
    path = tmp_path / "a.jsonl"
    path.write_bytes(jsonl(values))
    aliases = {"old_label": "transport_timeout"}
    report = audit([str(path)], aliases=aliases, namespaces=DECLARED, distinct_limit=limit)
    assert_adds_up(report)
    for name in ("unregistered", "namespaced", "undeclared", "legacy"):
        rows = [row for row in report.kinds if row.category == name]
        assert sum(row.count for row in rows) == sum(1 for value in values if category(value) == name)
        if name == "legacy":  # a fixed few, never capped: each keeps its own row
            assert {row.value for row in rows} == {value for value in values if value in OLDER_LABELS}
        else:
            assert sum(1 for row in rows if row.value is not None) <= limit
    assert len(report.namespaces) <= limit
    undeclared = [row for row in report.kinds if row.category == "undeclared" and row.value is not None]
    assert all(row.suggestion == "decl:kind_0" for row in undeclared)


def test_values_past_the_distinct_cap_are_one_row_per_category(tmp_path: Path) -> None:
    bad = [f"bad_{index}" for index in range(12)]
    values = [*bad, *(f"env:kind_{index}" for index in range(8))]
    path = tmp_path / "flood.jsonl"
    path.write_bytes(jsonl([*values, "bad_11", "cancelled"]))
    report = audit([str(path)], distinct_limit=5)
    # The values of the smallest stable hash keep their rows, whatever order the input has.
    kept = sorted(bad, key=rank)[:5]
    rows = {row.value: row.count for row in report.kinds if row.category == "unregistered"}
    assert rows == {**{value: 1 + (value == "bad_11") for value in kept}, None: 13 - 5 - (("bad_11") in kept)}
    overflow = [row.to_json() for row in report.kinds if row.value is None]
    shown = [(row["category"], row["count"], row["length"]) for row in overflow]
    assert shown[1] == ("namespaced", 3, 0)  # the JSON's length: 0 for overflow
    first = min(bad.index(value) for value in bad if value not in kept) + 1
    assert overflow[0]["first_seen"] == f"{path}:{first}"
    assert report.namespaces == {"env": 8}
    assert_adds_up(report)
    backwards = tmp_path / "backwards.jsonl"
    backwards.write_bytes(jsonl([*reversed(values), "bad_11", "cancelled"]))
    assert {row.value for row in audit([str(backwards)], distinct_limit=5).kinds} == {
        row.value for row in report.kinds
    }
    servers = tmp_path / "servers.jsonl"
    names = [f"env{index}" for index in range(7)]
    servers.write_bytes(jsonl([f"{name}:kind" for name in names]))
    report = audit([str(servers)], distinct_limit=3)
    assert (report.namespaces, report.namespaces_overflow) == (
        dict.fromkeys(sorted(names, key=rank)[:3], 1),
        4,
    )
    assert "(other servers) 4" in render_text(report)


def test_undeclared_values_of_declared_servers(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    typo = "swe_env:patch_aply_failed"
    path.write_bytes(jsonl([typo, "swe_env:patch_apply_failed", "other_env:anything", typo]))
    report = audit([str(path)], namespaces={"swe_env": ("patch_apply_failed", "test_collection_error")})
    (undeclared,) = report.undeclared
    assert (undeclared.value, undeclared.count, undeclared.first_seen) == (typo, 2, f"{path}:1")
    assert undeclared.suggestion == "swe_env:patch_apply_failed"
    assert {row.value: row.category for row in report.kinds}["other_env:anything"] == "namespaced"
    assert report.namespaces == {"swe_env": 3, "other_env": 1}
    text = render_text(report)
    assert "undeclared: 1 distinct, 2 records" in text
    assert "did you mean 'swe_env:patch_apply_failed'?" in text


# Far past the bounds, under a memory limit


def limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def run(
    arguments: list[str], stdin: bytes | Iterator[bytes] | None = None
) -> subprocess.CompletedProcess[bytes]:
    """The command under the memory limit; ``stdin`` may be a stream of chunks, written as it is read."""
    if stdin is None or isinstance(stdin, bytes):
        return run_cli_bytes("audit", *arguments, stdin=stdin, preexec_fn=limit_memory)
    process = subprocess.Popen(
        command("audit", *arguments),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        preexec_fn=limit_memory,
    )
    pipe = process.stdin
    assert pipe is not None
    process.stdin = None  # written here, not by communicate(), which would close it first

    def feed() -> None:
        try:
            for chunk in stdin:
                pipe.write(chunk)
            pipe.close()
        except (BrokenPipeError, ValueError):
            pass  # the command finished without reading everything: its exit code says why

    feeder = threading.Thread(target=feed, daemon=True)
    feeder.start()
    stdout, stderr = process.communicate(timeout=120)
    feeder.join(timeout=120)
    return subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)


def report_of(result: subprocess.CompletedProcess[bytes], code: int = 0) -> dict[str, object]:
    assert b"Traceback" not in result.stderr, result.stderr.decode(errors="replace")
    assert b"MemoryError" not in result.stderr
    assert result.returncode == code, result.stderr.decode(errors="replace")
    document: dict[str, object] = json.loads(result.stdout) if result.stdout.startswith(b"{") else {}
    return document


def zeros(total: int, chunk: int = 1 << 20) -> Iterator[bytes]:
    for _ in range(total // chunk):
        yield b"\0" * chunk


def distinct_long_values(count: int, size: int) -> Iterator[bytes]:
    for index in range(count):
        yield json.dumps({"failure_kind": f"{index:06d}" + "v" * size}).encode() + b"\n"


def test_two_gigabytes_without_a_newline_from_stdin() -> None:
    """`head -c 2G /dev/zero | failure-kinds audit -`: one unparseable line, in bounded memory."""
    report = report_of(run(["-", "--format", "json"], stdin=zeros(2 << 30)))
    assert (report["records"], report["unparseable"], report["first_unparseable"]) == (1, 1, "<stdin>:1")


def test_a_gzip_bomb_of_one_line(tmp_path: Path) -> None:
    path = tmp_path / "bomb.jsonl.gz"
    with gzip.open(path, "wb", compresslevel=9) as file:
        file.write(b'{"failure_kind": "cancelled"}\n')
        for block in zeros(256 << 20):  # four times the line cap, from a file of a few hundred kB
            file.write(block)
        file.write(b'\n{"failure_kind": "judge_faild"}\n')
    report = report_of(run([str(path), "--format", "json"]))
    assert (report["records"], report["with_kind"], report["unparseable"]) == (3, 2, 1)
    assert report["first_unparseable"] == f"{path}:2"


def test_the_line_cap_is_an_option_and_one_that_is_not_a_size_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    path.write_bytes(jsonl(["cancelled"], pad="x" * 5000))
    for cap, counted in [("4K", "unparseable"), ("8K", "with_kind")]:
        assert (
            report_of(run_cli_bytes("audit", str(path), "--format", "json", "--max-line-bytes", cap))[counted]
            == 1
        )
    for bad in ["0", "-1", "lots", "1T", ""]:
        result = run_cli_bytes("audit", "-", "--max-line-bytes", bad)
        report_of(result, 2)
        assert len(result.stderr.splitlines()) == 1


def test_many_distinct_long_values() -> None:
    """12,000 distinct values of 50,000 characters, 600 MB: rows past the cap overflow, kept values are
    cut, and the report is small."""
    result = run(["-", "--format", "json"], stdin=distinct_long_values(12_000, 50_000))
    assert len(result.stdout) < 12_000 * 600
    kinds = report_of(result)["kinds"]
    assert isinstance(kinds, list)
    assert len(kinds) == 10_001
    assert all(entry["value"] is None or len(entry["value"]) <= 256 for entry in kinds)
    assert kinds[0]["length"] == 50_006


def test_the_text_report_of_many_long_values_stays_narrow() -> None:
    result = run(["-"], stdin=distinct_long_values(12_000, 1_000))
    report_of(result)
    assert len(result.stdout) < 12_000 * 600
    lines = result.stdout.decode().splitlines()
    assert max(len(line) for line in lines) < 300
    assert any(line.lstrip().startswith("(other unregistered values)") for line in lines)


def test_blank_lines_cost_no_record(tmp_path: Path) -> None:
    blank = report_of(run(["-", "--format", "json"], stdin=(b"\n" * (1 << 20) for _ in range(300))))
    assert blank["records"] == 0
    path = tmp_path / "a.jsonl"
    path.write_bytes(b"\n" * 3_000_000 + b" \r\n" * 1000 + b'{"failure_kind": "judge_faild"}\n')
    kinds = report_of(run([str(path), "--format", "json"]))["kinds"]
    assert isinstance(kinds, list)
    assert kinds[0]["first_seen"] == f"{path}:3001001"


@needs("msgspec")
def test_a_field_of_a_thousand_segments(tmp_path: Path) -> None:
    def nested(depth: int) -> str:
        return '{"level": ' * depth + '"cancelled"' + "}" * depth

    path = tmp_path / "a.jsonl"
    path.write_text("\n".join([nested(20_000), nested(1000), nested(200), '{"level": 1}', "{}"]) + "\n")
    for segments in (1000, 200):
        field = ".".join(["level"] * segments)
        reports = [
            run([str(path), "--field", field, "--decoder", decoder, "--format", "json"])
            for decoder in ("stdlib", "msgspec")
        ]
        # Either decoder, the same report: how deep Python's parser reads depends on its version.
        assert reports[0].stdout == reports[1].stdout
        report = report_of(reports[0])
        assert report["unparseable"] in (1, 2)  # 20,000 levels are past every parser; 1,000 only past some
        found = report["kinds"]
        assert isinstance(found, list)
        if segments == 200:
            assert [(entry["value"], entry["first_seen"]) for entry in found] == [("cancelled", f"{path}:3")]
