"""failure-kinds lint's inputs: entries of a walked directory that are not regular files are skipped and
counted, a file that several paths name is read once, and both are said once on stderr."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest
from helpers import examples, run_cli
from hypothesis import given, settings
from hypothesis import strategies as st

import failure_kinds.lint as lint

OLDER = 'row = {"failure_kind": "peer_drop"}\n'
FIXED = 'row = {"failure_kind": "transport_peer_drop"}\n'
SKIPPED_ONE = (
    "failure-kinds lint: note: 1 entry found in a directory is not a regular file "
    "(a FIFO, a device or a dangling symbolic link) and was skipped"
)
READ_ONCE_ONE = "failure-kinds lint: note: 1 input names a file already read; each file is read once"


def test_a_dangling_link_or_a_fifo_in_a_directory_is_skipped_and_the_findings_still_exit_1(
    tmp_path: Path,
) -> None:
    (tmp_path / "a.py").write_text(OLDER)
    (tmp_path / "b_dangling.py").symlink_to("nowhere.py")
    os.mkfifo(tmp_path / "c_pipe.py")
    (tmp_path / "d_device.py").symlink_to("/dev/null")
    result = run_cli("lint", ".", cwd=tmp_path)
    assert result.returncode == 1
    assert result.stdout == "./a.py:1:24: FK004 older failure kind 'peer_drop': use 'transport_peer_drop'\n"
    assert result.stderr == (
        "failure-kinds lint: note: 3 entries found in directories are not regular files "
        "(a FIFO, a device or a dangling symbolic link) and were skipped\n"
    )
    # Only one of them: the singular note; with nothing to report, exit 0.
    (tmp_path / "a.py").write_text(FIXED)
    for name in ("c_pipe.py", "d_device.py"):
        (tmp_path / name).unlink()
    alone = run_cli("lint", ".", cwd=tmp_path)
    assert (alone.returncode, alone.stdout, alone.stderr) == (0, "", SKIPPED_ONE + "\n")


def test_a_named_dangling_link_stays_an_error(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text(OLDER)
    (tmp_path / "dangling.py").symlink_to("nowhere.py")
    result = run_cli("lint", "a.py", "dangling.py", cwd=tmp_path)
    assert result.returncode == 2
    assert result.stdout.startswith("a.py:1:24: FK004 ")
    assert result.stderr == "failure-kinds lint: dangling.py: no such file\n"


def test_a_link_beside_its_target_is_read_once_in_lint_diff_and_fix(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text(OLDER)
    (tmp_path / "link.py").symlink_to("a.py")
    plain = run_cli("lint", ".", cwd=tmp_path)
    assert plain.returncode == 1
    assert plain.stdout == "./a.py:1:24: FK004 older failure kind 'peer_drop': use 'transport_peer_drop'\n"
    assert plain.stderr == READ_ONCE_ONE + "\n"
    diff = run_cli("lint", "--diff", ".", cwd=tmp_path)
    assert diff.returncode == 1
    assert diff.stdout.count("--- ") == 1
    assert diff.stdout.startswith("--- a.py\n+++ a.py\n")  # no "./", which git apply refuses
    assert diff.stderr == READ_ONCE_ONE + "\n"
    fixed = run_cli("lint", "--fix", ".", cwd=tmp_path)
    assert (fixed.returncode, fixed.stderr) == (0, READ_ONCE_ONE + "\n")
    assert fixed.stdout == "./a.py:1:24 peer_drop -> transport_peer_drop\n"
    assert (tmp_path / "a.py").read_text() == FIXED
    assert (tmp_path / "link.py").read_text() == FIXED


def test_one_path_twice_and_a_hard_link_are_read_once_the_first_name_winning(tmp_path: Path) -> None:
    (tmp_path / "b.py").write_text(OLDER)
    os.link(tmp_path / "b.py", tmp_path / "a_hard.py")
    result = run_cli("lint", "b.py", "b.py", ".", cwd=tmp_path)
    assert result.returncode == 1
    # b.py was named first; the walk's a_hard.py and ./b.py are the same file.
    assert result.stdout == "b.py:1:24: FK004 older failure kind 'peer_drop': use 'transport_peer_drop'\n"
    assert result.stderr == (
        "failure-kinds lint: note: 3 inputs name a file already read; each file is read once\n"
    )


# One entry of a generated directory: a file with a finding or without, a link to an earlier entry
# (symbolic or hard), a dangling link, a FIFO.
ENTRIES = st.lists(
    st.one_of(
        st.sampled_from(["finding", "clean", "dangling", "fifo"]).map(lambda kind: (kind, 0)),
        st.tuples(st.sampled_from(["symlink", "hardlink"]), st.integers(0, 50)),
    ),
    max_size=40,
)


@settings(max_examples=examples(60), deadline=None)
@given(ENTRIES)
def test_every_regular_file_of_a_generated_tree_is_read_once_and_the_rest_is_counted(
    entries: list[tuple[str, int]],
) -> None:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        (root / "sub").mkdir()
        files: list[Path] = []  # the regular files made so far, which a link may name
        findings_expected = skipped_expected = repeated_expected = 0
        for index, (kind, target) in enumerate(entries):
            # Half in a subdirectory, so a link may cross directories; the index keeps the walk's order.
            path = root / ("sub" if index % 2 else "") / f"{index:03}.py"
            if kind in ("finding", "clean"):
                path.write_text(OLDER if kind == "finding" else FIXED)
                files.append(path)
                findings_expected += kind == "finding"
            elif kind == "dangling":
                path.symlink_to(root / f"missing-{index}.py")
                skipped_expected += 1
            elif kind == "fifo":
                os.mkfifo(path)
                skipped_expected += 1
            elif files:
                original = files[target % len(files)]
                if kind == "symlink":
                    path.symlink_to(original)
                else:
                    os.link(original, path)
                repeated_expected += 1
        # The walk meets root's files before sub's, each directory's in sorted order; of the names of one
        # file, the first met is the one kept, whether it is the file's own name or a link to it.
        walk_order = sorted(path for path in root.glob("*.py")) + sorted((root / "sub").glob("*.py"))
        first_names: dict[tuple[int, int], str] = {}
        for path in walk_order:
            if path.exists() and path.is_file():
                status = path.stat()
                first_names.setdefault((status.st_dev, status.st_ino), str(path))
        expected_paths = sorted(name for name in first_names.values() if Path(name).read_text() == OLDER)
        notes: list[str] = []
        findings, unreadable = lint.lint_paths([folder], notes=notes)
    assert unreadable == []
    assert len(findings) == findings_expected
    assert sorted(finding.path for finding in findings) == expected_paths
    # With no regular file, no link is made: the walk finds only what it skips, or nothing.
    expected_notes = (
        [] if files or skipped_expected else [f"{folder}: no *.py or *.pyi files in this directory"]
    )
    if skipped_expected:
        expected_notes.append(
            SKIPPED_ONE.removeprefix("failure-kinds lint: note: ")
            if skipped_expected == 1
            else f"{skipped_expected:,} entries found in directories are not regular files "
            "(a FIFO, a device or a dangling symbolic link) and were skipped"
        )
    if repeated_expected:
        inputs = "1 input names" if repeated_expected == 1 else f"{repeated_expected:,} inputs name"
        expected_notes.append(f"{inputs} a file already read; each file is read once")
    assert notes == expected_notes + ([] if files else [lint.NO_INPUT])


@pytest.mark.parametrize("option", ["--format=text", "--format=github", "--diff", "--fix"])
def test_a_directory_without_python_files_is_said_and_exits_1(tmp_path: Path, option: str) -> None:
    (tmp_path / "empty").mkdir()
    result = run_cli("lint", option, "empty", cwd=tmp_path)
    assert (result.returncode, result.stdout) == (1, "")
    assert result.stderr == (
        "failure-kinds lint: note: empty: no *.py or *.pyi files in this directory\n"
        "failure-kinds lint: note: no input file was found\n"
    )


def test_the_directories_a_walk_does_not_enter_are_counted_and_the_first_named(tmp_path: Path) -> None:
    for name in (".git", "__pycache__", "node_modules", "site-packages", "src"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "a.py").write_text(OLDER)
    (tmp_path / "src" / "link").symlink_to(tmp_path / "node_modules")
    result = run_cli("lint", ".", cwd=tmp_path)
    assert (
        result.stdout == "./src/a.py:1:24: FK004 older failure kind 'peer_drop': use 'transport_peer_drop'\n"
    )
    assert result.stderr == (
        "failure-kinds lint: note: 5 directories not entered (hidden, __pycache__, node_modules, "
        "site-packages or a link): ./.git, ./__pycache__, ./node_modules and 2 more\n"
    )
