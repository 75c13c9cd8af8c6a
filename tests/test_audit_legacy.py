"""Older labels, aliases and the gate (docs/audit.md, Categories and exit codes): an older label is
`legacy`, regrouped under its replacement without any alias; an alias overrides the built-in replacement;
`--strict` fails on every value that remains and when the `--field` was never seen, with one note."""

from __future__ import annotations

import gzip
import json
import random
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest
from audit_support import jsonl, many_shards
from helpers import ROOT, examples, run_cli
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

import failure_kinds
from failure_kinds import FailureKind
from failure_kinds.audit import Report, audit, audit_lines, render_json, render_text, settings_for
from failure_kinds.history import OLDER_LABELS

REGISTERED = sorted(failure_kinds.FAILURE_KINDS)
# Near older labels but none of them: they stay unregistered (case, separators, a letter, a namespace).
LOOKALIKES = ["Peer_Drop", "peer-drop", "peer_dorp", "timeout ", "timeouts", "usersim:timeout", "oom_kiled"]


def note(text: str) -> str:
    return f"failure-kinds audit: note: {text}\n"


def assert_matches_the_vocabulary(report: Report, values: Sequence[str], aliases: Mapping[str, str]) -> None:
    """Each row's (category, canonical, replacement, note) is what the vocabulary's data says."""
    assert {row.value: row.count for row in report.kinds} == dict(Counter(values))
    canonical: Counter[str] = Counter()
    for row in report.kinds:
        assert row.value is not None
        older = OLDER_LABELS.get(row.value)
        replacement = None if older is None else older.replacement
        if row.value in aliases:
            expected = ("aliased", aliases[row.value], replacement)
        elif row.value in failure_kinds.FAILURE_KINDS:
            expected = ("registered", row.value, None)
        elif older is not None:
            expected = ("legacy", replacement, replacement)
        else:
            unregistered = "malformed" if ":" in row.value else "unregistered"
            expected = ("namespaced" if failure_kinds.is_namespaced(row.value) else unregistered, None, None)
        assert (row.category, row.canonical, row.replacement) == expected, row.value
        assert row.note == (
            older.note if older is not None and expected[0] in ("legacy", "aliased") else None
        )
        canonical.update({expected[1]: row.count} if expected[1] else {})
    assert report.canonical_totals() == dict(canonical)
    legacy = {value for value in values if value in OLDER_LABELS} - set(aliases)
    assert {row.value for row in report.legacy} == legacy


@settings(max_examples=examples(120), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.sampled_from([*OLDER_LABELS, *REGISTERED, *LOOKALIKES]) | st.text(max_size=8),
        min_size=1,
        max_size=40,
    ),
    st.dictionaries(
        st.sampled_from([*OLDER_LABELS, "peer_dorp", "judge_parse_error"]), st.sampled_from(REGISTERED)
    ),
)
# Every older label, and a registered kind that one is renamed to: they count together, with no alias.
@example([label for label in OLDER_LABELS for _ in range(2)] + ["transport_timeout", "peer_dorp"], {})
def test_any_mix_of_values_and_aliases_is_categorised_as_the_vocabulary_says(
    values: list[str], aliases: dict[str, str]
) -> None:
    lines = [json.dumps({"failure_kind": value}).encode() for value in values]
    report = audit_lines(lines, "a.jsonl", settings_for("failure_kind", aliases)).report()
    assert_matches_the_vocabulary(report, values, aliases)


def test_worker_processes_give_the_one_pass_report_with_older_labels_never_capped(tmp_path: Path) -> None:
    inputs = many_shards(tmp_path, seed=14)
    aliases = {"timeout": "agent_timeout", "skipped": "cancelled"}
    one = audit(inputs, aliases=aliases, jobs=1, distinct_limit=40)
    several = audit(inputs, aliases=aliases, jobs=2, chunk_bytes=3000, distinct_limit=40)
    assert (render_json(several), render_text(several)) == (render_json(one), render_text(one))
    # The distinct cap folds the typos into one overflow row; every older label keeps a row of its own.
    assert any(row.value is None and row.category == "unregistered" for row in one.kinds)
    assert {row.value for row in one.kinds if row.category in ("legacy", "aliased")} == set(OLDER_LABELS)
    assert {row.value for row in one.legacy} == set(OLDER_LABELS) - set(aliases)


