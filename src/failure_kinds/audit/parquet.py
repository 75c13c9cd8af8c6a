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

from failure_kinds._display import escaped
from failure_kinds._streams import describe_read_error

from .partial import PartialReport
from .sources import ABSENT, INVALID, UNPARSEABLE

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
        dataset: Any = importlib.import_module("pyarrow.dataset")
    except ImportError:
        partial.add_error(NEEDS_PYARROW)
        return
    try:
        file: Any = parquet.ParquetFile(path, filesystem=filesystem)
        last: int = file.metadata.num_row_groups if stop is None else stop
        groups = list(range(start, last))
        if not groups:
            return  # no rows (a fragment of no row group would read them all)
        paths = [name.split(".") for name in partial.settings.paths]
        found = [_in_schema(pa, file.schema_arrow, segments) for segments in paths]
        if problem := next((found for found in found if isinstance(found, str)), None):
            partial.add_error(f"not auditable: {escaped(problem)}")
            return
        projection = {
            f"c{number}": compute.field(*paths[number]) for number, there in enumerate(found) if there
        }
        whole: Any = next(dataset.dataset(path, format="parquet", filesystem=filesystem).get_fragments())
        fragment: Any = whole.subset(row_group_ids=groups)
        if not projection:  # no path in the schema: every row lacks them all
            rows = sum(int(file.metadata.row_group(group).num_rows) for group in groups)
            for offset in range(0, rows, BATCH_ROWS):
                partial.add_columns([[ABSENT] * min(BATCH_ROWS, rows - offset) for _ in paths])
            return
        for batch in fragment.to_batches(columns=projection, batch_size=BATCH_ROWS):
            rows = batch.num_rows
            if not rows:
                continue
            columns = [
                _values(pa, batch.column(f"c{n}")) if there else [ABSENT] * rows
                for n, there in enumerate(found)
            ]
            broken = {
                index for column in columns for index, value in enumerate(column) if value is UNPARSEABLE
            }
            for index in broken:  # text that is not UTF-8: the row is unparseable, as such a line is
                for column in columns:
                    column[index] = UNPARSEABLE
            partial.add_columns(columns)
    except Exception as error:  # pyarrow raises OSError, ArrowInvalid (ValueError) and others alike
        partial.add_error(_describe(error))


def _in_schema(pa: Any, schema: Any, segments: list[str]) -> bool | str:
    """Whether a row can hold ``segments`` (every step a struct field), or why it cannot be told: a
    name that occurs more than once (a JSON object keeps the last value of a repeated key; Parquet
    columns have no order of writing to go by, so the file is named rather than guessed at)."""
    fields: Any = schema
    for depth, segment in enumerate(segments):
        indexes: list[int] = fields.get_all_field_indices(segment)
        if len(indexes) > 1:
            name = ".".join(segments[: depth + 1])
            return f"the column {name!r} occurs {len(indexes)} times"
        if not indexes:
            return False
        kind: Any = fields.field(indexes[0]).type
        if depth + 1 < len(segments):
            if not pa.types.is_struct(kind):
                return False
            fields = kind
    return True


def _values(pa: Any, values: Any) -> list[object]:
    """One batch of one path's column as the audit's values: str, None, INVALID or UNPARSEABLE."""
    kind: Any = values.type
    if pa.types.is_dictionary(kind):
        values = values.dictionary_decode()
        kind = values.type
    if pa.types.is_string(kind) or pa.types.is_large_string(kind) or pa.types.is_string_view(kind):
        try:
            text: list[object] = values.to_pylist()
            return text
        except Exception:  # text that is not UTF-8: decided row by row
            raw: list[bytes | None] = values.cast(pa.large_binary()).to_pylist()
            return [_decoded(item) for item in raw]
    valid: list[bool] = values.is_valid().to_pylist()
    return [INVALID if there else None for there in valid]


def _decoded(item: bytes | None) -> object:
    try:
        return None if item is None else item.decode("utf-8")
    except UnicodeDecodeError:
        return UNPARSEABLE


def _describe(error: BaseException) -> str:
    if isinstance(error, OSError) and error.strerror:
        return describe_read_error(error)
    message = (str(error).strip().splitlines() or [type(error).__name__])[0]
    if len(message) > 200:
        message = message[:200] + "..."
    return f"not a readable Parquet file ({escaped(message)})"  # escaped: pyarrow's messages echo paths
