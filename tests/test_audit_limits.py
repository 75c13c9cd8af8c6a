"""The audit's bounds, in process, on generated inputs: line cap, value cut, distinct caps, blank runs,
inputs that cannot seek, directory walks. Each total must still add up and every location be physical."""

from __future__ import annotations

import gzip
import io
import json
import os
import threading
from collections import Counter
from pathlib import Path

import pytest
from helpers import examples
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from failure_kinds import audit
from failure_kinds.audit import Report, render_json, render_text
from failure_kinds.audit.render import VALUE_WIDTH
from failure_kinds.history import OLDER_LABELS as OLDER

HYPOTHESIS = settings(
    max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


def assert_adds_up(report: Report) -> None:
    assert report.records == report.with_kind + report.without_kind + report.invalid + report.unparseable
    assert sum(row.count for row in report.kinds) == report.with_kind
    assert sum(file.records for file in report.files) == report.records
    servers = sum(report.namespaces.values()) + report.namespaces_overflow
    assert servers == sum(row.count for row in report.kinds if row.category in ("namespaced", "undeclared"))


@pytest.fixture
def small_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    """Reads of a few bytes, so every boundary case of the line reader is met on small inputs."""
    monkeypatch.setattr(audit.sources, "BATCH_BYTES", 7)


# A model of what every line is, decided without the audit's reader: (kind of record, value).
def expected(lines: list[bytes], line_bytes: int) -> list[tuple[int, str]]:
    """(line number, what it counts as) for every non-blank line."""
    outcome: list[tuple[int, str]] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip(b" \t\r\x0b\x0c"):
            continue  # white space only: blank whatever its length, never over the cap
        if len(line) > line_bytes:
            outcome.append((number, "unparseable"))
        else:
            try:
                document = json.loads(line)
            except ValueError:
                outcome.append((number, "unparseable"))
                continue
            if not isinstance(document, dict):
                outcome.append((number, "unparseable"))
            elif isinstance(document.get("failure_kind"), str):
                outcome.append((number, "kind:" + document["failure_kind"]))
            elif document.get("failure_kind") is None:
                outcome.append((number, "without"))
            else:
                outcome.append((number, "invalid"))
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
    small_batches: None, tmp_path: Path, lines: list[bytes], line_bytes: int, final_newline: bool, fast: bool
) -> None:
    path = tmp_path / "a.jsonl"
    path.write_bytes(b"\n".join(lines) + (b"\n" if final_newline and lines else b""))
    report = audit.audit([str(path)], fast=fast, line_bytes=line_bytes)
    model = expected(lines, line_bytes)
    assert report.records == len(model)
    assert report.unparseable == sum(1 for _, what in model if what == "unparseable")
    assert report.invalid == sum(1 for _, what in model if what == "invalid")
    first_unparseable = next((number for number, what in model if what == "unparseable"), None)
    assert report.first_unparseable == (None if first_unparseable is None else f"{path}:{first_unparseable}")
    overlong = [
        number
        for number, line in enumerate(lines, start=1)
        if len(line) > line_bytes and line.strip(b" \t\r\x0b\x0c")
    ]
    assert report.overlong == len(overlong)
    assert report.first_overlong == (f"{path}:{overlong[0]}" if overlong else None)
    first_invalid = next((number for number, what in model if what == "invalid"), None)
    assert report.first_invalid == (None if first_invalid is None else f"{path}:{first_invalid}")
    for row in report.kinds:
        number = next(number for number, what in model if what == f"kind:{row.value}")
        assert row.first_seen == f"{path}:{number}"
    assert_adds_up(report)


def test_a_line_over_the_cap_is_never_held(tmp_path: Path) -> None:
    """A line of many reads with no newline is skipped as it streams past; later lines count on."""
    path = tmp_path / "a.jsonl"
    with path.open("wb") as file:
        file.write(b'{"failure_kind": "cancelled"}\n')
        for _ in range(40):
            file.write(b"x" * (1 << 20))
        file.write(b'\n{"failure_kind": "judge_faild"}\n')
    report = audit.audit([str(path)], line_bytes=1 << 20)
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
    report = audit.audit([str(path)], line_bytes=1 << 20)
    assert (report.records, report.unparseable, report.overlong) == (2, 0, 0)
    assert report.unregistered[0].first_seen == f"{path}:3"
    settings = audit.settings_for(line_bytes=1 << 20)
    whole = audit.audit_file(str(path), settings)
    split = audit.audit_file(str(path), settings, stop=len(first)).merge(
        audit.audit_file(str(path), settings, start=len(first))
    )
    lines = audit.audit_lines(io.BytesIO(path.read_bytes()).readlines(), str(path), settings)
    for partial in (whole, split, lines):
        assert render_json(partial.report()) == render_json(report)


