"""The README and the pages in docs/ say what the code does: they are run, compared and built.

A recipe (a python block after `<!-- recipe: NAME -->`) writes exactly its `# logs: TEXT` lines to stderr
and its `# prints: TEXT` lines to stdout; `#   error: TEXT` after a commented-out call is what mypy says
of it uncommented (`...` ends a shortened message). Such a line too long for the page goes on over the
next ones, each indented under its text. In a block after `<!-- commands: ... -->`, each `$ COMMAND` run
from the top directory prints exactly the lines below it."""

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
from typing import Any

import pytest
from helpers import DOCUMENTS, ROOT, commands_shown, doc_recipes, needs, run_cli

from failure_kinds import FailureKind

DOCS = ROOT / "docs"
README = (ROOT / "README.md").read_text(encoding="utf-8")
LOGGED = re.compile(r"^# logs: (?P<line>.*)$", flags=re.MULTILINE)
PRINTED = re.compile(r"^# prints: (?P<line>.*)$", flags=re.MULTILINE)
CHECKED = re.compile(r"^# (?P<code>\w+\(.*\)) .*\n#   error: (?P<message>.*)$", flags=re.MULTILINE)
WRAPPED = re.compile(r"\n#\s{6,}(?=\S)")  # a comment line going on from the one above, indented under it
# No line of a python block is longer: the home page's first example (the README's) is shown whole at
# 1,280 pixels, where a code block holds about 85 characters (656 pixels of 7.7-pixel characters).
LONGEST, LONGEST_FIRST = 100, 84
# A fenced block with the comment line right above it (or None), its info string and its body.
FENCED = re.compile(r"(?:^(?P<marker><!--[^\n]*-->)\n)?^```(?P<info>[a-z]*)\n(?P<body>.*?)^```$", re.M | re.S)
PYTEST_RECIPE = "<!-- pytest recipe:"
COMMANDS = "<!-- commands:"
# Blocks of commands run by tests/test_worked_example.py and tests/test_adopting.py.
RUN_ELSEWHERE = ("<!-- worked example:", "<!-- adopting:")
FOUND = [
    (document, found) for document in DOCUMENTS for found in FENCED.finditer(document.read_text("utf-8"))
]


def blocks(marker: str) -> list[tuple[Path, str]]:
    """Every fenced block right after a comment line starting with `marker`."""
    return [
        (document, found["body"]) for document, found in FOUND if (found["marker"] or "").startswith(marker)
    ]


def said(code: str) -> str:
    """``code`` with each comment that goes on over lines rejoined: what the comparisons read."""
    return WRAPPED.sub(" ", code)


def page(name: str) -> str:
    """The page's text with its lines joined, as a quote from it is searched for."""
    return " ".join((DOCS / name).read_text(encoding="utf-8").split())


