"""The documentation says what the code does: the README and the pages in docs/ are run, compared and built.

In a recipe (a python block after `<!-- recipe: NAME -->`), a comment `# logs: TEXT` is a line the recipe
writes to stderr and `# prints: TEXT` a line it writes to stdout (nothing else may be written to either),
and `#   error: TEXT` right after a commented-out call is the error mypy reports for that call once it is
uncommented (`...` ends a shortened message). A block after `<!-- commands: ... -->` is a terminal
session: each `$ COMMAND` runs from the repository's top directory and prints exactly the lines below it.
"""

from __future__ import annotations

import html
import importlib.util
import json
import re
import shlex
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from helpers import DOCUMENTS, ROOT, doc_recipes, needs, run_cli

DOCS = ROOT / "docs"
README = (ROOT / "README.md").read_text(encoding="utf-8")
LOGGED = re.compile(r"^# logs: (?P<line>.*)$", flags=re.MULTILINE)
PRINTED = re.compile(r"^# prints: (?P<line>.*)$", flags=re.MULTILINE)
CHECKED = re.compile(r"^# (?P<code>\w+\(.*\)) .*\n#   error: (?P<message>.*)$", flags=re.MULTILINE)
# A fenced block with the comment line right above it (or None), its info string and its body.
FENCED = re.compile(r"(?:^(?P<marker><!--[^\n]*-->)\n)?^```(?P<info>[a-z]*)\n(?P<body>.*?)^```$", re.M | re.S)
PYTEST_RECIPE = "<!-- pytest recipe:"
COMMANDS = "<!-- commands:"
# Blocks of commands that another test module runs: the worked example (tests/test_worked_example.py) and
# the adoption walkthrough (tests/test_adopting.py), each in a copy or a folder of its own.
RUN_ELSEWHERE = ("<!-- worked example:", "<!-- adopting:")


def blocks(marker: str) -> list[tuple[Path, str]]:
    """Every fenced block, in the README and the pages, right after a comment line starting with `marker`."""
    return [
        (document, found["body"])
        for document in DOCUMENTS
        for found in FENCED.finditer(document.read_text(encoding="utf-8"))
        if (found["marker"] or "").startswith(marker)
    ]


def page(name: str) -> str:
    return (DOCS / name).read_text(encoding="utf-8")


# the README


def test_readme_keeps_to_its_budget() -> None:
    assert len(README.splitlines()) <= 250
    for section in ("## Try it", "## Use it in your code", "## Install", "## Documentation"):
        assert f"\n{section}\n" in README, section
    # What a new user runs first comes first, right under the introduction.
    sections = re.findall(r"^## (.*)$", README, flags=re.MULTILINE)
    assert sections[0] == "Try it"
    try_it = README.split("\n## ")[1]
    for command in (
        "pip install .",
        "make demo",
        "make test",
        "failure-kinds audit examples/rollout_failures.jsonl",
    ):
        assert command in try_it, command
    prose = FENCED.sub("", README)
    assert [line for line in prose.splitlines() if len(line) > 120] == []
    assert README.count("https://github.com/NVIDIA-NeMo/Gym/blob/main/nemo_gym/failure_kinds.py") == 1
    # How the suite holds the documents to the code is for contributors, not among a user's instructions.
    assert re.search(r"the test suite (runs|type-checks)|run by the test suite", README) is None


def test_readme_links_lead_somewhere() -> None:
    targets = re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", README)
    local = [target for target in targets if "://" not in target]
    assert local, "the README links the documentation"
    assert [target for target in local if not (ROOT / target).exists()] == []
    assert {f"docs/{path.name}" for path in DOCS.glob("*.md")} <= set(local), "every page is linked"


def test_no_release_tag_is_named() -> None:
    """A clone carries no tags, so no document may install from or pin to one as if it existed."""
    for path in [*DOCUMENTS, ROOT / "CHANGELOG.md", ROOT / "CONTRIBUTING.md"]:
        text = path.read_text(encoding="utf-8")
        # A tag such as v1.2.3, not a version inside a URL (semver.org/spec/v2.0.0.html).
        assert re.findall(r"(?<![/\w])v\d+\.\d+\.\d+\b", text) == [], path.name
        assert "rev: v" not in text, path.name