def test_an_alias_overrides_the_built_in_replacement_which_the_text_still_names(tmp_path: Path) -> None:
    # The rows' categories and canonical kinds under any alias: the property above.
    (tmp_path / "old.jsonl").write_bytes(jsonl(["peer_drop", "peer_drop", "timeout", "transport_peer_drop"]))
    text = render_text(audit([str(tmp_path / "old.jsonl")], aliases={"peer_drop": "transport_unreachable"}))
    assert "-> transport_unreachable (instead of transport_peer_drop)" in text
    regrouped = "regrouped by canonical kind (registered, aliased and older labels together), where that"
    regrouped += " changes the\n  count:"  # wrapped at 100 columns
    # transport_peer_drop, seen once under its own name alone, keeps the count the registered rows show.
    shown = text.split(regrouped)[1].split("\n\n")[0].splitlines()[1:]
    assert [line.split()[0] for line in shown] == ["transport_unreachable", "transport_timeout"]


def test_the_reports_name_each_replacement_or_why_there_is_none(tmp_path: Path) -> None:
    path = tmp_path / "old.jsonl"
    path.write_bytes(jsonl(["oom_killed", "skipped", "skipped", "cancelled", "resource", "fatal"]))
    text = render_text(audit([str(path)], jobs=1))
    legacy = " ".join(text.partition("legacy: 4 distinct, 5 records\n")[2].partition("\n\n")[0].split())
    assert legacy.startswith("skipped 2 33.3% ")
    assert f"no single replacement: an outcome, not a failure first seen {path}:2 " in legacy
    assert "oom_killed 1 16.7% " in legacy
    assert f"-> provider_oom_killed first seen {path}:1" in legacy
    regrouped = text.partition("older labels together), where that changes the count:\n")[2]
    shown = [line.split()[0] for line in regrouped.partition("\n\n")[0].splitlines()]
    assert shown == ["provider_oom_killed", "transport_local_resource"]
    report = json.loads(run_cli("audit", str(path), "--format", "json").stdout)
    rows = {row["value"]: row for row in report["kinds"]}
    assert rows["resource"] == {
        **{"value": "resource", "length": 8, "count": 1, "category": "legacy", "suggestion": None},
        **{"canonical": "transport_local_resource", "replacement": "transport_local_resource"},
        **{"note": OLDER_LABELS["resource"].note, "first_seen": f"{path}:5"},
        "by_stage": [{"stage": None, "count": 1}],
    }
    fatal = [rows["fatal"][key] for key in ("category", "canonical", "replacement", "note")]
    assert fatal == ["legacy", None, None, OLDER_LABELS["fatal"].note]
    assert report["canonical"] == {"cancelled": 1, "provider_oom_killed": 1, "transport_local_resource": 1}


PEER = ["--alias", "peer_drop=transport_peer_drop"]


