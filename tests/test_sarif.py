"""`failure-kinds lint --format sarif`: a SARIF 2.1.0 log that GitHub code scanning accepts, checked against
what GitHub documents of an upload and by Microsoft's SARIF validator, and whose fixes are what --fix does."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any
from urllib.parse import unquote_to_bytes

import pytest
from helpers import ROOT, TIMEOUT, run_cli

import failure_kinds
from failure_kinds import lint

# Microsoft's validator (npm @microsoft/sarif-multitool), where `make test` installs it. Its binary is run
# directly: npm's wrapper passes the arguments through a shell.
VALIDATOR = next(
    iter(sorted(ROOT.glob(".venv/npm/node_modules/@microsoft/sarif-multitool-*/Sarif.Multitool"))), None
)

# Two fixes on one line, a prefixed triple-quoted literal, a label without a single replacement, an older
# constant, a non-ASCII character before a finding, and a comparison, which --fix leaves alone.
SOURCE = """\
import failure_kinds as fk
row = {"failure_kind": "judge_faild"}
pair = [dict(failure_kind="timeout"), dict(failure_kind='peer_drop')]
x = {"failure_kind": r\"\"\"resource\"\"\"}
y = {"é": 1, "failure_kind": "oom_killed"}
z = {"failure_kind": "sandbox", "other": fk.PEER_DROP}
if row["failure_kind"] == "unreachable":
    pass
"""
NAME = "a b%é,#?.py"
LEVELS = {"note", "warning", "error"}


def project(tmp_path: Path) -> Path:
    """A repository with a source file whose name needs escaping in a URI, a file that does not parse, a
    symbolic link to the first, and a file outside the repository beside it."""
    repo = tmp_path / "repo"
    (repo / "src").mkdir(parents=True)
    (repo / "src" / NAME).write_text(SOURCE, encoding="utf-8")
    (repo / "src" / "broken.py").write_text("def (:\n")
    os.symlink(NAME, repo / "src" / "link.py")
    (tmp_path / "outside.py").write_text('row = {"failure_kind": "bad"}\n')
    return repo


def sarif(repo: Path, *paths: str) -> dict[str, Any]:
    result = run_cli("lint", "--format", "sarif", *paths, cwd=repo)
    assert result.returncode == 1, result.stderr
    log: dict[str, Any] = json.loads(result.stdout)
    return log


def located(log: dict[str, Any], result: dict[str, Any]) -> Path:
    """The file a result's location names, resolved as a reader of the log resolves it."""
    location = result["locations"][0]["physicalLocation"]["artifactLocation"]
    base = (
        log["runs"][0]["originalUriBaseIds"][location["uriBaseId"]]["uri"] if "uriBaseId" in location else ""
    )
    uri = base + location["uri"]
    assert uri.startswith("file:///")
    return Path(os.fsdecode(unquote_to_bytes(uri.removeprefix("file://"))))


def test_the_log_holds_what_github_code_scanning_requires(tmp_path: Path) -> None:
    # GitHub's "SARIF support for code scanning": the properties it marks required, non-empty, and the
    # limits past which an upload is rejected or cut. partialFingerprints, also marked required, is
    # computed from the files by github/codeql-action/upload-sarif when it is absent.
    repo = project(tmp_path)
    log = sarif(repo, "src", "../outside.py")
    assert log["$schema"] == "https://json.schemastore.org/sarif-2.1.0.json"
    assert log["version"] == "2.1.0"
    (run,) = log["runs"]  # at most 20 runs a file
    driver = run["tool"]["driver"]
    assert (driver["name"], driver["version"]) == ("failure-kinds", failure_kinds.__version__)
    rules = driver["rules"]
    assert [rule["id"] for rule in rules] == list(lint.CODES)  # at most 25,000 rules a run
    for rule in rules:
        assert 0 < len(rule["shortDescription"]["text"]) <= 1024
        assert 0 < len(rule["fullDescription"]["text"]) <= 1024
        assert rule["help"]["text"]
        assert len(rule.get("name", "")) <= 255
        assert rule["defaultConfiguration"]["level"] in LEVELS
    assert run["columnKind"] == "unicodeCodePoints"
    results = run["results"]
    assert 0 < len(results) <= 25_000
    for result in results:
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"]
        assert result["level"] in LEVELS
        assert result["message"]["text"]
        assert 1 <= len(result["locations"]) <= 10  # GitHub annotates the first
        physical = result["locations"][0]["physicalLocation"]
        assert physical["artifactLocation"]["uri"]
        region = physical["region"]
        assert region["startLine"] >= 1
        assert region["startColumn"] >= 1
        if "endLine" in region:
            assert (region["endLine"], region["endColumn"]) > (region["startLine"], region["startColumn"])
        assert located(log, result).is_file()
    codes = [result["ruleId"] for result in results]
    assert codes == ["FK001", *["FK004"] * 7, "FK000", "FK001"]


def test_locations_are_percent_encoded_relative_uris_of_the_files_themselves(tmp_path: Path) -> None:
    repo = project(tmp_path)
    log = sarif(repo, "src/link.py", "src/broken.py", "../outside.py")
    run = log["runs"][0]
    assert run["originalUriBaseIds"] == {"%SRCROOT%": {"uri": repo.resolve().as_uri() + "/"}}
    artifacts = [result["locations"][0]["physicalLocation"]["artifactLocation"] for result in run["results"]]
    # The link's target, as code scanning cannot show a result in a link; the outside file by its full URI.
    assert artifacts[0] == {"uri": "src/a%20b%25%C3%A9%2C%23%3F.py", "uriBaseId": "%SRCROOT%"}
    assert {"uri": "src/broken.py", "uriBaseId": "%SRCROOT%"} in artifacts
    assert artifacts[-1] == {"uri": (tmp_path / "outside.py").resolve().as_uri()}


def test_regions_are_one_based_characters_and_fixes_are_what_fix_writes(tmp_path: Path) -> None:
    repo = project(tmp_path)
    target = repo / "src" / NAME
    results = sarif(repo, "src")["runs"][0]["results"]
    lines = SOURCE.splitlines(keepends=True)
    # Every literal's region runs from its first character to just after its last.
    regions = [result["locations"][0]["physicalLocation"]["region"] for result in results]
    texts = [
        lines[region["startLine"] - 1][region["startColumn"] - 1 : region["endColumn"] - 1]
        if "endColumn" in region
        else None
        for region in regions
    ]
    assert texts == [
        '"judge_faild"',
        '"timeout"',
        "'peer_drop'",
        'r"""resource"""',
        '"oom_killed"',
        '"sandbox"',
        None,  # fk.PEER_DROP, a name: no end is given
        '"unreachable"',
        None,  # broken.py, which does not parse
    ]
    fixed = {result["message"]["text"].split("'")[1] for result in results if "fixes" in result}
    assert {"oom_killed", "peer_drop", "resource", "timeout"} <= fixed
    # Applying the log's replacements gives, byte for byte, the file --fix writes.
    replacements = [
        replacement
        for result in results
        for fix in result.get("fixes", [])
        for change in fix["artifactChanges"]
        for replacement in change["replacements"]
    ]
    for replacement in sorted(
        replacements,
        key=lambda item: (item["deletedRegion"]["startLine"], item["deletedRegion"]["startColumn"]),
    )[::-1]:
        region = replacement["deletedRegion"]
        assert region["endLine"] == region["startLine"]
        line = lines[region["startLine"] - 1]
        start, end = region["startColumn"] - 1, region["endColumn"] - 1
        lines[region["startLine"] - 1] = line[:start] + replacement["insertedContent"]["text"] + line[end:]
    fixed = run_cli("lint", "--fix", "--format", "sarif", "src", cwd=repo)
    assert fixed.returncode == 1, fixed.stderr
    assert target.read_text(encoding="utf-8") == "".join(lines)
    # What is left has no fix: --fix made them all.
    assert not any("fixes" in result for result in json.loads(fixed.stdout)["runs"][0]["results"])


@pytest.mark.skipif(VALIDATOR is None, reason="needs npm @microsoft/sarif-multitool (make environments)")
def test_microsofts_sarif_validator_finds_nothing_to_fix(tmp_path: Path) -> None:
    def problems(log: dict[str, Any]) -> list[dict[str, Any]]:
        written, report = tmp_path / "log.sarif", tmp_path / "report.sarif"
        written.write_text(json.dumps(log))
        report.unlink(missing_ok=True)
        command = [str(VALIDATOR), "validate", "--output", str(report), str(written)]
        subprocess.run(
            command, check=True, capture_output=True, timeout=TIMEOUT
        )  # its exit code says 0 anyway
        run = json.loads(report.read_text())["runs"][0]
        assert run["invocations"][0]["executionSuccessful"]
        # A result without a level has its rule's, a warning; notes are suggestions (snippets, a help URI).
        return [result for result in run["results"] if result.get("level", "warning") != "note"]

    repo = project(tmp_path)
    log = sarif(repo, "src", "../outside.py")
    # Its one warning asks for a home page (informationUri), which the package does not have.
    assert [(found["ruleId"], found["message"]["id"]) for found in problems(log)] == [
        ("SARIF2005", "Warning_ProvideToolnformationUri")
    ]
    # The validator does see a log that is wrong: a tool without its required name.
    del log["runs"][0]["tool"]["driver"]["name"]
    assert any(found.get("level") == "error" for found in problems(log))