def test_readme_keeps_to_its_budget_and_its_links_lead_somewhere() -> None:
    assert len(README.splitlines()) <= 250
    sections = re.findall(r"^## (.*)$", README, flags=re.MULTILINE)
    assert {"Try it", "Use it in your code", "Install", "Documentation"} <= set(sections)
    # What a new user runs first comes first, right under the introduction.
    assert sections[0] == "Try it"
    try_it = README.split("\n## ")[1]
    for command in (
        "pip install .",
        "make demo",
        "make test",
        "failure-kinds audit examples/rollout_failures",
    ):
        assert command in try_it, command
    # An environment is made and activated before anything is installed, and each command says what for.
    lines = try_it.split("```")[1].strip().splitlines()
    commands = [line.partition("#")[0].strip() for line in lines]
    assert commands[:3] == ["python3 -m venv .venv/try", ". .venv/try/bin/activate", "pip install ."]
    assert all(len(line.partition("#")[2]) > 10 for line in lines)
    assert [line for line in FENCED.sub("", README).splitlines() if len(line) > 120] == []
    assert README.count("https://github.com/NVIDIA-NeMo/Gym/blob/main/nemo_gym/failure_kinds.py") == 1
    # How the suite holds the documents to the code is for contributors, not among a user's instructions.
    assert re.search(r"the test suite (runs|type-checks)|run by the test suite", README) is None
    local = [target for target in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", README) if "://" not in target]
    assert [target for target in local if not (ROOT / target).exists()] == []
    assert {f"docs/{path.name}" for path in DOCS.glob("*.md")} <= set(local), "every page is linked"
    # Each `--8<-- "README.md:NAME"` of a page has its start and end markers in the README.
    included = [
        name
        for document in DOCUMENTS
        for name in re.findall(r'--8<-- "README\.md:([\w-]+)"', document.read_text("utf-8"))
    ]
    assert set(included) == {"first-use", "install", "pre-commit"}
    for name in included:
        assert README.index(f"<!-- --8<-- [end:{name}] -->") > README.index(f"<!-- --8<-- [start:{name}] -->")


def test_no_release_tag_is_named() -> None:
    # A clone carries no tags, so no document may install from or pin to one.
    for path in [*DOCUMENTS, ROOT / "CHANGELOG.md", ROOT / "CONTRIBUTING.md"]:
        text = path.read_text(encoding="utf-8")
        # A tag such as v1.2.3, not a version inside a URL (semver.org/spec/v2.0.0.html).
        assert re.findall(r"(?<![/\w])v\d+\.\d+\.\d+\b", text) == [], path.name
        assert "rev: v" not in text, path.name


def test_every_block_of_code_or_commands_is_run() -> None:
    # A python block is a recipe; a `$ COMMAND` block is run here or by the module its marker names.
    recipes = ("<!-- recipe:", PYTEST_RECIPE)
    unmarked = [
        f"{document.name}: {found['body'].splitlines()[0]}"
        for document, found in FOUND
        if found["info"] == "python" and not (found["marker"] or "").startswith(recipes)
    ]
    assert unmarked == []
    assert {"first_use", "dataclass", "typeddict", "pydantic", "metric_label", "namespaced"} <= {
        *doc_recipes()
    }
    shells = [
        (document.name, found["marker"] or "") for document, found in FOUND if found["body"].startswith("$ ")
    ]
    assert shells
    assert [shown for shown in shells if not shown[1].startswith((COMMANDS, *RUN_ELSEWHERE))] == []
    assert {"lint.md", "cli.md"} <= {document for document, _, _ in sessions()}
    first_use = doc_recipes()["first_use"]  # the first recipe shows a log line and a checker error
    assert LOGGED.findall(said(first_use))
    assert CHECKED.findall(said(first_use))


def test_no_line_of_python_is_longer_than_a_page_shows() -> None:
    # An output block (a terminal session, a report) keeps its lines whole.
    long = [
        f"{document.name}: {line}"
        for document, found in FOUND
        if found["info"] == "python"
        for line in found["body"].splitlines()
        if len(line) > LONGEST
    ]
    assert long == []
    assert max(map(len, doc_recipes()["first_use"].splitlines())) <= LONGEST_FIRST


def needs_for(code: str) -> list[pytest.MarkDecorator]:
    imported = re.findall(r"^(?:from|import) (pydantic|opentelemetry|prometheus_client)\b", code, flags=re.M)
    return [needs(name) for name in sorted(set(imported))]


RECIPES = [pytest.param(name, marks=needs_for(code), id=name) for name, code in sorted(doc_recipes().items())]


@pytest.mark.parametrize("name", RECIPES)
def test_recipe_runs(name: str, tmp_path: Path) -> None:
    code = doc_recipes()[name]
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stderr.splitlines() == LOGGED.findall(said(code))
    assert result.stdout.splitlines() == PRINTED.findall(said(code))


@pytest.fixture(scope="module")
def mypy_errors(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[str]]:
    """mypy's errors, in one run against the stub, for each recipe and each with its Nth rejected call
    uncommented at its end (`NAME-N`)."""
    folder = tmp_path_factory.mktemp("recipes")
    files: dict[str, str] = {}  # the name of each case by its file's
    for name, code in doc_recipes().items():
        (folder / f"recipe_{name}.py").write_text(code, encoding="utf-8")
        files[f"recipe_{name}.py"] = name
        for index, found in enumerate(CHECKED.finditer(said(code))):
            (folder / f"recipe_{name}__{index}.py").write_text(code + found["code"] + "\n", encoding="utf-8")
            files[f"recipe_{name}__{index}.py"] = f"{name}-{index}"
    options = ["--config-file", str(ROOT / "mypy.ini"), "--cache-dir", str(folder / ".cache")]
    options += ["--no-error-summary", "--hide-error-codes", *sorted(map(str, folder.glob("*.py")))]
    result = subprocess.run(
        [sys.executable, "-m", "mypy", *options], cwd=ROOT, capture_output=True, text=True
    )
    assert result.returncode in (0, 1), result.stdout + result.stderr
    errors: dict[str, list[str]] = {name: [] for name in files.values()}
    for file, message in re.findall(r"^(\S+\.py):\d+: error: (.*)$", result.stdout, flags=re.MULTILINE):
        errors[files[Path(file).name]].append(message)
    return errors


@needs("mypy")
@pytest.mark.parametrize("name", RECIPES)
def test_recipe_shows_what_mypy_says(name: str, mypy_errors: dict[str, list[str]]) -> None:
    assert mypy_errors[name] == []
    for index, found in enumerate(CHECKED.finditer(said(doc_recipes()[name]))):
        (error,) = mypy_errors[f"{name}-{index}"]
        shown = found["message"]
        assert (
            error.startswith(shown.removesuffix("...").rstrip()) if shown.endswith("...") else error == shown
        ), error


def test_validation_page_quotes_each_form_of_the_unregistered_warning_as_logged() -> None:
    values = ["judge_faild", "zzz_invented", "timeout", "sandbox", "SWE_env:patch"]
    emit = f"import failure_kinds as fk\nfor value in {values}: fk.validate_failure_kind(value)"
    logged = subprocess.run([sys.executable, "-c", emit], capture_output=True, text=True).stderr.splitlines()
    assert [line.partition("; ")[0] for line in logged] == [
        f"unregistered failure_kind {v!r}" for v in values
    ]
    assert all(line.endswith(" Reported once per name.") for line in logged)
    # Quoted whole, but the note of an older label without a replacement, which stops at its "Otherwise".
    quoted = [
        line if "sandbox" not in line else line.split(" Otherwise")[0] + " Otherwise ..." for line in logged
    ]
    assert [line for line in quoted if f"`{line}" not in page("validation.md")] == []
    # Where the warning says to read how a kind is registered is a heading of that page.
    assert "(how: docs/validation.md#declaring-an-environments-own-kinds)" in logged[0]
    assert "\n## Declaring an environment's own kinds\n" in (DOCS / "validation.md").read_text("utf-8")


def test_pytest_recipe_passes_and_fails_on_a_misspelling(tmp_path: Path) -> None:
    ((_, code),) = blocks(PYTEST_RECIPE)
    assert '"judge_failed"' in code
    (tmp_path / "test_as_written.py").write_text(code, encoding="utf-8")
    (tmp_path / "test_misspelled.py").write_text(
        code.replace('"judge_failed"', '"judge_faild"'), encoding="utf-8"
    )
    options = ["-rA", "-p", "no:cacheprovider", "-p", "no:randomly", "--strict-markers"]
    command = [sys.executable, "-m", "pytest", *options, "--failure-kinds-strict"]
    result = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True)
    assert result.returncode == 1, result.stdout + result.stderr
    outcomes = re.findall(r"^(PASSED|FAILED) (\w+\.py)::", result.stdout, flags=re.MULTILINE)
    # The test the marker allows its misspelling passes in both files.
    written, misspelled = ("PASSED", "test_as_written.py"), ("PASSED", "test_misspelled.py")
    assert sorted(outcomes) == [("FAILED", "test_misspelled.py"), written, written, misspelled]
    assert "judge_faild" in result.stdout


