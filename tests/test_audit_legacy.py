"""Older labels in the audit: category ``legacy``, regrouped under their replacement without any alias, an
explicit alias over the built-in replacement, ``--strict`` failing on every older label no alias maps,
the replacement named in text and JSON; the same report from any engine; a deprecated kind's replacement.
"""

from __future__ import annotations

import json
import unicodedata
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest
from audit_support import jsonl, many_shards
from helpers import examples, run_cli
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import failure_kinds
from failure_kinds import FailureKind
from failure_kinds.audit import (
    PartialReport,
    Report,
    audit,
    audit_lines,
    merge,
    render_json,
    render_text,
    settings_for,
)
from failure_kinds.history import OLDER_LABELS

WITH_REPLACEMENT = sorted(label for label, older in OLDER_LABELS.items() if older.replacement is not None)
WITHOUT_REPLACEMENT = sorted(label for label, older in OLDER_LABELS.items() if older.replacement is None)
REGISTERED = sorted(failure_kinds.FAILURE_KINDS)
# Near older labels but none of them: they stay unregistered (case, separators, a letter, a namespace).
LOOKALIKES = ["Peer_Drop", "peer-drop", "peer_dorp", "timeout ", "timeouts", "usersim:timeout", "oom_kiled"]


def expected_row(value: str, aliases: Mapping[str, str]) -> tuple[str, str | None, str | None]:
    """(category, canonical, replacement) of a value, from the vocabulary's data alone."""
    older = OLDER_LABELS.get(value)
    replacement = None if older is None else older.replacement
    if value in aliases:
        return "aliased", aliases[value], replacement
    if value in failure_kinds.FAILURE_KINDS:
        return "registered", value, None
    if older is not None:
        return "legacy", replacement, replacement
    if failure_kinds.is_namespaced(value):
        return "namespaced", None, None
    return "unregistered", None, None


def assert_matches_the_vocabulary(report: Report, values: Sequence[str], aliases: Mapping[str, str]) -> None:
    counts = Counter(values)
    assert {row.value: row.count for row in report.kinds} == dict(counts)
    canonical: Counter[str] = Counter()
    for row in report.kinds:
        assert row.value is not None
        category, kind, replacement = expected_row(row.value, aliases)
        assert (row.category, row.canonical, row.replacement) == (category, kind, replacement), row.value
        older = OLDER_LABELS.get(row.value)
        assert row.note == (None if older is None or category not in ("legacy", "aliased") else older.note)
        if kind is not None:
            canonical[kind] += row.count
    assert report.canonical_totals() == dict(canonical)
    assert {row.value for row in report.legacy} == {
        value for value in counts if value in OLDER_LABELS and value not in aliases
    }


def test_every_older_label_is_legacy_with_its_replacement_and_note(tmp_path: Path) -> None:
    values = [label for label in OLDER_LABELS for _ in range(2)] + ["transport_timeout", "peer_dorp"]
    path = tmp_path / "old.jsonl"
    path.write_bytes(jsonl(values))
    report = audit([str(path)], jobs=1)
    assert_matches_the_vocabulary(report, values, {})
    rows = {row.value: row for row in report.kinds}
    assert rows["peer_drop"].canonical == "transport_peer_drop"
    assert rows["oom_killed"].canonical == "provider_oom_killed"
    assert rows["timeout_exceeded"].canonical is None  # not mapped for the user: its meaning varies
    assert rows["peer_dorp"].category == "unregistered"
    # The registered kind and the renamed label count together, with no alias given.
    assert report.canonical_totals()["transport_timeout"] == 3


@settings(max_examples=examples(120), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    values=st.lists(
        st.sampled_from([*OLDER_LABELS, *REGISTERED, *LOOKALIKES]) | st.text(max_size=8),
        min_size=1,
        max_size=40,
    ),
    aliased=st.dictionaries(
        st.sampled_from([*OLDER_LABELS, "peer_dorp", "judge_parse_error"]), st.sampled_from(REGISTERED)
    ),
)
def test_any_mix_of_values_and_aliases_is_categorised_as_the_vocabulary_says(
    values: list[str], aliased: dict[str, str]
) -> None:
    lines = [json.dumps({"failure_kind": value}).encode() for value in values]
    report = audit_lines(lines, "a.jsonl", settings_for("failure_kind", aliased)).report()
    assert report.with_kind == len(values)
    assert_matches_the_vocabulary(report, values, aliased)