def test_included_sections_exist() -> None:
    """Each `--8<-- "README.md:NAME"` of a page has its start and end markers in the README."""
    included = [
        name
        for document in DOCUMENTS
        for name in re.findall(r'--8<-- "README\.md:([\w-]+)"', document.read_text(encoding="utf-8"))
    ]
    assert set(included) == {"first-use", "install", "pre-commit"}
    for name in included:
        start = README.index(f"<!-- --8<-- [start:{name}] -->")
        assert README.index(f"<!-- --8<-- [end:{name}] -->") > start, name


# recipes


def test_every_python_block_is_run() -> None:
    unmarked = [
        f"{document.name}: {found['body'].splitlines()[0]}"
        for document in DOCUMENTS
        for found in FENCED.finditer(document.read_text(encoding="utf-8"))
        if found["info"] == "python"
        and not (found["marker"] or "").startswith(("<!-- recipe:", PYTEST_RECIPE))
    ]
    assert unmarked == []
    assert {"first_use", "dataclass", "typeddict", "pydantic", "metric_label", "namespaced"} <= set(
        doc_recipes()
    )


def needs_for(code: str) -> list[pytest.MarkDecorator]:
    """A recipe that imports an extra's library skips without it, as the extra may not be installed."""
    imported = re.findall(r"^(?:from|import) (pydantic|opentelemetry|prometheus_client)\b", code, flags=re.M)
    return [needs(name) for name in sorted(set(imported))]


RECIPES = [pytest.param(name, marks=needs_for(code), id=name) for name, code in sorted(doc_recipes().items())]


@pytest.mark.parametrize("name", RECIPES)
def test_recipe_runs(name: str, tmp_path: Path) -> None:
    code = doc_recipes()[name]
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, timeout=120, check=False
    )
    assert result.returncode == 0, result.stderr
    assert result.stderr.splitlines() == LOGGED.findall(code)
    assert result.stdout.splitlines() == PRINTED.findall(code)


def test_first_recipe_shows_a_log_line_and_a_checker_error() -> None:
    code = doc_recipes()["first_use"]
    assert LOGGED.findall(code)
    assert CHECKED.findall(code)


def test_validation_page_quotes_the_unregistered_warnings_as_logged() -> None:
    emit = "import failure_kinds as fk\nfk.validate_failure_kind('judge_faild')\n"
    emit += "fk.validate_failure_kind('zzz_invented')"
    result = subprocess.run(
        [sys.executable, "-c", emit], capture_output=True, text=True, timeout=60, check=True
    )
    logged = result.stderr.splitlines()
    assert len(logged) == 2, result.stderr
    assert all(line.startswith("unregistered failure_kind '") for line in logged)
    prose = " ".join(page("validation.md").split())
    assert [line for line in logged if f"`{line}`" not in prose] == []


@pytest.fixture(scope="session")
def mypy_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One mypy cache for every recipe this process checks (under pytest-xdist each worker has its own):
    with a fresh one per run, mypy read the standard library's stubs again for each, a slow start a run."""
    return tmp_path_factory.mktemp("mypy_cache")


def mypy_errors(code: str, folder: Path, cache: Path) -> list[str]:
    """mypy's errors for `code`, checked as users' code is: against the stub in stubs/."""
    source = folder / "recipe.py"
    source.write_text(code, encoding="utf-8")
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--config-file",
            str(ROOT / "mypy.ini"),
            "--cache-dir",
            str(cache),
            "--no-error-summary",
            "--hide-error-codes",
            str(source),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode in (0, 1), result.stdout + result.stderr
    return [line.split(": error: ", 1)[1] for line in result.stdout.splitlines() if ": error: " in line]