def sessions() -> list[tuple[str, str, str]]:
    """(page, command, output) for every `$ COMMAND` of every commands block."""
    return [(document.name, *shown) for document, body in blocks(COMMANDS) for shown in commands_shown(body)]


@pytest.mark.parametrize(("document", "shown", "output"), sessions(), ids=lambda value: value[:30])
def test_command_prints_what_the_page_shows(document: str, shown: str, output: str) -> None:
    program, *arguments = shlex.split(shown)
    assert program == "failure-kinds", f"{document}: only the package's command is run here"
    result = run_cli(*arguments)
    assert result.stderr == ""
    assert result.returncode in (0, 1)  # 1: the findings the example is there to show
    assert result.stdout == output


def test_audit_json_report_is_the_example_report() -> None:
    # The report on the audit page is valid JSON and the first example's real one, its lists cut short.
    ((_, body),) = blocks("<!-- audit json report:")
    example = ("examples/upstream_records.jsonl", "--field", "failure.failure_kind", "--format", "json")
    result = run_cli("audit", *example)
    assert result.returncode == 0, result.stderr
    real, shown = json.loads(result.stdout), json.loads(body)
    assert list(shown) == list(real), "the same fields, in the same order"
    for key, value in shown.items():
        assert value == (real[key][: len(value)] if isinstance(value, list) else real[key]), key
    table = [
        line for line in (DOCS / "audit.md").read_text(encoding="utf-8").splitlines() if line[:3] == "| `"
    ]
    assert [key for key in real if not any(f"`{key}`" in line for line in table)] == []  # each key explained