@pytest.mark.parametrize(
    ("values", "options", "code"),
    [
        (["peer_drop"], [], 1),  # regrouped, but not aliased: its producers still need fixing
        (["timeout_exceeded"], [], 1),
        (["peer_drop", "timeout_exceeded"], PEER, 1),
        (["peer_drop", "timeout_exceeded"], [*PEER, "--alias", "timeout_exceeded=agent_timeout"], 0),
        (["transport_peer_drop", "cancelled"], [], 0),
        (["judge_faild"], [], 1),
        (["judge_faild"], ["--alias", "judge_faild=judge_failed"], 0),
        (["unreachable", "eval_timeout"], ["--aliases", "{folder}/both.toml"], 0),
        (["unreachable", "eval_timeout"], ["--aliases", "{folder}/one.toml"], 1),
    ],
)
def test_strict_fails_on_every_value_that_remains(
    tmp_path: Path, values: list[str], options: list[str], code: int
) -> None:
    one = '[aliases]\nunreachable = "transport_unreachable"\n'
    (tmp_path / "one.toml").write_text(one)
    (tmp_path / "both.toml").write_text(one + 'eval_timeout = "agent_timeout"\n')
    (tmp_path / "old.jsonl").write_bytes(jsonl(values))
    options = [option.format(folder=tmp_path) for option in options]
    result = run_cli("audit", str(tmp_path / "old.jsonl"), "--strict", *options)
    assert (result.returncode, result.stderr) == (code, "")
    if "one.toml" in " ".join(options):
        assert "eval_timeout" in result.stdout.split("legacy: 1 distinct, 1 record")[1]
    assert run_cli("audit", str(tmp_path / "old.jsonl"), *options).returncode == 0  # without --strict: 0


@pytest.mark.parametrize(
    ("options", "text", "said"),
    [
        (["--alias", "old"], None, "expected OLD=NEW"),
        (["--alias", "=new"], None, "expected OLD=NEW"),
        (["--alias", "old="], None, "expected OLD=NEW"),
        (["--aliases", "{folder}/gone.toml"], None, "error: --aliases {folder}/gone.toml: no such file\n"),
        (["--aliases", "{folder}/a.toml"], "[aliases\n", "not valid TOML"),
        (["--aliases", "{folder}/a.toml"], 'timeout = "transport_timeout"\n', "no [aliases] table"),
        (["--aliases", "{folder}/a.toml"], "[aliases]\ntimeout = 3\n", "must be a string"),
        (["--aliases", "{folder}/a.toml"], "a = " + "[" * 100_000 + "]" * 100_000, ""),
        (["--aliases", "{folder}/a.toml"], "[aliases]\nx = " + "{a = " * 50_000 + "1" + "}" * 50_000, ""),
        (["--aliases", "/dev/zero"], None, "not a regular file"),
        (["--alias", "x=transport_timout"], None, "not a registered kind; did you mean 'transport_timeout'"),
        (["--alias", "cancelled=shutdown"], None, "already a registered kind"),
    ],
)  # fmt: skip
def test_an_alias_that_cannot_be_used_is_one_line_and_exit_2(
    tmp_path: Path, options: list[str], text: str | None, said: str
) -> None:
    if text is not None:
        (tmp_path / "a.toml").write_text(text)
    arguments = [option.format(folder=tmp_path) for option in options]
    result = run_cli("audit", *arguments, str(ROOT / "examples" / "rollout_failures.jsonl"))
    assert (result.returncode, result.stdout, result.stderr.count("\n")) == (2, "", 1)
    assert result.stderr.startswith("failure-kinds audit: ")
    assert said.format(folder=tmp_path) in result.stderr


def test_undeclared_values_count_under_strict_where_the_project_declares_its_kinds(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[tool.failure-kinds.namespaces]\nswe_env = ["patch_apply_failed"]'
    )
    (tmp_path / "a.jsonl").write_bytes(jsonl(["swe_env:patch_aply_failed"]))
    result = run_cli("audit", "a.jsonl", "--strict", "--format", "json", cwd=tmp_path)
    assert result.returncode == 1
    (row,) = json.loads(result.stdout)["kinds"]
    assert (row["category"], row["suggestion"]) == ("undeclared", "swe_env:patch_apply_failed")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    assert run_cli("audit", str(tmp_path / "a.jsonl"), "--strict", cwd=elsewhere).returncode == 0
    configured = ["--config", str(tmp_path / "pyproject.toml")]
    assert run_cli("audit", str(tmp_path / "a.jsonl"), "--strict", *configured, cwd=elsewhere).returncode == 1
    (tmp_path / "pyproject.toml").write_text('[tool.failure-kinds.namespaces]\nSwe = ["x"]\n')
    malformed = run_cli("audit", "-", cwd=tmp_path, stdin=b"{}\n")
    assert (malformed.returncode, malformed.stderr.count("\n")) == (2, 1)


