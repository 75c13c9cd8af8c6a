"""Writes examples/rollout_failures.parquet from the JSON Lines example: one row per record whose
failure_kind is a string or null (Parquet columns have one type, so the example's invalid and unparseable
lines have no row), in row groups of 100 rows, with the kind both at the top level and nested in a
struct (for --field result.failure_kind).

    python examples/make_parquet_example.py [--output PATH]    (needs pyarrow: the parquet extra)
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from pathlib import Path
from typing import Any, cast

HERE = Path(__file__).parent
SHIPPED = HERE / "rollout_failures.parquet"
SOURCE = HERE / "rollout_failures.jsonl"


def rows(source: Path) -> list[dict[str, object]]:
    kept: list[dict[str, object]] = []
    for line in source.read_text(encoding="utf-8").splitlines():
        try:
            decoded: object = json.loads(line)
        except ValueError:
            continue
        if not isinstance(decoded, dict):
            continue
        record = cast("dict[str, object]", decoded)
        kind = record.get("failure_kind")
        if kind is not None and not isinstance(kind, str):
            continue
        kept.append(
            {
                "rollout_id": str(record.get("rollout_id")),
                "environment": str(record.get("environment")),
                "failure_kind": kind,
                "result": {"failure_kind": kind, "failure_reason": record.get("failure_reason")},
            }
        )
    return kept


def write(target: Path, source: Path = SOURCE) -> Path:
    # Imported here so that --help works without the parquet extra; pyarrow ships no types.
    pa: Any = importlib.import_module("pyarrow")
    pq: Any = importlib.import_module("pyarrow.parquet")

    schema = pa.schema(
        [
            ("rollout_id", pa.string()),
            ("environment", pa.string()),
            ("failure_kind", pa.string()),
            ("result", pa.struct([("failure_kind", pa.string()), ("failure_reason", pa.string())])),
        ]
    )
    table = pa.Table.from_pylist(rows(source), schema=schema)
    # Nothing of the moment is written (no timestamp, no pandas metadata): the same source and pyarrow
    # version give the same bytes, so rerunning it leaves the shipped file unchanged.
    pq.write_table(table, target, row_group_size=100)
    return target


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="make_parquet_example.py",
        description=(
            f"Write the Parquet example from {SOURCE.name}: one row per record whose failure_kind is a string"
            " or null, in row groups of 100 rows, the kind at the top level and in the struct result. The"
            " output is overwritten; the same pyarrow version writes the same bytes. Needs pyarrow (the"
            " parquet extra)."
        ),
    )
    parser.add_argument(
        "--output",
        type=Path,
        default=SHIPPED,
        metavar="PATH",
        help=f"the file to write (default: the shipped {SHIPPED.relative_to(HERE.parent)}, rewritten)",
    )
    arguments = parser.parse_args(argv)
    try:
        print(write(arguments.output))
    except ImportError:
        print("make_parquet_example.py: needs pyarrow: pip install 'failure-kinds[parquet]'", file=sys.stderr)
        return 2
    except OSError as error:
        print(f"make_parquet_example.py: {arguments.output}: {error.strerror or error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