# Inputs where --strict fails because --field was never seen, each with the note the audit page quotes
# (the one naming where the kinds are shortened to what follows its first "; "), and the note on inputs
# naming a file already read.
NOTES = {
    "readme": (["README.txt"], {"README.txt": "hello\nworld\n"}, 1),
    "empty keys": (["empty.jsonl"], {"empty.jsonl": '{}\n{"": 1}\n'}, 1),
    "elsewhere": (["nested.jsonl"], {"nested.jsonl": '{"result": {"failure_kind": "cancelled"}}\n'}, 1),
    "empty file": (["empty.jsonl"], {"empty.jsonl": ""}, 1),
    "no file": (["nothing"], {"nothing/notes.txt": "not a log\n"}, 1),
    "repeated": (["a.jsonl", "link.jsonl", "a.jsonl"], {"a.jsonl": '{"failure_kind": "cancelled"}\n'}, 0),
}


@pytest.mark.parametrize("case", NOTES)
def test_audit_notes_are_quoted_as_printed(case: str, tmp_path: Path) -> None:
    inputs, files, status = NOTES[case]
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")
    if case == "repeated":
        (tmp_path / "link.jsonl").symlink_to("a.jsonl")
    result = run_cli("audit", "--strict", "--format", "json", *inputs, cwd=tmp_path)
    assert result.returncode == status, result.stderr
    assert json.loads(result.stdout)["field_missing"] is (status == 1)
    notes = [line.partition("note: ")[2] for line in result.stderr.splitlines() if "note: " in line]
    assert notes, result.stderr
    last = notes[-1]
    if case == "repeated":
        assert last.startswith("2 inputs name a file already read")
        assert f"`note: {last}`" in page("audit.md")
    else:
        shown = "..." + last[last.index("; ") :] if case == "elsewhere" else last
        assert f"{shown}`" in page("audit.md"), last


def test_declaration_is_the_worked_examples() -> None:
    ((_, body),) = blocks("<!-- declaration:")
    example = tomllib.loads((ROOT / "examples" / "swe_env" / "pyproject.toml").read_text(encoding="utf-8"))
    assert tomllib.loads(body) == {"tool": {"failure-kinds": example["tool"]["failure-kinds"]}}


