"""The audit as a gate: pointed at the wrong input (no JSON object at all, no input file, a URI without
--ray, Parquet without pyarrow) it says so and never passes having checked nothing."""

from __future__ import annotations

import errno
import gzip
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from helpers import ROOT, examples, needs, run_cli
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from failure_kinds.audit import AuditError, audit, describe_read_error, render_json
from failure_kinds.audit.parquet import NEEDS_PYARROW

NOT_SEEN = "no record could be read as a JSON object, so --field failure_kind was never seen"
NO_RECORD = "no input holds a record, so --field failure_kind was never seen"
NO_FILE = "no input file was found, so --field failure_kind was never seen"
WHITE_SPACE = b" \t\n\r\x0b\x0c"


def note(text: str) -> str:
    return f"failure-kinds audit: note: {text}\n"


# Lines that are not a JSON object: without a "{" nothing can be one, and a few shapes that come close.
NOT_OBJECTS = st.one_of(
    st.binary(max_size=40).filter(lambda line: b"{" not in line),
    st.text(max_size=40).filter(lambda line: "{" not in line).map(str.encode),
    st.recursive(
        st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=5)),
        lambda children: st.lists(children, max_size=3),
        max_leaves=6,
    ).map(lambda value: json.dumps(value).encode()),
    st.sampled_from(
        [
            b'{"failure_kind": "cancelled"',
            b'{"failure_kind": "cancelled"}}',
            b'[{"failure_kind": "cancelled"}]',
            b'"{\\"failure_kind\\": \\"cancelled\\"}"',
            b'\xff{"failure_kind": "cancelled"}',
            b"{" * 5_000,
            b"# failure-kinds",
        ]
    ),
)


def records_in(data: bytes) -> int:
    """The lines the audit counts as records: those holding more than white space (after the byte order
    mark a file may start with)."""
    lines = data.removeprefix(b"\xef\xbb\xbf").split(b"\n")
    return sum(1 for line in lines if line.strip(WHITE_SPACE))


@given(st.lists(NOT_OBJECTS, max_size=30))
@settings(max_examples=examples(40), deadline=None)
def test_no_json_object_marks_the_field_missing_in_every_engine(lines: list[bytes]) -> None:
    data = b"\n".join(lines)
    assume(not data.startswith(b"\x1f\x8b"))  # read as gzip, and named as a broken one: not this test's
    with tempfile.TemporaryDirectory() as folder:
        log = Path(folder) / "README.jsonl"
        log.write_bytes(data)
        one = audit([str(log)])
        parts = audit([str(log)], jobs=2, chunk_bytes=16)
    assume(one.files[0].error is None)  # UTF-16 or UTF-32 text is named unreadable: not this test's
    records = records_in(data)
    assert (one.records, one.unparseable, one.with_kind, one.without_kind) == (records, records, 0, 0)
    assert one.field_missing
    assert one.field_suggestion is None
    assert one.notes == [NOT_SEEN if records else NO_RECORD]
    assert (parts.field_missing, parts.notes) == (one.field_missing, one.notes)
    assert render_json(parts) == render_json(one)


OBJECTS = st.one_of(
    st.sampled_from(["cancelled", "judge_faild", None]).map(lambda kind: {"failure_kind": kind}),
    st.dictionaries(st.sampled_from(["step", "reward", "result"]), st.integers(), max_size=2),
)


@given(st.lists(NOT_OBJECTS, max_size=20), st.lists(OBJECTS, min_size=1, max_size=5), st.randoms())
@settings(max_examples=examples(40), deadline=None)
def test_one_json_object_is_enough_for_the_field_to_be_looked_for(
    garbage: list[bytes], objects: list[dict[str, object]], shuffle: random.Random
) -> None:
    lines = [*garbage, *(json.dumps(record).encode() for record in objects)]
    shuffle.shuffle(lines)
    with tempfile.TemporaryDirectory() as folder:
        log = Path(folder) / "log.jsonl"
        log.write_bytes(b"\n".join(lines) + b"\n")
        report = audit([str(log)])
    assert not any("was never seen" in text for text in report.notes)
    has_field = any("failure_kind" in record for record in objects)
    assert report.field_missing == (not has_field)


def shards_of_prose(folder: Path, count: int) -> Path:
    """A directory of shards that hold Markdown, as an export gone wrong would."""
    folder.mkdir()
    readme = (ROOT / "README.md").read_bytes()
    for index in range(count):
        (folder / f"shard-{index:05}.jsonl").write_bytes(readme[index * 37 : index * 37 + 2_000])
    return folder


