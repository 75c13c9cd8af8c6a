"""The adoption walkthrough (docs/adopting.md) as written: on a copy of examples/adopting, each command, in
order, prints exactly what the page shows and earns the exit code given here."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

from helpers import ROOT, commands_shown
from helpers import command as command_line

PAGE = ROOT / "docs" / "adopting.md"
EXAMPLE = ROOT / "examples" / "adopting"
STEP = re.compile(
    r"^<!-- adopting(?P<declaration> declaration)?: [^\n]*-->\n```[a-z]*\n(?P<body>.*?)^```$", re.M | re.S
)
# One exit code per command shown, in order: the older constant's warning does not stop the program; the
# lint, its --diff and --fix have findings left (or changes to make); the strict audit has findings.
EXIT_CODES = [0, 1, 1, 1, 1, 1]


def steps() -> list[tuple[str, str]]:
    """("declaration", TOML) or (command, output) for every marked block of the page, in order."""
    found: list[tuple[str, str]] = []
    for step in STEP.finditer(PAGE.read_text(encoding="utf-8")):
        if step["declaration"]:
            found.append(("declaration", step["body"]))
            continue
        found.extend(commands_shown(step["body"]))
    return found


def run(shown: str, folder: Path) -> subprocess.CompletedProcess[str]:
    program, *arguments = shlex.split(shown)
    # `< FILE` at the end, as a shell reads it: the file, from the folder, is the program's stdin.
    stdin = None
    if arguments[-2:-1] == ["<"]:
        stdin = (folder / arguments[-1]).read_text(encoding="utf-8")
        arguments = arguments[:-2]
    if program == "failure-kinds":
        argv = command_line(*arguments)
    else:
        assert program == "python", f"the walkthrough runs only the package's command and python: {shown}"
        argv = [sys.executable, *arguments]
    environment = {
        **os.environ,
        "PYTHONIOENCODING": "utf-8",
        "PYTHONDONTWRITEBYTECODE": "1",
        "COLUMNS": "200",
    }
    environment.pop("PYTHONWARNINGS", None)  # the page shows Python's default warning filters
    # One stream, as a terminal shows them: the warning is written before the program's buffered output.
    return subprocess.run(
        argv, cwd=folder, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, encoding="utf-8",
        env=environment, input=stdin, timeout=120, check=False,
    )  # fmt: skip


def test_the_page_walks_through_every_step_and_each_prints_what_the_page_shows(tmp_path: Path) -> None:
    shown = [" ".join(shlex.split(command)[:2]) for command, _ in steps()]
    lint = "failure-kinds lint"
    assert shown == ["python -", lint, lint, lint, "declaration", lint, "failure-kinds audit"]
    assert [command for command, _ in steps() if "--fix" in command or "--diff" in command] == [
        "failure-kinds lint --diff web_env",
        "failure-kinds lint --fix web_env",
    ]
    headings = re.findall(r"^## (.*)$", PAGE.read_text(encoding="utf-8"), flags=re.MULTILINE)
    assert headings == ["1. Swap the import", "2. Run the lint", "3. Fix the older labels",
                        "4. Declare the namespaces you use", "5. Audit the old logs"]  # fmt: skip
    folder = tmp_path / "adopting"
    shutil.copytree(EXAMPLE, folder)
    source = folder / "web_env" / "producer.py"
    before = source.read_text(encoding="utf-8")
    codes: list[int] = []
    for shown, output in steps():
        if shown == "declaration":
            with (folder / "pyproject.toml").open("a", encoding="utf-8") as configuration:
                configuration.write("\n" + output)
            continue
        result = run(shown, folder)
        assert result.stdout == output, shown
        codes.append(result.returncode)
        if "--diff" in shown:
            assert source.read_text(encoding="utf-8") == before, "--diff writes nothing"
    assert codes == EXIT_CODES
    # --fix changed exactly the three literals it printed, and every other byte stayed.
    after = source.read_text(encoding="utf-8")
    for old, new in (("peer_drop", "transport_peer_drop"), ("oom_killed", "provider_oom_killed")):
        assert f'"{old}"' in before
        assert f'"{new}"' in after
    assert (
        after.replace('"transport_peer_drop"', '"peer_drop"', 1)
        .replace('"provider_oom_killed"', '"oom_killed"')
        .replace('"transport_timeout"', '"timeout"')
        == before
    )
    declared = tomllib.loads((folder / "pyproject.toml").read_text(encoding="utf-8"))
    assert declared["tool"]["failure-kinds"]["namespaces"] == {
        "web_env": ["page_load_failed", "element_not_found"]
    }


def test_the_shipped_example_is_the_starting_point() -> None:
    # As before adoption: no declaration, the older labels in its code, every category in its log.
    configuration = tomllib.loads((EXAMPLE / "pyproject.toml").read_text(encoding="utf-8"))
    assert "failure-kinds" not in configuration.get("tool", {})
    producer = (EXAMPLE / "web_env" / "producer.py").read_text(encoding="utf-8")
    for label in ('"peer_drop"', '"oom_killed"', '"timeout"', '"sandbox"', "fk.PEER_DROP", 'stage="agent"'):
        assert label in producer, label
    log = (EXAMPLE / "logs" / "rollouts-2026-10.jsonl").read_text(encoding="utf-8")
    for value in ("peer_drop", "web_env:page_load_faild", "judge_faild", "agent_timeout"):
        assert f'"{value}"' in log, value
