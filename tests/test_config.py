"""The [tool.failure-kinds] table: where it is found, what it holds, and every way it can be wrong."""

from __future__ import annotations

import json
import os
import re
import string
import tempfile
import textwrap
from pathlib import Path

import pytest
from helpers import examples, run_cli
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from failure_kinds.cli import main
from failure_kinds.config import SIZE_LIMIT, ConfigError, ProjectConfig, load_config

DECLARATION = """\
[tool.failure-kinds]
generate = "src/swe_env/declared.py"

[tool.failure-kinds.namespaces]
swe_env = ["patch_apply_failed", "test_collection_error"]
web_env = ["page_load_failed"]
"""


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def test_found_by_walking_up_from_the_start(tmp_path: Path) -> None:
    pyproject = write(tmp_path / "pyproject.toml", DECLARATION)
    deep = tmp_path / "src" / "swe_env" / "deeper"
    deep.mkdir(parents=True)
    config = load_config(start=deep)
    assert config == ProjectConfig(
        path=pyproject,
        namespaces={
            "swe_env": ("patch_apply_failed", "test_collection_error"),
            "web_env": ("page_load_failed",),
        },
        generate_path=tmp_path / "src/swe_env/declared.py",
    )
    assert config.declared_names() == {
        "swe_env:patch_apply_failed",
        "swe_env:test_collection_error",
        "web_env:page_load_failed",
    }


def test_the_working_directory_is_the_default_start(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path / "pyproject.toml", DECLARATION)
    monkeypatch.chdir(tmp_path)
    assert set(load_config().namespaces) == {"swe_env", "web_env"}


def test_the_nearest_pyproject_wins_even_without_the_table(tmp_path: Path) -> None:
    write(tmp_path / "pyproject.toml", DECLARATION)
    inner = write(tmp_path / "inner" / "pyproject.toml", "[project]\nname = 'inner'\n")
    assert load_config(start=inner.parent) == ProjectConfig(path=inner)


def test_no_pyproject_anywhere_is_an_empty_config(tmp_path: Path) -> None:
    config = load_config(start=tmp_path)
    # tmp_path has no pyproject.toml, but a directory above it might; either way nothing is declared
    # unless that file declares something, and a missing file is never an error.
    assert config.path is None or config.path.name == "pyproject.toml"


def test_config_option_reads_a_pyproject_at_its_tool_table(tmp_path: Path) -> None:
    pyproject = write(tmp_path / "elsewhere" / "pyproject.toml", DECLARATION)
    config = load_config(pyproject, start=tmp_path)
    assert config.path == pyproject
    assert config.generate_path == pyproject.parent / "src/swe_env/declared.py"


def test_config_option_reads_any_other_file_at_its_top_level(tmp_path: Path) -> None:
    standalone = write(
        tmp_path / "kinds.toml",
        """\
        generate = "declared.py"
        [namespaces]
        swe_env = ["patch_apply_failed"]
        """,
    )
    assert load_config(str(standalone)) == ProjectConfig(
        path=standalone,
        namespaces={"swe_env": ("patch_apply_failed",)},
        generate_path=tmp_path / "declared.py",
    )


def test_a_tool_table_in_another_file_says_where_its_keys_go(tmp_path: Path) -> None:
    ci = write(tmp_path / "ci.toml", DECLARATION)
    with pytest.raises(ConfigError) as raised:
        load_config(ci)
    assert str(raised.value) == (
        f"{ci}: unknown key 'tool' (known: generate, namespaces); a file other than pyproject.toml holds"
        " the keys of [tool.failure-kinds] at its top level: write [namespaces], not"
        " [tool.failure-kinds.namespaces]"
    )


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (
            '[tool.failure-kinds.namespaces]\nSwe = ["a"]\n',
            "[tool.failure-kinds.namespaces] 'Swe': the server name",
        ),
        ('[tool.failure-kinds.namespaces]\n"swe-env" = ["a"]\n', "'swe-env': the server name does not match"),
        ('[tool.failure-kinds.namespaces]\nswe = ["Patch"]\n', "'swe': the kind 'Patch' does not match"),
        ('[tool.failure-kinds.namespaces]\nswe = ["a:b"]\n', "'swe': the kind 'a:b' does not match"),
        ('[tool.failure-kinds.namespaces]\nswe = ["a", "b", "a"]\n', "'swe': the kind 'a' is declared twice"),
        ('[tool.failure-kinds.namespaces]\nswe = "a"\n', "'swe': must be a list of kind names"),
        ('[tool.failure-kinds.namespaces]\nswe = ["a", 1]\n', "'swe': must be a list of kind names"),
        ('[tool.failure-kinds.namespaces]\nswe = [["a"]]\n', "'swe': must be a list of kind names"),
        ("[tool.failure-kinds.namespaces]\nswe = []\n", "'swe': declares no kinds"),
        ('[tool.failure-kinds]\nnamespaces = ["swe"]\n', "[tool.failure-kinds.namespaces] must be a table"),
        ('[tool]\nfailure-kinds = "yes"\n', "[tool.failure-kinds] must be a table"),
        ('tool = "yes"\n', "[tool] must be a table"),
        ('[tool.failure-kinds]\nnamespace = {swe = ["a"]}\n', "unknown key 'namespace'"),
        ("[tool.failure-kinds]\ngenerate = 3\n", "generate: must be the path of a Python file"),
        ('[tool.failure-kinds]\ngenerate = "out.txt"\n', "generate: 'out.txt' is not a .py file"),
        ('[tool.failure-kinds]\ngenerate = ""\n', "generate: must be the path of a Python file"),
        ("[tool.failure-kinds\n", "invalid TOML"),
        ('[tool.failure-kinds.namespaces]\nswe = ["a"]\nswe = ["b"]\n', "invalid TOML"),
    ],
)
def test_malformed_declarations_name_the_entry(tmp_path: Path, body: str, expected: str) -> None:
    pyproject = write(tmp_path / "pyproject.toml", body)
    with pytest.raises(ConfigError) as raised:
        load_config(start=tmp_path)
    message = str(raised.value)
    assert message.startswith(f"{pyproject}: ")
    assert expected in message
    assert "\n" not in message


