"""``failure-kinds export``: the vocabulary as JSON, a JSON Schema of a kind's value, TypeScript or Go."""

from __future__ import annotations

import json

from failure_kinds._streams import write_output
from failure_kinds.commands import EXIT_CLEAN, UsageError, load_project_config

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse

FORMATS = ("json", "jsonschema", "typescript", "go")


def run(arguments: argparse.Namespace) -> int:
    from failure_kinds.export import json_schema, vocabulary

    config = load_project_config(arguments)
    if arguments.format in ("typescript", "go"):
        import failure_kinds._languages as languages
        from failure_kinds.config import ConfigError, shown_path

        render = languages.typescript if arguments.format == "typescript" else languages.go
        try:
            write_output(render(config.namespaces))
        except ConfigError as error:
            where = shown_path(config.path) if config.path is not None else "configuration"
            raise UsageError(f"{where}: {error}") from None
        return EXIT_CLEAN
    # The declarations are part of the export only when a configuration was read.
    found = config.path is not None or arguments.config is not None
    namespaces = dict(config.namespaces) if found else None
    data = json_schema(namespaces) if arguments.format == "jsonschema" else vocabulary(namespaces)
    write_output(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    return EXIT_CLEAN
