"""Parquet inputs (the ``parquet`` extra, pyarrow): only the column at ``--field`` is read, in batches.

A dotted field is a path into struct columns, as in JSON Lines, whatever the top-level columns are called
(a column literally named ``r.failure_kind`` is not the field ``failure_kind`` of a struct ``r``). The
categories are the JSON Lines ones, row by row: a string is a kind, null (or a field the schema does not
have, or a path through a column that is not a struct) is without a kind, any other type is invalid. Row
numbers (from 1) take the place of line numbers: ``path:row N``. A file that cannot be opened or decoded
is named with its error, after the rows read before the break are counted.

Counting works on Arrow's own tallies (dictionary encoding and value counts per batch), so no Python
object is made per row; a batch holds at most BATCH_ROWS rows of the one column.
"""

from __future__ import annotations

import importlib
from collections import Counter, deque

from failure_kinds._display import escaped

from .errors import describe_read_error
from .partial import PartialReport
from .sources import INVALID, UNPARSEABLE

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Final


# Rows per batch: one column of this many rows, about a megabyte of typical kinds.
BATCH_ROWS: Final = 65_536
# A task reads runs of whole row groups of about this many rows.
TASK_ROWS: Final = 8_000_000
# Without pyarrow a Parquet file is an input that cannot be read, named with this, like any other: the
# rest of the inputs are still audited.
NEEDS_PYARROW: Final = (
    "needs pyarrow: install the parquet extra (pip install '.[parquet]' in a clone of failure-kinds)"
)


def arrow() -> tuple[Any, Any, Any]:
    """pyarrow, pyarrow.compute and pyarrow.parquet; ImportError without them (see NEEDS_PYARROW).
    pyarrow has no type information, so its objects are Any here and typed where they leave."""
    return (
        importlib.import_module("pyarrow"),
        importlib.import_module("pyarrow.compute"),
        importlib.import_module("pyarrow.parquet"),
    )


def row_group_runs(path: str, filesystem: Any = None) -> list[tuple[int, int | None, int]]:
    """Runs of row groups for separate tasks: ``(first, stop, bytes)``; stop None means to the end. A file
    whose footer cannot be read, or any file without pyarrow, is one task, which reports why."""
    try:
        _, _, parquet = arrow()
        metadata: Any = parquet.ParquetFile(path, filesystem=filesystem).metadata
    except Exception:  # ImportError as well
        return [(0, None, 0)]
    groups: int = metadata.num_row_groups
    runs: list[tuple[int, int | None, int]] = []
    first, rows, size = 0, 0, 0
    for index in range(groups):
        group: Any = metadata.row_group(index)
        rows += int(group.num_rows)
        size += sum(int(group.column(column).total_compressed_size) for column in range(group.num_columns))
        if rows >= TASK_ROWS and index + 1 < groups:
            runs.append((first, index + 1, size))
            first, rows, size = index + 1, 0, 0
    runs.append((first, None, size))
    return runs


def add_parquet(partial: PartialReport, path: str, start: int, stop: int | None, filesystem: Any) -> None:
    """Count row groups ``start`` to ``stop`` (None: the last) of ``path`` into the current file of
    ``partial``. Without pyarrow the file is one that cannot be read."""
    try:
        pa, compute, parquet = arrow()
    except ImportError:
        partial.add_error(NEEDS_PYARROW)
        return
    try:
        file: Any = parquet.ParquetFile(path, filesystem=filesystem)
        last: int = file.metadata.num_row_groups if stop is None else stop
        groups = list(range(start, last))
        if not groups:
            return  # no rows (iter_batches would read every group when given none)
        segments = partial.settings.field.split(".")
        leaves = _field_leaves(pa, file, segments)
        if leaves is None:
            # No such field in the schema, or the path runs through a non-struct: no row has a kind.
            rows = sum(int(file.metadata.row_group(group).num_rows) for group in groups)
            for offset in range(0, rows, BATCH_ROWS):
                partial.add_values([None] * min(BATCH_ROWS, rows - offset))
            return
        top: Any = file.schema_arrow.field(segments[0]).type
        # Arrow cannot make one batch of a nested column from two row groups when a dictionary is in it
        # ("nested data conversions not implemented for chunked array outputs"): such a column is read
        # a row group at a time.
        runs = [[group] for group in groups] if pa.types.is_nested(top) else [groups]
        for run in runs:
            for batch in file.reader.iter_batches(BATCH_ROWS, row_groups=run, column_indices=leaves):
                if not batch.num_rows:
                    continue
                values: Any = batch.column(0)
                for segment in segments[1:]:
                    values = compute.struct_field(values, segment)
                partial.add_values(rows_in_order(*_tally(pa, compute, values)))
    except _AmbiguousColumn as error:
        partial.add_error(f"not auditable: {escaped(str(error))}")
    except Exception as error:  # pyarrow raises OSError, ArrowInvalid (ValueError) and others alike
        partial.add_error(_describe(error))


