"""Parquet inputs (the ``parquet`` extra, pyarrow): only the column at ``--field`` is read, in batches.

A dotted field is a path into struct columns, as in JSON Lines, whatever the top-level columns are called
(a column literally named ``r.failure_kind`` is not the field ``failure_kind`` of a struct ``r``). The
categories are the JSON Lines ones, row by row: a string is a kind, null (or a field the schema does not
have, or a path through a column that is not a struct) is without a kind, any other type is invalid. Row
numbers (from 1) take the place of line numbers: ``path:row N``. A file that cannot be opened or decoded
is named with its error, after the rows read before the break are counted.
"""

from __future__ import annotations

import importlib

import failure_kinds
from failure_kinds import FailureKindsError
from failure_kinds._display import escaped
from failure_kinds._streams import describe_read_error

from .partial import PROBED, PartialReport
from .sources import ABSENT, INVALID, UNPARSEABLE

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any, Final

    from .partial import Column, Pair


# Rows per batch: one column of this many rows, about a megabyte of typical kinds.
BATCH_ROWS: Final = 65_536
# At most this many string columns, this many structs deep, are looked at for a field the schema lacks.
_CANDIDATES: Final = 64
_PROBE_DEPTH: Final = 8
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
        paths = [name.split(".") for name in partial.settings.paths]
        found = [_locate(pa, file, segments) for segments in paths]
        if start == 0:
            _note_kinds_at(pa, compute, partial, file)
        leaves = sorted({leaf for located in found for leaf in located[0]})
        if not leaves:  # no path in the schema: every row lacks them all
            rows = sum(int(file.metadata.row_group(group).num_rows) for group in groups)
            for offset in range(0, rows, BATCH_ROWS):
                partial.add_columns([_Coded(min(BATCH_ROWS, rows - offset), [ABSENT]) for _ in paths])
            return
        # Text is read as Parquet stores it, a dictionary and codes: no string is made per row, and the
        # codes are counted as they come.
        schema: Any = file.schema
        text = [
            schema.column(leaf).path for leaf in leaves if schema.column(leaf).physical_type == "BYTE_ARRAY"
        ]
        if text:
            file = parquet.ParquetFile(
                path, filesystem=filesystem, metadata=file.metadata, read_dictionary=text
            )
        # Arrow cannot make one batch of a nested column from two row groups when a dictionary is in it
        # ("nested data conversions not implemented for chunked array outputs"): such columns are read a
        # row group at a time.
        tops = {segments[0] for segments, (leaves, _) in zip(paths, found, strict=True) if leaves}
        nested = any(pa.types.is_nested(file.schema_arrow.field(top).type) for top in tops)
        for run in [[group] for group in groups] if nested else [groups]:
            for batch in file.reader.iter_batches(BATCH_ROWS, row_groups=run, column_indices=leaves):
                if batch.num_rows:
                    partial.add_columns(_columns(pa, compute, batch, paths, found))
    except _AmbiguousColumn as error:
        partial.add_error(f"not auditable: {escaped(str(error))}")
    except Exception as error:  # pyarrow raises OSError, ArrowInvalid (ValueError) and others alike
        partial.add_error(_describe(error))


def _columns(
    pa: Any, compute: Any, batch: Any, paths: list[list[str]], found: list[tuple[list[int], int]]
) -> Sequence[Column]:
    """The values of one batch at every path, coded and counted in Arrow; where some text is not UTF-8,
    lists, with that row unparseable in every one, as such a line is."""
    columns = [
        _column(pa, compute, batch, segments, *located)
        for segments, located in zip(paths, found, strict=True)
    ]
    if all(isinstance(column, _Coded) for column in columns):
        return columns
    listed = [column.values() if isinstance(column, _Coded) else column for column in columns]
    broken = {index for column in listed for index, value in enumerate(column) if value is UNPARSEABLE}
    for column in listed:
        for index in broken:
            column[index] = UNPARSEABLE
    return listed


