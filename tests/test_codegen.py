"""failure-kinds generate: the module it writes, and the command that writes and checks it."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import typing
from pathlib import Path
from typing import Any

import pytest
from helpers import ROOT, examples, needs, run_cli
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import failure_kinds
from failure_kinds.cli import main
from failure_kinds.codegen import render_module
from failure_kinds.config import ConfigError, ProjectConfig, load_config

BIN = Path(sys.executable).parent
SWE = ProjectConfig(
    path=Path("pyproject.toml"),
    namespaces={"swe_env": ("patch_apply_failed", "test_collection_error"), "web_env": ("page_load_failed",)},
)

NAME = st.from_regex(r"[a-z][a-z0-9_]{0,40}", fullmatch=True)
DECLARATIONS = st.dictionaries(
    NAME, st.lists(NAME, min_size=1, max_size=8, unique=True), min_size=1, max_size=6
)


def load(source: str, monkeypatch: pytest.MonkeyPatch) -> tuple[dict[str, object], list[Any]]:
    """The generated module's namespace, and the declare_namespace calls it made."""
    calls: list[tuple[str, tuple[str, ...]]] = []

    def record(server: str, kinds: typing.Iterable[str]) -> None:
        calls.append((server, tuple(kinds)))

    monkeypatch.setattr(failure_kinds, "declare_namespace", record, raising=False)
    namespace: dict[str, object] = {}
    exec(compile(source, "declared.py", "exec"), namespace)
    return namespace, calls


def literal_values(alias: object) -> set[str]:
    values: set[str] = set()
    for argument in typing.get_args(alias):
        if isinstance(argument, str):
            values.add(argument)
        else:
            values |= literal_values(argument)
    return values


# Names follow the rule the docs state: swe_env -> SweEnvFailureKind, and SWE_ENV_PATCH_APPLY_FAILED.
@settings(max_examples=examples(150), deadline=None)
@given(DECLARATIONS)
@example({server: list(kinds) for server, kinds in SWE.namespaces.items()})
def test_every_declaration_gives_a_module_that_states_it(declared: dict[str, list[str]]) -> None:
    config = ProjectConfig(namespaces={server: tuple(kinds) for server, kinds in declared.items()})
    try:
        source = render_module(config)
    except ConfigError as error:  # only a clash of Python names is refused, and it names both sides
        assert " would both be named " in str(error)  # noqa: PT017
        return
    assert render_module(config) == source
    with pytest.MonkeyPatch.context() as monkeypatch:
        namespace, calls = load(source, monkeypatch)
    assert calls == [(server, tuple(kinds)) for server, kinds in declared.items()]
    declared_names = config.declared_names()
    assert literal_values(namespace["DeclaredFailureKind"]) == declared_names
    assert literal_values(namespace["ProjectFailureKind"]) == declared_names | failure_kinds.FAILURE_KINDS
    for server, kinds in declared.items():
        alias = "".join(part.capitalize() for part in server.split("_")) + "FailureKind"
        assert literal_values(namespace[alias]) == {f"{server}:{kind}" for kind in kinds}
        for kind in kinds:
            assert namespace[f"{server}_{kind}".upper()] == f"{server}:{kind}"


@pytest.mark.parametrize(("namespaces", "message"), [
    ({"a_b": ("c",), "a": ("b_c",)}, "a:b_c and a_b:c would both be named A_B_C"),
    ({"swe_env": ("x",), "swe__env": ("y",)},
     "the server swe__env and the server swe_env would both be named SweEnvFailureKind"),
    ({"declared": ("x",)}, "a name the module always defines"),
    ({}, "nothing is declared"),
])  # fmt: skip
def test_unusable_declarations_are_config_errors(
    namespaces: dict[str, tuple[str, ...]], message: str
) -> None:
    with pytest.raises(ConfigError, match=message.replace("(", r"\(")):
        render_module(ProjectConfig(namespaces=namespaces))


