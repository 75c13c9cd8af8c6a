"""The [tool.failure-kinds] table: where it is found, what it holds, and every way it can be wrong."""

from __future__ import annotations

import json
import os
import re
import string
import tempfile
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest
from helpers import examples, run_cli
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_codegen import CRAFTED_NAMES

from failure_kinds.cli import main
from failure_kinds.config import SIZE_LIMIT, ConfigError, ProjectConfig, load_config

DECLARATION = """\
[tool.failure-kinds]
generate = "src/swe_env/declared.py"

[tool.failure-kinds.namespaces]
swe_env = ["patch_apply_failed", "test_collection_error"]
web_env = ["page_load_failed"]
"""


NAMESPACES = "[tool.failure-kinds.namespaces]\n"


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def test_where_the_configuration_is_found(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pyproject = write(tmp_path / "pyproject.toml", DECLARATION)
    deep = tmp_path / "src" / "swe_env" / "deeper"
    deep.mkdir(parents=True)
    config = load_config(start=deep)
    namespaces = {
        "swe_env": ("patch_apply_failed", "test_collection_error"),
        "web_env": ("page_load_failed",),
    }
    declared = tmp_path / "src/swe_env/declared.py"
    assert config == ProjectConfig(path=pyproject, namespaces=namespaces, generate_path=declared)
    assert config.declared_names() == {
        f"{server}:{kind}" for server, kinds in namespaces.items() for kind in kinds
    }
    monkeypatch.chdir(deep)  # the working directory is the default start
    assert load_config() == config
    # The nearest pyproject.toml wins even without the table; --config names a pyproject.toml or any file.
    inner = write(tmp_path / "inner" / "pyproject.toml", "[project]\nname = 'inner'\n")
    assert load_config(start=inner.parent) == ProjectConfig(path=inner)
    assert load_config(pyproject, start=inner.parent) == config
    standalone = write(
        tmp_path / "kinds.toml", 'generate = "d.py"\n[namespaces]\nswe_env = ["patch_apply_failed"]\n'
    )
    assert load_config(str(standalone)) == ProjectConfig(
        path=standalone, namespaces={"swe_env": ("patch_apply_failed",)}, generate_path=tmp_path / "d.py"
    )
    ci = write(tmp_path / "ci.toml", DECLARATION)
    with pytest.raises(ConfigError) as raised:
        load_config(ci)
    assert str(raised.value) == (
        f"{ci}: unknown key 'tool' (known: generate, namespaces); a file other than pyproject.toml holds"
        " the keys of [tool.failure-kinds] at its top level: write [namespaces], not"
        " [tool.failure-kinds.namespaces]"
    )
    # tmp_path has no pyproject.toml above it, or one that declares nothing of ours: never an error.
    assert load_config(start=tmp_path.parent).namespaces == {}
    gone = tmp_path / "gone"
    gone.mkdir()
    monkeypatch.chdir(gone)
    gone.rmdir()
    assert load_config() == ProjectConfig()


@pytest.mark.parametrize(("body", "expected"), [
    (NAMESPACES + 'Swe = ["a"]\n', "[tool.failure-kinds.namespaces] 'Swe': the server name"),
    (NAMESPACES + '"swe-env" = ["a"]\n', "'swe-env': the server name does not match"),
    (NAMESPACES + 'swe = ["Patch"]\n', "'swe': the kind 'Patch' does not match"),
    (NAMESPACES + 'swe = ["a:b"]\n', "'swe': the kind 'a:b' does not match"),
    (NAMESPACES + 'swe = ["a", "b", "a"]\n', "'swe': the kind 'a' is declared twice"),
    (NAMESPACES + 'swe = "a"\n', "'swe': must be a list of kind names"),
    (NAMESPACES + 'swe = ["a", 1]\n', "'swe': must be a list of kind names"),
    (NAMESPACES + 'swe = [["a"]]\n', "'swe': must be a list of kind names"),
    (NAMESPACES + "swe = []\n", "'swe': declares no kinds"),
    ('[tool.failure-kinds]\nnamespaces = ["swe"]\n', "[tool.failure-kinds.namespaces] must be a table"),
    ('[tool]\nfailure-kinds = "yes"\n', "[tool.failure-kinds] must be a table"),
    ('tool = "yes"\n', "[tool] must be a table"),
    ('[tool.failure-kinds]\nnamespace = {swe = ["a"]}\n', "unknown key 'namespace'"),
    ("[tool.failure-kinds]\ngenerate = 3\n", "generate: must be the path of a Python file"),
    ('[tool.failure-kinds]\ngenerate = "out.txt"\n', "generate: 'out.txt' is not a .py file"),
    ('[tool.failure-kinds]\ngenerate = ""\n', "generate: must be the path of a Python file"),
    ("[tool.failure-kinds\n", "invalid TOML"),
    (NAMESPACES + 'swe = ["a"]\nswe = ["b"]\n', "invalid TOML"),
    *[(body, "invalid TOML") for body in ("a = " + "[" * 5000 + "]" * 5000, "swe = " + "[" * 100_000)],
    ("a = " + "{b = " * 3000 + "1" + "}" * 3000, "invalid TOML"),
], ids=lambda value: value[:40] if len(value) > 40 else None)  # fmt: skip
def test_malformed_declarations_name_the_entry(tmp_path: Path, body: str, expected: str) -> None:
    pyproject = write(tmp_path / "pyproject.toml", body)
    with pytest.raises(ConfigError) as raised:
        load_config(start=tmp_path)
    message = str(raised.value)
    assert message.startswith(f"{pyproject}: ")
    assert expected in message
    assert "\n" not in message


# How a file is made, the error it gives, and whether a pyproject.toml made so is found by the walk up (a
# missing one or a directory is passed by).
@pytest.mark.parametrize(("make", "message", "found"), [
    (lambda path: None, r"no such file$", False),
    (lambda path: path.mkdir(), "not a regular file", False),
    (os.mkfifo, "not a regular file", True),  # must not hang waiting for a writer
    (lambda path: path.write_bytes(b'generate = "caf\xe9.py"\n'), "not UTF-8", True),
    (lambda path: (path.touch(), os.truncate(path, SIZE_LIMIT + 1)), "larger than 4 MiB", True),
])  # fmt: skip
def test_unreadable_and_odd_files_are_config_errors(
    tmp_path: Path, make: Callable[[Path], object], message: str, found: bool
) -> None:
    for path in (tmp_path / "failure-kinds.toml", tmp_path / "pyproject.toml"):
        make(path)
        with pytest.raises(ConfigError, match=message) as raised:
            load_config(path)
        assert raised.value.whole_file
    if found:
        with pytest.raises(ConfigError, match=r"pyproject\.toml: " + message):
            load_config(start=tmp_path)
    with pytest.raises(ConfigError, match="not a regular file"):
        load_config("/dev/zero")


NAME = st.from_regex(r"[a-z][a-z0-9_]{0,12}", fullmatch=True)


@settings(max_examples=examples(50), deadline=None)
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


@settings(max_examples=examples(100), deadline=None)
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


# A table spelled almost as ours is named, not silently ignored.


def header(key: str) -> str:
    return key if re.fullmatch(r"[A-Za-z0-9_-]+", key) else json.dumps(key)


RIGHT = "failure-kinds"


def typo(at: int, edit: str, letter: str) -> str:
    """One letter of the table key left out, added, changed, or two swapped."""
    return {
        "delete": RIGHT[:at] + RIGHT[at + 1 :],
        "insert": RIGHT[:at] + letter + RIGHT[at:],
        "replace": RIGHT[:at] + letter + RIGHT[at + 1 :],
        "swap": RIGHT[:at] + RIGHT[at + 1 : at + 2] + RIGHT[at : at + 1] + RIGHT[at + 2 :],
    }[edit].lstrip("-")  # a bare key may start with "-", but keep the header easy to read


def cased(upper: list[bool], separator: str) -> str:
    """The key in any case, with any separator."""
    return "".join(
        letter.upper() if up else letter
        for letter, up in zip(f"failure{separator}kinds", upper, strict=False)
    )


KEYS = st.one_of(
    st.builds(cased, st.lists(st.booleans(), min_size=14, max_size=14),
              st.sampled_from(["_", ".", " ", "__", "-_", "-"])),
    st.builds(typo, st.integers(0, len(RIGHT) - 1), st.sampled_from(["delete", "insert", "replace", "swap"]),
              st.sampled_from(string.ascii_lowercase + "_-")),
)  # fmt: skip


@settings(max_examples=examples(60), deadline=None)
@given(KEYS)
def test_a_misspelled_table_is_a_warning_and_is_not_read(
    tmp_path_factory: pytest.TempPathFactory, key: str
) -> None:
    folder = tmp_path_factory.mktemp("config")
    pyproject = write(
        folder / "pyproject.toml", f'[tool.{header(key)}.namespaces]\nswe_env = ["patch_apply_failed"]\n'
    )
    config = load_config(start=folder)
    if key == RIGHT:
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
    assert (both.namespaces, both.warnings) == ({"web_env": ("page_load_failed",)}, config.warnings)


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


@pytest.mark.parametrize(("keys", "named"), [
    (OTHER_TOOLS, ()),
    *((("ruff", key), (key,)) for key in ["failurekinds", "failure-kind", "failure_kind", "FailureKinds"]),
    (("ruff", "failre-kinds", "failure-kinsd"), ("failre-kinds", "failure-kinsd")),
])  # fmt: skip
def test_only_a_near_miss_of_the_table_is_named(
    tmp_path: Path, keys: tuple[str, ...], named: tuple[str, ...]
) -> None:
    body = "".join(f"[tool.{key}]\nsetting = 1\n" for key in keys) + NAMESPACES + 'swe_env = ["a"]\n'
    pyproject = write(tmp_path / "pyproject.toml", body)
    config = load_config(start=tmp_path)
    assert config.namespaces == {"swe_env": ("a",)}
    assert config.warnings == tuple(
        f"{pyproject}: [tool.{key}] is not read; did you mean [tool.failure-kinds]?" for key in named
    )


@settings(max_examples=examples(50), deadline=None)
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
@settings(max_examples=examples(40), suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    CRAFTED_NAMES, st.sampled_from(["missing", "malformed", "not TOML"]), st.sampled_from(["check", "lint"])
)
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
