"""Partial reports read back from JSON: what a real partial can hold is accepted and renders; anything else
is a ValueError that names the field, never another exception and never a report that cannot render."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from typing import Any

import pytest
from helpers import examples
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from failure_kinds.audit import PartialReport, audit_lines, merge, render_json, render_text, settings_for

POOL = [
    "cancelled",
    "transport_timeout",
    "judge_faild",
    "legacy_timeout",  # aliased
    "swe:patch_failed",  # declared: namespaced
    "swe:patch_faild",  # undeclared
    "web:page_gone",  # a server nobody declared: namespaced
    "x" * 40,  # longer than the smallest value cut
    "cancelled" + "!" * 30,
    "y" * 40,  # an alias longer than the smaller value cuts
    "peer_drop",  # an older label with a replacement: legacy, cut by the smallest value cut
    "skipped",  # an older label without one: legacy
    "unreachable",  # an older label aliased over its replacement
]
ALIASES = {"legacy_timeout": "transport_timeout", "y" * 40: "cancelled", "unreachable": "transport_peer_drop"}
NAMESPACES = {"swe": ["patch_failed"]}

LINES = st.one_of(
    st.sampled_from(POOL).map(lambda value: json.dumps({"failure_kind": value}).encode()),
    st.sampled_from(
        [b"{}", b'{"failure_kind": null}', b'{"failure_kind": 3}', b"oops", b"", b"  ", b"{" * 90]
    ),
    st.text(max_size=6).map(lambda value: json.dumps({"failure_kind": value}).encode()),
)


@st.composite
def real_partials(draw: st.DrawFn) -> PartialReport:
    """The merged partial of up to three files, each cut into up to three parts, under small caps (so
    overflow rows, cut values, overlong lines and the second, pinned pass all occur)."""
    audit_settings = settings_for(
        "failure_kind",
        ALIASES,
        NAMESPACES,
        distinct_limit=draw(st.integers(min_value=1, max_value=4)),
        value_chars=draw(st.sampled_from([4, 20, 256])),
        line_bytes=draw(st.sampled_from([64, 1 << 20])),
    )
    files = draw(st.lists(st.lists(LINES, max_size=25), min_size=1, max_size=3))
    parts: list[tuple[list[bytes], str, bool]] = []
    for number, lines in enumerate(files):
        cuts = sorted(draw(st.lists(st.integers(min_value=0, max_value=len(lines)), max_size=2)))
        for index, (start, stop) in enumerate(zip([0, *cuts], [*cuts, len(lines)], strict=True)):
            parts.append((lines[start:stop], f"day{number}.jsonl", index > 0))
    partials = [audit_lines(lines, path, audit_settings, continuation=later) for lines, path, later in parts]
    merged = merge(partials)
    if not merged.exact:
        pins = merged.pins()
        merged = merge(
            audit_lines(lines, path, audit_settings, continuation=later, pins=pins)
            for lines, path, later in parts
        )
    return merged


def sent(partial: PartialReport) -> dict[str, Any]:
    return json.loads(json.dumps(partial.to_json()))


def renders(partial: PartialReport) -> None:
    report = partial.report()
    render_text(report)
    render_json(report)
    assert report.records == report.with_kind + report.without_kind + report.invalid + report.unparseable
    assert sum(row.count for row in report.kinds) == report.with_kind


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(real_partials())
def test_every_real_partial_is_accepted_and_reads_back_equal(partial: PartialReport) -> None:
    data = sent(partial)
    again = PartialReport.from_json(data)
    assert sent(again) == data
    assert render_json(again.report()) == render_json(partial.report())


def nodes(value: object, path: tuple[object, ...] = ()) -> Iterator[tuple[object, ...]]:
    """The path of every node of a JSON value, itself included."""
    yield path
    if isinstance(value, dict):
        for key, item in value.items():
            yield from nodes(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from nodes(item, (*path, index))


REPLACEMENTS: list[object] = [
    None,
    True,
    1.5,
    "x",
    "",
    "cancelled",
    "line",
    "\x00",
    "a" * 300,
    [],
    [0, 1],
    {},
    {"x": 1},
    0,
    1,
    -1,
    10**400,
    (1 << 63),
]


def mutated(data: dict[str, Any], path: tuple[object, ...], how: str, replacement: object) -> object:
    result = copy.deepcopy(data)
    if not path:
        return replacement
    parent: Any = result
    for step in path[:-1]:
        parent = parent[step]
    last: Any = path[-1]
    current = parent[last]
    if how == "drop":
        del parent[last]
    elif how == "negate" and type(current) is int:
        parent[last] = -current - 1
    elif how == "inflate" and type(current) is int:
        parent[last] = current + 1 if replacement is None else 10**400
    elif how == "add" and isinstance(current, dict):
        current[str(replacement)[:10]] = replacement
    else:
        parent[last] = replacement
    return result


@settings(max_examples=examples(400), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    real_partials(),
    st.lists(
        st.tuples(
            st.integers(min_value=0),
            st.sampled_from(["drop", "negate", "inflate", "retype", "add"]),
            st.sampled_from(REPLACEMENTS),
        ),
        min_size=1,
        max_size=3,
    ),
)
def test_a_mutated_partial_is_a_value_error_or_renders(
    partial: PartialReport, mutations: list[tuple[int, str, object]]
) -> None:
    data: Any = sent(partial)
    for choice, how, replacement in mutations:
        if not isinstance(data, dict):
            break
        paths = list(nodes(data))
        data = mutated(data, paths[choice % len(paths)], how, replacement)
    try:
        received = PartialReport.from_json(data)
    except ValueError as error:
        message = str(error)
    else:
        event("accepted")
        renders(received)
        return
    event("rejected")
    assert message.startswith("partial report: "), message


def example() -> dict[str, Any]:
    lines = [
        b'{"failure_kind": "cancelled"}',
        b'{"failure_kind": "judge_faild"}',
        b'{"failure_kind": "swe:patch_faild"}',
        b'{"failure_kind": 3}',
        b"oops",
        b"",
        b'{"failure_kind": "' + b"z" * 30 + b'"}',
        b'{"failure_kind": "peer_drop"}',
    ]
    audit_settings = settings_for("failure_kind", namespaces=NAMESPACES, value_chars=20)
    return sent(audit_lines(lines, "day.jsonl", audit_settings))


def kept_row(data: dict[str, Any], value: str) -> list[Any]:
    return next(row for row in data["values"]["kept"] if row[0] == value)


def test_the_example_is_accepted() -> None:
    renders(PartialReport.from_json(example()))


def negative(data: dict[str, Any]) -> None:
    data["invalid"] = -1


def unbalanced(data: dict[str, Any]) -> None:
    data["records"] += 1


def astronomical(data: dict[str, Any]) -> None:
    for key in ("records", "with_kind"):
        data[key] += 10**400
    data["files"][0]["records"] += 10**400
    data["files"][0]["lines"] += 10**400
    kept_row(data, "cancelled")[1] += 10**400


def unknown_category(data: dict[str, Any]) -> None:
    kept_row(data, "judge_faild")[2] = "mysterious"


def registered_as_unregistered(data: dict[str, Any]) -> None:
    kept_row(data, "cancelled")[2] = "unregistered"


def legacy_as_unregistered(data: dict[str, Any]) -> None:
    kept_row(data, "peer_drop")[2] = "unregistered"


def a_typo_as_legacy(data: dict[str, Any]) -> None:
    kept_row(data, "judge_faild")[2] = "legacy"


def location_past_the_files(data: dict[str, Any]) -> None:
    kept_row(data, "cancelled")[3] = [1, 1]


def line_past_the_file(data: dict[str, Any]) -> None:
    data["first_invalid"] = [0, 99]


def huge_value_cut(data: dict[str, Any]) -> None:
    data["settings"]["value_chars"] = 10**400


def negative_cap(data: dict[str, Any]) -> None:
    data["settings"]["distinct_limit"] = -1


def missing_key(data: dict[str, Any]) -> None:
    del data["values"]["overflow"]


def string_count(data: dict[str, Any]) -> None:
    data["files"][0]["records"] = "7"


def bool_count(data: dict[str, Any]) -> None:
    data["unparseable"] = True


def integer_key(data: dict[str, Any]) -> None:
    kept_row(data, "judge_faild")[0] = 5


def forged_cut_key(data: dict[str, Any]) -> None:
    row = next(row for row in data["values"]["kept"] if "\x00" in row[0])
    row[0] = row[0].split("\x00")[0] + "\x00" + "9" * 5000 + ":" + "0" * 24


def servers_that_do_not_add_up(data: dict[str, Any]) -> None:
    data["servers"]["kept"][0][1] += 1


def overflow_without_a_full_cap(data: dict[str, Any]) -> None:
    data["values"]["overflow"] = {"unregistered": [1, [0, 2]]}


def an_alias_to_nothing(data: dict[str, Any]) -> None:
    data["settings"]["aliases"] = {"old": "not_a_kind"}


@pytest.mark.parametrize(
    ("change", "field"),
    [
        (negative, "invalid: negative"),
        (unbalanced, "records: "),
        (astronomical, "records: out of range"),
        (unknown_category, "values.kept[1][2]: 'mysterious' is not a category"),
        (registered_as_unregistered, "values.kept[0][2]: 'cancelled' is registered, not unregistered"),
        (legacy_as_unregistered, "values.kept[4][2]: 'peer_drop' is legacy, not unregistered"),
        (a_typo_as_legacy, "values.kept[1][2]: 'judge_faild' is unregistered, not legacy"),
        (location_past_the_files, "values.kept[0][3][0]: file 1 of a partial of 1 files"),
        (line_past_the_file, "first_invalid[1]: line 99"),
        (huge_value_cut, "settings.value_chars: out of range"),
        (negative_cap, "settings.distinct_limit: negative"),
        (missing_key, "values.overflow: missing"),
        (string_count, "files[0].records: expected an integer, got str"),
        (bool_count, "unparseable: expected an integer, got bool"),
        (integer_key, "values.kept[1][0]: expected a string, got int"),
        (forged_cut_key, "not a cut value's key"),
        (servers_that_do_not_add_up, "servers: count 2 records, not the 1 namespaced ones"),
        (overflow_without_a_full_cap, "values.overflow['unregistered']: overflow before"),
        (an_alias_to_nothing, "settings.aliases: alias "),
    ],
)
def test_what_no_real_partial_holds_is_a_value_error_naming_the_field(change: Any, field: str) -> None:
    data = example()
    change(data)
    with pytest.raises(ValueError, match=r"^partial report: ") as raised:
        PartialReport.from_json(data)
    assert field in str(raised.value)


@pytest.mark.parametrize("data", [None, [], "partial", 1, {"version": 1}, {"version": True}, {"version": 2}])
def test_what_is_not_a_partial_at_all_is_a_value_error(data: object) -> None:
    with pytest.raises(ValueError, match=r"^partial report: "):
        PartialReport.from_json(data)  # type: ignore[arg-type]


def test_an_error_read_back_is_shown_escaped() -> None:
    data = example()
    data["files"][0]["error"] = "cannot read\nfailure-kinds audit: forged line\x1b[31m"
    text = render_text(PartialReport.from_json(data).report())
    assert "\x1b" not in text
    assert "\nfailure-kinds audit: forged" not in text
    assert "error: cannot read\\x0afailure-kinds audit: forged line\\x1b[31m" in text
