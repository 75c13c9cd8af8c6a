"""export --format typescript|go: docs/stack.md's code, built by its commands with the real compilers
(`make test` installs tsc and Go), prints what the page says, and its misspelled kind is the one error."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import ROOT, deprecated, run_cli

from failure_kinds import FailureKind, __version__

# tsc where `make test` installs it, else on PATH; node runs what it emits (npm needs node anyway).
NPM_TSC = ROOT / ".venv" / "npm" / "node_modules" / ".bin" / "tsc"
TSC = str(NPM_TSC) if NPM_TSC.exists() else shutil.which("tsc")
NODE, GO, GOFMT = shutil.which("node"), shutil.which("go"), shutil.which("gofmt")
needs_tsc = pytest.mark.skipif(TSC is None or NODE is None, reason="needs tsc and node (make test installs)")
needs_go = pytest.mark.skipif(GO is None or GOFMT is None, reason="needs go and gofmt (make test installs)")

DECLARATION = '[tool.failure-kinds.namespaces]\nswe_env = ["patch_apply_failed", "test_collection_error"]\n'
# The page's commented-out misspelling and, on the next line, the error it must be.
MISSPELLED = re.compile(r"^(?P<indent>[ \t]*)// (?P<code>.+)\n[ \t]*//   (?P<error>error.*)$", re.MULTILINE)
PRINTED = re.compile(r"^[ \t]*// prints: (.*)$", re.MULTILINE)
PAGE = ROOT / "docs" / "stack.md"
# The page's commands for a language, and the file its code goes in.
STEPS = r"<!-- {language} steps: [^\n]* and (?P<file>\S+) -->\n```\n(?P<commands>.*?)```"


def recipe(language: str) -> str:
    page = PAGE.read_text(encoding="utf-8")
    (found,) = re.findall(
        rf"<!-- {language} recipe:[^\n]*-->\n```{language}\n(.*?)```", page, flags=re.DOTALL
    )
    return found


def uncommented(code: str) -> tuple[str, int, str]:
    """``code`` with its misspelled line uncommented, that line's number and the error the page shows."""
    (found,) = MISSPELLED.finditer(code)
    broken = code[: found.start()] + found["indent"] + found["code"] + code[found.end("code") :]
    return broken, code[: found.start()].count("\n") + 1, found["error"]


def export(folder: Path, language: str, declaration: str | None = DECLARATION) -> str:
    if declaration is not None:
        (folder / "pyproject.toml").write_text(declaration, encoding="utf-8")
    result = run_cli("export", "--format", language, cwd=folder)
    assert (result.returncode, result.stderr) == (0, ""), result.stderr
    return result.stdout


def run(
    command: list[str], folder: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        command, cwd=folder, capture_output=True, text=True, env=env, timeout=300, check=False
    )


def follow_steps(
    language: str, folder: Path, tools: list[str | None], env: dict[str, str] | None = None
) -> tuple[str, str]:
    """The page's commands for ``language`` run in ``folder`` as a reader would, with the declaration and
    the page's code in place: the code's file and what the commands print."""
    (found,) = re.finditer(STEPS.format(language=language), PAGE.read_text(encoding="utf-8"), re.DOTALL)
    (folder / "pyproject.toml").write_text(DECLARATION, encoding="utf-8")
    (folder / found["file"]).parent.mkdir(parents=True, exist_ok=True)
    (folder / found["file"]).write_text(recipe(language), encoding="utf-8")
    # The compilers where the tests found them, and this interpreter's failure-kinds command.
    folders = [str(Path(tool).parent) for tool in [*tools, sys.executable] if tool is not None]
    environment = dict(os.environ if env is None else env)
    environment["PATH"] = os.pathsep.join([*folders, environment["PATH"]])
    done = run(["sh", "-e", "-c", found["commands"]], folder, environment)
    assert done.returncode == 0, done.stdout + done.stderr
    return found["file"], done.stdout


