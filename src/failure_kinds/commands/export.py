"""``failure-kinds export``: the vocabulary as JSON, or a JSON Schema for one kind's value."""

from __future__ import annotations

import json

from failure_kinds._streams import write_output
from failure_kinds.commands import EXIT_CLEAN, load_project_config

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse

FORMATS = ("json", "jsonschema")


def run(arguments: argparse.Namespace) -> int:
    from failure_kinds.export import json_schema, vocabulary

    config = load_project_config(arguments)
    # The declarations are part of the export only when a configuration was read.
    found = config.path is not None or arguments.config is not None
    namespaces = dict(config.namespaces) if found else None
    data = json_schema(namespaces) if arguments.format == "jsonschema" else vocabulary(namespaces)
    write_output(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    return EXIT_CLEAN
