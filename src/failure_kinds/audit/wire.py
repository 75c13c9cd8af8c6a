"""The partial report's JSON form (``PartialReport.to_json``), described once (``PARTIAL``) and checked by
one walk, then held to what a real partial can be: totals that add up, the categories the settings give,
locations inside the partial's files, keys as ``settings.shorten`` makes them. Anything else is a
ValueError naming the field: ``partial report: values.kept[3][2]: 'cancelled' is registered, not ...``."""

# The shapes are built in steps and walked as the plain objects they are:
# pyright: reportConstantRedefinition=false, reportUnknownArgumentType=false, reportUnknownVariableType=false

from __future__ import annotations

from typing import Any, cast

from failure_kinds._display import escaped, shown, type_name

Location = tuple[int, int]  # (index into a partial's files, line or row in that file part, from 1)
FORMAT_VERSION = 1
MAX_COUNT = (1 << 63) - 1  # past it, rendering a share would overflow a float

# The description: an object is a dict of its keys (``str``: any string keys), a list ``[shape]`` of any
# length, a tuple a list of exactly those shapes, ``(None, shape)`` null or that, a frozenset one of those.
COUNT, POSITIVE, TEXT, FLAG = "count", "positive", "text", "flag"
LOCATION = (COUNT, COUNT)
ENTRY: object = (TEXT, POSITIVE, TEXT, LOCATION)  # [key, count, category, first location]
TALLY: dict[object, object] = {"kept": [ENTRY], "extras": [ENTRY], "overflow": {str: (POSITIVE, LOCATION)}}
TALLY |= {"pinned": [TEXT], "uncertain": [TEXT]}
SETTINGS: dict[object, object] = {"field": TEXT, "aliases": {str: TEXT}, "namespaces": {str: [TEXT]}}
SETTINGS |= dict.fromkeys(("distinct_limit", "value_chars", "line_bytes"), COUNT)
FILE: dict[object, object] = {"path": TEXT, "unit": frozenset({"line", "row"}), "continuation": FLAG}
FILE |= {"records": COUNT, "lines": COUNT, "error": (None, TEXT)}
PARTIAL: dict[object, object] = {"version": COUNT, "settings": SETTINGS}
COUNTS = ("records", "with_kind", "without_kind", "invalid", "unparseable", "overlong")
PARTIAL |= dict.fromkeys(COUNTS, COUNT)
PARTIAL |= dict.fromkeys(("first_invalid", "first_unparseable", "first_overlong"), (None, LOCATION))
PARTIAL |= {"values": TALLY, "servers": TALLY, "files": [FILE]}


def wrong(where: str, problem: str) -> ValueError:
    return ValueError(f"partial report: {escaped(where, 200) + ': ' if where else ''}{problem}")


def walk(value: object, shape: object, where: str, found: list[tuple[str, Location]]) -> None:
    """Check ``value`` against ``shape``; every location met goes to ``found``, checked once files are."""
    if isinstance(shape, dict):
        if not isinstance(value, dict):
            raise wrong(where, f"expected an object, got {type_name(value)}")
        fields = cast("dict[object, object]", value)
        for key, item in fields.items() if str in shape else ():  # an object of any string keys
            if type(key) is not str:
                raise wrong(where, f"a key is {type_name(key)}, not a string")
            walk(item, shape[str], f"{where}[{key!r}]", found)
        for key, item_shape in shape.items() if str not in shape else ():
            if key not in fields:
                raise wrong(f"{where}.{key}" if where else str(key), "missing")
            walk(fields[key], item_shape, f"{where}.{key}" if where else str(key), found)
    elif isinstance(shape, frozenset):
        if type(value) is not str or value not in shape:
            raise wrong(where, f"not one of {', '.join(sorted(cast('frozenset[str]', shape)))}")
    elif isinstance(shape, list | tuple):
        if isinstance(shape, tuple) and shape[0] is None:
            return None if value is None else walk(value, shape[1], where, found)
        if not isinstance(value, list | tuple):
            raise wrong(where, f"expected a list, got {type_name(value)}")
        items = cast("list[object]", value)
        if isinstance(shape, tuple) and len(items) != len(shape):
            raise wrong(where, f"not a list of {len(shape)} items")
        for index, item in enumerate(items):
            walk(item, shape[index] if isinstance(shape, tuple) else shape[0], f"{where}[{index}]", found)
        if shape == LOCATION:
            found.append((where, cast("Location", tuple(items))))
    elif shape == FLAG and type(value) is not bool:
        raise wrong(where, "not true or false")
    elif shape == TEXT and type(value) is not str:
        raise wrong(where, f"expected a string, got {type_name(value)}")
    elif shape in (COUNT, POSITIVE) and type(value) is not int:
        raise wrong(where, f"expected an integer, got {type_name(value)}")
    elif shape in (COUNT, POSITIVE) and not (shape == POSITIVE) <= cast("int", value) <= MAX_COUNT:
        raise wrong(where, "out of range" if cast("int", value) > 0 else "negative or none")
    return None