ACTIONS = {  # what needs action, and the words each line of it must hold
    "unreadable": ["inputs not read", "under files:"],
    "unregistered": ["--aliases FILE", "failure-kinds lint", "--strict"],
    "undeclared": ["[tool.failure-kinds.namespaces]", "--strict"],
    "legacy": ["failure-kinds lint", "--fix", "--aliases FILE", "--strict"],
    "invalid": ["first at {path}:"],
    "unparseable": ["first at {path}:"],
}
# Paths and values wider than the table: long, and of wide (CJK) and full-width characters.
PATHS = ["a.jsonl", "d/" + "p" * 200 + ".jsonl", "漢" * 40 + ".jsonl", "logs/" + "q" * 85 + ".jsonl"]


def columns(line: str) -> int:
    return sum(1 + (unicodedata.east_asian_width(character) in "WF") for character in line)


@settings(max_examples=examples(100), deadline=None)
@given(
    values=st.lists(
        st.sampled_from(
            [*REGISTERED, *OLDER_LABELS, *LOOKALIKES, "swe_env:gone", "swe_env:patch_apply_failed"]
        )
        | st.sampled_from([1, None, "x" * 70, "no json", "漢" * 90, "\uff46\uff55\uff4c\uff4c_" * 12]),
        max_size=30,
    ),
    aliased=st.dictionaries(st.sampled_from(sorted(OLDER_LABELS)), st.sampled_from(REGISTERED), max_size=2),
    line_bytes=st.sampled_from([80, 1000]),
    unreadable=st.booleans(),
    path=st.sampled_from(PATHS),
)
def test_the_text_report_leads_with_what_needs_action_and_fits_in_100_columns(
    values: list[object], aliased: dict[str, str], line_bytes: int, unreadable: bool, path: str
) -> None:
    lines = [
        value.encode() if value == "no json" else json.dumps({"failure_kind": value}).encode()
        for value in values
    ]
    settings = settings_for(
        "failure_kind", aliased, {"swe_env": ("patch_apply_failed",)}, line_bytes=line_bytes
    )
    partial = audit_lines(lines, path, settings)
    if unreadable:  # a read that failed before the end, as a truncated gzip file's
        partial.add_error("truncated gzip: the compressed stream ends early")
    report = partial.report()
    text = render_text(report)
    # A path wider than that stays whole, alone on its line.
    wide = [line for line in text.splitlines() if columns(line) > 100]
    assert all(line.strip(" ;,").rstrip("0123456789").removesuffix(":") == path for line in wide), wide
    counts = Counter({"invalid": report.invalid, "unparseable": report.unparseable, "unreadable": unreadable})
    for row in report.kinds:
        counts[row.category] += row.count
    needed = [category for category in ACTIONS if counts[category]]
    head = text.partition("\n\n")[2].partition("\n\n")[0]
    assert head.startswith("needs action:\n") == bool(needed)
    actions = head.replace("\n   ", " ").splitlines()[1:] if needed else []
    assert [line.split()[0] for line in actions] == needed
    for category, line in zip(needed, actions, strict=True):
        assert all(words.format(path=path) in " ".join(line.split()) for words in ACTIONS[category]), line
        assert ("--max-line-bytes" in line) == (category == "unparseable" and report.overlong > 0)
    not_seen = json.loads(render_json(report))["not_seen"]
    assert not_seen == [kind for kind in REGISTERED if kind not in {row.canonical for row in report.kinds}]
    shown = " ".join(text.partition("\nnot seen: ")[2].partition("\n\n")[0].split())
    assert shown.partition(": ")[2].split(", ") == (not_seen if report.kinds and not_seen else [""])
    regrouped = text.partition("count:\n")[2].partition("\n\n")[0]
    registered = {row.value: row.count for row in report.kinds if row.category == "registered"}
    changed = [kind for kind, count in report.canonical_totals().items() if registered.get(kind) != count]
    assert [line.split()[0] for line in regrouped.splitlines()] == changed