def schema_fields(
    path: str, segments: list[str], limit: int, chars: int
) -> tuple[bool, list[str], int, str | None] | None:
    """Whether the schema of ``path`` has the field ``segments`` (so every row has it, null or not), the
    dotted struct paths of the schema (at most ``limit``, of at most ``chars`` characters, names with a
    dot left out: no field can spell them), its rows, and the first name left out for its dot; None when
    the footer cannot be read, or without pyarrow."""
    try:
        pa, _, parquet = arrow()
        file: Any = parquet.ParquetFile(path)
        try:
            present = _field_leaves(pa, file, segments) is not None
        except _AmbiguousColumn:
            present = True  # the file is named with that error: nothing more to say of the field
        paths: list[str] = []
        dotted: str | None = None
        pending: list[tuple[str, Any]] = [("", file.schema_arrow)]
        while pending and len(paths) < limit:
            prefix, fields = pending.pop(0)
            for field in fields:  # a schema's or a struct's
                name: str = field.name
                if "." in name or not name or len(paths) >= limit or len(prefix) + len(name) > chars:
                    dotted = dotted if dotted is not None or "." not in name else name
                    continue
                paths.append(prefix + name)
                if pa.types.is_struct(field.type):
                    pending.append((f"{prefix}{name}.", field.type))
        return present, paths, int(file.metadata.num_rows), dotted
    except Exception:  # the audit itself reports why the file cannot be read
        return None


class _AmbiguousColumn(Exception):
    """The field names a column that occurs more than once: which one holds the kind cannot be told."""


def _field_leaves(pa: Any, file: Any, segments: list[str]) -> list[int] | None:
    """The Parquet leaf columns to read for the field ``segments`` (a batch of them holds one top-level
    column, the first segment's), or None when no row can have the field.

    Leaves are chosen by position in the schema, never by their dotted names: a top-level column
    literally called ``r.failure_kind`` and the field ``failure_kind`` of a struct ``r`` share the name
    ``r.failure_kind``, and only the struct path is what JSON Lines would read.
    """
    schema: Any = file.schema_arrow
    fields: Any = schema
    # The leaves of the top-level columns before the field's, then of its siblings before it at each
    # level: Parquet numbers leaves depth first in schema order.
    first = 0
    field: Any = None
    for depth, segment in enumerate(segments):
        try:
            segment.encode("utf-8")
        except UnicodeEncodeError:
            return None  # Parquet names are UTF-8: no column is called that
        indexes: list[int] = fields.get_all_field_indices(segment)
        if not indexes:
            return None
        if len(indexes) > 1:
            # A JSON object with a repeated key keeps the last value; Parquet columns have no order of
            # writing to go by, so the file is named rather than guessed at.
            name = ".".join(segments[: depth + 1])
            raise _AmbiguousColumn(f"the column {name!r} occurs {len(indexes)} times")
        first += sum(_leaf_count(pa, fields.field(index).type) for index in range(indexes[0]))
        field = fields.field(indexes[0])
        if depth + 1 < len(segments):
            if not pa.types.is_struct(field.type):
                return None
            fields = field.type
    leaves = list(range(first, first + _leaf_count(pa, field.type)))
    parquet_schema: Any = file.schema
    dotted = ".".join(segments)
    total = sum(_leaf_count(pa, top.type) for top in schema)
    if total != len(parquet_schema) or not all(
        f"{parquet_schema.column(leaf).path}.".startswith(f"{dotted}.") for leaf in leaves
    ):
        # A type whose leaves are counted otherwise than here: the names still say which leaves they are
        # when they are not ambiguous.
        raise _AmbiguousColumn(f"the leaf columns of {dotted!r} cannot be told apart from the schema")
    return leaves


def _leaf_count(pa: Any, kind: Any) -> int:
    """How many Parquet leaf columns hold a field of the Arrow type ``kind``."""
    types: Any = pa.types
    if types.is_struct(kind):
        return sum(_leaf_count(pa, field.type) for field in kind)
    if types.is_map(kind):
        return _leaf_count(pa, kind.key_type) + _leaf_count(pa, kind.item_type)
    if types.is_list(kind) or types.is_large_list(kind) or types.is_fixed_size_list(kind):
        return _leaf_count(pa, kind.value_type)
    if types.is_list_view(kind) or types.is_large_list_view(kind):
        return _leaf_count(pa, kind.value_type)
    storage: Any = getattr(kind, "storage_type", None)  # an extension type is stored as its storage
    return 1 if storage is None else _leaf_count(pa, storage)


