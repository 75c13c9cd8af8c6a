"""The audit's inputs as they arrive: a stdin whose data comes later, a field that no record has."""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path

from helpers import examples, needs, non_blocking_pipe, run_cli, write_later
from hypothesis import given, settings
from hypothesis import strategies as st

from failure_kinds import FAILURE_KINDS

KINDS = st.one_of(
    st.sampled_from(sorted(FAILURE_KINDS)),
    st.from_regex(r"[a-z][a-z_]{2,20}", fullmatch=True),
    st.none(),
)


def records_of(values: list[str | None]) -> bytes:
    return b"".join(
        json.dumps({"failure_kind": value, "step": index}).encode() + b"\n"
        for index, value in enumerate(values)
    )


def in_chunks(data: bytes, parts: int) -> list[bytes]:
    size = max(1, -(-len(data) // parts))
    return [data[start : start + size] for start in range(0, len(data), size)]


# Standard input that is non-blocking: EAGAIN before the writer has written is "nothing yet".


@given(st.lists(KINDS, min_size=1, max_size=40), st.integers(min_value=1, max_value=4), st.booleans())
@settings(max_examples=examples(5), deadline=None)
def test_audit_waits_for_a_non_blocking_stdin_whose_data_comes_later(
    values: list[str | None], parts: int, compressed: bool
) -> None:
    data = records_of(values)
    if compressed:
        data = gzip.compress(data)
    read_end, write_end = non_blocking_pipe()
    # The first chunk comes well after the command has started and tried to read.
    thread = write_later(write_end, in_chunks(data, parts), pause=0.3)
    try:
        result = run_cli("audit", "-", "--format", "json", stdin=read_end)
    finally:
        thread.join()
        os.close(read_end)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["records"] == len(values)
    assert report["with_kind"] == sum(value is not None for value in values)
    assert report["unparseable"] == 0
    assert [file["path"] for file in report["files"]] == ["<stdin>"]


def test_a_non_blocking_stdin_that_ends_without_data_is_empty_not_an_error(tmp_path: Path) -> None:
    read_end, write_end = non_blocking_pipe()
    thread = write_later(write_end, [], pause=0.3)
    try:
        result = run_cli("audit", "-", "--format", "json", stdin=read_end)
    finally:
        thread.join()
        os.close(read_end)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["records"] == 0


# A --field that no record has: named on stderr with the closest field the records have.

ROLLOUTS = [
    {"step": 1, "result": {"failure_kind": "cancelled", "reward": 0}},
    {"step": 2, "result": {"failure_kind": None, "reward": 1}},
    {"step": 3, "result": {"reward": 1}},
]


def write_records(path: Path, records: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(record) + "\n" for record in records))
    return path


def test_a_misspelled_field_is_named_with_the_one_the_records_have(tmp_path: Path) -> None:
    log = write_records(tmp_path / "rollouts.jsonl", ROLLOUTS)
    result = run_cli("audit", str(log), "--field", "result.failure_knd")
    assert result.returncode == 0
    assert result.stderr == (
        "failure-kinds audit: note: no record has the field result.failure_knd; "
        "did you mean result.failure_kind?\n"
    )
    strict = run_cli("audit", str(log), "--field", "result.failure_knd", "--strict", "--format", "json")
    assert strict.returncode == 1
    report = json.loads(strict.stdout)
    assert (report["field_missing"], report["field_suggestion"]) == (True, "result.failure_kind")
    assert (report["records"], report["without_kind"]) == (3, 3)


def test_a_field_named_without_its_parent_suggests_the_full_path(tmp_path: Path) -> None:
    log = write_records(tmp_path / "rollouts.jsonl", ROLLOUTS)
    result = run_cli("audit", str(log), "--field", "failure_kind", "--strict")
    assert result.returncode == 1
    assert "did you mean result.failure_kind?" in result.stderr


def test_a_field_that_holds_only_null_is_there_and_nothing_is_said(tmp_path: Path) -> None:
    log = write_records(tmp_path / "rollouts.jsonl", [{"failure_kind": None}] * 3 + [{"other": 1}])
    result = run_cli("audit", str(log), "--strict", "--format", "json")
    assert (result.returncode, result.stderr) == (0, "")
    report = json.loads(result.stdout)
    assert (report["field_missing"], report["field_suggestion"]) == (False, None)


def test_when_nothing_is_close_the_records_fields_are_named(tmp_path: Path) -> None:
    log = write_records(tmp_path / "rollouts.jsonl", [{"alpha": 1, "beta": {"gamma": 2}}])
    result = run_cli("audit", str(log), "--field", "zzz")
    assert result.stderr == (
        "failure-kinds audit: note: no record has the field zzz; the records have alpha, beta, beta.gamma\n"
    )


def test_a_field_missing_from_stdin_is_found_in_what_was_read(tmp_path: Path) -> None:
    data = "".join(json.dumps(record) + "\n" for record in ROLLOUTS)
    result = run_cli(
        "audit", "-", "--field", "result.failure_knd", "--strict", stdin=gzip.compress(data.encode())
    )
    assert result.returncode == 1
    assert "no record has the field result.failure_knd; did you mean result.failure_kind?" in result.stderr


def test_past_the_records_looked_at_the_note_says_how_many_were(tmp_path: Path) -> None:
    from failure_kinds.audit.engine import PROBE_FILES, PROBE_RECORDS

    records = [{"result": {"failure_kind": None}}] * 10
    for index in range(PROBE_FILES + 5):
        write_records(tmp_path / f"shard-{index:04}.jsonl", records)
    many = write_records(tmp_path / "big.jsonl", [{"result": {}}] * (PROBE_RECORDS + 1))
    result = run_cli("audit", str(many), "--field", "result.failure_knd")
    looked_at = f"none of the {PROBE_RECORDS:,} records looked at has the field result.failure_knd, and no"
    assert looked_at in result.stderr
    # The records looked at are shared out among the files, so the shards after the large file, which
    # hold the field (null), are looked at too.
    shards = run_cli("audit", str(tmp_path), "--field", "result.failure_kind", "--strict")
    assert (shards.returncode, shards.stderr) == (0, "")


KEYS = st.sampled_from(["result", "failure_kind", "kind", "reward", "step", "error", "detail"])
VALUES: st.SearchStrategy[object] = st.recursive(
    st.one_of(st.none(), st.integers(), st.text(max_size=3)),
    lambda children: st.dictionaries(KEYS, children, max_size=3),
    max_leaves=6,
)
RECORDS = st.lists(st.dictionaries(KEYS, VALUES, min_size=1, max_size=4), min_size=1, max_size=30)
FIELDS = st.lists(
    st.one_of(KEYS, st.sampled_from(["failure_knd", "resul", "rewards"])), min_size=1, max_size=3
)


def has(record: object, segments: list[str]) -> bool:
    """The path is there, or a null on the way stands for it."""
    for segment in segments:
        if record is None:
            return True
        if not isinstance(record, dict) or segment not in record:
            return False
        record = record[segment]
    return True


def paths_of(record: dict[str, object], prefix: str = "") -> set[str]:
    found: set[str] = set()
    for key, value in record.items():
        found.add(prefix + key)
        if isinstance(value, dict):
            found |= paths_of(value, f"{prefix}{key}.")
    return found


@given(RECORDS, FIELDS)
@settings(max_examples=examples(60), deadline=None)
def test_the_field_is_named_missing_exactly_when_no_record_has_it(
    records: list[dict[str, object]], segments: list[str]
) -> None:
    import tempfile

    from failure_kinds.audit import audit

    field = ".".join(segments)
    with tempfile.TemporaryDirectory() as folder:
        log = write_records(Path(folder) / "log.jsonl", records)
        one = audit([str(log)], field)
        parts = audit([str(log)], field, jobs=2, chunk_bytes=64)
    values_there = one.with_kind or one.invalid
    missing = not any(has(record, segments) for record in records)
    assert one.field_missing == (missing and not values_there)
    assert (parts.field_missing, parts.field_suggestion, parts.notes) == (
        one.field_missing,
        one.field_suggestion,
        one.notes,
    )
    if one.field_missing:
        assert len(one.notes) == 1
        assert field in one.notes[0]
        if one.field_suggestion is not None:
            assert one.field_suggestion in set().union(*map(paths_of, records))
    else:
        assert one.notes == []


@needs("pyarrow")
def test_a_parquet_schema_says_which_fields_every_row_has(tmp_path: Path) -> None:
    import pyarrow as pa  # type: ignore[import-untyped]
    import pyarrow.parquet as pq  # type: ignore[import-untyped]

    from failure_kinds.audit import audit

    rows = [{"result": {"failure_kind": None, "reward": 1}, "step": index} for index in range(50)]
    path = tmp_path / "rollouts.parquet"
    pq.write_table(pa.Table.from_pylist(rows), path, row_group_size=7)
    missing = run_cli("audit", str(path), "--field", "result.failure_knd", "--strict")
    assert missing.returncode == 1
    assert missing.stderr == (
        "failure-kinds audit: note: no record has the field result.failure_knd; "
        "did you mean result.failure_kind?\n"
    )
    there = run_cli("audit", str(path), "--field", "result.failure_kind", "--strict")
    assert (there.returncode, there.stderr) == (0, "")
    # Worker processes, each reading a run of row groups: the same finding.
    in_parts = audit([str(path)], "result.failure_knd", jobs=2, chunk_bytes=1)
    assert (in_parts.field_missing, in_parts.field_suggestion) == (True, "result.failure_kind")
    assert not audit([str(path)], "result.failure_kind", jobs=2, chunk_bytes=1).field_missing


HOSTILE_KEYS = st.one_of(
    st.text(max_size=8), st.text(min_size=190, max_size=260), st.sampled_from(["a.b", "", "\n", "\u202e"])
)
HOSTILE_RECORDS = st.recursive(
    st.one_of(st.none(), st.integers(), st.text(max_size=3)),
    lambda children: st.dictionaries(HOSTILE_KEYS, children, max_size=4),
    max_leaves=10,
)
HOSTILE_LINES = st.one_of(
    HOSTILE_RECORDS.map(lambda record: json.dumps(record).encode()),
    st.binary(max_size=30),
    st.just(b"[" * 100_000),
    st.just(b"\xef\xbb\xbf{}"),
)


@given(st.lists(HOSTILE_LINES, min_size=1, max_size=20), st.text(min_size=1, max_size=12))
@settings(max_examples=examples(80), deadline=None)
def test_the_field_check_takes_any_input_and_says_one_short_escaped_line(
    lines: list[bytes], name: str
) -> None:
    import tempfile

    from failure_kinds.audit import AuditError, audit

    with tempfile.TemporaryDirectory() as folder:
        log = Path(folder) / "log.jsonl"
        log.write_bytes(b"\n".join(lines) + b"\n")
        try:
            report = audit([str(log)], name.replace(".", "_") or "x")
        except AuditError:
            return
    for note in report.notes:
        assert note.isprintable()
        assert len(note) < 1_500
    assert report.field_missing == bool(report.notes)