def check_partial(data: object) -> None:
    """ValueError naming the field for anything in ``data`` that a partial report's JSON cannot hold."""
    from .errors import AuditError
    from .settings import CAPPED, NAMESPACED, SERVER, UNDECLARED, AuditSettings, check_aliases, key_problem

    if not isinstance(data, dict) or cast("dict[str, object]", data).get("version") != FORMAT_VERSION:
        raise wrong("version", f"not a partial report of format version {FORMAT_VERSION}")
    found: list[tuple[str, Location]] = []
    walk(data, PARTIAL, "", found)
    top, counts = cast("dict[str, Any]", data), cast("dict[str, int]", data)
    if not all(top["settings"]["field"].split(".")):
        raise wrong("settings.field", "has an empty segment")
    settings = AuditSettings.from_json(top["settings"])
    try:
        check_aliases(settings.aliases)
    except AuditError as error:
        raise wrong("settings.aliases", str(error)) from None
    files = cast("list[dict[str, int]]", top["files"])
    for index, part in enumerate(files):
        if part["continuation"] and index:
            raise wrong(f"files[{index}].continuation", "only a partial's first file can continue a file")
        if part["records"] > part["lines"]:
            raise wrong(f"files[{index}].records", f"{part['records']} records in {part['lines']} lines")
    for where, (index, line) in found:
        if index >= len(files):
            raise wrong(f"{where}[0]", f"file {index} of a partial of {len(files)} files")
        if not 1 <= line <= files[index]["lines"]:
            raise wrong(f"{where}[1]", f"line {line} of a file part of {files[index]['lines']} lines")
    records, unparseable, overlong = counts["records"], counts["unparseable"], counts["overlong"]
    if records != counts["with_kind"] + counts["without_kind"] + counts["invalid"] + unparseable:
        raise wrong("records", f"{records} is not with_kind + without_kind + invalid + unparseable")
    if overlong > unparseable:
        raise wrong("overlong", f"{overlong} is more than the {unparseable} unparseable records")
    for key in ("invalid", "unparseable", "overlong"):
        if (top[f"first_{key}"] is None) == bool(counts[key]):
            raise wrong(f"first_{key}", f"not set for {counts[key]} records, or set for none")
    if (in_files := sum(part["records"] for part in files)) != records:
        raise wrong("files", f"hold {in_files} records, not the {records} of the partial")
    totals: dict[str, dict[str, int]] = {"values": {}, "servers": {}}
    for name, capped in (("values", CAPPED), ("servers", frozenset({SERVER}))):
        tally, total, seen, kept = top[name], totals[name], set[str](), dict[str, int]()
        for extra in ("kept", "extras"):
            for index, (key, count, category, _) in enumerate(tally[extra]):
                at = f"{name}.{extra}[{index}]"
                if key in seen:
                    raise wrong(f"{at}[0]", f"{shown(key, 80)} is counted twice")
                if (problem := key_problem(settings, key, category, name == "servers")) is not None:
                    raise wrong(f"{at}[{problem[0]}]", problem[1])
                if extra == "extras" and (category not in capped or key not in tally["pinned"]):
                    raise wrong(at, "an extra key is a pinned key of a capped category")
                if extra == "kept" and category in capped:
                    kept[category] = kept.get(category, 0) + 1
                    if kept[category] > settings.distinct_limit:
                        raise wrong(at, f"more than {settings.distinct_limit} {category} keys kept")
                seen.add(key)
                total[category] = total.get(category, 0) + count
        for category, (count, _) in tally["overflow"].items():
            at = f"{name}.overflow[{category!r}]"
            if category not in capped:
                raise wrong(at, "not a capped category")
            if kept.get(category, 0) != settings.distinct_limit:
                raise wrong(at, f"overflow before {settings.distinct_limit} {category} keys are kept")
            total[category] = total.get(category, 0) + count
    values, servers = sum(totals["values"].values()), sum(totals["servers"].values())
    if values != counts["with_kind"]:
        raise wrong("values", f"count {values} records, not the {counts['with_kind']} with a kind")
    namespaced = totals["values"].get(NAMESPACED, 0) + totals["values"].get(UNDECLARED, 0)
    if servers != namespaced:
        raise wrong("servers", f"count {servers} records, not the {namespaced} namespaced ones")