@pytest.fixture(scope="session")
def go_environment(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Go's caches in a folder of the test run, and no network: the package must need no module."""
    folder = tmp_path_factory.mktemp("go")
    return {
        **os.environ,
        **{"GOPATH": str(folder / "path"), "GOCACHE": str(folder / "cache"), "GOFLAGS": "-mod=mod"},
        **{"GOPROXY": "off", "GOTOOLCHAIN": "local", "GOENV": "off", "GOWORK": "off", "CGO_ENABLED": "0"},
    }


LANGUAGES = [pytest.param("typescript", marks=needs_tsc), pytest.param("go", marks=needs_go)]


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_pages_code_prints_what_it_says_and_its_misspelling_is_the_one_error(
    language: str, tmp_path: Path, go_environment: dict[str, str]
) -> None:
    code = recipe(language)
    tools, env = ([TSC, NODE], None) if language == "typescript" else ([GO], go_environment)
    source, printed = follow_steps(language, tmp_path, tools, env)
    assert printed.splitlines() == PRINTED.findall(code)
    broken, line, error = uncommented(code)
    assert ("judge_faild" if language == "typescript" else "JudgeFaild") in error
    (tmp_path / source).write_text(broken, encoding="utf-8")
    if language == "typescript":
        assert TSC is not None
        checked = run([TSC, "--strict", "--pretty", "false", "--noEmit", source], tmp_path)
        errors = [text for text in checked.stdout.splitlines() if ": error " in text]
        assert len(errors) == 1, checked.stdout
        assert re.fullmatch(rf"{re.escape(source)}\({line},\d+\): {re.escape(error)}", errors[0]), errors
        return
    assert GO is not None
    vetted = run([GO, "vet", "./..."], tmp_path, go_environment)
    built = run([GO, "build", "./..."], tmp_path, go_environment)
    # go vet words it by its version ("undefined: ..." or "JudgeFaild not declared by package ...").
    vet_errors = re.findall(r"\./main\.go:(\d+):\d+: (.*)", vetted.stderr)
    assert [number for number, message in vet_errors if "JudgeFaild" in message] == [str(line)], vetted.stderr
    assert len(vet_errors) == 1, vetted.stderr
    assert re.findall(r"^\./main\.go:(\d+):\d+: (.*)$", built.stderr, re.MULTILINE) == [
        (str(line), error.removeprefix("error: "))
    ], built.stderr


@pytest.mark.parametrize("language", LANGUAGES)
def test_an_export_without_a_declaration_compiles(
    language: str, tmp_path: Path, go_environment: dict[str, str]
) -> None:
    source = export(tmp_path, language, declaration=None)
    if language == "typescript":
        assert TSC is not None
        (tmp_path / "failure_kinds.ts").write_text(source, encoding="utf-8")
        checked = run([TSC, "--strict", "--noEmit", "--pretty", "false", "failure_kinds.ts"], tmp_path)
        assert checked.returncode == 0, checked.stdout + checked.stderr
        return
    assert GO is not None
    assert GOFMT is not None
    (tmp_path / "go.mod").write_text("module example.com/rollouts\n\ngo 1.19\n", encoding="utf-8")
    (tmp_path / "failurekinds").mkdir()
    (tmp_path / "failurekinds" / "failurekinds.go").write_text(source, encoding="utf-8")
    assert run([GOFMT, "-l", "failurekinds"], tmp_path).stdout == ""  # already as gofmt writes it
    for step in (["vet", "./..."], ["build", "./..."]):
        done = run([GO, *step], tmp_path, go_environment)
        assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize("language", ["typescript", "go"])
def test_an_export_holds_every_kind_the_version_and_deprecations(language: str, tmp_path: Path) -> None:
    with deprecated(FailureKind.AGENT_RUN_ERROR, FailureKind.AGENT_REQUEST_FAILED):
        source = export(tmp_path, language)
    quoted = [f'"{kind.value}"' for kind in FailureKind]
    assert [source.index(value) for value in quoted] == sorted(source.index(value) for value in quoted)
    assert f'"{__version__}"' in source
    assert '"swe_env:test_collection_error"' in source
    assert "Deprecated: use agent_request_failed." in source


# (declaration, format, the constant two names would share)
COLLISIONS = [
    ('transport = ["timeout"]', "typescript", "TRANSPORT_TIMEOUT"),
    ('transport = ["timeout"]', "go", "TransportTimeout"),
    ('swe = ["env_lost"]\nswe_env = ["lost"]', "go", "SweEnvLost"),
    ('is = ["registered"]', "go", "IsRegistered"),
]


@pytest.mark.parametrize(("declaration", "language", "constant"), COLLISIONS)
def test_two_kinds_with_one_constant_are_a_usage_error(
    declaration: str, language: str, constant: str, tmp_path: Path
) -> None:
    (tmp_path / "pyproject.toml").write_text(f"[tool.failure-kinds.namespaces]\n{declaration}\n")
    result = run_cli("export", "--format", language, cwd=tmp_path)
    assert (result.returncode, result.stdout) == (2, "")
    assert f"would both be named {constant}; rename one" in result.stderr
    assert result.stderr.count("\n") == 1