@pytest.mark.parametrize(
    "body",
    [
        "a = " + "[" * 5000 + "]" * 5000,
        "a = " + "{b = " * 3000 + "1" + "}" * 3000,
        "[tool.failure-kinds.namespaces]\nswe = " + "[" * 100_000,
    ],
)
def test_deeply_nested_toml_is_a_config_error(tmp_path: Path, body: str) -> None:
    write(tmp_path / "pyproject.toml", body)
    with pytest.raises(ConfigError, match="invalid TOML"):
        load_config(start=tmp_path)


def test_unreadable_and_odd_files_are_config_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"missing\.toml: no such file$"):
        load_config(tmp_path / "missing.toml")
    with pytest.raises(ConfigError, match="not a regular file"):
        load_config(tmp_path)
    fifo = tmp_path / "fifo.toml"
    os.mkfifo(fifo)
    with pytest.raises(ConfigError, match="not a regular file"):
        load_config(fifo)  # must not hang waiting for a writer
    with pytest.raises(ConfigError, match="not a regular file"):
        load_config("/dev/zero")
    (tmp_path / "latin.toml").write_bytes(b'generate = "caf\xe9.py"\n')
    with pytest.raises(ConfigError, match="not UTF-8"):
        load_config(tmp_path / "latin.toml")
    big = tmp_path / "big.toml"
    with big.open("wb") as file:
        file.truncate(SIZE_LIMIT + 1)
    with pytest.raises(ConfigError, match="larger than"):
        load_config(big)


def test_a_file_name_cannot_forge_a_line(tmp_path: Path) -> None:
    crafted = tmp_path / "x\nsrc:1:1: FK001 forged\x1b[2J.toml"
    crafted.write_text("[namespaces]\nswe = 1\n")
    with pytest.raises(ConfigError) as raised:
        load_config(crafted)
    assert "\n" not in str(raised.value)
    assert "\x1b" not in str(raised.value)


NAME = st.from_regex(r"[a-z][a-z0-9_]{0,12}", fullmatch=True)


@settings(max_examples=examples(200), deadline=None)
@given(st.dictionaries(NAME, st.lists(NAME, min_size=1, max_size=6, unique=True), max_size=5))
def test_every_well_formed_declaration_round_trips(
    tmp_path_factory: pytest.TempPathFactory, declared: dict[str, list[str]]
) -> None:
    folder = tmp_path_factory.mktemp("config")
    lines = ["[tool.failure-kinds.namespaces]"]
    lines.extend(f"{server} = {kinds!r}".replace("'", '"') for server, kinds in declared.items())
    write(folder / "pyproject.toml", "\n".join(lines) + "\n")
    assert load_config(start=folder).namespaces == {
        server: tuple(kinds) for server, kinds in declared.items()
    }


TOML_TEXT = st.text(alphabet=string.printable + "[]{}=\"'é\x00\x7f", max_size=300)


@settings(max_examples=examples(300), deadline=None)
@given(TOML_TEXT)
def test_any_text_is_a_config_or_a_config_error(tmp_path_factory: pytest.TempPathFactory, text: str) -> None:
    folder = tmp_path_factory.mktemp("config")
    (folder / "pyproject.toml").write_text("[tool.failure-kinds]\n" + text, encoding="utf-8")
    outcome: ProjectConfig | ConfigError
    try:
        outcome = load_config(start=folder)
    except ConfigError as error:
        outcome = error
    assert isinstance(outcome, ProjectConfig) or "\n" not in str(outcome)


