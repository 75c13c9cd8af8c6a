"""The audit's inputs (docs/audit.md, What is read): files, directory walks, stdin and FIFOs, gzip, UTF-16
and UTF-32, URIs, unreadable inputs, files named twice or changed while read; errors are one escaped line."""

from __future__ import annotations

import builtins
import errno
import gzip
import io
import json
import os
import random
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import zlib
from pathlib import Path

import pytest
from audit_support import CHANGES, changed, hook_here, jsonl, without_pyarrow
from helpers import ROOT, command, examples, non_blocking_pipe, run_cli, run_cli_bytes, write_later
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from failure_kinds.audit import AuditError, audit, render_json

KINDS = ["cancelled", "judge_faild", "env:quota_hit", "agent_timeout"]
SUFFIXES = "*.jsonl, *.ndjson, *.jsonl.gz, *.ndjson.gz or *.parquet"
AUDIT = " ".join(command("audit"))  # the command line, for a shell
PROPERTY = settings(
    max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
kind_lists = st.lists(st.sampled_from(KINDS), min_size=1, max_size=60)
ONE, JOBS = {"jobs": 1}, {"jobs": 2, "chunk_bytes": 300}


@pytest.mark.parametrize("engine", [ONE, JOBS], ids=["one", "jobs"])
def test_a_walk_reads_its_logs_whatever_the_case_and_names_what_it_skips_or_cannot_list(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, engine: dict[str, int]
) -> None:
    """Gzip by content too; a FIFO is never opened (the audit would wait for a writer); a folder that
    cannot be listed is a row with its error."""
    folder = tmp_path / "logs"
    (folder / "day2").mkdir(parents=True)
    (folder / "secret").mkdir()
    (folder / "secret" / "hidden.jsonl").write_bytes(jsonl(["cancelled"]))
    (folder / "a_failures.jsonl").write_bytes(jsonl(["cancelled"] * 40))
    (folder / "day2" / "b.jsonl.gz").write_bytes(gzip.compress(jsonl(["shutdown"] * 3)))
    for name in ("B.JSONL", "c.NDJSON", "day2/d.ndjson.gz", "e.JsonL.Gz"):
        (folder / name).write_bytes(gzip.compress(jsonl(["cancelled"])))
    for name in ("notes.txt", "c.json", "g.json.gz", "e.log"):
        (folder / name).write_bytes(jsonl(["cancelled"]))
    (folder / "broken.jsonl").symlink_to(tmp_path / "nowhere")
    (folder / "again").symlink_to(folder / "day2")
    (folder / "a_loop.jsonl").symlink_to(folder / "b_loop.txt")
    (folder / "b_loop.txt").symlink_to(folder / "a_loop.jsonl")
    os.mkfifo(folder / "f.jsonl")
    (tmp_path / "single.jsonl").write_bytes(jsonl(["kill_shaped"]))
    real_scandir = os.scandir

    def refusing_scandir(path: str) -> object:  # permissions mean nothing to root, as CI runs
        if str(path) == str(folder / "secret"):
            raise PermissionError(13, "Permission denied", path)
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", refusing_scandir)
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(folder / "s.jsonl"))
        report = audit([str(tmp_path / "single.jsonl"), str(folder)], **engine)  # type: ignore[arg-type]
    read = {"single.jsonl": 1, "B.JSONL": 1, "a_failures.jsonl": 40, "c.NDJSON": 1, "b.jsonl.gz": 3}
    read |= {"d.ndjson.gz": 1, "e.JsonL.Gz": 1, "secret": 0}
    assert [(Path(file.path).name, file.records) for file in report.files] == list(read.items())
    assert [file.error for file in report.files] == [None] * 7 + ["permission denied"]
    assert {row.value: row.count for row in report.kinds} == {
        "cancelled": 44,
        "shutdown": 3,
        "kill_shaped": 1,
    }
    skipped = ["a_loop.jsonl (a symbolic link loop)", "again (a link to a directory)"]
    skipped += ["b_loop.txt (a symbolic link loop)", "broken.jsonl (a dangling symbolic link)", "c.json"]
    named = ", ".join(f"{folder}/{name}" for name in skipped)
    note = f"10 entries found in directories are not {SUFFIXES} regular files and were skipped: {named}"
    assert report.notes == [note + " and 5 more"]