def inputs_for(case: str, tmp_path: Path) -> tuple[list[str], list[str]]:
    """The arguments of one wrong input, and the notes the audit must print for it."""
    if case == "readme":
        return [str(ROOT / "README.md")], [NOT_SEEN]
    if case == "random bytes":
        path = tmp_path / "random.bin"
        path.write_bytes(random.Random(16).randbytes(50_000))
        return [str(path)], [NOT_SEEN]
    if case == "shards of prose":
        return [str(shards_of_prose(tmp_path / "shards", 300))], [NOT_SEEN]
    if case == "empty file":
        (tmp_path / "empty.jsonl").write_bytes(b"\n \n\t\n")
        return [str(tmp_path / "empty.jsonl")], [NO_RECORD]
    if case == "empty stdin":
        return ["-"], [NO_RECORD]
    folder = tmp_path / "logs"
    (folder / "nested" / "deeper").mkdir(parents=True)
    suffixes = "*.jsonl, *.ndjson, *.jsonl.gz, *.ndjson.gz or *.parquet"
    notes = [f"{folder}: no {suffixes} files in this directory"]
    if case == "other files only":
        (folder / "notes.txt").write_text('{"failure_kind": "cancelled"}\n')
        (folder / "nested" / "rows.json").write_text('[{"failure_kind": "cancelled"}]\n')
        skipped = f"{folder / 'nested' / 'rows.json'}, {folder / 'notes.txt'}"
        notes.append(
            f"2 entries found in directories are not {suffixes} regular files and were skipped: {skipped}"
        )
    return [str(folder)], [*notes, NO_FILE]


CASES = [
    "readme",
    "random bytes",
    "shards of prose",
    "empty file",
    "empty stdin",
    "empty directory",
    "other files only",
]


@pytest.mark.parametrize("case", CASES)
def test_a_gate_pointed_at_the_wrong_input_fails(case: str, tmp_path: Path) -> None:
    arguments, notes = inputs_for(case, tmp_path)
    expected = "".join(map(note, notes))
    strict = run_cli("audit", "--strict", *arguments)
    assert (strict.returncode, strict.stderr) == (1, expected)
    assert "records" in strict.stdout
    # Without --strict the exit is what it always was, and the note is the same.
    plain = run_cli("audit", "--format", "json", *arguments)
    assert (plain.returncode, plain.stderr) == (0, expected)
    report = json.loads(plain.stdout)
    assert (report["field_missing"], report["field_suggestion"], report["with_kind"]) == (True, None, 0)


def test_the_note_names_the_field_that_was_asked_for() -> None:
    result = run_cli("audit", "--strict", "--field", "result.failure_knd", str(ROOT / "README.md"))
    assert result.returncode == 1
    assert result.stderr == note(
        "no record could be read as a JSON object, so --field result.failure_knd was never seen"
    )


UTF_8_HINT = "the audit reads UTF-8: convert it with iconv -f"
RECORDS = '{"failure_kind": "cancelled"}\n{"failure_kind": "judge_faild"}\n'
UNREAD = [
    ("missing.jsonl", None, "no such file"),
    ("bad.jsonl.gz", b"\x1f\x8b\x08\x00" + b"\xff" * 30, "corrupt gzip data"),
    ("bom16.jsonl", RECORDS.encode("utf-16"), f"UTF-16 (little-endian) text; {UTF_8_HINT} UTF-16 -t UTF-8"),
    ("be16.jsonl", RECORDS.encode("utf-16-be"), f"UTF-16 (big-endian) text; {UTF_8_HINT} UTF-16BE -t UTF-8"),
    (
        "le16.jsonl",
        ("\n" + RECORDS).encode("utf-16-le"),
        f"UTF-16 (little-endian) text; {UTF_8_HINT} UTF-16LE",
    ),
    ("bom32.ndjson", RECORDS.encode("utf-32"), f"UTF-32 (little-endian) text; {UTF_8_HINT} UTF-32 -t UTF-8"),
    ("be32.jsonl", RECORDS.encode("utf-32-be"), f"UTF-32 (big-endian) text; {UTF_8_HINT} UTF-32BE -t UTF-8"),
    ("le32.jsonl", RECORDS.encode("utf-32-le"), f"UTF-32 (little-endian) text; {UTF_8_HINT} UTF-32LE"),
    (  # the hint decompresses first: iconv on the gzip file itself gives garbage
        "wide.jsonl.gz",
        gzip.compress(RECORDS.encode("utf-16")),
        "UTF-16 (little-endian) text; the audit reads UTF-8: convert it with gzip -dc {path} | iconv -f",
    ),
]