@needs("mypy")
@pytest.mark.parametrize("name", RECIPES)
def test_recipe_shows_what_mypy_says(name: str, tmp_path: Path, mypy_cache: Path) -> None:
    code = doc_recipes()[name]
    assert mypy_errors(code, tmp_path, mypy_cache) == []
    for found in CHECKED.finditer(code):
        # The rejected call, uncommented, at the end of the recipe: mypy must report exactly the shown error.
        errors = mypy_errors(code + found["code"] + "\n", tmp_path, mypy_cache)
        shown = found["message"]
        assert len(errors) == 1, errors
        if shown.endswith("..."):
            assert errors[0].startswith(shown.removesuffix("...").rstrip()), errors[0]
        else:
            assert errors[0] == shown


def test_pytest_recipe_passes_and_fails_on_a_misspelling(tmp_path: Path) -> None:
    ((_, code),) = blocks(PYTEST_RECIPE)
    assert '"judge_failed"' in code
    for kind, code_expected in (("judge_failed", 0), ("judge_faild", 1)):
        (tmp_path / "test_recipe.py").write_text(
            code.replace('"judge_failed"', f'"{kind}"'), encoding="utf-8"
        )
        result = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--failure-kinds-strict"],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert result.returncode == code_expected, result.stdout + result.stderr
        assert ("judge_faild" in result.stdout) == (kind == "judge_faild"), result.stdout


# command outputs


def sessions() -> list[tuple[str, str, str]]:
    """(page, command, output) for every `$ COMMAND` of every commands block."""
    found: list[tuple[str, str, str]] = []
    for document, body in blocks(COMMANDS):
        for chunk in ("\n" + body).split("\n$ ")[1:]:
            shown_command, _, output = chunk.partition("\n")
            found.append((document.name, shown_command, output))
    return found


def test_every_shell_session_is_run() -> None:
    """A block that shows `$ COMMAND` and its output is run here or by the module its marker names."""
    sessions_shown = [
        (document.name, found["marker"])
        for document in DOCUMENTS
        for found in FENCED.finditer(document.read_text(encoding="utf-8"))
        if found["body"].startswith("$ ")
    ]
    assert sessions_shown
    unrun = [shown for shown in sessions_shown if not (shown[1] or "").startswith((COMMANDS, *RUN_ELSEWHERE))]
    assert unrun == []
    assert {"lint.md", "cli.md"} <= {document for document, _, _ in sessions()}


@pytest.mark.parametrize(("document", "shown", "output"), sessions(), ids=lambda value: value[:30])
def test_command_prints_what_the_page_shows(document: str, shown: str, output: str) -> None:
    program, *arguments = shlex.split(shown)
    assert program == "failure-kinds", f"{document}: only the package's command is run here"
    result = run_cli(*arguments)
    assert result.stderr == ""
    assert result.returncode in (0, 1)  # 1: the findings the example is there to show
    assert result.stdout == output


# marked blocks compared with the code


def test_audit_json_report_is_the_example_report() -> None:
    """The annotated JSON report on the audit page is the example's real report, its lists cut short."""
    ((_, body),) = blocks("<!-- audit json report:")
    result = run_cli(
        "audit", "examples/rollout_failures.jsonl", "--aliases", "examples/aliases.toml", "--format", "json"
    )
    assert result.returncode == 0, result.stderr
    real = json.loads(result.stdout)
    # Each line is JSON text, then two spaces or more, then what it means: keep the JSON.
    text = "\n".join(re.split(r"(?<=\S)\s{2,}", line, maxsplit=1)[0] for line in body.splitlines())
    shown = json.loads(re.sub(r",(\s*[}\]])", r"\1", text))
    assert list(shown) == list(real), "the same fields, in the same order"
    for key, value in shown.items():
        if key == "kinds":
            assert value == real["kinds"][: len(value)]
            assert list(value[0]) == list(real["kinds"][0])
        elif key == "canonical":
            assert value.items() <= real["canonical"].items()
        else:
            assert value == real[key], key