@HYPOTHESIS
@given(st.lists(st.text(min_size=1, max_size=5), min_size=1, max_size=6), st.integers(1, 400))
def test_long_values_are_kept_cut_with_their_length(tmp_path: Path, stems: list[str], extra: int) -> None:
    """Values longer than the cut keep a bounded prefix and their length; distinct ones stay distinct,
    and a value that spells another's key is not counted as it."""
    values = [stem * (audit.VALUE_CHARS // len(stem) + 1) + "!" * extra for stem in stems]
    forged = [values[0][: audit.VALUE_CHARS] + "\x00" + str(len(values[0]))]
    path = tmp_path / "a.jsonl"
    path.write_text("".join(json.dumps({"failure_kind": value}) + "\n" for value in values + values + forged))
    report = audit.audit([str(path)])
    # What a row shows (the cut value and the full length) can be the same for the forged value and the
    # one it copies: each shown pair holds the counts of the distinct values behind it.
    rows: dict[tuple[str | None, int], list[int]] = {}
    for row in report.kinds:
        rows.setdefault((row.value, row.length), []).append(row.count)
    wanted: dict[tuple[str | None, int], list[int]] = {}
    for value, count in Counter(values + values + forged).items():
        wanted.setdefault((value[: audit.VALUE_CHARS], len(value)), []).append(count)
    assert {key: sorted(counts) for key, counts in rows.items()} == {
        key: sorted(counts) for key, counts in wanted.items()
    }
    assert all(row.value is None or len(row.value) <= audit.VALUE_CHARS for row in report.kinds)
    assert len(report.kinds) == len(set(values) | set(forged))
    assert_adds_up(report)
    document = json.loads(render_json(report))
    assert all(len(entry["value"]) <= audit.VALUE_CHARS for entry in document["kinds"])
    text = render_text(report)
    assert max(len(line) for line in text.splitlines()) < VALUE_WIDTH + 200
    assert "..." in text


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
    small_batches: None, tmp_path: Path, values: list[str], limit: int
) -> None:
    path = tmp_path / "a.jsonl"
    path.write_text("".join(json.dumps({"failure_kind": value}) + "\n" for value in values))
    report = audit.audit(
        [str(path)],
        aliases={"old_label": "transport_timeout"},
        namespaces={"decl": ("kind_0",)},
        distinct_limit=limit,
    )
    assert_adds_up(report)
    for category in ("unregistered", "namespaced", "undeclared", "legacy"):
        rows = [row for row in report.kinds if row.category == category]
        records = sum(
            1
            for value in values
            if value != "old_label" and audit.category_of(value, {"decl": ("kind_0",)}) == category
        )
        assert sum(row.count for row in rows) == records
        if category == "legacy":  # a fixed few, never capped: each keeps its own row
            assert {row.value for row in rows} == {value for value in values if value in OLDER}
        else:
            assert sum(1 for row in rows if row.value is not None) <= limit
    assert len(report.namespaces) <= limit
    undeclared = [row for row in report.kinds if row.category == "undeclared" and row.value is not None]
    assert all(row.suggestion == "decl:kind_0" for row in undeclared if row.value != "decl:kind_0")


def test_servers_past_the_cap_are_counted_together(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    path.write_text("".join(json.dumps({"failure_kind": f"env{index}:kind"}) + "\n" for index in range(7)))
    report = audit.audit([str(path)], distinct_limit=3)
    assert report.namespaces == {"env0": 1, "env1": 1, "env2": 1}
    assert report.namespaces_overflow == 4
    assert "(other servers) 4" in render_text(report)


def test_undeclared_values_of_declared_servers(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    lines = [
        "swe_env:patch_aply_failed",
        "swe_env:patch_apply_failed",
        "other_env:anything",
        "swe_env:patch_aply_failed",
    ]
    path.write_text("".join(json.dumps({"failure_kind": value}) + "\n" for value in lines))
    report = audit.audit([str(path)], namespaces={"swe_env": ("patch_apply_failed", "test_collection_error")})
    (undeclared,) = report.undeclared
    assert (undeclared.value, undeclared.count, undeclared.first_seen) == (
        "swe_env:patch_aply_failed",
        2,
        f"{path}:1",
    )
    assert undeclared.suggestion == "swe_env:patch_apply_failed"
    assert {row.value: row.category for row in report.kinds}["other_env:anything"] == "namespaced"
    assert report.namespaces == {"swe_env": 3, "other_env": 1}
    text = render_text(report)
    assert "undeclared: 1 distinct, 2 records" in text
    assert "did you mean 'swe_env:patch_apply_failed'?" in text


def test_singular_and_plural(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    path.write_text(json.dumps({"failure_kind": "judge_faild"}) + "\n")
    text = render_text(audit.audit([str(path)]))
    assert "unregistered: 1 distinct, 1 record\n" in text
    assert "of the 1 record with a kind" in text
    assert "in 1 file\n" in text


# Inputs that cannot seek: a FIFO, plain and gzip-compressed.


def feed_fifo(path: Path, data: bytes) -> threading.Thread:
    def write() -> None:
        with path.open("wb") as fifo:
            fifo.write(data)

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    return writer


@pytest.mark.parametrize("compress", [False, True], ids=["plain", "gzip"])
def test_a_fifo_is_read_like_stdin(tmp_path: Path, compress: bool) -> None:
    data = b"".join(
        json.dumps({"failure_kind": "cancelled", "n": index}).encode() + b"\n" for index in range(5000)
    )
    fifo = tmp_path / "stream"
    os.mkfifo(fifo)
    writer = feed_fifo(fifo, gzip.compress(data) if compress else data)
    report = audit.audit([str(fifo)])
    writer.join(timeout=10)
    assert report.failed_files == []
    assert (report.records, report.with_kind) == (5000, 5000)


def test_directory_walk_skips_fifos_and_names_unlistable_folders(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "logs" / "secret").mkdir(parents=True)
    (tmp_path / "logs" / "open").mkdir()
    os.mkfifo(tmp_path / "logs" / "waiting.jsonl")
    (tmp_path / "logs" / "open" / "a.jsonl").write_text(json.dumps({"failure_kind": "cancelled"}) + "\n")
    (tmp_path / "logs" / "secret" / "b.jsonl").write_text(json.dumps({"failure_kind": "cancelled"}) + "\n")
    real_scandir = os.scandir
    secret = str(tmp_path / "logs" / "secret")

    def refusing_scandir(path: str) -> object:
        # Permissions mean nothing to root, as CI runs, so the refusal is what scandir raises.
        if str(path) == secret:
            raise PermissionError(13, "Permission denied", path)
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", refusing_scandir)
    report = audit.audit([str(tmp_path / "logs")])
    assert [(Path(file.path).name, file.records, file.error) for file in report.files] == [
        ("a.jsonl", 1, None),
        ("secret", 0, "permission denied"),
    ]


@given(st.integers(min_value=0, max_value=60), st.sets(st.integers(min_value=0, max_value=59), max_size=5))
@settings(max_examples=examples(25), deadline=None)
def test_text_report_lists_failed_files_and_a_bounded_number_of_others(count: int, failing: set[int]) -> None:
    from failure_kinds.audit import FileReport, Report
    from failure_kinds.audit.render import FILES_LISTED, render_text

    report = Report("failure_kind")
    for index in range(count):
        file = FileReport(f"part-{index:03}.jsonl")
        file.records = index + 1
        if index in failing:
            file.error = "permission denied"
        report.files.append(file)
    report.records = sum(file.records for file in report.files)
    text = render_text(report)
    listed = [line for line in text.splitlines() if line.startswith("  part-")]
    failed = [index for index in failing if index < count]
    if count > 1 or failed:
        expected = sorted({*range(min(count, FILES_LISTED)), *failed})
        assert [int(line.split("-")[1][:3]) for line in listed] == expected
        unlisted = count - len(expected)
        summary = [line for line in text.splitlines() if "more file" in line]
        if unlisted:
            records = sum(index + 1 for index in range(count) if index not in expected)
            (line,) = summary
            assert line.startswith(f"  ({unlisted:,} more file")
            assert f"{records:,} record" in line
        else:
            assert summary == []
    else:
        assert listed == []