@pytest.mark.interpreter_independent
@needs("ruff")
def test_output_is_what_ruff_formats_and_accepts(tmp_path: Path) -> None:
    """Generated modules must not fight a project's formatter or linter, long names and many kinds too."""
    declarations = [
        SWE.namespaces,
        {"a_really_long_server_name_for_testing": ("an_extraordinarily_long_kind_name_xx",)},
        {f"a_long_server_name_number_{index}": ("kind",) for index in range(6)},
        {"swe": tuple(f"kind_number_{index}_with_a_long_name" for index in range(3))},
        {f"server_{index}": tuple(f"kind_{number}" for number in range(12)) for index in range(8)},
        {"s": ("k",)},
        # Constants of every length, across each of the three layouts of `NAME: Literal[...] = ...`.
        {"s": tuple("k" * length for length in range(1, 85))},
    ]
    for index, namespaces in enumerate(declarations):
        (tmp_path / f"declared_{index}.py").write_text(render_module(ProjectConfig(namespaces=namespaces)))
    files = sorted(str(path) for path in tmp_path.glob("*.py"))
    # A project formatting wider than 88 leaves the module as written too, so `generate --check` passes.
    for command in (
        ["format", "--isolated", "--check", "--diff", *files],
        ["format", "--isolated", "--line-length", "120", "--check", "--diff", files[0]],
        ["check", "--isolated", "--select", "E,F,W,I,UP,B,RUF,PYI,SIM,C4,COM,Q", "--line-length=100", *files],
    ):
        done = subprocess.run([str(BIN / "ruff"), *command], capture_output=True, text=True)
        assert done.returncode == 0, done.stdout + done.stderr


@needs("mypy")
def test_a_misspelled_declared_kind_is_rejected_by_mypy(tmp_path: Path) -> None:
    """The checker matrix lives with the typing cases; this keeps the generator honest on its own."""
    (tmp_path / "declared.py").write_text(render_module(SWE))
    (tmp_path / "use.py").write_text(
        "from declared import SWE_ENV_PATCH_APPLY_FAILED, ProjectFailureKind, SweEnvFailureKind\n"
        "import failure_kinds as fk\n"
        "a: SweEnvFailureKind = SWE_ENV_PATCH_APPLY_FAILED\n"
        "b: ProjectFailureKind = fk.TRANSPORT_TIMEOUT\n"
        'c: ProjectFailureKind = "swe_env:test_collection_error"\n'
        'd: ProjectFailureKind = "swe_env:patch_aply_failed"\n'
        'e: SweEnvFailureKind = "web_env:page_load_failed"\n'
        # Through an unannotated local, a constant keeps its literal, not mypy's widened str.
        "local = SWE_ENV_PATCH_APPLY_FAILED\n"
        "f: SweEnvFailureKind = local\n"
    )
    (tmp_path / "mypy.ini").write_text(f"[mypy]\nstrict = True\nmypy_path = {ROOT / 'stubs'}\n")
    mypy = [sys.executable, "-m", "mypy", "--no-error-summary", "--cache-dir", str(tmp_path / ".cache")]
    result = subprocess.run([*mypy, "declared.py", "use.py"], cwd=tmp_path, capture_output=True, text=True)
    reported = sorted(line.split(": error")[0] for line in result.stdout.splitlines() if ": error" in line)
    assert reported == ["use.py:6", "use.py:7"], result.stdout + result.stderr


# The command


def run(*arguments: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return run_cli("generate", *arguments, cwd=cwd)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "src" / "swe").mkdir(parents=True)
    (tmp_path / "pyproject.toml").write_text(
        '[tool.failure-kinds]\ngenerate = "src/swe/declared.py"\n\n'
        '[tool.failure-kinds.namespaces]\nswe_env = ["patch_apply_failed", "test_collection_error"]\n'
    )
    return tmp_path


