"""--ray: on a local Ray instance, the same report as the local engines for a dataset of many files with
bad lines, gzip and Parquet, through local paths and file:// URIs; one Ray session for the module."""

from __future__ import annotations

import gzip
import json
import logging
import os
import pty
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from audit_support import change_file, changed, jsonl, many_shards, read_terminal
from helpers import command, needs, run_cli

from failure_kinds.audit import audit, render_json, render_text

# One worker under pytest-xdist runs the whole module, so the Ray instance starts once, not per worker.
# Ray and pyarrow are imported only as the fixtures need them: pyarrow loaded at collection would make
# every later audit with workers in this process start them by forkserver, not fork.
pytestmark = [pytest.mark.xdist_group("ray"), needs("ray", "pyarrow")]

ROOT = Path(__file__).parent.parent


@pytest.fixture(scope="module")
def cluster() -> Iterator[str]:
    """A local Ray instance of two CPUs; its address, for the command to connect to."""
    import ray

    os.environ["RAY_DATA_DISABLE_PROGRESS_BARS"] = "1"
    ray.init(num_cpus=2, include_dashboard=False, logging_level=logging.ERROR, log_to_driver=False)
    try:
        yield str(ray.get_runtime_context().gcs_address)
    finally:
        ray.shutdown()


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Plain files (one cut into many ranges), gzip, Parquet, bad lines of every kind, CRLF, a BOM, a
    suffix in capitals, UTF-16 and a file the walk skips."""
    import pyarrow as pa  # type: ignore[import-untyped]
    import pyarrow.parquet as pq  # type: ignore[import-untyped]

    folder = tmp_path_factory.mktemp("dataset")
    example = (ROOT / "examples" / "rollout_failures.jsonl").read_bytes()
    (folder / "a_day1.jsonl").write_bytes(example * 3)
    (folder / "b_day2.jsonl.gz").write_bytes(gzip.compress(example.replace(b"\n", b"\r\n")))
    nested = folder / "c_more"
    nested.mkdir()
    (nested / "d_bad.jsonl").write_bytes(
        b'\xef\xbb\xbf{"failure_kind": "sesion_lost"}\n\nnot json\n[1]\n{"failure_kind": 7}\n\xff\n'
        b'{"failure_kind": "' + b"q" * 5000 + b'"}\n{"failure_kind": "swe_env:new_kind"}'
    )
    (nested / "e_empty.jsonl").write_bytes(b"")
    (nested / "f_truncated.jsonl.gz").write_bytes(gzip.compress(example)[:-40])
    (nested / "h_upper.NDJSON.GZ").write_bytes(gzip.compress(example))
    (folder / "i_wide.jsonl").write_bytes(example.decode("latin-1").encode("utf-16"))
    (folder / "j_notes.txt").write_bytes(example)
    table = pa.table({"failure_kind": pa.array(["cancelled", None, "judge_faild", "cancelled"] * 50)})
    pq.write_table(table, folder / "g_rows.parquet", row_group_size=30)
    return folder


def local_report(inputs: list[str], **caps: object) -> str:
    return render_json(audit(inputs, jobs=1, **caps))  # type: ignore[arg-type]


def test_ray_gives_the_local_report_through_paths_and_uris(
    cluster: str, dataset: Path, tmp_path: Path
) -> None:
    # Beside the dataset, shards of older labels (one aliased) among thousands of typos.
    inputs = [str(dataset), str(dataset / "g_rows.parquet"), *many_shards(tmp_path, seed=16, files=20)]
    aliases = {"peer_drop": "transport_unreachable"}
    expected = local_report(inputs, aliases=aliases)
    assert render_json(audit(inputs, aliases=aliases, ray="", chunk_bytes=16384)) == expected
    report = json.loads(expected)
    assert report["unparseable"] >= 4
    assert any(file["error"] for file in report["files"])  # the truncated gzip file
    assert {"legacy", "aliased"} <= {row["category"] for row in report["kinds"]}
    # Through file:// URIs, read by pyarrow where the tasks run, past the distinct and the line caps.
    uri = f"file://{dataset}"
    through_uri = render_json(
        audit([uri, f"{uri}/g_rows.parquet"], ray="", chunk_bytes=2048, distinct_limit=2, line_bytes=1000)
    )
    expected = local_report(inputs[:2], distinct_limit=2, line_bytes=1000)
    assert json.loads(expected)["overlong"] == 1  # the 5,000-character value, past the line cap
    assert through_uri == expected.replace(f'"{dataset}/', f'"{uri}/')
    assert json.loads(through_uri)["kinds"][-1]["value"] is None  # an overflow row
    # Several fields and their stages, past the caps: byte for byte the local report, text and JSON.
    staged = tmp_path / "staged.jsonl"
    records = [{"failure": {"failure_kind": f"bad_{n % 9}", "stage": f"phase_{n % 11}"}} for n in range(2000)]
    staged.write_text("".join(json.dumps({**record, "stage": "agent"}) + "\n" for record in records))
    fields = ["failure.failure_kind", "failure_kind"]
    local = audit([str(staged)], fields, jobs=1, distinct_limit=3)
    on_ray = audit([str(staged)], fields, ray="", chunk_bytes=8192, distinct_limit=3)
    assert (render_json(on_ray), render_text(on_ray)) == (render_json(local), render_text(local))


def test_the_command_connects_to_the_cluster_and_keeps_stderr_to_itself(cluster: str, dataset: Path) -> None:
    result = run_cli("audit", "--ray", cluster, str(dataset), "--format", "json")
    assert result.returncode == 2  # the truncated gzip file
    assert result.stdout == local_report([str(dataset)])
    assert result.stderr.splitlines() == [
        "failure-kinds audit: note: 1 entry found in a directory is not a *.jsonl, *.ndjson, *.jsonl.gz, "
        f"*.ndjson.gz or *.parquet regular file and was skipped: {dataset / 'j_notes.txt'}",
        f"failure-kinds audit: {dataset / 'c_more' / 'f_truncated.jsonl.gz'}: "
        "truncated gzip: the compressed stream ends early",
        f"failure-kinds audit: {dataset / 'i_wide.jsonl'}: UTF-16 (little-endian) text; "
        "the audit reads UTF-8: convert it with iconv -f UTF-16 -t UTF-8",
    ]


def test_every_error_is_reported_as_the_local_run_reports_it(
    cluster: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A directory that cannot be listed, a missing file, a .gz file that is not gzip, a truncated one."""
    import failure_kinds._streams as sources

    locked = tmp_path / "locked"
    locked.mkdir()
    (locked / "a.jsonl").write_text('{"failure_kind": "cancelled"}\n')
    (tmp_path / "plain.jsonl.gz").write_bytes(b'{"failure_kind": "cancelled"}\n')
    (tmp_path / "cut.jsonl.gz").write_bytes(gzip.compress(b'{"failure_kind": "cancelled"}\n' * 50)[:-30])
    scandir = os.scandir

    def refusing(folder: str) -> object:  # root may list any directory: refused as it is for others
        if str(folder) == str(locked):
            raise PermissionError(13, "Permission denied", str(folder))
        return scandir(folder)

    monkeypatch.setattr(sources.os, "scandir", refusing)
    inputs = [
        str(locked),
        *(str(tmp_path / name) for name in ("missing.jsonl", "plain.jsonl.gz", "cut.jsonl.gz")),
    ]
    local = audit(inputs, jobs=1)
    assert [file.error is not None for file in local.files] == [True] * 4
    assert local.files[0].error == "permission denied"
    on_ray = audit(inputs, ray="")
    assert [file.error for file in on_ray.files] == [file.error for file in local.files]
    assert render_json(on_ray) == render_json(local)  # the paths too


