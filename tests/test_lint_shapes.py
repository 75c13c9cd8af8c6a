"""The shapes real producers write a kind in: each is reported where its literal is, and only when wrong."""

from __future__ import annotations

import textwrap

import pytest
from helpers import examples
from hypothesis import given, settings
from hypothesis import strategies as st

import failure_kinds
from failure_kinds import lint
from failure_kinds._runtime import category

# Each shape holds VALUE once, where the literal goes; the finding must point at it.
SHAPES = {
    "conditional keyword": "record(failure_kind=VALUE if failed else None)\n",
    "conditional keyword, else branch": "record(failure_kind=None if ok else VALUE)\n",
    "conditional dict value": 'row = {"failure_kind": VALUE if failed else None}\n',
    "get or fallback": 'kind = row.get("failure_kind") or VALUE\n',
    "get default": 'kind = row.get("failure_kind", VALUE)\n',
    "pop default": 'kind = row.pop("failure_kind", VALUE)\n',
    "plain assignment": "failure_kind = VALUE\n",
    "annotated plain assignment": "failure_kind: str | None = VALUE\n",
    "returned from a kind function": "def classify(error) -> FailureKindName:\n    return VALUE\n",
    "returned conditionally": (
        "def classify(error) -> 'FailureKindName | None':\n    return VALUE if error else None\n"
    ),
    "mapping case": 'match row:\n    case {"failure_kind": VALUE}:\n        pass\n',
    "class case": "match failure:\n    case Failure(failure_kind=VALUE):\n        pass\n",
    "class case alternatives": (
        'match failure:\n    case Failure(failure_kind="cancelled" | VALUE):\n        pass\n'
    ),
    "walrus comparison": 'if (kind := row["failure_kind"]) == VALUE:\n    pass\n',
    "walrus name compared later": 'if (kind := row.get("failure_kind")) and kind == VALUE:\n    pass\n',
    "name read from the field": (
        'kind = row.get("failure_kind")\nif kind in ("cancelled", VALUE):\n    pass\n'
    ),
    "get compared": 'if row.get("failure_kind") != VALUE:\n    pass\n',
    "keyword default": "def report(failure_kind: str | None = VALUE) -> None:\n    pass\n",
    "module constant": "TIMED_OUT = VALUE\n\n\ndef report():\n    record(failure_kind=TIMED_OUT)\n",
    "annotated module constant": "TIMED_OUT: Final = VALUE\nresult = {'failure_kind': TIMED_OUT}\n",
}


def findings(source: str) -> list[tuple[int, int, str]]:
    checker = lint.Checker()
    return [(item.line, item.col, item.code) for item in checker.check_source(source.encode(), "shape.py")]


def expected_code(value: str) -> str | None:
    found = category(value)
    if found == "registered":
        deprecated = getattr(failure_kinds.FailureKind(value), "replaced_by", None)
        return None if deprecated is None else "FK005"
    if found == "namespaced":
        return None
    if found == "legacy":
        return "FK004"
    return "FK002" if ":" in value else "FK001"


def where(shape: str) -> tuple[int, int]:
    """The line and character column of VALUE in ``shape``."""
    for number, line in enumerate(shape.splitlines(), start=1):
        if "VALUE" in line:
            return number, line.index("VALUE") + 1
    raise AssertionError(shape)


REGISTERED = sorted(failure_kinds.FAILURE_KINDS)
TYPOS = ["judge_faild", "transport_timout", "Transport-Timeout", "agent_timeout ", "verifer_error", "tiemout"]
MALFORMED = ["usersim:", ":judge", "tb4:Crash", "a:b:c", "safe child:x"]
NAMESPACED = ["usersim:persona_drift", "tb4:container_crash", "lexmount_browser:page_timeout"]
VALUES = st.one_of(
    st.sampled_from(REGISTERED + TYPOS + MALFORMED + NAMESPACED),
    st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=20),
)


@settings(max_examples=examples(400), deadline=None)
@given(st.sampled_from(sorted(SHAPES)), VALUES)
def test_every_shape_reports_a_wrong_value_at_its_literal(shape_name: str, value: str) -> None:
    shape = SHAPES[shape_name]
    code = expected_code(value)
    got = findings(shape.replace("VALUE", repr(value)))
    if code is None:
        assert got == []
    else:
        assert got == [(*where(shape), code)]


@pytest.mark.parametrize("shape_name", sorted(SHAPES))
def test_every_shape_is_recognised_with_a_typo(shape_name: str) -> None:
    shape = SHAPES[shape_name]
    assert findings(shape.replace("VALUE", '"judge_faild"')) == [(*where(shape), "FK001")]
    assert findings(shape.replace("VALUE", '"judge_failed"')) == []