def test_generate_writes_then_check_passes_until_the_declaration_changes(project: Path) -> None:
    module = project / "src" / "swe" / "declared.py"
    missing = run("--check", cwd=project)
    assert (missing.returncode, missing.stdout) == (1, "")
    assert missing.stderr == (
        "failure-kinds generate: src/swe/declared.py is missing; run failure-kinds generate\n"
    )
    written = run(cwd=project / "src")  # found by walking up
    assert (written.returncode, written.stdout) == (0, "wrote swe/declared.py\n")
    assert module.read_text() == render_module(load_config(project / "pyproject.toml"))
    assert module.stat().st_mode & 0o044, "the module is readable like any file the user creates"
    assert run("--check", cwd=project).returncode == 0
    again = run(cwd=project)
    assert (again.returncode, again.stdout) == (0, "src/swe/declared.py is up to date\n")
    # --output: standard output, or another file, which --check then compares.
    printed = run("--output", "-", cwd=project)
    assert printed.returncode == 0
    assert printed.stdout == module.read_text()
    assert "SweEnvFailureKind: TypeAlias = Literal[" in printed.stdout
    elsewhere = run("--output", "other.py", cwd=project)
    assert (elsewhere.returncode, elsewhere.stdout) == (0, "wrote other.py\n")
    assert (project / "other.py").read_text() == printed.stdout
    assert run("--output", "other.py", "--check", cwd=project).returncode == 0
    pyproject = project / "pyproject.toml"
    pyproject.write_text(pyproject.read_text().replace('"]', '", "image_build_failed"]'))
    stale = run("--check", cwd=project)
    assert stale.returncode == 1
    assert "src/swe/declared.py is out of date" in stale.stderr
    assert run(cwd=project).returncode == 0
    assert run("--check", cwd=project).returncode == 0


OK = '[tool.failure-kinds]\ngenerate = "x.py"\n[tool.failure-kinds.namespaces]\nswe = ["a"]\n'


