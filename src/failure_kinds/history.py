"""The labels an older registry of failure kinds used before the current vocabulary, and its names.

Data written by older producers still carries these labels, so every tool recognises them for what they
are: not a typo and not a current kind, but an older label, with the kind that replaced it where exactly
one did. Five labels were evidently renamed; the others have no single replacement and say why in a note.
A label of the older registry that the current vocabulary kept unchanged (``judge_failed``,
``kill_shaped``, ``session_lost``, ``agent_request_failed``) is a current kind, not an older label.

Code written against the older registry keeps running: ``failure_kinds`` resolves the registry's names
(`FAILURE_KIND_REGISTRY`, `ACTIVE_FAILURE_KINDS`, `RESERVED_FAILURE_KINDS`,
`FailureKindRegistration`, `RegistryStatus`) and its constants (``PEER_DROP`` and the rest) from here on
first use, `RegistryStatus` and each constant with a `DeprecationWarning`. The stub leaves them out, so
a type checker points at every use still to migrate.

Loaded only when something needs it (a value that is neither registered nor namespaced, or a tool);
``import failure_kinds`` does not import it.
"""

import sys
import warnings
from dataclasses import dataclass
from types import MappingProxyType

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping


@dataclass(frozen=True)
class OlderLabel:
    """A label of the older registry that is not a current kind."""

    label: str
    replacement: "str | None"
    """The current kind that took its place, when exactly one did; None when choosing is the producer's."""
    note: str
    """One line on what it meant, or why it has no single replacement."""
    status: str
    """``"active"`` when the older registry had producers of it, ``"reserved"`` when it was only planned."""
    source: str
    """As the older registry gave it: the producing module (active) or the planning change ``#NNNN``."""


@dataclass(frozen=True)
class FailureKindRegistration:
    """The older registry's entry for one label: its status and where it came from."""

    status: str
    source: str


# The older registry in its order (its active labels, then its reserved): label, replacement ("-" for
# none), status and source, then on the next line its note. A label the current vocabulary kept unchanged
# is its own replacement: in the registry, not an older label, and without a note.
_ROWS = """
judge_failed judge_failed active nemo_gym.judge
kill_shaped kill_shaped active responses_api_agents.stirrup_agent
timeout_exceeded - active responses_api_agents.stirrup_agent
  used for a task's own time budget (nearest agent_timeout) and for other deadlines; not mapped
skipped - active responses_api_agents.stirrup_agent
  an outcome, not a failure
transient - active responses_api_agents.stirrup_agent
  says the failure may pass on retry, not what went wrong; no single kind
legitimate - active responses_api_agents.stirrup_agent
  an outcome, not a failure
remote_agent_error - active responses_api_agents.remote_agent
  any error of a remote agent; agent_run_error, agent_request_failed or a transport kind, as it was
eval_timeout - active responses_api_agents.anyswe_agent
  an evaluation's deadline; agent_timeout or transport_timeout depending on what ran out of time
sandbox - active responses_api_agents.anyswe_agent
  any failure of the sandbox; a provider_ or session_ kind depending on what failed
oom_killed provider_oom_killed active responses_api_agents.swe_agents
  renamed with the provider domain
session_lost session_lost reserved #2611
agent_request_failed agent_request_failed reserved #2363
verify_request_failed - reserved #2363
  a failed request to verify; verifier_error, judge_failed or a transport kind
unreachable transport_unreachable reserved #2361
  renamed with the transport domain
resource transport_local_resource reserved #2361
  renamed with the transport domain
peer_drop transport_peer_drop reserved #2361
  renamed with the transport domain
timeout transport_timeout reserved #2361
  renamed with the transport domain
fatal - reserved #2361
  says the failure will not pass on retry, not what went wrong; no single kind
cohort_timeout - reserved #2385
  planned for a rollout group's deadline; which kind depends on which rollout ran out of time
no_comparisons - reserved #2385
  planned for a group left with nothing to compare; no single kind says why
aggregation_failed - reserved #2385
  planned for combining a group's scores; no single kind names what failed
"""
_TABLE = [
    (label, None if replacement == "-" else replacement, status, source, note)
    for head, _, note in (line.partition("  ") for line in _ROWS.strip().replace("\n  ", "  ").splitlines())
    for label, replacement, status, source in [head.split()]
]