def test_the_same_words_elsewhere_are_not_kinds() -> None:
    source = """\
        kind = row.get("reason") or "not_a_kind"
        label = row.get("failure_kind", {}).get("label", "not_a_kind")
        other = row.get("status", "not_a_kind")
        status = "not_a_kind"
        lower_case = "not_a_kind"
        record(failure_kind=lower_case)


        def describe(error) -> str:
            return "not_a_kind"


        def classify(error) -> FailureKindName:
            def inner():
                return "not_a_kind"
            return inner()


        match row:
            case {"reason": "not_a_kind"}:
                pass
            case Failure(reason="not_a_kind"):
                pass
        if (reason := row["reason"]) == "not_a_kind":
            pass
        if row.get("failure_kind") and reason == "not_a_kind":
            pass
        STATUS = "first"
        STATUS = "second"
        record(failure_kind=STATUS)
        """
    assert findings(textwrap.dedent(source)) == []


def test_a_module_constant_used_twice_is_reported_once_at_its_literal() -> None:
    source = (
        'TIMED_OUT = "transport_timout"\nrecord(failure_kind=TIMED_OUT)\n'
        'if row["failure_kind"] == TIMED_OUT: pass\n'
    )
    assert findings(source) == [(1, 13, "FK001")]


NAME_SHAPES = {
    "from import": ("from failure_kinds import JUDGE_FAILED, TRANSPORT_TIMOUT\n", (1, 41)),
    "import as": ("import failure_kinds as fk\n\nkind = fk.AGENT_TIMOUT\n", (3, 11)),
    "plain import": ("import failure_kinds\nkind = failure_kinds.AGENT_TIMOUT\n", (2, 22)),
    "submodule import": ("import failure_kinds.lint\nkind = failure_kinds.AGENT_TIMOUT\n", (2, 22)),
    "enum member": ("from failure_kinds import FailureKind as FK\nkind = FK.AGENT_TIMOUT\n", (2, 11)),
    "enum of an alias": ("import failure_kinds as fk\nkind = fk.FailureKind.AGENT_TIMOUT\n", (2, 23)),
    "enum of the package": ("import failure_kinds\nkind = failure_kinds.FailureKind.AGENT_TIMOUT\n", (2, 34)),
    # The alias is learned in one statement and used in a later one that mentions no field.
    "alias used far away": (
        "import failure_kinds as fk\n\n\ndef later():\n    return (fk.\n            AGENT_TIMOUT)\n",
        (6, 13),
    ),
}


@pytest.mark.parametrize("name", sorted(NAME_SHAPES))
def test_a_constant_the_package_lacks_is_reported_at_its_name(name: str) -> None:
    source, position = NAME_SHAPES[name]
    assert findings(source) == [(*position, "FK001")]
    checker = lint.Checker()
    (finding,) = checker.check_source(source.encode(), "names.py")
    assert "; did you mean" in finding.message
    assert "TIMEOUT" in finding.message


def test_real_constants_and_other_modules_are_not_reported() -> None:
    source = """\
        import failure_kinds as fk
        import other_module as om
        from failure_kinds import FAILURE_KINDS, OTHER_LABEL, TRANSPORT_TIMEOUT, FailureKind, FailureKindName
        from other_module import TRANSPORT_TIMOUT

        kinds = (fk.AGENT_TIMEOUT, fk.FAILURE_KINDS, fk.OTHER_LABEL, FailureKind.JUDGE_FAILED)
        others = (om.AGENT_TIMOUT, om.TRANSPORT_TIMOUT)
        value = fk.FailureKind.AGENT_TIMEOUT.value
        version = fk.__version__
        # Not kinds: names the package lacks that are nothing like a kind fail at import on their own.
        from failure_kinds import ACTIVE_FAILURE_KINDS, FAILURE_KIND_REGISTRY
        registry = fk.RESERVED_FAILURE_KINDS
        """
    assert findings(textwrap.dedent(source)) == []


def test_lone_carriage_returns_are_walked_whole() -> None:
    source = "import failure_kinds as fk\rx = 1\rdef later():\r    return fk.AGENT_TIMOUT\r"
    assert findings(source) == [(4, 15, "FK001")]


# A statement is walked only when it mentions a field, a kind type, a checked function, the package or a
# name learned from them; kinds learned anywhere in the file count everywhere.
@settings(max_examples=examples(150), deadline=None)
@given(st.permutations(range(4)), st.integers(0, 3))
def test_names_learned_anywhere_count_in_any_statement_order(order: list[int], filler: int) -> None:
    blocks = [
        "class Row:\n    kind: FailureKindName\n",
        "def first(row):\n    if row.kind == 'kill_shapd':\n        pass\n",
        "def second(k: FailureKindName):\n    pass\n",
        "def third(k):\n    match k:\n        case 'sesion_lost':\n            pass\n",
    ]
    padding = "".join(f"def pad_{index}():\n    return {index}\n" for index in range(filler))
    source = padding + "\n".join(blocks[index] for index in order)
    got = findings(source)
    assert sorted(code for _, _, code in got) == ["FK001", "FK001"]
    lines = source.splitlines()
    assert sorted(lines[line - 1][col - 1 :].split("'")[1] for line, col, _ in got) == [
        "kill_shapd",
        "sesion_lost",
    ]