# A missing --config file: tests/test_cli.py::test_every_command_says_no_such_file_alike.
@pytest.mark.parametrize(("pyproject", "arguments", "message"), [
    (None, (), "no pyproject.toml here or above"),
    ('[tool.failure-kinds.namespaces]\nswe = ["a"]\n', (), "set generate ="),
    ("[tool.failure-kinds]\n", ("--output", "x.py"), "nothing is declared"),
    (OK.replace('"a"', '"Bad"'), (), "the kind 'Bad' does not match"),
    (OK, ("--output", "missing/x.py"), "the directory missing does not exist"),
    (OK, ("--output", "-", "--check"), "--check compares with a file"),
    (OK, ("--output", "fifo.py"), "fifo.py: not a regular file"),
    (OK, ("--output", "fifo.py", "--check"), "fifo.py: not a regular file"),
])  # fmt: skip
def test_usage_errors_are_one_line_and_exit_2(
    tmp_path: Path, pyproject: str | None, arguments: tuple[str, ...], message: str
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    if pyproject is not None:
        (project / "pyproject.toml").write_text(pyproject)
    os.mkfifo(project / "fifo.py")
    # tmp_path's parents must not hold a pyproject.toml for "nothing" to mean nothing.
    if pyproject is None and any((parent / "pyproject.toml").exists() for parent in project.parents):
        arguments = ("--config", str(project / "absent.toml"))
        message = "absent.toml: no such file"
    result = run(*arguments, cwd=project)
    assert result.returncode == 2, result.stderr
    assert message in result.stderr
    assert result.stderr.count("\n") == 1
    assert "Traceback" not in result.stderr


# Where the module goes: never over the configuration, through a link to its target, every path escaped.
# These run the command in this process, so that many generated cases stay cheap.

DECLARING = '[tool.failure-kinds.namespaces]\nswe_env = ["patch_apply_failed"]\n'


def generate(capsys: pytest.CaptureFixture[str], *arguments: str) -> tuple[int, list[str], list[str]]:
    """The command's exit code and its stdout and stderr lines."""
    code = main(["generate", *arguments])
    out, err = capsys.readouterr()
    return code, out.splitlines(), err.splitlines()


IN_PROCESS = settings(max_examples=examples(40), suppress_health_check=[HealthCheck.function_scoped_fixture])


@IN_PROCESS
@given(
    name=st.sampled_from(["pyproject.toml", "kinds.toml"]),
    detours=st.lists(st.sampled_from([".", "sub/..", "sub/../sub/.."]), max_size=3),
    alias=st.sampled_from(["none", "symlink", "hard link", "symlink to symlink"]),
    check=st.booleans(),
)
def test_generate_refuses_to_write_over_the_configuration_it_read(
    capsys: pytest.CaptureFixture[str], name: str, detours: list[str], alias: str, check: bool
) -> None:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        (root / "sub").mkdir()
        config = root / name
        text = DECLARING if name == "pyproject.toml" else DECLARING.replace("tool.failure-kinds.", "")
        config.write_text(text)
        output = root.joinpath(*detours, name)
        if alias != "none":
            output = root / "sub" / "declared.py"
            if alias == "hard link":
                os.link(config, output)
            elif alias == "symlink":
                output.symlink_to(config)
            else:
                (root / "sub" / "middle.py").symlink_to(config)
                output.symlink_to("middle.py")
        code, out, err = generate(
            capsys, "--config", str(config), "--output", str(output), *(["--check"] * check)
        )
        assert (code, out) == (2, [])
        (line,) = err
        assert line.startswith("failure-kinds generate: error: ")
        assert "is the configuration this run read" in line
        assert config.read_text() == text
        if alias in ("symlink", "symlink to symlink"):
            assert output.is_symlink()


@IN_PROCESS
@given(depth=st.integers(min_value=1, max_value=3), absolute=st.booleans(), existing=st.booleans())
def test_generate_writes_through_a_symbolic_link_and_check_compares_its_target(
    capsys: pytest.CaptureFixture[str], depth: int, absolute: bool, existing: bool
) -> None:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        config = root / "pyproject.toml"
        config.write_text(DECLARING)
        (root / "real").mkdir()
        target = root / "real" / "declared.py"
        if existing:
            target.write_text("# an old module\n")
        # A chain of links: link_1 -> link_2 -> ... -> real/declared.py
        links = [root / f"link_{index}.py" for index in range(1, depth + 1)]
        for link, following in zip(links, [*links[1:], target], strict=True):
            link.symlink_to(following if absolute else os.path.relpath(following, link.parent))
        given_path = links[0]
        arguments = ("--config", str(config), "--output", str(given_path))
        through = f"{target} (through the symbolic link {given_path})"
        state = "out of date" if existing else "missing"
        stale = [f"failure-kinds generate: {through} is {state}; run failure-kinds generate"]
        assert generate(capsys, *arguments, "--check") == (1, [], stale)
        assert generate(capsys, *arguments) == (0, [f"wrote {through}"], [])
        assert all(link.is_symlink() for link in links), "every link stays a link"
        module = target.read_text()
        assert module == render_module(load_config(config))
        assert generate(capsys, *arguments, "--check")[0] == 0
        # The target goes stale behind the link: --check reads the target, not the link.
        target.write_text(module + "# an edit by hand\n")
        assert generate(capsys, *arguments, "--check")[0] == 1
        assert generate(capsys, *arguments)[0] == 0
        assert target.read_text() == module


# Every character a file name may hold that a terminal or a line reader would act on, and what a forged
# line of a command's error would hold.
PIECES = ["a", "\n", "\r", "\x1b", "[2J", "\u202e", "\t", "\x07", ":", " ", ": error: ", "\udcff"]
CRAFTED_NAMES = st.lists(st.sampled_from(PIECES), min_size=1, max_size=12).map("".join)
CRAFTED_NAMES = CRAFTED_NAMES.filter(lambda name: not name.isprintable())


@IN_PROCESS
@given(CRAFTED_NAMES)
def test_every_path_generate_names_is_escaped(capsys: pytest.CaptureFixture[str], name: str) -> None:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        config, crafted, crafted_config = root / "pyproject.toml", root / f"{name}.py", root / f"{name}.toml"
        config.write_text(DECLARING)
        crafted_config.write_text('[namespaces]\nswe_env = ["Bad"]\n')
        # Written, into a missing directory, stale, and from a configuration that is wrong.
        for arguments, status, said in [
            (["--config", str(config), "--output", str(crafted)], 0, "wrote "),
            (["--config", str(config), "--output", str(root / name / "x.py")], 2, "does not exist"),
            (["--config", str(config), "--output", str(crafted), "--check"], 1, "out of date"),
            (["--config", str(crafted_config), "--output", "-"], 2, "'Bad'"),
        ]:
            if status == 1:
                crafted.write_text("stale\n")
            code, out, err = generate(capsys, *arguments)
            (line,) = out if status == 0 else err
            assert (code, err if status == 0 else out) == (status, [])
            assert line.isprintable(), line
            assert said in line
            if status == 0:
                assert crafted.read_text() == render_module(load_config(config))