def _tally(pa: Any, compute: Any, values: Any) -> tuple[dict[object, int], dict[object, int]]:
    """Counts per value in one batch (str, None, INVALID, UNPARSEABLE) and the row where each first
    occurs, from Arrow kernels alone: an Arrow scalar made from a Python value (as ``compute.index``
    makes one) imports pandas."""
    kind: Any = values.type
    rows: int = len(values)
    nulls: int = values.null_count
    if pa.types.is_null(kind) or nulls == rows:
        return {None: rows}, {None: 0}
    firsts: dict[object, int] = {}
    if nulls:
        firsts[None] = _first_true(compute, compute.is_null(values))
    if pa.types.is_dictionary(kind) and _is_text(pa, kind.value_type):
        values = values.dictionary_decode()  # its codes are in no useful order; ours will be
        kind = values.type
    if not _is_text(pa, kind):
        counts: dict[object, int] = {INVALID: rows - nulls}
        if nulls:
            counts[None] = nulls
        firsts[INVALID] = _first_true(compute, compute.is_valid(values))
        return counts, firsts
    encoded: Any = compute.dictionary_encode(values)
    indices: Any = encoded.indices
    try:
        words: list[str] = encoded.dictionary.to_pylist()
    except Exception:  # text that is not UTF-8: decided row by row
        return _row_by_row(pa, values)
    tally: Any = compute.value_counts(indices)
    codes: list[int | None] = tally.field(0).to_pylist()
    numbers: list[int] = tally.field(1).to_pylist()
    starts = _code_starts(pa, compute, indices)
    counts = {}
    for code, count in zip(codes, numbers, strict=True):
        if code is None:
            counts[None] = counts.get(None, 0) + count
        else:
            counts[words[code]] = count  # dictionary_encode's dictionary holds each value once
            firsts[words[code]] = starts[code]
    return counts, firsts


def _first_true(compute: Any, mask: Any) -> int:
    return int(compute.indices_nonzero(mask)[0].as_py())


def _code_starts(pa: Any, compute: Any, indices: Any) -> list[int]:
    """Where each code of a ``dictionary_encode`` first occurs, by code. The encoding numbers values in
    the order they first appear, so code k first occurs where the running maximum of the codes (nulls
    taken as -1) rises to k."""
    minus_one_at_nulls = compute.negate(compute.cast(compute.is_null(indices), pa.int32()))
    running: Any = compute.cumulative_max(compute.coalesce(indices, minus_one_at_nulls))
    rises: list[int] = compute.indices_nonzero(compute.not_equal(running[1:], running[:-1])).to_pylist()
    starts = [0] if running[0].as_py() >= 0 else []
    starts.extend(position + 1 for position in rises)
    return starts


def _is_text(pa: Any, kind: Any) -> bool:
    return bool(pa.types.is_string(kind) or pa.types.is_large_string(kind) or pa.types.is_string_view(kind))


def _row_by_row(pa: Any, values: Any) -> tuple[dict[object, int], dict[object, int]]:
    raw: list[bytes | None] = values.cast(pa.large_binary()).to_pylist()
    decoded: list[object] = []
    for item in raw:
        try:
            decoded.append(None if item is None else item.decode("utf-8"))
        except UnicodeDecodeError:
            decoded.append(UNPARSEABLE)
    firsts: dict[object, int] = {}
    for position, value in enumerate(decoded):
        firsts.setdefault(value, position)
    return dict(Counter(decoded)), firsts


def rows_in_order(counts: dict[object, int], firsts: dict[object, int]) -> list[object]:
    """The rows of a batch with these counts, in which each value first occurs where it did (``firsts``).
    The audit needs nothing else of a batch, so the rest of each value's rows may come in any order after
    its first: the gap before each next first occurrence is filled from the values already seen, built
    with list repetition rather than one Python step per row."""
    order = sorted(counts, key=firsts.__getitem__)
    ends = [*(firsts[value] for value in order[1:]), sum(counts.values())]
    remaining = {value: counts[value] - 1 for value in order}
    available: deque[object] = deque()
    result: list[object] = []
    for value, end in zip(order, ends, strict=True):
        result.append(value)
        if remaining[value]:
            available.append(value)
        while len(result) < end:
            head = available[0]
            take = min(end - len(result), remaining[head])
            result += [head] * take
            remaining[head] -= take
            if not remaining[head]:
                available.popleft()
    return result


def _describe(error: BaseException) -> str:
    if isinstance(error, OSError) and error.strerror:
        return describe_read_error(error)
    message = (str(error).strip().splitlines() or [type(error).__name__])[0]
    if len(message) > 200:
        message = message[:200] + "..."
    return f"not a readable Parquet file ({escaped(message)})"  # escaped: pyarrow's messages echo paths