def test_a_removed_working_directory_finds_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    gone = tmp_path / "gone"
    gone.mkdir()
    monkeypatch.chdir(gone)
    gone.rmdir()
    assert load_config() == ProjectConfig()


def test_a_pyproject_that_is_not_a_file_is_named(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pyproject.toml")
    with pytest.raises(ConfigError, match=r"pyproject\.toml: not a regular file"):
        load_config(start=tmp_path)


# A table spelled almost as ours is named, not silently ignored.


def header(key: str) -> str:
    return key if re.fullmatch(r"[A-Za-z0-9_-]+", key) else json.dumps(key)


@settings(max_examples=examples(100), deadline=None)
@given(
    st.lists(st.booleans(), min_size=14, max_size=14),
    st.sampled_from(["_", ".", " ", "__", "-_", "-"]),
)
def test_a_misspelled_table_is_a_warning_and_is_not_read(
    tmp_path_factory: pytest.TempPathFactory, upper: list[bool], separator: str
) -> None:
    # Each letter in upper or lower case; the list is as long as the longest spelling.
    key = "".join(
        letter.upper() if raise_it else letter
        for letter, raise_it in zip(f"failure{separator}kinds", upper, strict=False)
    )
    folder = tmp_path_factory.mktemp("config")
    pyproject = write(
        folder / "pyproject.toml",
        f'[tool.{header(key)}.namespaces]\nswe_env = ["patch_apply_failed"]\n',
    )
    config = load_config(start=folder)
    if key == "failure-kinds":
        assert (config.namespaces, config.warnings) == ({"swe_env": ("patch_apply_failed",)}, ())
        return
    assert config.namespaces == {}
    shown = key if re.fullmatch(r"[A-Za-z0-9_-]+", key) else repr(key)
    assert config.warnings == (
        f"{pyproject}: [tool.{shown}] is not read; did you mean [tool.failure-kinds]?",
    )
    # Beside the right table it is named all the same, and the right one is read.
    with pyproject.open("a") as file:
        file.write('[tool.failure-kinds.namespaces]\nweb_env = ["page_load_failed"]\n')
    both = load_config(start=folder)
    assert both.namespaces == {"web_env": ("page_load_failed",)}
    assert both.warnings == config.warnings


# Tables real projects keep under [tool], none of them ours.
OTHER_TOOLS = (
    "ruff", "mypy", "pytest", "hatch", "black", "isort", "coverage", "pyright", "poetry", "setuptools",
    "setuptools_scm", "tox", "pylint", "bandit", "codespell", "cibuildwheel", "towncrier", "uv", "pdm",
    "flit", "maturin", "scikit-build", "commitizen", "pydocstyle", "docformatter", "bumpversion",
    "semantic_release", "interrogate", "check-manifest", "pyproject-fmt", "vulture", "autopep8", "yapf",
    "flake8", "sqlfluff", "mutmut", "nox", "pixi", "rye", "hatch-vcs", "pytest-benchmark", "pytype",
    "basedpyright", "deptry", "refurb", "typos", "mdformat", "cruft", "scriv", "bump-my-version",
    "cython-lint", "dagster", "kedro", "kinds", "failures", "failure-modes", "failure_reports", "failsafe",
)  # fmt: skip


def test_other_tools_tables_are_not_warned_about(tmp_path: Path) -> None:
    body = "".join(f"[tool.{name}]\nsetting = 1\n" for name in OTHER_TOOLS)
    write(
        tmp_path / "pyproject.toml",
        body + '[tool.failure-kinds.namespaces]\nswe_env = ["patch_apply_failed"]\n',
    )
    config = load_config(start=tmp_path)
    assert (config.namespaces, config.warnings) == ({"swe_env": ("patch_apply_failed",)}, ())


@pytest.mark.parametrize(
    "key", ["failurekinds", "failure-kind", "failure_kind", "FailureKinds", "failre-kinds", "failure-kinsd"]
)
def test_a_near_miss_of_the_table_is_named(tmp_path: Path, key: str) -> None:
    pyproject = write(
        tmp_path / "pyproject.toml",
        f'[tool.ruff]\n[tool.{key}.namespaces]\nswe_env = ["patch_apply_failed"]\n',
    )
    config = load_config(start=tmp_path)
    assert config.namespaces == {}
    assert config.warnings == (f"{pyproject}: [tool.{key}] is not read; did you mean [tool.failure-kinds]?",)


@settings(max_examples=examples(150), deadline=None)
@given(
    st.integers(0, len("failure-kinds") - 1),
    st.sampled_from(["delete", "insert", "replace", "swap"]),
    st.sampled_from(string.ascii_lowercase + "_-"),
)
def test_any_one_typo_in_the_table_key_is_named(
    tmp_path_factory: pytest.TempPathFactory, at: int, edit: str, letter: str
) -> None:
    """One letter left out, added, changed, or two swapped: still a likely misspelling, and named."""
    right = "failure-kinds"
    key = {
        "delete": right[:at] + right[at + 1 :],
        "insert": right[:at] + letter + right[at:],
        "replace": right[:at] + letter + right[at + 1 :],
        "swap": right[:at] + right[at + 1 : at + 2] + right[at : at + 1] + right[at + 2 :],
    }[edit]
    if key.strip("-") != key:
        key = "x" + key  # a bare key may start with "-", but keep the header easy to read
    folder = tmp_path_factory.mktemp("config")
    write(folder / "pyproject.toml", f"[tool.ruff]\n[tool.{header(key)}]\n")
    warnings = load_config(start=folder).warnings
    assert len(warnings) == (key != right)
    if warnings:
        assert warnings[0].endswith("is not read; did you mean [tool.failure-kinds]?")


@settings(max_examples=examples(150), deadline=None)
@given(st.lists(st.text(min_size=1, max_size=80), min_size=1, max_size=5, unique=True))
def test_any_tool_keys_load_with_at_most_one_bounded_line_each(
    tmp_path_factory: pytest.TempPathFactory, keys: list[str]
) -> None:
    folder = tmp_path_factory.mktemp("config")
    # Quoted as TOML reads a basic string: JSON's escapes are TOML's, and DEL must be escaped too.
    quoted = [json.dumps(key, ensure_ascii=False).replace("\x7f", "\\u007f") for key in keys]
    write(folder / "pyproject.toml", "".join(f"[tool.{key}]\n" for key in quoted))
    warnings = load_config(start=folder).warnings
    assert len(warnings) <= len(keys)
    for warning in warnings:
        assert warning.isprintable()
        assert len(warning) < 400


def test_the_command_names_the_misspelled_table_on_stderr(tmp_path: Path) -> None:
    write(tmp_path / "pyproject.toml", '[tool.failure_kinds.namespaces]\nswe_env = ["patch_apply_failed"]\n')
    result = run_cli("check", "swe_env:anything", cwd=tmp_path)
    # Nothing was declared, so the name is merely namespaced; the warning does not change the exit code.
    assert (result.returncode, result.stdout) == (0, "swe_env:anything  namespaced\n")
    assert result.stderr == (
        "failure-kinds check: warning: pyproject.toml: [tool.failure_kinds] is not read; "
        "did you mean [tool.failure-kinds]?\n"
    )


# A crafted configuration path cannot forge a line in any command's error.

CRAFTED = (
    st.lists(
        st.sampled_from(["a", "\n", "\r", "\x1b", "[2J", "\u202e", "\x07", ": error: ", "\udcff"]), min_size=1
    )
    .map("".join)
    .filter(lambda name: not name.isprintable())
)


@settings(
    max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(CRAFTED, st.sampled_from(["missing", "malformed", "not TOML"]), st.sampled_from(["check", "lint"]))
def test_a_crafted_config_path_is_one_escaped_line_in_every_command(
    capsys: pytest.CaptureFixture[str], name: str, problem: str, command: str
) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / f"{name}.toml"
        if problem == "malformed":
            path.write_text('[namespaces]\nswe_env = ["Bad"]\n')
        elif problem == "not TOML":
            path.write_text("[namespaces\n")
        target = "cancelled" if command == "check" else folder
        code = main([command, "--config", str(path), target])
        out, err = capsys.readouterr()
    assert (code, out) == (2, "")
    (line,) = err.splitlines()
    assert line.isprintable()
    assert line.startswith(f"failure-kinds {command}: error: ")


def test_thirty_thousand_declared_kinds_are_read_exactly(tmp_path: Path) -> None:
    kinds = [f"kind_{number}" for number in range(30_000)]
    layouts = {
        "one line": json.dumps(kinds),
        "a line each, trailing comma": "[\n" + "".join(f'  "{kind}",\r\n' for kind in kinds) + "]",
    }
    for layout, array in layouts.items():
        path = tmp_path / "failure-kinds.toml"
        path.write_text(f'[namespaces]\nswe_env = {array}\nother = ["one"]\n', encoding="utf-8")
        config = load_config(path)
        assert config.namespaces == {"swe_env": tuple(kinds), "other": ("one",)}, layout
    # The same list with one kind twice, and with one malformed: the message of the kind-by-kind check.
    for wrong, message in (("kind_7", "the kind 'kind_7' is declared twice"), ("Kind", "'Kind' does not")):
        path.write_text(f"[namespaces]\nswe_env = {json.dumps([*kinds, wrong])}\n", encoding="utf-8")
        with pytest.raises(ConfigError, match=message):
            load_config(path)