def _column(
    pa: Any, compute: Any, batch: Any, segments: list[str], leaves: list[int], depth: int
) -> _Coded | list[object]:
    """One batch of one path's column: coded, or where its text is not UTF-8 a list of str, None and
    UNPARSEABLE."""
    rows: int = batch.num_rows
    if not leaves:
        return _Coded(rows, [ABSENT])
    values = _at(compute, batch, segments[:depth])
    if depth < len(segments):  # the path stops at a value that is no object: null there is null
        return _Coded(rows, [ABSENT, None], values.is_null())
    if not _is_text(pa, values.type):
        return _Coded(rows, [INVALID, None], values.is_null())
    # Each distinct value made once in Python: a row costs no decoding, and is counted in Arrow. A value
    # twice in a dictionary is counted twice, each time with its own rows, which add up.
    encoded: Any = values if pa.types.is_dictionary(values.type) else values.dictionary_encode()
    try:
        table: list[object] = encoded.dictionary.to_pylist()
    except Exception:  # text that is not UTF-8: decided row by row
        raw: list[bytes | None] = encoded.dictionary_decode().cast(pa.large_binary()).to_pylist()
        return [_decoded(item) for item in raw]
    table.append(None)
    indices: Any = encoded.indices
    if indices.null_count:  # nulls point past the values, at None
        indices = indices.fill_null(_scalar(pa, compute, len(table) - 1).cast(indices.type))
    return _Coded(rows, table, indices)


def _at(compute: Any, batch: Any, segments: list[str]) -> Any:
    """The column of ``batch`` at the struct path ``segments`` (all of them in the schema)."""
    values: Any = batch.column(batch.schema.get_field_index(segments[0]))
    for segment in segments[1:]:
        values = compute.struct_field(values, [segment])
    return values


def _scalar(pa: Any, compute: Any, number: int) -> Any:
    """``number`` as an Arrow int64 scalar made in Arrow: where numpy is installed, pyarrow makes one from a
    Python value (typed or not, as ``fill_null`` does with a number) through a check that imports pandas."""
    return compute.count(pa.nulls(number), mode="all")