def test_a_deprecated_kind_stays_registered_and_the_report_names_its_replacement(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # No kind is deprecated today: a later release sets replaced_by on the member, as this does.
    deprecated = property(lambda kind: FailureKind.AGENT_TIMEOUT if kind == "cancelled" else None)
    monkeypatch.setattr(FailureKind, "replaced_by", deprecated)
    path = tmp_path / "rows.jsonl"
    path.write_bytes(jsonl(["cancelled", "cancelled", "agent_timeout"]))
    report = audit([str(path)], jobs=1)
    rows = {row.value: (row.category, row.canonical, row.replacement) for row in report.kinds}
    assert rows["cancelled"] == ("registered", "cancelled", "agent_timeout")
    assert rows["agent_timeout"] == ("registered", "agent_timeout", None)
    line = next(line for line in render_text(report).splitlines() if line.startswith("  cancelled"))
    assert line.endswith("deprecated: use 'agent_timeout'")
    # Registered, so --strict passes: the data is valid, and the lint is where producers learn to move on.
    result = run_cli("audit", str(path), "--strict", "--format", "json")
    assert (result.returncode, json.loads(result.stdout)["kinds"][0]["replacement"]) == (0, "agent_timeout")


# The gate pointed at the wrong input: a --field never seen fails it, with one note.

NOT_SEEN = "no record could be read as a JSON object, so --field failure_kind was never seen"
NO_RECORD = "no input holds a record, so --field failure_kind was never seen"
NO_FILE = "no input file was found, so --field failure_kind was never seen"
NOTHING_TO_NAME = "no record has the field failure_kind"
SUFFIXES = "*.jsonl, *.ndjson, *.jsonl.gz, *.ndjson.gz or *.parquet"


def shards_of_prose(folder: Path, count: int) -> Path:
    """A directory of shards that hold Markdown, as an export gone wrong would."""
    folder.mkdir()
    readme = (ROOT / "README.md").read_bytes()
    for index in range(count):
        (folder / f"shard-{index:05}.jsonl").write_bytes(readme[index * 37 : index * 37 + 2_000])
    return folder


FILES = {  # one log file's content, and the note it earns
    "random bytes": (random.Random(16).randbytes(50_000), NOT_SEEN),
    "empty file": (b"\n \n\t\n", NO_RECORD),
    "{}": (b"{}\n{}\n", NOTHING_TO_NAME),
    "nothing to name": (b'{"": {"": null}}\n[]\n', NOTHING_TO_NAME),
}


@pytest.mark.parametrize(
    "case",
    [*FILES, "readme", "shards of prose", "empty stdin", "empty directory", "other files only"],
)
def test_a_gate_pointed_at_the_wrong_input_fails(case: str, tmp_path: Path) -> None:
    folder = tmp_path / "logs"
    if case in FILES:
        (tmp_path / "log.jsonl").write_bytes(FILES[case][0])
        arguments, notes = [str(tmp_path / "log.jsonl")], [FILES[case][1]]
    elif case == "readme":  # the note names the field
        arguments = ["--field", "result.failure_knd", str(ROOT / "README.md")]
        notes = [NOT_SEEN.replace("failure_kind", "result.failure_knd")]
    elif case == "empty stdin":
        arguments, notes = ["-"], [NO_RECORD]
    elif case == "shards of prose":
        arguments, notes = [str(shards_of_prose(tmp_path / "shards", 300))], [NOT_SEEN]
    else:
        (folder / "nested" / "deeper").mkdir(parents=True)
        arguments, notes = [str(folder)], [f"{folder}: no {SUFFIXES} files in this directory"]
        if case == "other files only":
            (folder / "notes.txt").write_text('{"failure_kind": "cancelled"}\n')
            (folder / "nested" / "rows.json").write_text('[{"failure_kind": "cancelled"}]\n')
            skipped = f"{folder / 'nested' / 'rows.json'}, {folder / 'notes.txt'}"
            notes.append(
                f"2 entries found in directories are not {SUFFIXES} regular files and were skipped: {skipped}"
            )
        notes.append(NO_FILE)
    strict = run_cli("audit", "--strict", *arguments)
    assert (strict.returncode, strict.stderr) == (1, "".join(map(note, notes)))
    assert "records" in strict.stdout
    # Without --strict the exit is what it always was, and the note is the same.
    plain = run_cli("audit", "--format", "json", *arguments)
    assert (plain.returncode, plain.stderr) == (0, strict.stderr)
    report = json.loads(plain.stdout)
    assert (report["field_missing"], report["field_suggestion"], report["with_kind"]) == (True, None, 0)
    # The text's field line gives the note's reason, for a gate that keeps only stdout.
    actions = " ".join(strict.stdout.partition("\nneeds action:\n")[2].partition("\n\n")[0].split())
    why = notes[-1].partition(", so --field")[0]
    assert f"field {report['records']:,} {why}; --strict fails on it" in actions


def test_an_unreadable_input_beside_the_note_keeps_exit_2_and_a_kind_anywhere_passes(tmp_path: Path) -> None:
    readme = str(ROOT / "README.md")
    beside = run_cli("audit", "--strict", readme, str(tmp_path / "missing.jsonl"))
    missing = f"failure-kinds audit: {tmp_path}/missing.jsonl: no such file\n"
    assert (beside.returncode, beside.stderr) == (2, note(NOT_SEEN) + missing)
    folder = shards_of_prose(tmp_path / "shards", 200)
    (folder / "shard-00150.jsonl").write_text('# a heading\n{"failure_kind": "cancelled"}\n')
    found = run_cli("audit", "--strict", "--format", "json", str(folder))
    assert (found.returncode, found.stderr, json.loads(found.stdout)["with_kind"]) == (0, "", 1)


def records(values: Sequence[object]) -> bytes:
    return b"".join(json.dumps(value).encode() + b"\n" for value in values)


ROLLOUTS = records(
    [{"step": 1, "result": {"failure_kind": "cancelled"}}, {"result": {"failure_kind": None}}, {"result": {}}]
)
MEANT = "did you mean result.failure_kind? (the records hold registered kinds there)"
NO_FIELD = "no record has the field"


@pytest.mark.parametrize(
    ("data", "field", "said"),
    [
        (ROLLOUTS, "result.failure_knd", f"{NO_FIELD} result.failure_knd; {MEANT}"),
        (ROLLOUTS, "failure_kind", f"{NO_FIELD} failure_kind; {MEANT}"),
        (records([{"failure_kind": None}] * 3 + [{"other": 1}]), "failure_kind", None),
        (records([{"alpha": 1, "beta": {"gamma": "x"}}]), "zzz", f"{NO_FIELD} zzz"),
        (b'{"r.kind": "cancelled"}\n', "r.kind", f"{NO_FIELD} r.kind"),
        (records([{"failure_kind": "cancelled", "cleanup_failure_kind": "cancelled"}]), "failur_kind",
         f"{NO_FIELD} failur_kind; did you mean failure_kind? (the records hold registered kinds there)"),
    ],
)  # fmt: skip
@pytest.mark.parametrize("through", ["file", "gzip stdin"])
def test_a_field_no_record_has_is_named_with_the_paths_where_the_records_hold_kinds(
    tmp_path: Path, data: bytes, field: str, said: str | None, through: str
) -> None:
    (tmp_path / "log.jsonl").write_bytes(data)
    source, stdin = (["log.jsonl"], None) if through == "file" else (["-"], gzip.compress(data))
    arguments = [*source, "--field", field, "--strict", "--format", "json"]
    result = run_cli("audit", *arguments, cwd=tmp_path, stdin=stdin)
    assert (result.returncode, result.stderr) == ((1, note(said)) if said else (0, ""))
    report = json.loads(result.stdout)
    suggestion = said.partition("did you mean ")[2].partition("?")[0] or None if said else None
    assert (report["field_missing"], report["field_suggestion"]) == (said is not None, suggestion)
    # Both paths hold kinds; the one closest to the field given is the suggestion.
    at = {"failur_kind": ["cleanup_failure_kind", "failure_kind"]}.get(
        field, [suggestion] if suggestion else []
    )
    assert report["files"][0].get("kinds_at") == (None if said is None else at)
    # The text says so on stdout too, under needs action, for a gate that keeps only the report.
    text = run_cli("audit", *source, "--field", field, cwd=tmp_path, stdin=stdin).stdout
    actions = " ".join(text.partition("\nneeds action:\n")[2].partition("\n\n")[0].split())
    meant = f"; did you mean {suggestion}? (--field PATH)" if suggestion else ""
    line = f"field {report['records']} {NO_FIELD} {field}{meant}; --strict fails on it"
    assert actions == (line if said else "")
    # The field there, even null, is a field the gate can see: nothing to say, exit 0.
    (tmp_path / "log.jsonl").write_bytes(data + json.dumps({field.split(".")[0]: None}).encode() + b"\n")
    assert run_cli("audit", "log.jsonl", "--field", field, "--strict", cwd=tmp_path).returncode == 0


# Lines that are not a JSON object (without a "{" nothing can be one, and shapes that come close), and
# records of keys that collide, are too long, hold dots or nothing, among a few that have the field.
NOT_OBJECTS = st.one_of(
    st.binary(max_size=40).filter(lambda line: b"{" not in line),
    st.text(max_size=40).filter(lambda line: "{" not in line).map(str.encode),
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(max_size=5),
        lambda items: st.lists(items, max_size=3),
        max_leaves=6,
    ).map(lambda value: json.dumps(value).encode()),
    st.sampled_from([b'{"failure_kind": "cancelled"', b'{"failure_kind": "x"}}', b'[{"failure_kind": "x"}]']),
    st.sampled_from([b'"{\\"a\\": 1}"', b'\xff{"failure_kind": "cancelled"}', b"# failure-kinds"]),
    st.sampled_from([b"{" * 5_000, b"[" * 100_000]),
)
KEYS = st.sampled_from(["result", "failure_kind", "kind", "reward", "step", "error", "detail"])
SEGMENT = st.text(alphabet="abcxyz_", min_size=1, max_size=6)
UNSPELLABLE = st.one_of(st.lists(SEGMENT, min_size=2, max_size=3).map(".".join), st.just(""))
LONG = st.text(min_size=190, max_size=260)
HOSTILE = st.one_of(st.text(max_size=8), LONG, st.sampled_from(["a.b", "\n", "\u202e"]), UNSPELLABLE)
OBJECTS = st.recursive(
    st.one_of(st.none(), st.integers(), st.text(max_size=3)),
    lambda children: st.dictionaries(KEYS | HOSTILE, children, max_size=4),
    max_leaves=8,
).filter(lambda value: isinstance(value, dict))
FIELDS = st.lists(KEYS | st.sampled_from(["failure_knd", "resul", "rewards"]), min_size=1, max_size=3)
BLANK = b" \t\n\r\x0b\x0c"