@st.composite
def cut_inputs(draw: st.DrawFn) -> tuple[list[bytes], list[int], dict[str, str], int]:
    """Lines mixing older labels (aliased or not) with everything else, cut points, aliases, a value cut."""
    pool = [*OLDER_LABELS, "transport_timeout", "cancelled", "judge_faild", "web:gone", "q" * 30]
    lines = draw(
        st.lists(
            st.sampled_from(pool).map(lambda value: json.dumps({"failure_kind": value}).encode())
            | st.sampled_from([b"", b"oops", b'{"failure_kind": null}', b'{"failure_kind": 1}']),
            max_size=40,
        )
    )
    cuts = sorted(draw(st.lists(st.integers(0, len(lines)), max_size=4)))
    aliases = draw(
        st.dictionaries(st.sampled_from(sorted(OLDER_LABELS)), st.sampled_from(REGISTERED), max_size=3)
    )
    # Down to 3 characters, so older labels are kept under cut keys too.
    value_chars = draw(st.sampled_from([3, 8, 256]))
    return lines, cuts, aliases, value_chars


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cut_inputs())
def test_partials_sent_as_json_and_merged_give_the_one_pass_report(
    drawn: tuple[list[bytes], list[int], dict[str, str], int],
) -> None:
    lines, cuts, aliases, value_chars = drawn
    audit_settings = settings_for("failure_kind", aliases, value_chars=value_chars)
    whole = audit_lines(lines, "day.jsonl", audit_settings).report()
    parts = [
        audit_lines(lines[start:stop], "day.jsonl", audit_settings, continuation=index > 0)
        for index, (start, stop) in enumerate(zip([0, *cuts], [*cuts, len(lines)], strict=True))
    ]
    received = [PartialReport.from_json(json.loads(json.dumps(part.to_json()))) for part in parts]
    merged = merge(received)
    assert merged.exact
    assert render_json(merged.report()) == render_json(whole)
    assert render_text(merged.report()) == render_text(whole)
    # A cut older label still names its replacement and its note, and regroups under the replacement (no
    # two older labels share their first three characters and their length).
    by_start = {(label[:value_chars], len(label)): older for label, older in OLDER_LABELS.items()}
    for row in whole.kinds:
        if row.category in ("legacy", "aliased") and row.value is not None:
            older = by_start.get((row.value, row.length))
            if older is None:
                continue  # an alias that is no older label
            assert (row.replacement, row.note) == (older.replacement, older.note)
            if row.category == "legacy":
                assert row.canonical == older.replacement


def test_worker_processes_give_the_one_pass_report_with_older_labels_never_capped(tmp_path: Path) -> None:
    inputs = many_shards(tmp_path, seed=14)
    aliases = {"timeout": "agent_timeout", "skipped": "cancelled"}
    one = audit(inputs, aliases=aliases, jobs=1, distinct_limit=40)
    several = audit(inputs, aliases=aliases, jobs=2, chunk_bytes=3000, distinct_limit=40)
    assert render_json(several) == render_json(one)
    assert render_text(several) == render_text(one)
    # The distinct cap folds the typos into one overflow row; every older label keeps a row of its own.
    assert any(row.value is None and row.category == "unregistered" for row in one.kinds)
    assert {row.value for row in one.kinds if row.category in ("legacy", "aliased")} == set(OLDER_LABELS)
    assert {row.value for row in one.legacy} == set(OLDER_LABELS) - set(aliases)


def test_an_alias_overrides_the_built_in_replacement(tmp_path: Path) -> None:
    path = tmp_path / "old.jsonl"
    path.write_bytes(jsonl(["peer_drop", "peer_drop", "timeout", "transport_peer_drop"]))
    report = audit([str(path)], aliases={"peer_drop": "transport_unreachable"}, jobs=1)
    rows = {row.value: row for row in report.kinds}
    assert (rows["peer_drop"].category, rows["peer_drop"].canonical) == ("aliased", "transport_unreachable")
    assert rows["peer_drop"].replacement == "transport_peer_drop"  # still named: the user chose otherwise
    assert (rows["timeout"].category, rows["timeout"].canonical) == ("legacy", "transport_timeout")
    assert report.canonical_totals() == {
        "transport_unreachable": 2,
        "transport_peer_drop": 1,
        "transport_timeout": 1,
    }
    text = render_text(report)
    assert "-> transport_unreachable (instead of transport_peer_drop)" in text
    regrouped = "regrouped by canonical kind (registered, aliased and older labels together), where that"
    regrouped += " changes the\n  count:"  # wrapped at 100 columns
    assert regrouped in text
    # transport_peer_drop, seen once under its own name alone, keeps the count the registered rows show.
    assert [line.split()[0] for line in text.split(regrouped)[1].split("\n\n")[0].splitlines()[1:]] == [
        "transport_unreachable",
        "transport_timeout",
    ]


def test_the_text_report_names_each_replacement_or_why_there_is_none(tmp_path: Path) -> None:
    path = tmp_path / "old.jsonl"
    path.write_bytes(jsonl(["oom_killed", "skipped", "skipped", "cancelled"]))
    text = render_text(audit([str(path)], jobs=1))
    legacy = " ".join(text.partition("legacy: 2 distinct, 3 records\n")[2].partition("\n\n")[0].split())
    assert legacy.startswith("skipped 2 50.0% ")
    assert f"no single replacement: an outcome, not a failure first seen {path}:2 oom_killed 1 " in legacy
    assert legacy.endswith(f"-> provider_oom_killed first seen {path}:1")
    regrouped = text.partition("older labels together), where that changes the count:\n")[2]
    assert regrouped.partition("\n\n")[0].split()[:2] == ["provider_oom_killed", "1"]  # cancelled: no change