def test_auto_is_the_cluster_this_machine_belongs_to_and_progress_shows_on_a_terminal(
    cluster: str, dataset: Path
) -> None:
    leader, follower = pty.openpty()
    try:
        process = subprocess.Popen(
            command("audit", str(dataset / "a_day1.jsonl"), "--ray", "auto", "--format", "json"),
            stdout=subprocess.PIPE,
            stderr=follower,
        )
        os.close(follower)
        shown = read_terminal(leader, process)
    finally:
        os.close(leader)
    assert process.stdout is not None
    with process.stdout:
        output = process.stdout.read().decode()
    assert (process.returncode, output) == (0, local_report([str(dataset / "a_day1.jsonl")]))
    assert b"audited " in shown
    assert shown.endswith(b"\r\x1b[K")


@pytest.mark.parametrize(
    ("arguments", "said"),
    [
        (["-"], "stdin"),
        (["bad\x1b[31m://x"], "not a URI pyarrow can open"),
        *(
            ([address, "."], f"error: --ray {address}: cannot reach 127.0.0.1:1 (Connection refused)\n")
            for address in ("127.0.0.1:1", "ray://127.0.0.1:1")
        ),
    ],
)  # fmt: skip
def test_what_ray_cannot_read_or_reach_is_one_escaped_line_at_once(arguments: list[str], said: str) -> None:
    result = run_cli("audit", "--ray", *arguments)
    assert (result.returncode, result.stdout, result.stderr.count("\n")) == (2, "", 1)
    assert result.stderr.startswith("failure-kinds audit: ")
    assert said in result.stderr
    assert "\x1b" not in result.stderr