def test_vocabulary_page_holds_the_table_of_the_enum() -> None:
    # stubs/generate.py writes the table; this holds it to the command's output.
    listed = run_cli("list", "--format", "markdown")
    assert listed.returncode == 0, listed.stderr
    source = (DOCS / "vocabulary.md").read_text(encoding="utf-8")
    table = re.search(
        r"<!-- vocabulary table: begin\.[^\n]*-->\n(.*?)<!-- vocabulary table: end -->", source, re.S
    )
    assert table is not None
    assert table[1] == "\n" + listed.stdout + "\n"


def test_navigation_lists_every_page_once_and_every_link_is_a_file_of_the_site() -> None:
    # Zensical checks neither: a page missing from the nav, a link to a file that is not a page.
    navigation = (ROOT / "mkdocs.yml").read_text(encoding="utf-8").split("\nnav:\n", 1)[1].split("\n\n", 1)[0]
    listed = re.findall(r"^  - [^:\n]+: (\S+)$", navigation, flags=re.MULTILINE)
    assert len(listed) == len(navigation.splitlines()), "one `  - Title: page.md` line per entry"
    assert sorted(listed) == sorted(path.name for path in DOCS.glob("*.md")), "each page listed once"
    broken = [
        (document.name, target)
        for document in DOCS.glob("*.md")
        for target in re.findall(r"\]\(([^)\s]+)\)", document.read_text(encoding="utf-8"))
        if not re.match(r"[a-z]+:|#", target) and not (DOCS / target.split("#", 1)[0]).is_file()
    ]
    assert broken == []


SITE_TOOLS = ("zensical", "mkdocstrings", "mkdocstrings_handlers")


def build_site(tmp_path: Path, added: dict[str, str]) -> tuple[int, str, Path]:
    """`zensical build --strict` of a copy of the sources (so the checkout's build/ and .cache stay out),
    with ``added`` appended to its pages: its exit code, its output and the copy's folder."""
    root = tmp_path / "project"
    shutil.copytree(DOCS, root / "docs")
    for name in ("mkdocs.yml", "README.md"):
        shutil.copy(ROOT / name, root / name)
    (root / "src").symlink_to(ROOT / "src")
    for document, text in added.items():
        with (root / "docs" / document).open("a", encoding="utf-8") as page_file:
            page_file.write(f"\n{text}\n")
    command = [sys.executable, "-m", "zensical", "build", "--strict"]
    result = subprocess.run(command, cwd=root, capture_output=True, text=True, timeout=300, check=False)
    return result.returncode, re.sub(r"\x1b\[[0-9;]*m", "", result.stdout + result.stderr), root


@pytest.mark.interpreter_independent
@needs(*SITE_TOOLS)
def test_site_builds_strictly(tmp_path: Path) -> None:
    # Every link, anchor, included section and API object is found, and only progress is printed.
    returncode, output, root = build_site(tmp_path, {})
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
    for shown in ("frozenset() -> empty", "str(object=", "frozenset({"):
        assert shown not in api_text
    assert 'OTHER_LABEL = "_other"' in api_text
    # Each kind with its value and its own meaning, in the enum's order; nothing said twice.
    words = " ".join(api_text.split())
    starts = [words.index(f"{kind.name} = {kind.value!r}") for kind in FailureKind] + [len(words)]
    for index, kind in enumerate(FailureKind):
        assert starts[index] < words.index(kind.description) < starts[index + 1], kind
    for said_once in ("Why a rollout failed.", "Where an episode failed,", "loads only the standard library"):
        assert words.count(said_once) == 1, said_once
    assert 'id="failurekindfield"' in api
    assert "replaced_by: FailureKind | None property" in words  # dir() of an enum hides its properties
    quickstart = (site / "quickstart" / "index.html").read_text(encoding="utf-8")
    assert "git+file://localhost/opt/failure-kinds@$commit" in quickstart, "the README's install is included"


