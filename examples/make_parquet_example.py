"""Writes examples/rollout_failures.parquet from the JSON Lines example: one row per record whose
failure_kind is a string or null (Parquet columns have one type, so the example's invalid and unparseable
lines have no row), in row groups of 100 rows, with the kind both at the top level and nested in a
struct (for --field result.failure_kind).

    python examples/make_parquet_example.py    (needs pyarrow: the parquet extra)
"""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa  # type: ignore[import-untyped]
import pyarrow.parquet as pq  # type: ignore[import-untyped]

HERE = Path(__file__).parent


def rows(source: Path) -> list[dict[str, object]]:
    kept: list[dict[str, object]] = []
    for line in source.read_text(encoding="utf-8").splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if not isinstance(record, dict):
            continue
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


def write(target: Path, source: Path = HERE / "rollout_failures.jsonl") -> Path:
    schema = pa.schema(
        [
            ("rollout_id", pa.string()),
            ("environment", pa.string()),
            ("failure_kind", pa.string()),
            ("result", pa.struct([("failure_kind", pa.string()), ("failure_reason", pa.string())])),
        ]
    )
    table = pa.Table.from_pylist(rows(source), schema=schema)
    pq.write_table(table, target, row_group_size=100)
    return target


if __name__ == "__main__":
    print(write(HERE / "rollout_failures.parquet"))
