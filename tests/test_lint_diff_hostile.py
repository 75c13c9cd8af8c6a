"""`failure-kinds lint --diff` prints one header per file whatever its name, and one line per diff line
whatever the file's line ends, so its output is never forged and still reads as a diff."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from helpers import examples, run_cli
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
    assert all(line.isprintable() for line in lines[:2])
    assert lines[2:] == [
        "@@ -1 +1 @@",
        '-x = dict(failure_kind="peer_drop")',
        '+x = dict(failure_kind="transport_peer_drop")',
    ]


def test_lone_carriage_returns_end_every_diff_line(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_bytes(b'x = dict(failure_kind="peer_drop")\ry = 1\r')
    (tmp_path / "b.py").write_bytes(b'z = dict(failure_kind="oom_killed")\r')
    result = run_cli("lint", "--diff", str(tmp_path))
    assert result.returncode == 1
    lines = result.stdout.split("\n")
    assert f"--- {tmp_path / 'b.py'}" in lines  # the next file's header starts a line of its own
    assert '-x = dict(failure_kind="peer_drop")\r' in lines
    assert '+z = dict(failure_kind="provider_oom_killed")\r' in lines