def test_the_json_report_names_the_replacement_and_note(tmp_path: Path) -> None:
    path = tmp_path / "old.jsonl"
    path.write_bytes(jsonl(["resource", "fatal"]))
    result = run_cli("audit", str(path), "--format", "json")
    assert result.returncode == 0, result.stderr
    rows = {row["value"]: row for row in json.loads(result.stdout)["kinds"]}
    assert rows["resource"] == {
        "value": "resource",
        "length": 8,
        "count": 1,
        "category": "legacy",
        "suggestion": None,
        "canonical": "transport_local_resource",
        "replacement": "transport_local_resource",
        "note": OLDER_LABELS["resource"].note,
        "first_seen": f"{path}:1",
    }
    assert (rows["fatal"]["category"], rows["fatal"]["canonical"], rows["fatal"]["replacement"]) == (
        "legacy",
        None,
        None,
    )
    assert rows["fatal"]["note"] == OLDER_LABELS["fatal"].note
    assert json.loads(result.stdout)["canonical"] == {"transport_local_resource": 1}


@pytest.mark.parametrize(
    ("values", "options", "code"),
    [
        (["peer_drop"], [], 1),  # regrouped, but not aliased: its producers still need fixing
        (["timeout_exceeded"], [], 1),
        (["peer_drop", "timeout_exceeded"], ["--alias", "peer_drop=transport_peer_drop"], 1),
        (
            ["peer_drop", "timeout_exceeded"],
            ["--alias", "peer_drop=transport_peer_drop", "--alias", "timeout_exceeded=agent_timeout"],
            0,
        ),
        (["transport_peer_drop", "cancelled"], [], 0),
    ],
)
def test_strict_fails_on_every_older_label_no_alias_maps(
    tmp_path: Path, values: list[str], options: list[str], code: int
) -> None:
    path = tmp_path / "old.jsonl"
    path.write_bytes(jsonl(values))
    result = run_cli("audit", str(path), "--strict", *options)
    assert (result.returncode, result.stderr) == (code, "")
    assert run_cli("audit", str(path), *options).returncode == 0  # without --strict, a report and 0


def test_strict_fails_on_an_older_label_in_an_aliases_file_only_when_unmapped(tmp_path: Path) -> None:
    path = tmp_path / "old.jsonl"
    path.write_bytes(jsonl(["unreachable", "eval_timeout"]))
    aliases = tmp_path / "aliases.toml"
    aliases.write_text('[aliases]\nunreachable = "transport_unreachable"\neval_timeout = "agent_timeout"\n')
    assert run_cli("audit", str(path), "--strict", "--aliases", str(aliases)).returncode == 0
    partly = tmp_path / "partly.toml"
    partly.write_text('[aliases]\nunreachable = "transport_unreachable"\n')
    result = run_cli("audit", str(path), "--strict", "--aliases", str(partly))
    assert result.returncode == 1
    assert "eval_timeout" in result.stdout.split("legacy: 1 distinct, 1 record")[1]


@pytest.fixture
def cancelled_deprecated(monkeypatch: pytest.MonkeyPatch) -> None:
    """No kind is deprecated today: a later release sets replaced_by on the member, as this does."""
    monkeypatch.setattr(
        FailureKind,
        "replaced_by",
        property(lambda kind: FailureKind.AGENT_TIMEOUT if kind == "cancelled" else None),
    )


@pytest.mark.usefixtures("cancelled_deprecated")
def test_a_deprecated_kind_stays_registered_and_the_report_names_its_replacement(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_bytes(jsonl(["cancelled", "cancelled", "agent_timeout"]))
    report = audit([str(path)], jobs=1)
    rows = {row.value: row for row in report.kinds}
    assert (rows["cancelled"].category, rows["cancelled"].canonical) == ("registered", "cancelled")
    assert rows["cancelled"].replacement == "agent_timeout"
    assert rows["agent_timeout"].replacement is None
    assert json.loads(render_json(report))["kinds"][0]["replacement"] == "agent_timeout"
    line = next(line for line in render_text(report).splitlines() if line.startswith("  cancelled"))
    assert line.endswith("deprecated: use 'agent_timeout'")
    # Registered, so --strict passes: the data is valid, and the lint is where producers learn to move on.
    from failure_kinds.cli import main

    assert main(["audit", str(path), "--strict", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["kinds"][0]["replacement"] == "agent_timeout"