def has(record: object, segments: list[str]) -> bool:
    """The path is there, or a null on the way stands for it."""
    for segment in segments:
        if record is None:
            return True
        if not isinstance(record, dict) or segment not in record:
            return False
        record = record[segment]
    return True


def paths_of(record: dict[str, object], prefix: str = "") -> set[str]:
    found = {prefix + key for key in record}
    for key, value in record.items():
        found |= paths_of(value, f"{prefix}{key}.") if isinstance(value, dict) else set()
    return found


# The workers run in a process of their own, which never imports pyarrow, so each pool forks its workers:
# here the Parquet tests may have imported it, and then a fork server starts every worker of every example.
IN_WORKERS = """
import json, sys
from failure_kinds.audit import audit, render_json
for path, field in json.load(sys.stdin):
    parts = audit([path], field, jobs=2, chunk_bytes=16)
    print(json.dumps([render_json(parts), parts.notes]))
"""


def test_the_field_is_named_missing_exactly_when_no_record_has_it_in_every_engine(tmp_path: Path) -> None:
    seen: list[tuple[list[str], list[object]]] = []  # each example's (path, field) and its report

    @given(
        st.lists(
            NOT_OBJECTS.map(lambda line: (line, None))
            | OBJECTS.map(lambda item: (json.dumps(item).encode(), item))
            | st.just((b"\xef\xbb\xbf{}", {})),  # an object at the start of a file, unparseable later
            max_size=30,
        ),
        FIELDS,
    )
    @settings(max_examples=examples(80), deadline=None)
    def in_one_process(lines: list[tuple[bytes, dict[str, object] | None]], segments: list[str]) -> None:
        data = b"\n".join(line for line, _ in lines)
        assume(not data.startswith(b"\x1f\x8b"))  # read as gzip, and named as a broken one: not this test's
        objects, field = [item for _, item in lines if item is not None], ".".join(segments)
        path = tmp_path / f"{len(seen)}.jsonl"
        path.write_bytes(data)
        one = audit([str(path)], field)
        assume(one.files[0].error is None)  # UTF-16 or UTF-32 text is named unreadable: not this test's
        missing = not any(has(record, segments) for record in objects)
        assert one.field_missing == (missing and not (one.with_kind or one.invalid))
        assert len(one.notes) == one.field_missing
        assert all(text.isprintable() and len(text) < 1_500 and field in text for text in one.notes)
        if one.field_suggestion is not None:
            assert one.field_suggestion in set().union(*map(paths_of, objects))
        if not objects:
            records = len(
                [line for line in data.removeprefix(b"\xef\xbb\xbf").split(b"\n") if line.strip(BLANK)]
            )
            assert (one.records, one.unparseable, one.field_suggestion) == (records, records, None)
            assert one.notes == [(NOT_SEEN if records else NO_RECORD).replace("failure_kind", field)]
        seen.append(([str(path), field], [render_json(one), one.notes]))

    in_one_process()
    run = [sys.executable, "-c", IN_WORKERS]
    cases = json.dumps([case for case, _ in seen])
    result = subprocess.run(run, input=cases, capture_output=True, text=True, timeout=300, check=False)
    assert result.returncode == 0, result.stderr
    for (case, expected), line in zip(seen, result.stdout.splitlines(), strict=True):
        assert json.loads(line) == expected, case


@given(
    st.lists(
        st.dictionaries(UNSPELLABLE, st.none() | st.integers() | st.sampled_from(REGISTERED), max_size=3),
        min_size=1,
        max_size=30,
    ),
    st.lists(SEGMENT, min_size=1, max_size=3).map(".".join),
)
@settings(max_examples=examples(40), deadline=None)
def test_records_with_only_unspellable_keys_never_pass_as_having_the_field(
    rows: list[dict[str, object]], field: str
) -> None:
    """Flattened dotted keys, empty keys, empty objects: no --field can name them, so the gate fails."""
    with tempfile.TemporaryDirectory() as folder:
        (Path(folder) / "log.jsonl").write_bytes(records(rows))
        report = audit([f"{folder}/log.jsonl"], field, jobs=1)
    assert (report.records, report.with_kind, report.field_missing) == (len(rows), 0, True)
    assert report.notes == [f"no record has the field {field}"]
