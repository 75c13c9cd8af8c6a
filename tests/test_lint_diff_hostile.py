"""`failure-kinds lint --diff` prints one header per file whatever its name, and lines as patch reads
them whatever the file's line ends, so its output is never forged and applies as it is."""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path

import pytest
from helpers import examples, run_cli, run_cli_bytes
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

# File names a hostile tree may hold: anything but "/" and NUL, with line breaks and escapes likely.
names = (
    st.lists(
        st.text(
            alphabet=st.characters(blacklist_characters="/\x00", blacklist_categories=("Cs",)), max_size=8
        )
        | st.sampled_from(["\n", "\r", "\x1b[2J", "\u202e", "+++ ", "@@ -1 +1 @@", "%", "::"]),
        min_size=1,
        max_size=5,
    )
    .map("".join)
    .filter(lambda name: not name.startswith(".") and len(os.fsencode(name + ".py")) < 250)
)


@settings(
    max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(name=names)
def test_a_crafted_file_name_makes_exactly_one_pair_of_headers(tmp_path: Path, name: str) -> None:
    folder = Path(tempfile.mkdtemp(dir=tmp_path))
    (folder / f"{name}.py").write_bytes(b'x = dict(failure_kind="peer_drop")\n')
    result = run_cli("lint", "--diff", str(folder))
    lines = result.stdout.splitlines()
    assert [line[:4] for line in lines if line.startswith(("--- ", "+++ "))] == ["--- ", "+++ "]
    assert all(line.removesuffix("\t").isprintable() for line in lines[:2])
    assert lines[2:] == [
        "@@ -1 +1 @@",
        '-x = dict(failure_kind="peer_drop")',
        '+x = dict(failure_kind="transport_peer_drop")',
    ]


def test_lone_carriage_returns_stay_inside_diff_lines(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_bytes(b'x = dict(failure_kind="peer_drop")\ry = 1\r')
    (tmp_path / "b.py").write_bytes(b'z = dict(failure_kind="oom_killed")\r')
    result = run_cli("lint", "--diff", str(tmp_path))
    assert result.returncode == 1
    lines = result.stdout.split("\n")
    assert f"--- {tmp_path / 'b.py'}" in lines  # the next file's header starts a line of its own
    # A lone carriage return does not end a line for patch, so it does not end a diff line either.
    assert '-x = dict(failure_kind="peer_drop")\ry = 1\r' in lines
    assert '+z = dict(failure_kind="provider_oom_killed")\r' in lines


WRITE = 'x = dict(failure_kind="peer_drop")'
# Files whose diff once did not apply, each with what a fix changes in it.
AWKWARD = {
    "bom.py": b"\xef\xbb\xbf" + WRITE.encode() + b"  # \xc3\xa9\n",
    "latin.py": f"# -*- coding: latin-1 -*-\nnote = 'café'; {WRITE}\n".encode("latin-1"),
    "cr.py": f"{WRITE}\ry = 1\r{WRITE}\r".encode(),
    "crlf.py": f"a = 1\r\n{WRITE}\r\nb = 2".encode(),
    "mixed.py": f"a = 1\r\n{WRITE}\ny = 2\r{WRITE}\r\nz = 3\n".encode(),
    "with space.py": f"{WRITE}\n".encode(),
    "ünï cödé.py": f"{WRITE}".encode(),
    # Names git quotes in C's way, which patch reads too.
    '"quoted.py': f"{WRITE}\n".encode(),
    " leading space.py": f"{WRITE}\n".encode(),
    "back\\slash.py": f"{WRITE}\n".encode(),
    "line\nbreak\x1b.py": f"{WRITE}\n".encode(),
}


@pytest.mark.parametrize("tool", [["patch", "-s", "-p0"], ["git", "apply", "-p0"]], ids=["patch", "git"])
def test_the_diff_applies_and_gives_what_fix_writes(tmp_path: Path, tool: list[str]) -> None:
    fixed, applied = tmp_path / "fixed", tmp_path / "applied"
    for folder in (fixed, applied):
        folder.mkdir()
        for name, source in AWKWARD.items():
            (folder / name).write_bytes(source)
    assert run_cli("lint", "--fix", ".", cwd=fixed).returncode == 0
    diff = run_cli_bytes("lint", "--diff", ".", cwd=applied)
    assert diff.returncode == 1, diff.stderr
    subprocess.run(tool, input=diff.stdout, cwd=applied, check=True, capture_output=True)
    for name, source in AWKWARD.items():
        assert (applied / name).read_bytes() == (fixed / name).read_bytes() != source, name


@pytest.mark.parametrize("path", ["../a.py", "{root}/a.py"])
def test_a_diff_of_a_file_outside_the_working_directory_is_named_in_a_note(tmp_path: Path, path: str) -> None:
    (tmp_path / "a.py").write_bytes(f"{WRITE}\n".encode())
    (tmp_path / "below").mkdir()
    result = run_cli("lint", "--diff", path.format(root=tmp_path), cwd=tmp_path / "below")
    assert result.returncode == 1
    assert "a.py: outside the working directory, so patch -p0 and git apply do not apply" in result.stderr
    assert run_cli("lint", "--diff", str(tmp_path / "a.py"), cwd=tmp_path).stdout.startswith("--- a.py\n")