@pytest.mark.parametrize(("name", "content", "error"), UNREAD, ids=[name for name, _, _ in UNREAD])
@pytest.mark.parametrize("output", ["text", "json"])
def test_an_input_that_cannot_be_read_is_its_error_and_no_report(
    tmp_path: Path, name: str, content: bytes | None, error: str, output: str
) -> None:
    """Missing, corrupt, or text in UTF-16 or UTF-32 (named, never counted as unparseable lines): the error
    alone, exit 2; beside a file that can be read, the report of that file with the error on its row."""
    path = tmp_path / name
    if content is not None:
        path.write_bytes(content)
    error = error.format(path=path)
    alone = run_cli("audit", "--strict", "--format", output, str(path))
    assert (alone.returncode, alone.stdout) == (2, "")
    assert alone.stderr.startswith(f"failure-kinds audit: {path}: {error}")
    assert alone.stderr.count("\n") == 1
    (tmp_path / "good.jsonl").write_text(RECORDS)
    report = json.loads(run_cli("audit", "--format", "json", str(path), str(tmp_path / "good.jsonl")).stdout)
    assert (report["records"], report["unparseable"], report["files"][0]["records"]) == (2, 0, 0)
    assert report["files"][0]["error"].startswith(error)


def test_an_unreadable_input_keeps_exit_2_and_says_why_once(tmp_path: Path) -> None:
    missing = tmp_path / "missing.jsonl"
    beside = run_cli("audit", "--strict", str(ROOT / "README.md"), str(missing))
    assert beside.returncode == 2
    assert beside.stderr == note(NOT_SEEN) + f"failure-kinds audit: {missing}: no such file\n"


def test_a_kind_anywhere_among_the_prose_passes(tmp_path: Path) -> None:
    folder = shards_of_prose(tmp_path / "shards", 200)
    (folder / "shard-00150.jsonl").write_text('# a heading\n{"failure_kind": "cancelled"}\n')
    result = run_cli("audit", "--strict", "--format", "json", str(folder))
    assert (result.returncode, result.stderr) == (0, "")
    report = json.loads(result.stdout)
    assert (report["with_kind"], report["field_missing"]) == (1, False)


