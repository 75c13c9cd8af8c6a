"""`failure-kinds audit` driven as a user's pipeline drives it, with generated hostile inputs of every class,
each run under a memory limit and a timeout: a clean exit code and message, never a traceback or a hang."""

from __future__ import annotations

import gzip
import json
import os
import resource
import subprocess
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest
from helpers import command, needs, run_cli_bytes

ROOT = Path(__file__).parent.parent
# Address space for the whole interpreter: imports take about 100 MiB of it, so this leaves a few
# times the default line cap, and far less than any of the inputs below would need if held whole.
MEMORY_LIMIT = 768 * 1024 * 1024
TIMEOUT = 120
AUDIT = " ".join(command("audit"))  # the command line, for a shell


def limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def run(
    arguments: Sequence[str],
    stdin: bytes | Iterator[bytes] | None = None,
    env: dict[str, str] | None = None,
    cwd: Path = ROOT,
) -> subprocess.CompletedProcess[bytes]:
    """The command under the memory limit; ``stdin`` may be a stream of chunks, written as it is read."""
    if stdin is None or isinstance(stdin, bytes):
        return run_cli_bytes("audit", *arguments, stdin=stdin, env=env, cwd=cwd, preexec_fn=limit_memory)
    process = subprocess.Popen(
        command("audit", *arguments),
        stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        preexec_fn=limit_memory,
        cwd=cwd,
        env={**os.environ, "PYTHONIOENCODING": "utf-8", **(env or {})},
    )
    chunks = stdin
    pipe = process.stdin
    assert pipe is not None
    process.stdin = None  # written here, not by communicate(), which would close it first

    def feed() -> None:
        try:
            for chunk in chunks:
                pipe.write(chunk)
            pipe.close()
        except (BrokenPipeError, ValueError):
            pass  # the command finished without reading everything: its exit code says why

    feeder = threading.Thread(target=feed, daemon=True)
    feeder.start()
    stdout, stderr = process.communicate(timeout=TIMEOUT)
    feeder.join(timeout=TIMEOUT)
    return subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)


def assert_clean(result: subprocess.CompletedProcess[bytes], code: int) -> None:
    assert b"Traceback" not in result.stderr, result.stderr.decode(errors="replace")
    assert b"MemoryError" not in result.stderr
    assert result.returncode == code, result.stderr.decode(errors="replace")


def report_of(result: subprocess.CompletedProcess[bytes]) -> dict[str, object]:
    document: dict[str, object] = json.loads(result.stdout)
    return document