class _Coded:
    """One batch of one path's values as codes into ``table``, its distinct values: counted in Arrow, and
    made one Python object per row only when a first index is asked for. No codes: every row holds
    ``table[0]``."""

    __slots__ = ("codes", "rows", "table")

    def __init__(self, rows: int, table: list[object], codes: Any = None) -> None:
        self.rows: int = rows
        self.table: list[object] = table
        # An Arrow array of int64 without nulls (int64: a kind's code times the stages' stays exact).
        self.codes: Any = None if codes is None else codes.cast("int64")

    def __len__(self) -> int:
        return self.rows

    def values(self) -> list[object]:
        if self.codes is None:
            return [self.table[0]] * self.rows
        return list(map(self.table.__getitem__, self.codes.to_pylist()))

    def pairs(self, stages: Column) -> list[tuple[Pair, int]]:
        """The rows per (value, stage), ``stages`` being coded too (partial._pairs): each pair counted in
        Arrow by one code, the value's times the number of stages plus the stage's."""
        assert isinstance(stages, _Coded)  # a batch's columns are all coded or all lists
        table, stage_table = self.table, stages.table
        if self.codes is None and stages.codes is None:
            return [((table[0], stage_table[0]), self.rows)]
        joined: Any
        width = len(stage_table)
        if stages.codes is None:
            joined, width = self.codes, 1
        elif self.codes is None:
            joined = stages.codes
        else:
            pa, compute, _ = arrow()
            joined = compute.add(compute.multiply(self.codes, _scalar(pa, compute, width)), stages.codes)
        counted: Any = joined.value_counts()
        codes: list[int] = counted.field("values").to_pylist()
        counts: list[int] = counted.field("counts").to_pylist()
        return [
            ((table[code // width], stage_table[code % width]), count)
            for code, count in zip(codes, counts, strict=True)
        ]


class _AmbiguousColumn(FailureKindsError):
    """The field names a column that occurs more than once: which one holds the kind cannot be told."""


def _locate(pa: Any, file: Any, segments: list[str]) -> tuple[list[int], int]:
    """The Parquet leaf columns to read for the path ``segments`` and how many of its segments the
    schema has: all of them, fewer where the path runs into a column that is not a struct or lacks the
    next name (a row is then null where that column is, else without the field), none when no row
    can hold the path's first name.

    Leaves are chosen by position in the schema, never by their dotted names: a top-level column
    literally called ``r.failure_kind`` and the field ``failure_kind`` of a struct ``r`` share the name
    ``r.failure_kind``, and only the struct path is what JSON Lines would read.
    """
    schema: Any = file.schema_arrow
    fields: Any = schema
    # The leaves of the top-level columns before the field's, then of its siblings before it at each
    # level: Parquet numbers leaves depth first in schema order.
    first, depth = 0, 0
    field: Any = None
    for depth, segment in enumerate(segments):
        try:
            segment.encode("utf-8")
        except UnicodeEncodeError:
            indexes: list[int] = []  # Parquet names are UTF-8: no column is called that
        else:
            indexes = (
                fields.get_all_field_indices(segment)
                if field is None or pa.types.is_struct(field.type)
                else []
            )
        if len(indexes) > 1:
            # A JSON object with a repeated key keeps the last value; Parquet columns have no order of
            # writing to go by, so the file is named rather than guessed at.
            name = ".".join(segments[: depth + 1])
            raise _AmbiguousColumn(f"the column {name!r} occurs {len(indexes)} times")
        if not indexes:
            break
        first += sum(_leaf_count(pa, fields.field(index).type) for index in range(indexes[0]))
        field = fields.field(indexes[0])
        fields = field.type
    else:
        depth = len(segments)
    if field is None:
        return [], 0
    leaves = list(range(first, first + _leaf_count(pa, field.type)))
    parquet_schema: Any = file.schema
    dotted = ".".join(segments[:depth])
    total = sum(_leaf_count(pa, top.type) for top in schema)
    if total != len(parquet_schema) or not all(
        f"{parquet_schema.column(leaf).path}.".startswith(f"{dotted}.") for leaf in leaves
    ):
        # A type whose leaves are counted otherwise than here: the names still say which leaves they are
        # when they are not ambiguous.
        raise _AmbiguousColumn(f"the leaf columns of {dotted!r} cannot be told apart from the schema")
    return leaves, depth


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


def _note_kinds_at(pa: Any, compute: Any, partial: PartialReport, file: Any) -> None:
    """For each field the schema lacks, as for JSON Lines: the text columns (at most _CANDIDATES) where
    the file's first PROBED rows hold a registered kind, each with the first such row, in however many
    row groups. Only the part that starts the file looks, so every cut of it finds the same."""
    part, settings = partial.files[-1], partial.settings
    missing = [
        n
        for n, field in enumerate(settings.fields)
        if _locate(pa, file, field.split("."))[1] < len(field.split("."))
    ]
    if not missing:
        return
    candidates: list[list[str]] = []
    pending: list[tuple[list[str], Any]] = [([], file.schema_arrow)]
    while pending and len(candidates) < _CANDIDATES:
        prefix, fields = pending.pop(0)
        for item in fields:
            name: str = item.name
            if pa.types.is_struct(item.type) and len(prefix) < _PROBE_DEPTH:
                pending.append(([*prefix, name], item.type))
            elif _is_text(pa, item.type) and "." not in name and name:
                candidates.append([*prefix, name])
    # Compared as bytes: text that is not UTF-8 is no kind, and no reason to leave the file unread.
    registered = {kind.encode() for kind in failure_kinds.FAILURE_KINDS}
    for segments in candidates[:_CANDIDATES]:
        try:
            leaves, depth = _locate(pa, file, segments)
        except _AmbiguousColumn:
            continue
        if depth < len(segments):
            continue
        probed: list[bytes | None] = []
        for group in range(file.metadata.num_row_groups):  # one at a time, as add_parquet reads nested ones
            batch: Any = next(
                file.reader.iter_batches(PROBED, row_groups=[group], column_indices=leaves), None
            )
            if batch is not None:
                values = _at(compute, batch, segments)
                if pa.types.is_dictionary(values.type):
                    values = values.dictionary_decode()
                probed += values.slice(0, PROBED - len(probed)).cast(pa.large_binary()).to_pylist()
            if len(probed) >= PROBED:
                break
        first = next((row for row, value in enumerate(probed) if value in registered), None)
        if first is not None:
            for number in missing:
                part.kinds_at[number].setdefault(".".join(segments), first)


def _is_text(pa: Any, kind: Any) -> bool:
    """Whether an Arrow type holds text: string, large_string, string_view, or a dictionary of them."""
    if pa.types.is_dictionary(kind):
        kind = kind.value_type
    return bool(pa.types.is_string(kind) or pa.types.is_large_string(kind) or pa.types.is_string_view(kind))


def _decoded(item: bytes | None) -> object:
    try:
        return None if item is None else item.decode("utf-8")
    except UnicodeDecodeError:
        return UNPARSEABLE


def _describe(error: BaseException) -> str:
    if isinstance(error, MemoryError) or (isinstance(error, OSError) and error.strerror):
        return describe_read_error(error)  # pyarrow's ArrowMemoryError is a MemoryError
    message = (str(error).strip().splitlines() or [type(error).__name__])[0]
    if len(message) > 200:
        message = message[:200] + "..."
    return f"not a readable Parquet file ({escaped(message)})"  # escaped: pyarrow's messages echo paths
