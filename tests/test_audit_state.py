"""The mergeable partial report: however the input is cut, merged parts give the one-pass report."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest
from helpers import examples
from hypothesis import given, settings
from hypothesis import strategies as st

from failure_kinds.audit import (
    INVALID,
    UNPARSEABLE,
    AuditSettings,
    PartialReport,
    Pins,
    audit,
    audit_file,
    audit_lines,
    merge,
    render_json,
    settings_for,
)

VALUES = [
    "cancelled",
    "shutdown",
    "timeout_exceeded",  # aliased below
    "judge_faild",
    "bad_a",
    "bad_b",
    "bad_c",
    "env:one",
    "env:two",
    "env:three",
    "web:three",
    "other:four",
    "x" * 40 + "long_a",
    "x" * 40 + "long_b",
]


def line_for(choice: str) -> bytes:
    if not choice.startswith(":"):
        return json.dumps({"failure_kind": choice}).encode()
    return {
        "none": b'{"failure_kind": null}',
        "absent": b"{}",
        "invalid": b'{"failure_kind": 3}',
        "unparseable": b"{oops",
        "blank": b"",
        "spaces": b"  \r",
    }[choice[1:]]


lines_strategy = st.lists(
    st.one_of(
        st.sampled_from(VALUES),
        st.sampled_from([":none", ":absent", ":invalid", ":unparseable", ":blank", ":spaces"]),
    ).map(line_for),
    max_size=40,
)


def small_settings(limit: int) -> AuditSettings:
    # env:two is undeclared (env declares only "one"), so that category meets the cap too.
    return AuditSettings(
        aliases={"timeout_exceeded": "transport_timeout"},
        namespaces={"env": ("one",)},
        distinct_limit=limit,
        value_chars=20,
    )


def travelled(partial: PartialReport) -> PartialReport:
    """The partial as another process would receive it."""
    return PartialReport.from_json(json.loads(json.dumps(partial.to_json())))


def cut(lines: list[bytes], points: list[int]) -> list[list[bytes]]:
    edges = [0, *sorted({point % (len(lines) + 1) for point in points}), len(lines)]
    return [lines[start:stop] for start, stop in itertools.pairwise(edges)]


def merged_report_json(files: list[tuple[str, list[list[bytes]]]], audit_settings: AuditSettings) -> str:
    def parts(pins: Pins | None) -> list[PartialReport]:
        return [
            travelled(audit_lines(chunk, path, audit_settings, continuation=index > 0, pins=pins))
            for path, chunks in files
            for index, chunk in enumerate(chunks)
        ]

    merged = merge(parts(None))
    if not merged.exact:
        merged = merge(parts(merged.pins()))
        assert merged.exact
    return render_json(merged.report())


@settings(max_examples=examples(300), deadline=None)
@given(
    st.lists(st.tuples(lines_strategy, st.lists(st.integers(0, 50), max_size=4)), min_size=1, max_size=3),
    st.integers(1, 4),
)
def test_merged_parts_give_the_one_pass_report(
    files: list[tuple[list[bytes], list[int]]], limit: int
) -> None:
    audit_settings = small_settings(limit)
    one_pass = PartialReport(audit_settings)
    for index, (lines, _) in enumerate(files):
        one_pass.start_file(f"f{index}.jsonl")
        one_pass.add_lines(lines)
    expected = render_json(one_pass.report())
    chunked = [(f"f{index}.jsonl", cut(lines, points)) for index, (lines, points) in enumerate(files)]
    assert merged_report_json(chunked, audit_settings) == expected


@settings(max_examples=examples(200), deadline=None)
@given(st.lists(lines_strategy, min_size=3, max_size=3), st.integers(1, 4))
def test_merge_is_associative(chunks: list[list[bytes]], limit: int) -> None:
    audit_settings = small_settings(limit)

    def groupings(pins: Pins | None) -> tuple[PartialReport, PartialReport]:
        first, second, third = (
            audit_lines(chunk, "a.jsonl", audit_settings, continuation=index > 0, pins=pins)
            for index, chunk in enumerate(chunks)
        )
        return first.merge(second).merge(third), first.merge(second.merge(third))

    left, right = groupings(None)
    # Either grouping knows which values the whole keeps, exact or not.
    assert left.pins() == right.pins()
    if left.exact and right.exact:
        assert render_json(left.report()) == render_json(right.report())
    left, right = groupings(left.pins())
    assert left.exact
    assert right.exact
    assert render_json(left.report()) == render_json(right.report())
    assert json.dumps(left.to_json(), sort_keys=True) == json.dumps(right.to_json(), sort_keys=True)


def test_round_trip_is_lossless() -> None:
    partial = audit_lines(
        [line_for(value) for value in VALUES * 2] + [b"{", b"[]"], "a.jsonl", small_settings(2)
    )
    again = travelled(partial)
    assert again.to_json() == partial.to_json()
    assert render_json(again.report()) == render_json(partial.report())


def test_physical_line_numbers_across_parts() -> None:
    audit_settings = settings_for()
    parts = [
        audit_lines([b"", b'{"failure_kind": "cancelled"}'], "a.jsonl", audit_settings),
        audit_lines([b"{oops", b'{"failure_kind": 1}'], "a.jsonl", audit_settings, continuation=True),
        audit_lines([b'{"failure_kind": "judge_faild"}'], "a.jsonl", audit_settings, continuation=True),
        audit_lines([b'{"failure_kind": "judge_faild"}'], "b.jsonl", audit_settings),
    ]
    report = merge(parts).report()
    assert [(row.value, row.first_seen) for row in report.kinds] == [
        ("judge_faild", "a.jsonl:5"),
        ("cancelled", "a.jsonl:2"),
    ]
    assert (report.first_unparseable, report.first_invalid) == ("a.jsonl:3", "a.jsonl:4")
    assert [(file.path, file.records) for file in report.files] == [("a.jsonl", 4), ("b.jsonl", 1)]


def test_a_later_part_that_overflowed_is_inexact_until_pinned() -> None:
    audit_settings = AuditSettings(distinct_limit=2)
    rows = [json.dumps({"failure_kind": value}).encode() for value in ["bad_a", "bad_b"]]
    later_rows = [json.dumps({"failure_kind": value}).encode() for value in ["bad_c", "bad_d", "bad_a"]]
    first = audit_lines(rows, "a.jsonl", audit_settings)
    merged = first.merge(audit_lines(later_rows, "a.jsonl", audit_settings, continuation=True))
    assert not merged.exact
    pins = merged.pins()
    assert pins.values == {"bad_a", "bad_b"}
    assert Pins.from_json(json.loads(json.dumps(pins.to_json()))) == pins
    exact = audit_lines(rows, "a.jsonl", audit_settings, pins=pins).merge(
        audit_lines(later_rows, "a.jsonl", audit_settings, continuation=True, pins=pins)
    )
    assert exact.exact
    counts = {row.value: row.count for row in exact.report().kinds}
    assert counts == {"bad_a": 2, "bad_b": 1, None: 2}


@pytest.mark.parametrize("line_bytes", [3, 40, 1 << 20])
def test_every_byte_range_gives_the_whole_file(tmp_path: Path, line_bytes: int) -> None:
    """Cut at every line start, ranges as short as one byte included, with lines over the cap."""
    path = tmp_path / "a.jsonl"
    data = b'\n{"failure_kind": "cancelled"}\n\n  \n{"failure_kind": "judge_faild"}\r\n{x\n\n{}'
    path.write_bytes(data)
    audit_settings = settings_for(line_bytes=line_bytes)
    expected = render_json(audit([str(path)], line_bytes=line_bytes))
    starts = [0] + [index + 1 for index, byte in enumerate(data) if byte == 10]
    for step in range(1, len(starts) + 1):
        cuts = [*starts[::step], len(data)]
        parts = [
            audit_file(str(path), audit_settings, start=start, stop=stop)
            for start, stop in itertools.pairwise(cuts)
            if stop > start
        ]
        assert render_json(merge(parts).report()) == expected


def test_file_ranges_give_the_whole_file(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    data = (
        b"".join(line_for(value) + b"\n" for value in VALUES * 5) + b"\n\n{broken\n" + b'{"failure_kind": 2}'
    )
    path.write_bytes(data)
    audit_settings = settings_for()
    cuts = [0, *[index + 1 for index, byte in enumerate(data) if byte == 10][::7], len(data)]
    parts = [
        audit_file(str(path), audit_settings, start=start, stop=stop)
        for start, stop in itertools.pairwise(cuts)
        if stop > start
    ]
    assert render_json(merge(parts).report()) == render_json(audit([str(path)]))


def test_values_already_decoded_and_rows() -> None:
    partial = PartialReport(settings_for())
    partial.start_file("t.parquet", unit="row")
    partial.add_values(["cancelled", None, INVALID, UNPARSEABLE, "judge_faild", 7])
    report = partial.report()
    assert (report.records, report.with_kind, report.invalid, report.unparseable) == (6, 2, 2, 1)
    assert report.unregistered[0].first_seen == "t.parquet:row 5"
    assert report.first_invalid == "t.parquet:row 3"


def test_merging_different_settings_or_a_stray_continuation_is_refused() -> None:
    one = audit_lines([], "a.jsonl", settings_for())
    with pytest.raises(ValueError, match="different settings"):
        one.merge(audit_lines([], "a.jsonl", settings_for("other")))
    with pytest.raises(ValueError, match="continues a file"):
        one.merge(audit_lines([], "b.jsonl", settings_for(), continuation=True))
    with pytest.raises(ValueError, match="at least one"):
        merge([])
    with pytest.raises(ValueError, match="format version"):
        PartialReport.from_json({"version": 99})


def test_the_documented_engine_example_runs() -> None:
    import doctest

    import failure_kinds.audit

    results = doctest.testmod(failure_kinds.audit)
    assert results.attempted > 5
    assert results.failed == 0
