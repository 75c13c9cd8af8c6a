"""``failure-kinds lint --format sarif``: the findings as one SARIF 2.1.0 run, in the subset of it that
GitHub code scanning reads (``github/codeql-action/upload-sarif`` uploads the file).

The rules are the codes of :data:`failure_kinds.lint.CODES`, in its order. Each finding is a result with
its region, in the same character columns the text output prints (``columnKind`` says which), and with
the replacement ``--fix`` would make, where it would make one. A path is a URI relative to the working
directory (``%SRCROOT%``) with its symbolic links resolved, since code scanning matches it against the
files of the repository and cannot show a result in a link; a file outside that directory has an
absolute ``file:`` URI.
"""

from __future__ import annotations

import os
from urllib.parse import quote

import failure_kinds
import failure_kinds.lint as lint

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Collection, Sequence

    from failure_kinds.lint import Finding, Fix

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
ROOT = "%SRCROOT%"


def log(findings: Sequence[Finding], fixable: Collection[tuple[str, Fix]]) -> dict[str, object]:
    """The SARIF log of ``findings``, with a fix for those in ``fixable`` (with their paths: the fixes
    ``--fix`` would apply to the files as they are now); paths are taken relative to the working
    directory."""
    root = os.path.realpath(os.getcwd())
    codes = list(lint.CODES)
    driver = {
        "name": "failure-kinds",
        "version": failure_kinds.__version__,
        "rules": [_rule(code, meaning) for code, meaning in lint.CODES.items()],
    }
    run = {
        "tool": {"driver": driver},
        "originalUriBaseIds": {ROOT: {"uri": _file_uri(os.path.join(root, ""))}},
        "columnKind": "unicodeCodePoints",
        "results": [_result(finding, codes, root, fixable) for finding in findings],
    }
    return {"$schema": SCHEMA, "version": "2.1.0", "runs": [run]}


def _rule(code: str, meaning: lint.Code) -> dict[str, object]:
    return {
        "id": code,
        "shortDescription": {"text": meaning.summary},
        "fullDescription": {"text": meaning.advice},
        "help": {"text": f"{code}: {meaning.summary}. {meaning.advice}"},
        "defaultConfiguration": {"level": meaning.level},
    }


def _result(
    finding: Finding, codes: list[str], root: str, fixable: Collection[tuple[str, Fix]]
) -> dict[str, object]:
    from failure_kinds._display import escaped

    message = escaped(finding.message)
    artifact = _artifact(finding.path, root)
    region: dict[str, int] = {"startLine": finding.line, "startColumn": finding.col}
    if finding.end is not None:
        region.update(endLine=finding.end[0], endColumn=finding.end[1])
    result: dict[str, object] = {
        "ruleId": finding.code,
        "ruleIndex": codes.index(finding.code),
        "level": lint.CODES[finding.code].level,
        "message": {"text": message},
        "locations": [{"physicalLocation": {"artifactLocation": artifact, "region": region}}],
    }
    fix = finding.fix
    if fix is not None and (finding.path, fix) in fixable and finding.end is not None:
        # --fix rewrites a literal on one line only when it is the label between one kind of quotes, with
        # at most a one-letter prefix: what the literal holds beyond the label is that prefix and two quotes.
        extra = finding.end[1] - finding.col - len(fix.old)
        start = finding.col + extra - (3 if extra >= 6 else 1)
        deleted = {
            "startLine": fix.line,
            "startColumn": start,
            "endLine": fix.line,
            "endColumn": start + len(fix.old),
        }
        replacement = {"deletedRegion": deleted, "insertedContent": {"text": fix.new}}
        result["fixes"] = [
            {
                "description": {"text": f"Replace {fix.old!r} with {fix.new!r}."},
                "artifactChanges": [{"artifactLocation": artifact, "replacements": [replacement]}],
            }
        ]
    return result


def _artifact(path: str, root: str) -> dict[str, str]:
    real = os.path.realpath(path)
    relative = os.path.relpath(real, root)
    if relative == os.pardir or relative.startswith(os.pardir + os.sep):
        return {"uri": _file_uri(real)}
    return {"uri": _quoted(relative), "uriBaseId": ROOT}


def _file_uri(absolute: str) -> str:
    return "file://" + _quoted(absolute)


def _quoted(path: str) -> str:
    # Of the file name's own bytes, so a name that is not UTF-8 still names that file.
    return quote(os.fsencode(path.replace(os.sep, "/")), safe="/")