@pytest.mark.parametrize("records", [["{}", "{}"], ['{"": {"": null}}', "[]"]])
def test_records_without_any_field_to_name_fail_the_gate(records: list[str], tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    log.write_text("".join(record + "\n" for record in records))
    result = run_cli("audit", "--strict", "--format", "json", str(log))
    assert result.returncode == 1
    assert result.stderr == note(
        "no record has the field failure_kind; the records looked at have no field that --field can name"
    )
    assert json.loads(result.stdout)["field_missing"] is True


# URIs: read only on a Ray cluster.

URIS = st.builds(
    "{}://{}".format,
    st.from_regex(r"[a-z][a-z0-9+.\-]{0,10}", fullmatch=True),
    st.text(max_size=30),
)


@given(URIS, st.booleans())
@settings(max_examples=examples(60), deadline=None)
def test_a_uri_without_ray_is_one_line_naming_ray(uri: str, after_a_file: bool) -> None:
    inputs = [str(ROOT / "examples" / "rollout_failures.jsonl"), uri] if after_a_file else [uri]
    with pytest.raises(AuditError) as raised:
        audit(inputs)
    message = str(raised.value)
    assert message.isprintable()
    assert "URIs are read with --ray" in message


def test_the_command_says_uris_need_ray() -> None:
    result = run_cli("audit", "s3://bucket/x")
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == (
        "failure-kinds audit: error: s3://bucket/x: URIs are read with --ray (the ray extra); without it, "
        "give local files, directories or - for stdin\n"
    )


def test_a_local_path_that_looks_like_a_uri_is_read(tmp_path: Path) -> None:
    (tmp_path / "s3:" / "bucket").mkdir(parents=True)
    (tmp_path / "s3:" / "bucket" / "x.jsonl").write_text('{"failure_kind": "cancelled"}\n')
    result = run_cli("audit", "--strict", "--format", "json", "s3://bucket/x.jsonl", cwd=tmp_path)
    assert (result.returncode, result.stderr) == (0, "")
    assert json.loads(result.stdout)["with_kind"] == 1


# Parquet without pyarrow: an input that cannot be read, beside the JSON Lines that are audited.


def without_pyarrow(tmp_path: Path) -> dict[str, str]:
    """An environment whose processes (workers included) cannot import pyarrow, as after a plain
    ``pip install .``."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text("import sys\nsys.modules['pyarrow'] = None\n")
    return {"PYTHONPATH": str(site)}


def but_files(report: dict[str, object]) -> dict[str, object]:
    return {key: value for key, value in report.items() if key != "files"}


def test_a_directory_with_parquet_audits_its_json_lines_without_pyarrow(tmp_path: Path) -> None:
    env = without_pyarrow(tmp_path)
    result = run_cli("audit", "examples", "--format", "json", env=env)
    assert result.returncode == 2
    assert result.stderr.endswith(
        f"failure-kinds audit: examples/rollout_failures.parquet: {NEEDS_PYARROW}\n"
    )
    report = json.loads(result.stdout)
    failed = [file for file in report["files"] if file["error"] is not None]
    assert failed == [{"path": "examples/rollout_failures.parquet", "records": 0, "error": NEEDS_PYARROW}]
    lines = [file["path"] for file in report["files"] if file["error"] is None]
    assert lines
    assert all(path.endswith(".jsonl") for path in lines)
    alone = run_cli("audit", *lines, "--format", "json")
    assert alone.returncode == 0, alone.stderr
    assert but_files(report) == but_files(json.loads(alone.stdout))
    assert report["with_kind"] > 300
    text = run_cli("audit", "examples", env=env)
    assert text.returncode == 2
    row = rf"examples/rollout_failures\.parquet 0 records,? error: {re.escape(NEEDS_PYARROW)}"
    assert re.search(row, " ".join(text.stdout.split()))  # the error wraps under its row


def test_a_parquet_file_named_alone_without_pyarrow_is_unreadable(tmp_path: Path) -> None:
    example = str(ROOT / "examples" / "rollout_failures.parquet")
    result = run_cli("audit", "--strict", example, env=without_pyarrow(tmp_path))
    assert result.returncode == 2
    assert (result.stderr, result.stdout) == (f"failure-kinds audit: {example}: {NEEDS_PYARROW}\n", "")


def test_many_shards_and_parquet_files_without_pyarrow_in_every_engine(tmp_path: Path) -> None:
    generator = random.Random(20)
    folder = tmp_path / "logs"
    folder.mkdir()
    kinds = ["cancelled", "judge_faild", "swe_env:patch_apply_failed", "peer_drop", None]
    for index in range(150):
        rows = (json.dumps({"failure_kind": generator.choice(kinds), "step": step}) for step in range(40))
        (folder / f"shard-{index:04}.jsonl").write_text("\n".join(rows) + "\n")
    tables = [folder / f"shard-{index:04}.parquet" for index in range(0, 150, 5)]
    for table in tables:
        table.write_bytes(generator.randbytes(generator.randrange(0, 3_000)))
    shutil.copy(ROOT / "examples" / "rollout_failures.parquet", folder / "real.parquet")
    tables.append(folder / "real.parquet")
    code = (
        "import json, sys\n"
        "from failure_kinds.audit import audit, render_json\n"
        "one = render_json(audit([sys.argv[1]], jobs=1))\n"
        "parts = render_json(audit([sys.argv[1]], jobs=2, chunk_bytes=1))\n"
        "print(json.dumps([one, parts]))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code, str(folder)],
        capture_output=True,
        text=True,
        env={**os.environ, **without_pyarrow(tmp_path)},
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    one, parts = json.loads(result.stdout)
    assert one == parts
    report = json.loads(one)
    failed = {file["path"]: file["error"] for file in report["files"] if file["error"] is not None}
    assert failed == {str(table): NEEDS_PYARROW for table in tables}
    lines = sorted(str(path) for path in folder.glob("*.jsonl"))
    assert but_files(report) == but_files(json.loads(render_json(audit(lines))))
    assert report["records"] == 150 * 40


# One wording for an input that cannot be read, whichever engine reads it.


@given(st.sampled_from(sorted(errno.errorcode)))
def test_every_read_error_is_one_short_lowercase_phrase(code: int) -> None:
    phrase = describe_read_error(OSError(code, os.strerror(code), "some/file.jsonl"))
    assert phrase
    assert phrase.isprintable()
    assert not phrase[0].isupper()
    assert "some/file.jsonl" not in phrase  # the caller names the path, once
    if code == errno.ENOENT:
        assert phrase == "no such file"


@pytest.mark.parametrize(
    "name", ["gone.jsonl", "gone.jsonl.gz", pytest.param("gone.parquet", marks=needs("pyarrow"))]
)
@pytest.mark.parametrize("jobs", [1, 2])
def test_a_missing_input_is_no_such_file_in_every_engine(name: str, jobs: int, tmp_path: Path) -> None:
    present = tmp_path / "present.jsonl"
    present.write_text('{"failure_kind": "cancelled"}\n' * 3)
    report = audit([str(present), str(tmp_path / name)], jobs=jobs, chunk_bytes=1)
    assert [(file.records, file.error) for file in report.files] == [(3, None), (0, "no such file")]


def test_a_missing_aliases_file_is_no_such_file_too(tmp_path: Path) -> None:
    result = run_cli("audit", "--aliases", str(tmp_path / "gone.toml"), str(ROOT / "README.md"))
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == f"failure-kinds audit: error: --aliases {tmp_path / 'gone.toml'}: no such file\n"
