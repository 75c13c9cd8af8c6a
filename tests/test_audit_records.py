"""Failure records as producers write them (docs/audit.md): several kind fields in one pass, the stage
beside each kind, absent and null apart, and where the kinds are in a file that lacks the field."""

from __future__ import annotations

import json
import random
import tracemalloc
from pathlib import Path

import pytest
from helpers import run_cli

from failure_kinds.audit import AuditError, audit, render_json, render_text
from failure_kinds.audit.settings import KIND_STAGES, rank

# Upstream's newest record (schema version 1) nests the failure; its older one put the stage beside a
# top-level kind, in its own five stages; producers add a cleanup kind beside the failure's stage.
VERSION_1 = [
    {"schema_version": 1, "failure": {"failure_reason": "timed out", "terminal": True,
                                       "failure_kind": "transport_timeout", "stage": "agent"}},
    {"schema_version": 1, "failure": {"failure_reason": "judge", "terminal": False,
                                       "failure_kind": "judge_failed", "stage": "verification"}},
    {"schema_version": 1, "failure": None},
    {"schema_version": 1, "failure": {"failure_kind": "verifer_error", "stage": "participant"}},
]  # fmt: skip
OLDER = [
    {"failure_kind": kind, "stage": stage}
    for kind, stage in [("peer_drop", "request"), ("timeout", "response"), ("cancelled", "result"),
                        ("cancelled", "agent"), ("verifier_error", "verifier"), ("cancelled", None)]
]  # fmt: skip


def write(path: Path, records: list[object]) -> str:
    path.write_text("".join(json.dumps(record) + "\n" for record in records))
    return str(path)


def test_version_1_records_give_their_kinds_and_stages_at_the_nested_failure(tmp_path: Path) -> None:
    report = audit([write(tmp_path / "v1.jsonl", VERSION_1)], "failure.failure_kind", jobs=1)
    assert report.stage == "failure.stage"  # the key stage beside the kind
    assert (report.with_kind, report.null, report.absent) == (3, 1, 0)
    stages = {row.value: (row.count, row.category, row.suggestion) for row in report.stages}
    assert stages == {
        "agent": (1, "registered", None),
        "verification": (1, "registered", None),
        "participant": (1, "unregistered", None),
    }
    rows = {row.value: row.by_stage for row in report.kinds}
    assert rows["verifer_error"] == [("participant", 1)]
    assert rows["transport_timeout"] == [("agent", 1)]
    text = render_text(report)
    assert "stages at 'failure.stage': 3 records with a stage" in text
    assert "  stage              1  1 stage that no FailureStage names" in text
    assert "stages: agent 1" in text


def test_the_older_record_its_five_stages_and_strict(tmp_path: Path) -> None:
    path = write(tmp_path / "old.jsonl", OLDER)
    data = json.loads(run_cli("audit", path, "--format", "json").stdout)
    stages = {row["value"]: (row["category"], row["replacement"]) for row in data["stages"]}
    assert stages == {
        "request": ("legacy", None),
        "response": ("legacy", None),
        "result": ("legacy", None),
        "agent": ("registered", None),
        "verifier": ("legacy", "verification"),
    }
    cancelled = next(row for row in data["kinds"] if row["value"] == "cancelled")
    assert cancelled["by_stage"] == [
        {"stage": "agent", "count": 1},
        {"stage": "result", "count": 1},
        {"stage": None, "count": 1},
    ]
    # Only the stage keeps the gate shut: every kind is registered or aliased.
    aliased = ["--alias", "peer_drop=transport_peer_drop", "--alias", "timeout=transport_timeout"]
    assert run_cli("audit", path, "--strict", *aliased).returncode == 1
    fine = write(tmp_path / "fine.jsonl", [{"failure_kind": "cancelled", "stage": "agent"}])
    assert run_cli("audit", fine, "--strict").returncode == 0
    # --stage names another path for every field.
    other = write(tmp_path / "where.jsonl", [{"failure_kind": "cancelled", "meta": {"phase": "seed"}}])
    moved = audit([other], "failure_kind", stage_path="meta.phase", jobs=1)
    assert [(row.value, row.category) for row in moved.stages] == [("seed", "registered")]