def test_a_ray_value_that_is_not_an_address_is_the_first_path(cluster: str, tmp_path: Path) -> None:
    """A directory, or a file named like HOST:PORT given relative (read where the tasks run)."""
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "a.jsonl").write_bytes(jsonl(["cancelled"]))
    (tmp_path / "h:1").write_bytes(jsonl(["judge_faild"]))
    logs = f"{tmp_path}/logs/"
    named = str(tmp_path / "h:1")
    for arguments, files in [
        ((logs, named), [f"{logs}a.jsonl", named]),
        (("h:1", logs), ["h:1", f"{logs}a.jsonl"]),
    ]:
        result = run_cli(
            "audit", "--ray", *arguments, "--format", "json", cwd=tmp_path, env={"RAY_ADDRESS": cluster}
        )
        assert "cannot" not in result.stderr.replace("no such file", "")
        assert [file["path"] for file in json.loads(result.stdout)["files"]] == files


def test_without_ray_the_option_is_a_usage_error_saying_what_to_install() -> None:
    code = (
        "import sys; sys.modules['ray'] = None; from failure_kinds.cli import main; "
        f"sys.exit(main(['audit', '--ray', {str(ROOT / 'examples')!r}]))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert (result.returncode, result.stdout, result.stderr.count("\n")) == (2, "", 1)
    assert result.stderr.startswith("failure-kinds audit: error: --ray needs Ray, the ray extra")
    assert result.stderr.endswith(": pip install '.[ray]' in a clone of failure-kinds\n")


def test_ray_reads_an_object_that_several_uris_name_once(cluster: str, tmp_path: Path) -> None:
    for index in range(30):
        (tmp_path / f"shard-{index:02d}.jsonl").write_bytes(jsonl(["cancelled"] * (index + 1)))
    uri = f"file://{tmp_path}"
    inputs = [
        uri,
        f"{uri}/shard-03.jsonl",
        str(tmp_path / "shard-04.jsonl"),
        str(tmp_path),
        f"{uri}/shard-03.jsonl",
    ]
    report = audit(inputs, ray="", chunk_bytes=1 << 20)
    # The URIs' 30 objects, then the local files, the one given alone first (a URI and a path are not
    # compared: a remote object has no inode).
    assert [file.path for file in report.files] == [
        *(f"{uri}/shard-{index:02d}.jsonl" for index in range(30)),
        str(tmp_path / "shard-04.jsonl"),
        *(str(tmp_path / f"shard-{index:02d}.jsonl") for index in range(30) if index != 4),
    ]
    assert report.notes == ["3 inputs name a file already read; each file is read once"]
    assert report.records == 2 * sum(range(1, 31))


def keep_changing(path: Path, change: str, stop: threading.Event) -> None:
    while not stop.wait(0.002):
        change_file(str(path), change)


def test_a_remote_file_changed_while_the_cluster_reads_it_is_named(cluster: str, tmp_path: Path) -> None:
    """A file:// URI that another job changes over and over: its size and time differ from the plan's."""
    for change in ["truncated", "grown", "rewritten"]:
        path = tmp_path / f"{change}.jsonl"
        path.write_bytes(jsonl(["sesion_lost"] * 400, n=1))
        stop = threading.Event()
        changer = threading.Thread(target=keep_changing, args=(path, change, stop))
        changer.start()
        try:
            report = audit([f"file://{path}"], ray="", chunk_bytes=2048)
        finally:
            stop.set()
            changer.join()
        assert [file.error for file in report.files] == [changed(change)]
        assert "appended_kind" not in {row.value for row in report.kinds}