# Inputs where --strict fails because --field was never seen, each with the note the audit page quotes.
UNSEEN_FIELD = {
    "readme": (["README.txt"], {"README.txt": "hello\nworld\n"}),
    "empty keys": (["empty.jsonl"], {"empty.jsonl": '{}\n{"": 1}\n'}),
    "dotted key": (["flat.jsonl"], {"flat.jsonl": '{"response.failure_kind": "cancelled"}\n'}),
    "empty file": (["empty.jsonl"], {"empty.jsonl": ""}),
    "no file": (["nothing"], {"nothing/notes.txt": "not a log\n"}),
}


@pytest.mark.parametrize("case", UNSEEN_FIELD)
def test_audit_notes_are_quoted_as_printed(case: str, tmp_path: Path) -> None:
    """Each note of a --field never seen is on the audit page word for word, and fails --strict."""
    inputs, files = UNSEEN_FIELD[case]
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")
    result = run_cli("audit", "--strict", "--format", "json", *inputs, cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    assert json.loads(result.stdout)["field_missing"] is True
    notes = [line.partition("note: ")[2] for line in result.stderr.splitlines() if "note: " in line]
    assert notes, result.stderr
    prose = " ".join(page("audit.md").split())
    last = notes[-1]
    # The page shortens the note naming a dotted key to what follows its first "; ".
    shown = "..." + last[last.index("; ") :] if case == "dotted key" else last
    assert f"{shown}`" in prose, last


def test_repeated_inputs_note_is_quoted_as_printed(tmp_path: Path) -> None:
    (tmp_path / "a.jsonl").write_text('{"failure_kind": "cancelled"}\n', encoding="utf-8")
    (tmp_path / "link.jsonl").symlink_to("a.jsonl")
    result = run_cli("audit", "a.jsonl", "link.jsonl", "a.jsonl", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "failure-kinds audit: note: 2 inputs name a file already read" in result.stderr
    note = result.stderr.strip().partition("note: ")[2]
    assert f"`note: {note}`" in " ".join(page("audit.md").split())


def test_declaration_is_the_worked_examples() -> None:
    ((_, body),) = blocks("<!-- declaration:")
    example = tomllib.loads((ROOT / "examples" / "swe_env" / "pyproject.toml").read_text(encoding="utf-8"))
    assert tomllib.loads(body) == {"tool": {"failure-kinds": example["tool"]["failure-kinds"]}}


def vocabulary_generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("vocabulary_generator", DOCS / "vocabulary_table.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_vocabulary_page_holds_the_table_of_the_enum(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The committed table is what `failure-kinds list --format markdown` prints; `--check` of the script
    that writes it (run by `make lint`) fails on a stale one, which the script rewrites."""
    from failure_kinds import FailureKind

    source = page("vocabulary.md")
    listed = run_cli("list", "--format", "markdown")
    assert listed.returncode == 0, listed.stderr
    generator = vocabulary_generator()
    between = source.split(generator.BEGIN + "\n", 1)[1].split(generator.END, 1)[0]
    assert between == "\n" + listed.stdout + "\n"
    stale = tmp_path / "vocabulary.md"
    stale.write_text(
        source.replace(f"| `{FailureKind.CANCELLED.value}` |", "| `canceled` |", 1), encoding="utf-8"
    )
    monkeypatch.setattr(generator, "PAGE_PATH", stale)
    assert generator.main(["--check"]) == 1
    assert generator.main([]) == 0
    assert stale.read_text(encoding="utf-8") == source
    assert generator.main(["--check"]) == 0


def test_navigation_lists_every_page_once() -> None:
    """Zensical does not report a page missing from the navigation, as MkDocs' `validation: nav` did."""
    config = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    navigation = config.split("\nnav:\n", 1)[1].split("\n\n", 1)[0]
    listed = re.findall(r"^  - [^:\n]+: (\S+)$", navigation, flags=re.MULTILINE)
    assert len(listed) == len(navigation.splitlines()), "one `  - Title: page.md` line per entry"
    pages = sorted(path.name for path in DOCS.glob("*.md"))
    assert [name for name in pages if name not in listed] == [], "pages missing from the navigation"
    assert [name for name in listed if name not in pages] == [], "navigation entries with no page"
    assert len(set(listed)) == len(listed), "a page listed twice"


def test_every_relative_link_of_the_pages_is_a_file_of_the_site() -> None:
    """Zensical checks links to pages and their anchors, but not one to any other file (`missing.txt`,
    `no_such_dir/`), which MkDocs' strict build also failed on."""
    broken = [
        (document.name, target)
        for document in DOCS.glob("*.md")
        for target in re.findall(r"\]\(([^)\s]+)\)", document.read_text(encoding="utf-8"))
        if not re.match(r"[a-z]+:|#", target) and not (DOCS / target.split("#", 1)[0]).is_file()
    ]
    assert broken == []


def build_site(root: Path) -> tuple[int, str]:
    """`zensical build --strict` of the site whose mkdocs.yml is in `root`: its exit code and output."""
    result = subprocess.run(
        [sys.executable, "-m", "zensical", "build", "--strict"],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    return result.returncode, re.sub(r"\x1b\[[0-9;]*m", "", result.stdout + result.stderr)


def site_copy(tmp_path: Path) -> Path:
    """The site's sources in a folder of their own, so a build neither writes nor reads the checkout's
    build/site and .cache (Zensical takes site_dir and its cache relative to mkdocs.yml)."""
    root = tmp_path / "project"
    shutil.copytree(DOCS, root / "docs")
    for name in ("mkdocs.yml", "README.md"):
        shutil.copy(ROOT / name, root / name)
    (root / "src").symlink_to(ROOT / "src")
    return root


SITE_TOOLS = ("zensical", "mkdocstrings", "mkdocstrings_handlers")


@pytest.mark.interpreter_independent
@needs(*SITE_TOOLS)
def test_site_builds_strictly(tmp_path: Path) -> None:
    """`zensical build --strict` finds every link, anchor, included section and API object, and prints
    nothing but its progress: no warning, no banner."""
    root = site_copy(tmp_path)
    returncode, output = build_site(root)
    assert returncode == 0, output
    for line in output.splitlines():
        assert re.fullmatch(r"Build started|No issues found|Build finished in [0-9.]+m?s", line), output
    site = root / "build" / "site"
    vocabulary = (site / "vocabulary" / "index.html").read_text(encoding="utf-8")
    assert "<code>transport_timeout</code>" in vocabulary
    # A kind's name in a table never wraps inside the name (transport_unreachabl|e).
    assert "stylesheets/extra.css" in vocabulary
    assert "white-space: nowrap" in (site / "stylesheets" / "extra.css").read_text(encoding="utf-8")
    assert not (site / "vocabulary_table.py").exists()
    api = (site / "api" / "index.html").read_text(encoding="utf-8")
    assert "validate_failure_kind" in api
    # Docstrings are Markdown: a Sphinx role would show as raw text, and a constant inspected without a
    # docstring of its own would show its type's (frozenset's, str's) and, for a set, its hash order.
    api_text = html.unescape(re.sub(r"<[^>]+>", "", api))
    assert not re.search(r":(mod|func|class|data|meth|attr|exc|obj):", api_text)
    assert "frozenset() -> empty" not in api_text
    assert "str(object=" not in api_text
    assert "frozenset({" not in api_text
    assert 'OTHER_LABEL = "_other"' in api_text
    quickstart = (site / "quickstart" / "index.html").read_text(encoding="utf-8")
    assert "git+file://localhost/opt/failure-kinds@$commit" in quickstart, "the README's install is included"


@pytest.mark.interpreter_independent
@needs(*SITE_TOOLS)
@pytest.mark.parametrize(
    ("document", "added", "reported"),
    [
        ("quickstart.md", "[gone](missing.md)", "page does not exist"),
        ("quickstart.md", "[gone](audit.md#no-such-heading)", "anchor does not exist"),
        ("api.md", "::: failure_kinds.no_such_function", "failure_kinds.no_such_function could not be found"),
    ],
    ids=["link", "anchor", "api-reference"],
)
def test_site_build_fails_on_a_broken_reference(
    document: str, added: str, reported: str, tmp_path: Path
) -> None:
    root = site_copy(tmp_path)
    with (root / "docs" / document).open("a", encoding="utf-8") as page_file:
        page_file.write(f"\n{added}\n")
    returncode, output = build_site(root)
    assert returncode != 0
    assert reported in output


def test_diff_prints_changes_in_the_order_the_vocabulary_page_gives() -> None:
    """The page's paragraph on `failure-kinds diff`: incompatible changes first (a changed replacement,
    re-valued kinds, removals: kinds, older labels, stages), then additions (kinds, older labels, stages),
    deprecations and kinds no longer deprecated."""
    from failure_kinds.export import compare

    def kind(value: str, name: str, replaced_by: str | None = None) -> dict[str, object]:
        return {"value": value, "name": name, "replaced_by": replaced_by}

    old = {
        "kinds": [kind("a", "A"), kind("b", "B"), kind("d", "D", "a"), kind("e", "E")],
        "stages": [{"value": "s1"}],
        "older_labels": [{"label": "l1", "replacement": "a"}, {"label": "l2", "replacement": "a"}],
    }
    new = {
        "kinds": [kind("a", "A", "c"), kind("c", "C"), kind("d", "D"), kind("e2", "E")],
        "stages": [{"value": "s2"}],
        "older_labels": [{"label": "l2", "replacement": "c"}, {"label": "l3", "replacement": None}],
    }
    lines, compatible = compare(old, new)
    assert lines == [
        "changed replacement of older label l2: a -> c",
        "re-valued kind E: 'e' -> 'e2'",
        "removed kind b (B)",
        "removed older label l1",
        "removed stage s1",
        "added kind c (C)",
        "added older label l3 (no single replacement)",
        "added stage s2",
        "deprecated kind a: use c",
        "kind d is no longer deprecated",
    ]
    assert not compatible
    assert "what was added (kinds, then older labels, then stages)" in " ".join(page("vocabulary.md").split())


def test_parquet_example_script_explains_itself_and_writes_where_told(tmp_path: Path) -> None:
    script = ROOT / "examples" / "make_parquet_example.py"
    shipped = ROOT / "examples" / "rollout_failures.parquet"
    before = shipped.read_bytes()
    shown = subprocess.run(
        [sys.executable, str(script), "--help"], capture_output=True, text=True, timeout=60, check=False
    )
    assert (shown.returncode, shown.stderr) == (0, "")
    assert "--output PATH" in shown.stdout
    assert "overwritten" in shown.stdout
    wrong = subprocess.run(
        [sys.executable, str(script), "--outptu", "x"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert wrong.returncode == 2
    assert "unrecognized arguments: --outptu x" in wrong.stderr
    assert shipped.read_bytes() == before


@needs("pyarrow")
def test_parquet_example_script_writes_the_shipped_bytes(tmp_path: Path) -> None:
    target = tmp_path / "again.parquet"
    script = ROOT / "examples" / "make_parquet_example.py"
    result = subprocess.run(
        [sys.executable, str(script), "--output", str(target)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert (result.returncode, result.stdout, result.stderr) == (0, f"{target}\n", "")
    pq: Any = importlib.import_module("pyarrow.parquet")  # pyarrow ships no types

    shipped = ROOT / "examples" / "rollout_failures.parquet"
    assert pq.read_table(target).equals(pq.read_table(shipped))
    # The file names the pyarrow that wrote it, so only that version can give the shipped bytes; any
    # version gives the same bytes twice.
    written_by = pq.ParquetFile(shipped).metadata.created_by
    if written_by == pq.ParquetFile(target).metadata.created_by:
        assert target.read_bytes() == shipped.read_bytes()
    second = tmp_path / "second.parquet"
    subprocess.run([sys.executable, str(script), "--output", str(second)], capture_output=True, check=True)
    assert second.read_bytes() == target.read_bytes()
    missing = tmp_path / "no" / "such" / "folder.parquet"
    failed = subprocess.run(
        [sys.executable, str(script), "--output", str(missing)], capture_output=True, text=True, timeout=120
    )
    assert failed.returncode == 2
    assert failed.stderr.startswith(f"make_parquet_example.py: {missing}: ")
    assert "Traceback" not in failed.stderr