# Zensical reports every broken link and anchor of a build, but stops at the first API reference it cannot
# find: two builds.
BROKEN = {
    "link and anchor": ({"quickstart.md": "[gone](missing.md)\n\n[gone](audit.md#no-such-heading)"},
                        ["page does not exist", "anchor does not exist"]),
    "api-reference": ({"api.md": "::: failure_kinds.no_such_function"},
                      ["failure_kinds.no_such_function could not be found"]),
}  # fmt: skip


@pytest.mark.interpreter_independent
@needs(*SITE_TOOLS)
@pytest.mark.parametrize("case", BROKEN)
def test_site_build_fails_on_a_broken_reference(case: str, tmp_path: Path) -> None:
    added, reported = BROKEN[case]
    returncode, output, _ = build_site(tmp_path, added)
    assert returncode != 0
    assert [message for message in reported if message not in output] == []


def test_diff_prints_changes_in_the_order_the_vocabulary_page_gives() -> None:
    from failure_kinds.export import compare

    def kinds(*triples: tuple[str, str, str | None]) -> list[dict[str, object]]:
        return [dict(zip(("value", "name", "replaced_by"), triple, strict=True)) for triple in triples]

    old = {
        "kinds": kinds(("a", "A", None), ("b", "B", None), ("d", "D", "a"), ("e", "E", None)),
        "stages": [{"value": "s1"}],
        "older_labels": [{"label": "l1", "replacement": "a"}, {"label": "l2", "replacement": "a"}],
    }
    new = {
        "kinds": kinds(("a", "A", "c"), ("c", "C", None), ("d", "D", None), ("e2", "E", None)),
        "stages": [{"value": "s2"}],
        "older_labels": [{"label": "l2", "replacement": "c"}, {"label": "l3", "replacement": None}],
    }
    assert compare(old, new) == (
        [
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
        ],
        False,
    )
    assert "what was added (kinds, then older labels, then stages)" in page("vocabulary.md")


def parquet_script(*arguments: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, str(ROOT / "examples" / "make_parquet_example.py"), *arguments]
    return subprocess.run(command, capture_output=True, text=True, timeout=120)


@needs("pyarrow")
def test_parquet_example_script_writes_the_shipped_bytes_where_told(tmp_path: Path) -> None:
    shipped = ROOT / "examples" / "rollout_failures.parquet"
    before = shipped.read_bytes()
    shown = parquet_script("--help")
    assert (shown.returncode, shown.stderr) == (0, "")
    assert "--output PATH" in shown.stdout
    assert "overwritten" in shown.stdout
    wrong = parquet_script("--outptu", "x")
    assert wrong.returncode == 2
    assert "unrecognized arguments: --outptu x" in wrong.stderr
    target, second = tmp_path / "again.parquet", tmp_path / "second.parquet"
    for path in (target, second):
        written = parquet_script("--output", str(path))
        assert (written.returncode, written.stdout, written.stderr) == (0, f"{path}\n", "")
    pq: Any = importlib.import_module("pyarrow.parquet")  # pyarrow ships no types
    assert pq.read_table(target).equals(pq.read_table(shipped))
    # The file names the pyarrow that wrote it, so only that version can give the shipped bytes; any
    # version gives the same bytes twice.
    if pq.ParquetFile(shipped).metadata.created_by == pq.ParquetFile(target).metadata.created_by:
        assert target.read_bytes() == shipped.read_bytes()
    assert second.read_bytes() == target.read_bytes()
    missing = tmp_path / "no" / "such" / "folder.parquet"
    failed = parquet_script("--output", str(missing))
    assert failed.returncode == 2
    assert failed.stderr.startswith(f"make_parquet_example.py: {missing}: ")
    assert "Traceback" not in failed.stderr
    assert shipped.read_bytes() == before