def zeros(total: int, chunk: int = 1 << 20) -> Iterator[bytes]:
    block = b"\0" * chunk
    for _ in range(total // chunk):
        yield block


# Lines with no length limit.


def test_two_gigabytes_without_a_newline_from_stdin() -> None:
    """`head -c 2G /dev/zero | failure-kinds audit -`: one unparseable line, in bounded memory."""
    result = run(["-", "--format", "json"], stdin=zeros(2 << 30))
    assert_clean(result, 0)
    report = report_of(result)
    assert (report["records"], report["unparseable"], report["first_unparseable"]) == (1, 1, "<stdin>:1")


def test_a_gzip_bomb_of_one_line(tmp_path: Path) -> None:
    path = tmp_path / "bomb.jsonl.gz"
    with gzip.open(path, "wb", compresslevel=9) as file:
        file.write(b'{"failure_kind": "cancelled"}\n')
        for block in zeros(256 << 20):  # four times the line cap, from a file of a few hundred kB
            file.write(block)
        file.write(b'\n{"failure_kind": "judge_faild"}\n')
    result = run([str(path), "--format", "json"])
    assert_clean(result, 0)
    report = report_of(result)
    assert (report["records"], report["with_kind"], report["unparseable"]) == (3, 2, 1)
    assert report["first_unparseable"] == f"{path}:2"


def test_the_line_cap_is_an_option(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    path.write_bytes(json.dumps({"failure_kind": "cancelled", "pad": "x" * 5000}).encode() + b"\n")
    assert report_of(run([str(path), "--format", "json", "--max-line-bytes", "4K"]))["unparseable"] == 1
    assert report_of(run([str(path), "--format", "json", "--max-line-bytes", "8K"]))["with_kind"] == 1
    for bad in ["0", "-1", "lots", "1T", ""]:
        result = run([str(path), "--max-line-bytes", bad])
        assert_clean(result, 2)
        assert len(result.stderr.decode().splitlines()) == 1


# Output and retention stay proportional to what is worth showing.


def distinct_long_values(count: int, size: int) -> Iterator[bytes]:
    for index in range(count):
        yield json.dumps({"failure_kind": f"{index:06d}" + "v" * size}).encode() + b"\n"


def test_many_distinct_long_values() -> None:
    """12,000 distinct values of 50,000 characters, 600 MB under a memory limit that could not hold them:
    rows past the cap overflow, kept values are cut, and the report is small."""
    result = run(["-", "--format", "json"], stdin=distinct_long_values(12_000, 50_000))
    assert_clean(result, 0)
    assert len(result.stdout) < 12_000 * 600
    kinds = report_of(result)["kinds"]
    assert isinstance(kinds, list)
    assert len(kinds) == 10_001
    assert all(entry["value"] is None or len(entry["value"]) <= 256 for entry in kinds)
    assert kinds[0]["length"] == 50_006


def test_the_text_report_of_many_long_values_stays_narrow() -> None:
    # What is retained is bounded by the test above; this one needs only values past the table's width.
    result = run(["-"], stdin=distinct_long_values(12_000, 1_000))
    assert_clean(result, 0)
    assert len(result.stdout) < 12_000 * 600
    lines = result.stdout.decode().splitlines()
    assert max(len(line) for line in lines) < 300
    assert any(line.lstrip().startswith("(other unregistered values)") for line in lines)


def test_blank_lines_only() -> None:
    blank = (b"\n" * (1 << 20) for _ in range(300))
    result = run(["-", "--format", "json"], stdin=blank)
    assert_clean(result, 0)
    assert report_of(result)["records"] == 0


def test_blank_lines_then_a_record(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    path.write_bytes(b"\n" * 3_000_000 + b" \r\n" * 1000 + b'{"failure_kind": "judge_faild"}\n')
    report = report_of(run([str(path), "--format", "json"]))
    kinds = report["kinds"]
    assert isinstance(kinds, list)
    assert kinds[0]["first_seen"] == f"{path}:3001001"


# Every input the shell can hand over.


def test_process_substitution_fifo_and_dev_stdin(tmp_path: Path) -> None:
    data = gzip.compress(b'{"failure_kind": "cancelled"}\n' * 1000)
    (tmp_path / "a.jsonl.gz").write_bytes(data)
    script = f"{AUDIT} <(zcat a.jsonl.gz) /dev/stdin --format json < a.jsonl.gz"
    result = subprocess.run(
        ["bash", "-c", script], capture_output=True, cwd=tmp_path, timeout=TIMEOUT, preexec_fn=limit_memory
    )
    assert_clean(result, 0)
    report = report_of(result)
    assert report["records"] == 2000
    files = report["files"]
    assert isinstance(files, list)
    assert [file["error"] for file in files] == [None, None]


def test_a_fifo_in_a_directory_is_not_opened(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "stuck.jsonl")
    (tmp_path / "a.jsonl").write_text('{"failure_kind": "cancelled"}\n')
    result = run([str(tmp_path), "--format", "json"])
    assert_clean(result, 0)
    assert report_of(result)["records"] == 1


def test_closed_stdin() -> None:
    result = subprocess.run(["bash", "-c", f"{AUDIT} - <&-"], capture_output=True, timeout=TIMEOUT, cwd=ROOT)
    assert_clean(result, 2)
    assert len(result.stderr.decode().splitlines()) == 1


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
    other.write_text('{"failure_kind": "cancelled"}\n')

    def audit_named(file_name: bytes) -> subprocess.CompletedProcess[bytes]:
        path = os.path.join(os.fsencode(tmp_path), file_name)
        if not missing:
            with open(path, "wb") as file:
                file.write(b'{"failure_kind": "judge_faild"}\n{"failure_kind": 3}\n')
        return subprocess.run(
            [*command("audit"), path, str(other)],
            capture_output=True,
            timeout=TIMEOUT,
            env={**os.environ, "PYTHONIOENCODING": "utf-8"},
            preexec_fn=limit_memory,
        )

    crafted, plain = audit_named(name), audit_named(b"plain.jsonl")
    assert_clean(crafted, 2 if missing else 0)
    # A longer name may wrap what follows it under it: one line either way.
    unwrapped = [output.stdout.replace(b"\n      ", b" ").splitlines() for output in (crafted, plain)]
    assert len(unwrapped[0]) == len(unwrapped[1])
    assert len(crafted.stderr.splitlines()) == len(plain.stderr.splitlines()) == (1 if missing else 0)
    for raw in (b"\x1b", b"\r", b"\t", b"\xff"):
        assert raw not in crafted.stdout
        assert raw not in crafted.stderr


# Exit codes survive a closed pipe.


def test_exit_code_survives_a_closed_pipe(tmp_path: Path) -> None:
    good = tmp_path / "ok.jsonl"
    good.write_text(
        '{"failure_kind": "judge_faild"}\n' * 10
        + "".join(json.dumps({"failure_kind": f"bad_{index}"}) + "\n" for index in range(5000))
    )
    script = f"{AUDIT} missing.jsonl ok.jsonl --strict | true; echo ${{PIPESTATUS[0]}} >&2"
    result = subprocess.run(["bash", "-c", script], capture_output=True, cwd=tmp_path, timeout=TIMEOUT)
    lines = result.stderr.decode().splitlines()
    assert lines[-1] == "2"
    assert "failure-kinds audit: missing.jsonl: no such file" in lines
    assert "Traceback" not in result.stderr.decode()
    script = f"{AUDIT} ok.jsonl --strict | head -c 1 >/dev/null; echo ${{PIPESTATUS[0]}} >&2"
    result = subprocess.run(["bash", "-c", script], capture_output=True, cwd=tmp_path, timeout=TIMEOUT)
    assert result.stderr.decode().splitlines()[-1] == "1"


# Arguments and configuration never produce a traceback.


@pytest.mark.parametrize(
    "aliases",
    ["a = " + "[" * 100_000 + "]" * 100_000, "[aliases]\n" + "x = " + "{a = " * 50_000 + "1" + "}" * 50_000],
    ids=["deep-array", "deep-table"],
)
def test_deeply_nested_alias_file(tmp_path: Path, aliases: str) -> None:
    path = tmp_path / "aliases.toml"
    path.write_text(aliases)
    (tmp_path / "a.jsonl").write_text('{"failure_kind": "cancelled"}\n')
    result = run([str(tmp_path / "a.jsonl"), "--aliases", str(path)])
    assert_clean(result, 2)
    assert len(result.stderr.decode().splitlines()) == 1


def test_alias_file_that_is_a_device() -> None:
    result = run(["-", "--aliases", "/dev/zero"], stdin=b"")
    assert_clean(result, 2)
    assert "not a regular file" in result.stderr.decode()


@needs("msgspec")
def test_a_field_of_a_thousand_segments(tmp_path: Path) -> None:
    def nested(depth: int) -> str:
        return '{"level": ' * depth + '"cancelled"' + "}" * depth

    path = tmp_path / "a.jsonl"
    path.write_text("\n".join([nested(20_000), nested(1000), nested(200), '{"level": 1}', "{}"]) + "\n")
    for segments in (1000, 200):
        field = ".".join(["level"] * segments)
        reports = []
        for decoder in ("stdlib", "msgspec"):
            result = run([str(path), "--field", field, "--decoder", decoder, "--format", "json"])
            assert_clean(result, 0)
            reports.append(result.stdout)
        # Either decoder, the same report: how deep Python's parser reads depends on its version.
        assert reports[0] == reports[1]
        report = json.loads(reports[0])
        assert report["unparseable"] in (1, 2)  # 20,000 levels are past every parser; 1,000 only past some
        found = report["kinds"]
        assert isinstance(found, list)
        if segments == 200:
            assert [(entry["value"], entry["first_seen"]) for entry in found] == [("cancelled", f"{path}:3")]


@pytest.mark.parametrize("field", ["a..b", ".", "a." * 50_000])
def test_malformed_fields(tmp_path: Path, field: str) -> None:
    result = run(["-", "--field", field], stdin=b"{}\n")
    assert_clean(result, 2)
    assert len(result.stderr.decode().splitlines()) == 1


def test_a_malformed_project_declaration(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.failure-kinds.namespaces]\nSwe = ["x"]\n')
    result = run(["-"], stdin=b"{}\n", cwd=tmp_path)
    assert_clean(result, 2)
    assert len(result.stderr.decode().splitlines()) == 1


def test_undeclared_values_count_under_strict(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[tool.failure-kinds.namespaces]\nswe_env = ["patch_apply_failed"]\n'
    )
    (tmp_path / "a.jsonl").write_text('{"failure_kind": "swe_env:patch_aply_failed"}\n')
    result = run(["a.jsonl", "--strict", "--format", "json"], cwd=tmp_path)
    assert_clean(result, 1)
    kinds = report_of(result)["kinds"]
    assert isinstance(kinds, list)
    assert (kinds[0]["category"], kinds[0]["suggestion"]) == ("undeclared", "swe_env:patch_apply_failed")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    result = run([str(tmp_path / "a.jsonl"), "--strict"], cwd=elsewhere)
    assert_clean(result, 0)
    result = run(
        [str(tmp_path / "a.jsonl"), "--strict", "--config", str(tmp_path / "pyproject.toml")], cwd=elsewhere
    )
    assert_clean(result, 1)


@pytest.mark.parametrize("redirect", [">/dev/full", ">&-"], ids=["full", "closed"])
def test_stdout_full_or_closed(tmp_path: Path, redirect: str) -> None:
    (tmp_path / "ok.jsonl").write_text('{"failure_kind": "cancelled"}\n')
    script = f"{AUDIT} ok.jsonl {redirect}"
    result = subprocess.run(["bash", "-c", script], capture_output=True, cwd=tmp_path, timeout=TIMEOUT)
    assert_clean(result, 2)
    assert len(result.stderr.decode().splitlines()) == 1


@pytest.mark.parametrize("encoding", ["ascii", "latin-1", "utf-8"])
def test_any_output_encoding(tmp_path: Path, encoding: str) -> None:
    """Values and names the output's encoding cannot show are written escaped, never refused."""
    path = tmp_path / "caf\u00e9_\u65e5.jsonl"
    path.write_text(
        json.dumps({"failure_kind": "caf\u00e9_\u65e5\U0001f600"}) + "\n" + '{"failure_kind": 1}\n'
    )
    result = run([str(path)], env={"PYTHONIOENCODING": encoding})
    assert_clean(result, 0)
    assert "first seen" in result.stdout.decode(encoding)