def test_several_fields_in_one_pass_one_report_each(tmp_path: Path) -> None:
    records = [
        {"failure_kind": "cancelled", "stage": "cleanup", "cleanup_failure_kind": "session_release_faild"},
        {"failure_kind": "transport_timeout", "stage": "agent"},
    ]
    path = write(tmp_path / "both.jsonl", records)
    fields = ["--field", "failure_kind", "--field", "cleanup_failure_kind"]
    result = run_cli("audit", path, *fields, "--format", "json", "--strict")
    assert result.returncode == 1  # the misspelled cleanup kind, though failure_kind is clean
    data = json.loads(result.stdout)
    assert [report["field"] for report in data["fields"]] == ["failure_kind", "cleanup_failure_kind"]
    # The cleanup kind beside a top-level stage reads the failure's stage.
    cleanup = data["fields"][1]
    assert (cleanup["stage"], cleanup["with_kind"], cleanup["absent"]) == ("stage", 1, 1)
    assert cleanup["kinds"][0]["by_stage"] == [{"stage": "cleanup", "count": 1}]
    one = json.loads(run_cli("audit", path, "--format", "json").stdout)
    assert one == data["fields"][0]  # one field: the report as it always was
    text = run_cli("audit", path, *fields).stdout
    assert text.count("failure kinds at ") == 2
    assert text.index("'failure_kind'") < text.index("'cleanup_failure_kind'")


def test_absent_and_null_apart_and_per_file_kinds(tmp_path: Path) -> None:
    folder = tmp_path / "logs"
    folder.mkdir()
    write(folder / "a.jsonl", [{"failure_kind": "cancelled"}, {"failure_kind": None}, {}])
    write(folder / "b.jsonl", [{"result": {"failure_kind": "cancelled"}}] * 600)
    write(folder / "c.jsonl", [{"failure": {"failure_kind": "shutdown", "stage": "cleanup"}}])
    result = run_cli("audit", str(folder), "--format", "json")
    data = json.loads(result.stdout)
    assert (data["absent"], data["null"], data["without_kind"]) == (602, 1, 603)
    files = {Path(file["path"]).name: file for file in data["files"]}
    assert (files["a.jsonl"]["records"], files["a.jsonl"]["with_kind"]) == (3, 1)
    assert "kinds_at" not in files["a.jsonl"]
    assert files["b.jsonl"]["kinds_at"] == ["result.failure_kind"]
    assert files["c.jsonl"]["kinds_at"] == ["failure.failure_kind"]
    assert (
        f"{folder / 'b.jsonl'}: no record has the field failure_kind; its records hold registered kinds "
        "at result.failure_kind" in result.stderr
    )
    text = run_cli("audit", str(folder)).stdout
    assert "field absent 602, null 1" in text
    assert "600 records, 0 with a kind; none has the field, registered kinds at result.failure_kind" in text


def test_a_malformed_namespaced_value_is_said_alike_by_check_and_the_audit(tmp_path: Path) -> None:
    path = write(tmp_path / "m.jsonl", [{"failure_kind": "SWE_env:patch"}])
    (config := tmp_path / "pyproject.toml").write_text(
        '[tool.failure-kinds.namespaces]\nswe_env = ["patch"]\n'
    )
    report = json.loads(run_cli("audit", path, "--format", "json", "--config", str(config)).stdout)
    assert [(row["category"], row["suggestion"]) for row in report["kinds"]] == [
        ("malformed", "swe_env:patch")
    ]
    assert "malformed (expected <server>:<kind> in lower case), did you mean 'swe_env:patch'?" in " ".join(
        run_cli("audit", path, "--config", str(config)).stdout.split()
    )
    checked = run_cli("check", "SWE_env:patch", "--format", "json")
    assert json.loads(checked.stdout)[0]["category"] == "malformed"


@pytest.mark.parametrize("jobs", [1, 2])
def test_engines_agree_with_several_fields_and_stages_past_the_cap(tmp_path: Path, jobs: int) -> None:
    records = [
        {
            "failure": {"failure_kind": f"bad_{n % 50}", "stage": f"phase_{n % 70}"},
            "failure_kind": "cancelled",
        }
        for n in range(3000)
    ]
    path = write(tmp_path / "many.jsonl", records)
    fields = ["failure.failure_kind", "failure_kind"]
    expected = audit([path], fields, jobs=1, distinct_limit=7)
    several = audit([path], fields, jobs=jobs, chunk_bytes=4096, distinct_limit=7)
    assert (render_json(several), render_text(several)) == (render_json(expected), render_text(expected))
    assert sum(row.value is not None for row in expected.stages) == 7
    assert any(stage == "(other)" for row in expected.kinds for stage, _ in row.by_stage)