def refuse(monkeypatch: pytest.MonkeyPatch, path: Path, error: OSError) -> None:
    """``open`` fails on ``path`` with ``error``, as for a user without access (root, as CI runs, has it)."""
    real_open = builtins.open

    def refusing(file: object, *arguments: object, **options: object) -> object:
        if isinstance(file, str | os.PathLike) and os.fspath(file) == str(path):
            raise error
        return real_open(file, *arguments, **options)  # type: ignore[call-overload]

    monkeypatch.setattr(builtins, "open", refusing)
    monkeypatch.setattr(io, "open", refusing)


RECORDS = '{"failure_kind": "cancelled"}\n{"failure_kind": "judge_faild"}\n'
TRUNCATED = gzip.compress(b"".join(jsonl(["cancelled"], rollout=index) for index in range(2000)))
TRUNCATED = TRUNCATED[: len(TRUNCATED) * 3 // 4]
HINT = "text; the audit reads UTF-8: convert it with"
GZIPPED = gzip.compress(RECORDS.encode())
UNREAD = {  # name: content (None: missing) and how the error starts
    "missing.jsonl": (None, "no such file"),
    "missing.jsonl.gz": (None, "no such file"),
    "secret.jsonl": (RECORDS.encode(), "permission denied"),  # its open is refused
    "cut.jsonl.gz": (TRUNCATED, "truncated gzip"),
    "corrupt.jsonl.gz": (b"\x1f\x8b\x08\x00" + b"\x00" * 6 + b"not deflate" * 10, "corrupt gzip data"),
    "bad.jsonl.gz": (b"\x1f\x8b\x08\x00" + b"\xff" * 30, "corrupt gzip data"),
    "plain.jsonl.gz": (RECORDS.encode(), "not a gzip file (it starts with b'{{\"')"),
    # Whole records, then a checksum that does not match them: corrupt, not a file of another format.
    "checksum.jsonl.gz": (GZIPPED[:-8] + b"\x00" * 4 + GZIPPED[-4:], "corrupt gzip data (CRC check failed"),
    "bom16.jsonl": (RECORDS.encode("utf-16"), f"UTF-16 (little-endian) {HINT} iconv -f UTF-16 -t UTF-8"),
    "be16.jsonl": (RECORDS.encode("utf-16-be"), f"UTF-16 (big-endian) {HINT} iconv -f UTF-16BE -t UTF-8"),
    "le16.jsonl": (("\n" + RECORDS).encode("utf-16-le"), f"UTF-16 (little-endian) {HINT} iconv -f UTF-16LE"),
    "bom32.ndjson": (RECORDS.encode("utf-32"), f"UTF-32 (little-endian) {HINT} iconv -f UTF-32 -t UTF-8"),
    "be32.jsonl": (RECORDS.encode("utf-32-be"), f"UTF-32 (big-endian) {HINT} iconv -f UTF-32BE -t UTF-8"),
    "le32.jsonl": (RECORDS.encode("utf-32-le"), f"UTF-32 (little-endian) {HINT} iconv -f UTF-32LE"),
    # The hint decompresses first: iconv on the gzip file itself gives garbage.
    "wide.jsonl.gz": (
        gzip.compress(RECORDS.encode("utf-16")),
        f"UTF-16 (little-endian) {HINT} gzip -dc {{}} |",
    ),
}


@pytest.mark.parametrize("name", UNREAD)
def test_an_input_that_cannot_be_read_is_its_error_alone_and_a_row_beside_others(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    """Never counted as unparseable lines. Alone: the error, exit 2. Beside a file that can be read: that
    file's report, the error on its row, and of a truncated gzip file the whole lines before the break."""
    path, (content, error) = tmp_path / name, UNREAD[name]
    if content is not None:
        path.write_bytes(content)
    if name == "secret.jsonl":
        refuse(monkeypatch, path, PermissionError(13, "Permission denied", str(path)))
    error = error.format(path)
    for output in ("text", "json"):
        alone = run_cli("audit", "--strict", "--format", output, str(path))
        assert (alone.returncode, alone.stderr.count("\n"), bool(alone.stdout)) == (
            2,
            1,
            name in ("cut.jsonl.gz", "checksum.jsonl.gz"),
        )
        assert alone.stderr.startswith(f"failure-kinds audit: {path}: {error}")
    (tmp_path / "good.jsonl").write_text(RECORDS)
    report = json.loads(run_cli("audit", "--format", "json", str(path), str(tmp_path / "good.jsonl")).stdout)
    cut = {
        "cut.jsonl.gz": zlib.decompressobj(wbits=31).decompress(TRUNCATED).count(b"\n"),
        "checksum.jsonl.gz": RECORDS.count("\n"),  # every record, then the checksum's error
    }.get(name, 0)
    assert (report["records"], report["unparseable"], report["files"][0]["records"]) == (2 + cut, 0, cut)
    assert report["files"][0]["error"].startswith(error)
    assert report["files"][1] == {
        "path": str(tmp_path / "good.jsonl"),
        "records": 2,
        "error": None,
        "with_kind": 2,
    }


def test_workers_name_the_inputs_that_cannot_be_read_as_one_process_does(tmp_path: Path) -> None:
    # A refused open is for the one-process engine: workers do not inherit this process's open.
    names = [name for name in UNREAD if name != "secret.jsonl"]
    for name in names:
        if UNREAD[name][0] is not None:
            (tmp_path / name).write_bytes(UNREAD[name][0])  # type: ignore[arg-type]
    (tmp_path / "good.jsonl").write_text(RECORDS)
    inputs = [str(tmp_path / name) for name in [*names, "good.jsonl"]]
    one = audit(inputs, **ONE)  # type: ignore[arg-type]
    assert [file.error is None for file in one.files] == [False] * len(names) + [True]
    assert render_json(audit(inputs, **JOBS)) == render_json(one)  # type: ignore[arg-type]


@given(st.sampled_from(sorted(errno.errorcode)))
@settings(max_examples=examples(60), deadline=None)
def test_every_read_error_is_one_short_lowercase_phrase(code: int) -> None:
    with tempfile.TemporaryDirectory() as folder, pytest.MonkeyPatch.context() as patch:
        path = Path(folder) / "some.jsonl"
        path.write_bytes(b"{}\n")
        refuse(patch, path, OSError(code, os.strerror(code), str(path)))
        (file,) = audit([str(path)]).files
    phrase = file.error
    assert phrase
    assert phrase.isprintable()
    assert not phrase[0].isupper()
    assert str(path) not in phrase  # the caller names the path, once
    if code == errno.ENOENT:
        assert phrase == "no such file"


# Standard input, FIFOs, and what a shell hands over


@pytest.mark.parametrize(
    ("values", "parts", "compressed"),
    [([], 1, False), (["cancelled", None, "judge_faild"] * 9, 3, False), ([*KINDS, None] * 5, 4, True)],
    ids=["empty", "plain", "gzip"],
)
def test_audit_waits_for_a_non_blocking_stdin_whose_data_comes_later(
    values: list[str | None], parts: int, compressed: bool
) -> None:
    """EAGAIN before the writer has written is "nothing yet"; a pipe that ends without data is empty."""
    data = gzip.compress(jsonl(values)) if compressed else jsonl(values)
    size = max(1, -(-len(data) // parts))
    read_end, write_end = non_blocking_pipe()
    # The first chunk comes well after the command has started and tried to read.
    thread = write_later(write_end, [data[start : start + size] for start in range(0, len(data), size)], 0.3)
    try:
        result = run_cli("audit", "-", "--format", "json", stdin=read_end)
    finally:
        thread.join()
        os.close(read_end)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert (report["records"], report["unparseable"]) == (len(values), 0)
    assert report["with_kind"] == sum(value is not None for value in values)
    assert [file["path"] for file in report["files"]] == ["<stdin>"]


def shell(script: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(["bash", "-c", script], capture_output=True, cwd=cwd, timeout=120, check=False)


def test_process_substitution_dev_stdin_and_a_fifo_are_read_whole_and_never_named_changed(
    tmp_path: Path,
) -> None:
    (tmp_path / "a.jsonl.gz").write_bytes(gzip.compress(jsonl(["cancelled"] * 1000)))
    os.mkfifo(tmp_path / "pipe.jsonl")
    inputs = "<(zcat a.jsonl.gz) /dev/stdin pipe.jsonl --format json < a.jsonl.gz"
    # The FIFO's writer waits in the background for the audit to open it; stopped if it never does.
    script = f"cat a.jsonl.gz >pipe.jsonl 2>&- & {AUDIT} --jobs 1 {inputs}; code=$?; kill %1 2>&-; exit $code"
    result = shell(script, tmp_path)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert [(file["records"], file["error"]) for file in report["files"]] == [(1000, None)] * 3


# A closed stdin, and a closed, full or gone stdout from the start, are test_cli's: here the reader goes
# part of the way through a large report.
@pytest.mark.parametrize("reader", ["head -c 1 >/dev/null", "true"])
def test_the_exit_code_survives_a_reader_that_goes_mid_output(tmp_path: Path, reader: str) -> None:
    (tmp_path / "ok.jsonl").write_bytes(
        jsonl(["judge_faild"] * 10 + [f"bad_{index}" for index in range(5000)])
    )
    result = shell(f"{AUDIT} ok.jsonl --strict | {reader}; exit ${{PIPESTATUS[0]}}", tmp_path)
    assert (result.returncode, result.stderr) == (1, b"")


@pytest.mark.parametrize("encoding", ["ascii", "latin-1", "utf-8"])
def test_any_output_encoding(tmp_path: Path, encoding: str) -> None:
    """Values and names the output's encoding cannot show are written escaped, never refused."""
    path = tmp_path / "caf\u00e9_\u65e5.jsonl"
    path.write_bytes(jsonl(["caf\u00e9_\u65e5\U0001f600", 1]))
    result = run_cli_bytes("audit", str(path), env={"PYTHONIOENCODING": encoding})
    assert (result.returncode, result.stderr) == (0, b"")
    assert "first seen" in result.stdout.decode(encoding)


@pytest.mark.parametrize(
    "name",
    [b"new\nline.jsonl", b"\x1b[31mred.jsonl", b"not-utf8-\xff\xfe.jsonl", b"tab\tand\rreturn.jsonl"],
    ids=["newline", "escape", "latin", "controls"],
)
@pytest.mark.parametrize("missing", [False, True], ids=["present", "missing"])
def test_file_names_are_escaped(tmp_path: Path, name: bytes, missing: bool) -> None:
    """A crafted name can neither break the output's encoding nor forge a line of it: the report has as
    many lines as for a plain name, and no control character reaches it raw."""
    other = tmp_path / "other.jsonl"
    other.write_bytes(jsonl(["cancelled"]))

    def audit_named(file_name: bytes) -> subprocess.CompletedProcess[bytes]:
        path = os.path.join(os.fsencode(tmp_path), file_name)
        if not missing:
            with open(path, "wb") as file:
                file.write(jsonl(["judge_faild", 3]))
        # As a program's arguments reach it: bytes that are not UTF-8 as surrogate escapes.
        return run_cli_bytes("audit", os.fsdecode(path), str(other))

    crafted, plain = audit_named(name), audit_named(b"plain.jsonl")
    assert b"Traceback" not in crafted.stderr
    assert crafted.returncode == (2 if missing else 0)
    # A longer name may wrap what follows it under it: one line either way.
    unwrapped = [output.stdout.replace(b"\n      ", b" ").splitlines() for output in (crafted, plain)]
    assert len(unwrapped[0]) == len(unwrapped[1])
    assert len(crafted.stderr.splitlines()) == len(plain.stderr.splitlines()) == (1 if missing else 0)
    for raw in (b"\x1b", b"\r", b"\t", b"\xff"):
        assert raw not in crafted.stdout
        assert raw not in crafted.stderr


@pytest.mark.parametrize("field", [".", "a." * 50_000])  # a..b: test_cli's usage errors
def test_a_malformed_field_is_one_line(field: str) -> None:
    result = run_cli("audit", "-", "--field", field, stdin=b"{}\n")
    assert (result.returncode, len(result.stderr.splitlines())) == (2, 1)


# URIs: read only on a Ray cluster.

SCHEMES = st.from_regex(r"[a-z][a-z0-9+.\-]{0,10}", fullmatch=True)
URIS = st.builds("{}://{}".format, SCHEMES, st.text(max_size=30))


@given(URIS, st.booleans())
@settings(max_examples=examples(60), deadline=None)
def test_a_uri_without_ray_is_one_line_naming_ray(uri: str, after_a_file: bool) -> None:
    inputs = [str(ROOT / "examples" / "rollout_failures.jsonl"), uri] if after_a_file else [uri]
    with pytest.raises(AuditError) as raised:
        audit(inputs)
    assert str(raised.value).isprintable()
    assert "URIs are read with --ray" in str(raised.value)


def test_the_command_says_uris_need_ray_and_reads_a_local_path_that_looks_like_one(tmp_path: Path) -> None:
    result = run_cli("audit", "s3://bucket/x")
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == (
        "failure-kinds audit: error: s3://bucket/x: URIs are read with --ray (the ray extra); without it, "
        "give local files, directories or - for stdin\n"
    )
    (tmp_path / "s3:" / "bucket").mkdir(parents=True)
    (tmp_path / "s3:" / "bucket" / "x.jsonl").write_bytes(jsonl(["cancelled"]))
    result = run_cli("audit", "--strict", "--format", "json", "s3://bucket/x.jsonl", cwd=tmp_path)
    assert (result.returncode, result.stderr) == (0, "")
    assert json.loads(result.stdout)["with_kind"] == 1


# A file that several inputs name is read once.

link_plans = st.lists(
    st.tuples(st.sampled_from(["symlink", "hardlink"]), st.integers(0, 7), st.booleans()), max_size=6
)


@PROPERTY
@given(st.lists(kind_lists, min_size=1, max_size=8), link_plans, st.lists(st.integers(0, 40), max_size=6))
# A thousand shards, each linked once: the note counts them as "1,000".
@example([[kind] for kind in KINDS * 250], [("symlink", index, False) for index in range(1000)], [])
def test_every_file_is_counted_once_however_many_inputs_name_it(
    tmp_path: Path, files: list[list[str]], links: list[tuple[str, int, bool]], extra: list[int]
) -> None:
    folder = Path(tempfile.mkdtemp(dir=tmp_path))  # one per example: hypothesis shares tmp_path
    (folder / "nested").mkdir()
    paths = [folder / f"shard-{index:02d}.jsonl" for index in range(len(files))]
    for path, values in zip(paths, files, strict=True):
        path.write_bytes(jsonl(values))
    names = [str(path) for path in paths]
    for number, (how, target, nested) in enumerate(links):
        link = folder / ("nested" if nested else "") / f"link-{number}.jsonl"
        target_path = paths[target % len(paths)]
        if how == "symlink":
            link.symlink_to(os.path.relpath(target_path, link.parent))
        else:
            os.link(target_path, link)
        names.append(str(link))
    # The directory, then some of the names again: a file given beside the directory that holds it.
    inputs = [str(folder), *(names[index % len(names)] for index in extra)]
    repeated = len(links) + len(extra)
    report = audit(inputs, jobs=1)
    assert report.records == sum(map(len, files))
    assert [file.error for file in report.files] == [None] * len(paths)
    assert len({os.stat(file.path).st_ino for file in report.files}) == len(report.files) == len(paths)
    said = f"{'1 input names' if repeated == 1 else f'{repeated:,} inputs name'} a file already read"
    assert report.notes == ([f"{said}; each file is read once"] if repeated else [])


def test_a_link_beside_its_target_is_read_once_and_said_once_in_every_engine(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "run-1.jsonl").write_bytes(jsonl(["agent_timeout", "judge_faild"]))
    (logs / "latest.jsonl").symlink_to("run-1.jsonl")
    (logs / "hard.jsonl").hardlink_to(logs / "run-1.jsonl")
    for arguments in (["logs"], ["logs/run-1.jsonl", "logs/run-1.jsonl"], ["--jobs", "2", "logs", "logs"]):
        result = run_cli("audit", "--format", "json", *arguments, cwd=tmp_path)
        assert result.returncode == 0, result.stderr
        report = json.loads(result.stdout)
        # The first name in sorted order is the one read.
        first = "logs/run-1.jsonl" if arguments[0] == "logs/run-1.jsonl" else "logs/hard.jsonl"
        assert (report["records"], report["files"][0]["path"]) == (2, first)
        assert result.stderr.count("each file is read once") == 1
        assert result.stderr.startswith("failure-kinds audit: note: ")
    # stdin and a path that cannot be looked at are never taken for a file already read.
    inputs = ["-", "gone.jsonl", "gone.jsonl"]
    result = run_cli("audit", "--format", "json", *inputs, cwd=tmp_path, stdin=b"{}\n")
    assert [file["path"] for file in json.loads(result.stdout)["files"]] == ["<stdin>", *inputs[1:]]


# A file changed while it is read is named, never counted as if it were whole.


@PROPERTY
@given(st.lists(kind_lists, min_size=1, max_size=4), st.data(), st.sampled_from(CHANGES))
def test_a_file_changed_during_a_one_process_read_is_named_and_the_others_are_not(
    tmp_path: Path, files: list[list[str]], data: st.DataObject, change: str
) -> None:
    folder = Path(tempfile.mkdtemp(dir=tmp_path))
    paths = [folder / f"{index:02d}.jsonl" for index in range(len(files))]
    for path, values in zip(paths, files, strict=True):
        path.write_bytes(jsonl(values, n=1))
    target = data.draw(st.integers(0, len(files) - 1))
    with pytest.MonkeyPatch.context() as patch:
        hook_here(patch, folder, paths[target], [1], change)  # as it is opened, before a byte is read
        report = audit([str(folder)], jobs=1)
    errors = [changed(change) if index == target else None for index in range(len(files))]
    assert [file.error for file in report.files] == errors
    for index, file in enumerate(report.files):
        if index != target:
            assert file.records == len(files[index])


@pytest.mark.parametrize("change", CHANGES)
def test_the_command_names_a_file_changed_as_it_is_read_and_exits_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, change: str
) -> None:
    path = tmp_path / "log.jsonl"
    path.write_bytes(jsonl(["cancelled"] * 2000))
    hook_here(monkeypatch, tmp_path, path, [1], change)
    result = run_cli("audit", str(path))
    assert (result.returncode, result.stderr) == (2, f"failure-kinds audit: {path}: {changed(change)}\n")
    assert "swapped_in_kind" not in result.stdout


# Parquet without pyarrow: an input that cannot be read, beside the JSON Lines that are audited.

NEEDS_PYARROW = (
    "needs pyarrow: install the parquet extra (pip install '.[parquet]' in a clone of failure-kinds)"
)


def but_files(report: dict[str, object]) -> dict[str, object]:
    return {key: value for key, value in report.items() if key != "files"}


def test_a_directory_with_parquet_audits_its_json_lines_without_pyarrow(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "pyarrow", None)  # as after a plain pip install .
    text = run_cli("audit", "examples")
    assert text.returncode == 2
    assert text.stderr.endswith(f"failure-kinds audit: examples/rollout_failures.parquet: {NEEDS_PYARROW}\n")
    row = rf"examples/rollout_failures\.parquet 0 records, 0 with a kind,? error: {re.escape(NEEDS_PYARROW)}"
    assert re.search(row, " ".join(text.stdout.split()))  # the error wraps under its row
    example = str(ROOT / "examples" / "rollout_failures.parquet")
    alone = run_cli("audit", "--strict", example)
    assert (alone.returncode, alone.stdout) == (2, "")
    assert alone.stderr == f"failure-kinds audit: {example}: {NEEDS_PYARROW}\n"


def test_many_shards_and_parquet_files_without_pyarrow_in_every_engine(tmp_path: Path) -> None:
    generator = random.Random(20)
    folder = tmp_path / "logs"
    folder.mkdir()
    kinds = ["cancelled", "judge_faild", "swe_env:patch_apply_failed", "peer_drop", None]
    for index in range(60):
        shard = b"".join(jsonl([generator.choice(kinds)], step=step) for step in range(10))
        (folder / f"shard-{index:04}.jsonl").write_bytes(shard)
    tables = [folder / f"shard-{index:04}.parquet" for index in range(0, 60, 5)]
    for table in tables:
        table.write_bytes(generator.randbytes(generator.randrange(0, 3_000)))
    shutil.copy(ROOT / "examples" / "rollout_failures.parquet", folder / "real.parquet")
    tables.append(folder / "real.parquet")
    # Worker processes too cannot import pyarrow: a process of its own, where none ever could.
    code = (
        "import json, sys\n"
        "from failure_kinds.audit import audit, render_json\n"
        "one = render_json(audit([sys.argv[1]], jobs=1))\n"
        "parts = render_json(audit([sys.argv[1]], jobs=2, chunk_bytes=1))\n"
        "print(json.dumps([one, parts]))\n"
    )
    environment = {**os.environ, **without_pyarrow(tmp_path)}
    run = [sys.executable, "-c", code, str(folder)]
    result = subprocess.run(run, capture_output=True, text=True, env=environment, timeout=120, check=False)
    assert result.returncode == 0, result.stderr
    one, parts = json.loads(result.stdout)
    assert one == parts
    report = json.loads(one)
    failed = {file["path"]: file["error"] for file in report["files"] if file["error"] is not None}
    assert failed == {str(table): NEEDS_PYARROW for table in tables}
    lines = sorted(str(path) for path in folder.glob("*.jsonl"))
    assert but_files(report) == but_files(json.loads(render_json(audit(lines))))
    assert report["records"] == 60 * 10