FAILURE_KIND_REGISTRY: "Mapping[str, FailureKindRegistration]" = MappingProxyType(
    {label: FailureKindRegistration(status, source) for label, _, status, source, _ in _TABLE}
)
"""The older registry as it was: every label it held (four are current kinds) -> its status and source."""

ACTIVE_FAILURE_KINDS = frozenset(label for label, _, status, _, _ in _TABLE if status == "active")
RESERVED_FAILURE_KINDS = frozenset(label for label, _, status, _, _ in _TABLE if status == "reserved")

OLDER_LABELS: "Mapping[str, OlderLabel]" = MappingProxyType(
    {
        label: OlderLabel(label, replacement, note, status, source)
        for label, replacement, status, source, note in _TABLE
        if replacement != label
    }
)
"""Each older label that is not a current kind -> what is known of it, in the older registry's order."""


OLDER_STAGES: "Mapping[str, str | None]" = MappingProxyType(
    {"request": None, "response": None, "result": None, "verifier": "verification", "environment": None}
)
"""The stage labels of the older failure record -> the ``FailureStage`` that replaced each, where one did."""


def older_label(name: object) -> "OlderLabel | None":
    """What is known of the older label ``name``, or None when it is not one. Never raises."""
    return OLDER_LABELS.get(str.__str__(name)) if issubclass(type(name), str) else None  # pyright: ignore[reportArgumentType]


def older_name(name: str) -> object:
    """The older registry's module-level name ``name``, as ``failure_kinds`` resolves it on first use.

    A constant of an older label warns that it is deprecated, naming the constant to write instead.
    Raises `AttributeError` for any other name, as a module does.
    """
    registry = ("FAILURE_KIND_REGISTRY", "ACTIVE_FAILURE_KINDS", "RESERVED_FAILURE_KINDS")
    if name in registry or name == "FailureKindRegistration":
        return globals()[name]
    older = OLDER_LABELS.get(name.lower()) if name.isupper() else None
    if name == "RegistryStatus":
        from typing import Literal

        value: object = Literal["active", "reserved"]
        # The current vocabulary has no statuses (each OlderLabel keeps its label's as data).
        message = (
            "failure_kinds.RegistryStatus is the older registry's status type, Literal['active', "
            "'reserved']; the current vocabulary has no statuses: write that Literal where one is needed"
        )
    elif older is None:
        raise AttributeError(f"module 'failure_kinds' has no attribute {name!r}")
    else:
        value = older.label
        if older.replacement is None:
            advice = f", which has no single replacement: {older.note}; write the kind that fits"
        else:
            advice = f"; use failure_kinds.{older.replacement.upper()} ({older.replacement!r})"
        message = f"failure_kinds.{name} is the older label {older.label!r}{advice}"
    if not _probed_by_import():
        # stacklevel 3: past this function and the package's __getattr__, to the line that named it.
        warnings.warn(message, DeprecationWarning, stacklevel=3)
    return value


def _probed_by_import() -> bool:
    """Whether the package's ``__getattr__`` was called by importlib's hasattr probe of a ``from`` import.

    ``from failure_kinds import PEER_DROP`` looks the name up twice: importlib first asks whether it is
    an attribute or a submodule to import, then the statement takes the value. Only the second is the
    caller's use, so only it warns, once per statement, at the statement's line.
    """
    try:
        caller = sys._getframe(3)  # pyright: ignore[reportPrivateUsage] - past older_name, __getattr__
    except (AttributeError, ValueError):  # an interpreter without frames, or no frame that deep
        return False
    code = caller.f_code
    return code.co_name == "_handle_fromlist" and caller.f_globals.get("__name__") == "importlib._bootstrap"


__all__ = ["OLDER_LABELS", "OLDER_STAGES", "OlderLabel", "older_label"]