def test_a_hundred_thousand_distinct_garbage_stages_stay_bounded(tmp_path: Path) -> None:
    path = tmp_path / "garbage.jsonl"
    line = '{"failure_kind": "cancelled", "stage": "garbage_%d"}\n'
    path.write_text("".join(line % n for n in range(100_000)))
    tracemalloc.start()
    report = audit([str(path)], jobs=1, distinct_limit=1000)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert sum(row.count for row in report.stages) == 100_000
    assert len(report.stages) == 1001
    # The kind's row keeps apart its KIND_STAGES stages of the smallest rank; the rest are (other).
    kept = sorted((f"garbage_{n}" for n in range(100_000)), key=lambda stage: (rank(stage), stage))
    assert report.kinds[0].by_stage == [
        ("(other)", 100_000 - KIND_STAGES),
        *sorted((stage, 1) for stage in kept[:KIND_STAGES]),
    ]
    assert peak < 40 << 20  # a thousand kept stages, not a hundred thousand


@pytest.mark.parametrize("jobs", [1, 2])
def test_kinds_times_stages_stay_bounded_and_are_cut_alike(tmp_path: Path, jobs: int) -> None:
    # Each of 60 kinds with 40 of 97 garbage stages, shuffled: every row keeps apart at most KIND_STAGES
    # of them, the same ones (its smallest rank) however the input is cut.
    pairs = [(kind, (kind * 7 + step) % 97) for kind in range(60) for step in range(40)]
    random.Random(5).shuffle(pairs)
    records = [{"failure_kind": f"team:k{kind}", "stage": f"st{stage}"} for kind, stage in pairs]
    path = write(tmp_path / "cross.jsonl", records)
    expected = audit([path], jobs=1, distinct_limit=50)
    cut = audit([path], jobs=jobs, chunk_bytes=2048, distinct_limit=50)
    assert (render_json(cut), render_text(cut)) == (render_json(expected), render_text(expected))
    kept_stages = {row.value for row in expected.stages}
    for row in expected.kinds:
        assert sum(count for _, count in row.by_stage) == row.count
        if row.value is None:
            continue
        kind = int(row.value.removeprefix("team:k"))
        mine = sorted({f"st{stage}" for number, stage in pairs if number == kind}, key=lambda s: (rank(s), s))
        apart = {stage for stage, _ in row.by_stage if stage != "(other)"}
        assert apart == set(mine[:KIND_STAGES]) & kept_stages


def test_a_field_given_twice_and_an_empty_stage_are_usage_errors(tmp_path: Path) -> None:
    path = write(tmp_path / "a.jsonl", [{"failure_kind": "cancelled", "stage": 7}])
    twice = run_cli("audit", "--field", "failure_kind", "--field", "failure_kind", path)
    empty = run_cli("audit", "--stage", "", path)
    two_stages = run_cli("audit", "--stage", "meta.phase", "--stage", "stage", path)
    assert (two_stages.returncode, two_stages.stderr) == (
        2,
        "failure-kinds audit: error: --stage is given more than once\n",
    )
    assert (twice.returncode, twice.stderr) == (
        2,
        "failure-kinds audit: error: --field failure_kind is given twice\n",
    )
    assert (empty.returncode, empty.stderr) == (
        2,
        "failure-kinds audit: error: --stage '' has an empty segment\n",
    )
    # A program gets the same refusal, not one report for two fields.
    with pytest.raises(AuditError, match="--field failure_kind is given twice"):
        audit([path], ["failure_kind", "failure_kind"])
    text = run_cli("audit", path).stdout
    # A stage that is not a string reads (invalid) in the stage section as in the kind's row.
    assert "stages: (invalid) 1" in text
    assert "\n  (invalid)           1  invalid" in text


def test_a_wrapped_stage_list_keeps_each_stage_with_its_count(tmp_path: Path) -> None:
    for width in range(4, 30):  # names of every length, so a wrap falls at every place of an entry
        stages = [f"s{width}_" + "x" * (width + number) for number in range(8)]
        records = [{"failure_kind": "cancelled", "stage": stage} for stage in stages]
        text = run_cli("audit", write(tmp_path / "a.jsonl", records)).stdout
        row = text[text.index("  cancelled") : text.index("\n\n", text.index("  cancelled"))]
        assert all(f"{stage} 1" in row for stage in stages), row
        assert "stages: s" in row, row


def test_long_stages_keep_their_length_as_long_kinds_do(tmp_path: Path) -> None:
    stages = ["s" * 299 + "1", "s" * 299 + "12"]
    path = write(tmp_path / "a.jsonl", [{"failure_kind": "cancelled", "stage": stage} for stage in stages])
    report = json.loads(run_cli("audit", "--format", "json", path).stdout)
    assert sorted((row["value"], row["length"]) for row in report["stages"]) == [
        ("s" * 256, 300),
        ("s" * 256, 301),
    ]
    assert "300 characters" in run_cli("audit", path).stdout
