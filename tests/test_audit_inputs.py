"""The audit's inputs as they arrive: a stdin whose data comes later, a field that no record has."""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path

from helpers import non_blocking_pipe, run_cli, write_later
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
@settings(max_examples=5, deadline=None)
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
