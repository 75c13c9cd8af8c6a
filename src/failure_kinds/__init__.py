"""Shared names for why a rollout failed.

Producers describe failures with free text and component-local labels, so the same failure reaches a
collector, a log line and a metric under three different names and cannot be grouped. This module holds
the one vocabulary those producers share.

A name says what kind of thing went wrong and nothing else. Whether to retry, whether the request may be
replayed, whether a completed result should be masked, and what to tell a person are properties of the
occurrence, not of the name: they belong on the failure record and in ``failure_reason``. Metadata attached
to a name goes stale the moment one caller wants to retry what another caller does not.

Names are low cardinality on purpose, safe as a metric label or a span dimension; ``failure_reason`` never
is, because it carries occurrence detail and can be unbounded.

This module imports only the standard library (and not even :mod:`typing` at import time), so data tooling
can read the vocabulary anywhere and ``import failure_kinds`` stays cheap. The precise static types live in
the generated ``__init__.pyi`` shipped beside this file.
"""

import enum
import logging
import re
import threading

# Names used only in annotations come in for type checkers alone; the annotations that mention them are
# strings, so that importing this module costs neither typing nor __future__. (Final and the other
# precise types are in the generated stub, which is what type checkers read for users.)
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Self, TypeVar

    _Name = TypeVar("_Name", bound=str | None)

__version__ = "0.1.0"


class FailureKind(enum.StrEnum):
    """Why a rollout failed. Each member's value is the shared name; ``description`` says what it means."""

    _value_: str
    _description: str

    def __new__(cls, value: str, description: str) -> "Self":
        member = str.__new__(cls, value)
        member._value_ = value
        member._description = description
        return member

    @property
    def description(self) -> str:
        """One line saying what went wrong for this kind."""
        return self._description

    @property
    def domain(self) -> str:
        """The part of a rollout the failure belongs to: the name's first word, except that the three
        kinds about the life of the process (cancelled, kill_shaped, shutdown) share ``lifecycle``."""
        if self in (FailureKind.CANCELLED, FailureKind.KILL_SHAPED, FailureKind.SHUTDOWN):
            return "lifecycle"
        return self.value.partition("_")[0]

    # The connection to a peer (model server, environment, judge) failed below the application.
    TRANSPORT_UNREACHABLE = (
        "transport_unreachable",
        "The peer could not be reached at all: the connection was refused, the name did not resolve or "
        "there was no route to it.",
    )
    TRANSPORT_PEER_DROP = (
        "transport_peer_drop",
        "The peer closed or reset the connection before a complete response arrived.",
    )
    TRANSPORT_TIMEOUT = (
        "transport_timeout",
        "The peer accepted the request but no complete response arrived before the transport deadline.",
    )
    TRANSPORT_LOCAL_RESOURCE = (
        "transport_local_resource",
        "The local side ran out of something it needed to make the request, such as file descriptors, "
        "ports or connection-pool slots.",
    )

    # The agent driving the rollout.
    AGENT_COMMAND_NOT_ALLOWED = (
        "agent_command_not_allowed",
        "The agent issued a command or tool call that the environment does not permit.",
    )
    AGENT_REQUEST_FAILED = (
        "agent_request_failed",
        "A request the agent made to its model or to a tool came back as an error.",
    )
    AGENT_RUN_ERROR = (
        "agent_run_error",
        "The agent's own code raised or exited abnormally while running the rollout.",
    )
    AGENT_TIMEOUT = (
        "agent_timeout",
        "The agent did not finish the rollout within its time limit.",
    )

    # Scoring.
    JUDGE_FAILED = (
        "judge_failed",
        "The judge model was asked for a verdict and did not give one: its call errored or returned nothing.",
    )
    JUDGE_UNPARSEABLE = (
        "judge_unparseable",
        "The judge model answered, but no verdict could be parsed from its answer.",
    )
    VERIFIER_ERROR = (
        "verifier_error",
        "The verifier failed with an error instead of producing a result for the rollout.",
    )

    # Whoever provides the sandbox, container or browser the rollout runs in.
    PROVIDER_OOM_KILLED = (
        "provider_oom_killed",
        "The provider killed the environment for exceeding its memory limit.",
    )
    PROVIDER_QUOTA_EXHAUSTED = (
        "provider_quota_exhausted",
        "The provider refused the request because a quota or rate limit was used up.",
    )
    PROVIDER_UNAVAILABLE = (
        "provider_unavailable",
        "The provider could not supply an environment: it was down, overloaded or answered with a "
        "server error.",
    )

    # The environment session a rollout holds while it runs.
    SESSION_EXPIRED = (
        "session_expired",
        "The environment session reached the end of its lifetime before the rollout finished.",
    )
    SESSION_LOST = (
        "session_lost",
        "The environment session disappeared unexpectedly, for example because its host went away.",
    )
    SESSION_RELEASE_FAILED = (
        "session_release_failed",
        "The rollout finished but its environment session could not be released afterwards.",
    )

    # The life of the process running the rollout.
    CANCELLED = (
        "cancelled",
        "The rollout was cancelled by its caller before it finished.",
    )
    KILL_SHAPED = (
        "kill_shaped",
        "The rollout's process ended the way a kill ends it (such as SIGKILL or exit status 137) and no "
        "other cause was recorded.",
    )
    SHUTDOWN = (
        "shutdown",
        "The rollout was interrupted because the service running it was shutting down.",
    )

    # After the rollout ran.
    PERSISTENCE_FAILED = (
        "persistence_failed",
        "The rollout's result could not be written to storage.",
    )
    COHORT_INCOMPLETE = (
        "cohort_incomplete",
        "Another rollout of the group this one is scored with failed, so the group could not be completed.",
    )


# The module constants are plain ``str`` objects, not members, so that they serialize identically
# everywhere (json, yaml.safe_dump, pickle read without this package installed).
globals().update({kind.name: kind.value for kind in FailureKind})

FAILURE_KINDS: frozenset[str] = frozenset(kind.value for kind in FailureKind)

OTHER_LABEL = "_other"
"""The metric label :func:`metric_label` gives any value that is neither registered nor namespaced."""

_NAME_PATTERN = re.compile(r"[a-z][a-z0-9_]*")
_NAMESPACED_PATTERN = re.compile(r"[a-z][a-z0-9_]*:[a-z][a-z0-9_]*")

logger = logging.getLogger(__name__)

# Values already reported as unregistered. Discarding one makes its next occurrence warn again.
# Unhashable values are remembered by a stand-in key (see _report_key).
_WARNED_UNKNOWN: set[object] = set()

# Past this many remembered values one last warning is logged and the rest go unreported, so a producer
# that emits unbounded garbage costs bounded memory and a bounded log.
_WARNED_LIMIT = 1024
_warned_overflow = False
_warned_lock = threading.Lock()

# Everything validate_failure_kind lets through without a word: None, the registered names, and the
# namespaced values seen so far, so a recurring namespaced value costs one set lookup rather than a
# regular expression. Namespaced values are few by design; the bound only guards against a flood.
_SILENT: set[object] = {None, *FAILURE_KINDS}
_SILENT_LIMIT = len(_SILENT) + 4096

# Called with every unregistered value that reaches validate_failure_kind, each time, not only the first:
# the pytest plugin (failure_kinds.pytest_plugin) watches a test this way. Empty unless a test is watched.
_OBSERVERS: "list[Callable[[object], object]]" = []

# repr of a value in a log line or an error message is cut to this many characters.
_SHOWN_LIMIT = 200
# suggest() compares against names of at most a few dozen characters; longer input is not a typo.
_SUGGEST_LIMIT = 64


def is_registered(name: object) -> bool:
    """Whether ``name`` is part of the shared vocabulary. Never raises."""
    try:
        return isinstance(name, str) and name in FAILURE_KINDS
    except Exception:
        return False


def is_namespaced(name: object) -> bool:
    """Whether ``name`` is an environment's own ``<server>:<kind>`` extension. Never raises."""
    try:
        return isinstance(name, str) and _NAMESPACED_PATTERN.fullmatch(name) is not None
    except Exception:
        return False


def namespaced(server: str, kind: str) -> str:
    """Build the namespaced kind ``"<server>:<kind>"``.

    Raises :class:`ValueError` naming the malformed part when ``server`` or ``kind`` does not match
    ``[a-z][a-z0-9_]*``.
    """
    for part, value in (("server", server), ("kind", kind)):
        # Checked although annotated: untyped callers exist, and the message beats a TypeError.
        if not isinstance(value, str) or _NAME_PATTERN.fullmatch(value) is None:  # pyright: ignore[reportUnnecessaryIsInstance]
            raise ValueError(
                f"namespaced failure kind: the {part} part {_shown(value)} does not match "
                f"{_NAME_PATTERN.pattern}"
            )
    return f"{server}:{kind}"


def validate_failure_kind(name: "_Name") -> "_Name":
    """Return ``name`` unchanged, warning once per unregistered value.

    Producers call this at their boundary. ``None``, registered and namespaced values pass silently;
    anything else is logged once as a WARNING on the ``failure_kinds`` logger, with a suggestion where one
    is close. It warns rather than raises so a component that still emits an old label stays visible
    during migration: rejecting it would turn an observable wrong name into an invisible dropped failure.
    It never raises, whatever it is given.
    """
    try:
        if name in _SILENT or (name in _WARNED_UNKNOWN and not _OBSERVERS):
            return name
    except Exception:
        pass  # unhashable, or a hostile __hash__ or __eq__: _note_unsilenced copes
    _note_unsilenced(name)
    return name


def metric_label(name: object) -> str:
    """``name`` as a plain ``str`` when registered or namespaced, else :data:`OTHER_LABEL`.

    A metric labelled with it stays bounded whatever a buggy producer emits. Never raises.
    """
    try:
        if isinstance(name, str) and (name in _SILENT or _remember_if_namespaced(name)):
            return str.__str__(name)
    except Exception:
        pass
    return OTHER_LABEL


def suggest(name: object) -> str | None:
    """The registered kind ``name`` most likely meant, or ``None`` when nothing is close.

    Catches case and separator variants (``"Transport-Timeout"``, ``"TransportTimeout"``), typos
    (``"verifer_error"``) and truncations (``"judge_fail"``). A registered name suggests itself.
    """
    if not isinstance(name, str) or len(name) > _SUGGEST_LIMIT:
        return None
    try:
        return _closest_kind(name)
    except Exception:
        return None


def _closest_kind(name: str) -> str | None:
    # Imported here: only the slow path of an unregistered value ever needs it.
    import difflib

    words = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name.strip())
    normal = re.sub(r"[\s\-.]+", "_", words).lower()
    if normal in FAILURE_KINDS:
        return normal
    # A cut-off name is only a guess when exactly one kind continues it and enough of it was written.
    continuing = [kind.value for kind in FailureKind if kind.value.startswith(normal)]
    if len(continuing) == 1 and len(normal) >= 5:
        return continuing[0]
    close = difflib.get_close_matches(normal, [kind.value for kind in FailureKind], n=1, cutoff=0.8)
    return close[0] if close else None


def _remember_if_namespaced(name: object) -> bool:
    if not isinstance(name, str) or _NAMESPACED_PATTERN.fullmatch(name) is None:
        return False
    if len(_SILENT) < _SILENT_LIMIT:
        _SILENT.add(name)
    return True


def _note_unsilenced(name: object) -> None:
    try:
        if name is None or _remember_if_namespaced(name):
            return
        for observer in _OBSERVERS:
            observer(name)
        _report_once(name)
    except Exception:
        # Reporting is a courtesy; the producer's failure record matters more than our warning.
        pass


def _report_key(name: object) -> object:
    try:
        hash(name)
    except Exception:
        # Distinct from every hashable value, and stable for equal-looking unhashable ones.
        return (type(name), _shown(name))
    return name


def _report_once(name: object) -> None:
    global _warned_overflow
    key = _report_key(name)
    with _warned_lock:
        if key in _WARNED_UNKNOWN:
            return
        if len(_WARNED_UNKNOWN) >= _WARNED_LIMIT:
            if _warned_overflow:
                return
            _warned_overflow = True
            overflow = True
        else:
            _WARNED_UNKNOWN.add(key)
            overflow = False
    # Logged outside the lock: a handler may itself validate a kind.
    if overflow:
        logger.warning(
            "%d distinct unregistered failure kinds reported; further distinct unregistered kinds are "
            "no longer reported one by one",
            _WARNED_LIMIT,
        )
    elif isinstance(name, str):
        hint = suggest(name)
        logger.warning(
            "unregistered failure kind %s%s",
            _shown(name),
            f"; did you mean {hint!r}?" if hint is not None else "",
        )
    else:
        logger.warning("failure kind is not a string: %s of type %s", _shown(name), type(name).__qualname__)


def _shown(value: object) -> str:
    """``repr(value)`` cut to at most _SHOWN_LIMIT characters; never raises."""
    try:
        # Slice before repr so a megabyte string costs no more than a short one.
        text = repr(value[: _SHOWN_LIMIT + 1] if isinstance(value, str) else value)
    except Exception:
        text = f"<{type(value).__qualname__} object whose repr failed>"
    if len(text) > _SHOWN_LIMIT:
        text = text[: _SHOWN_LIMIT - 3] + "..."
    return text


def __getattr__(name: str) -> object:
    # The typing objects are built on first use: importing typing costs more than this whole module on
    # Python 3.12 and later, and only static checkers and introspection ever look at them. Type checkers
    # read these names from the generated stub, so here they are plain run-time objects.
    value: object
    if name == "FailureKindName":
        import typing

        value = getattr(typing, "Literal")[tuple(kind.value for kind in FailureKind)]  # noqa: B009
    elif name == "NamespacedFailureKind":
        from typing import NewType

        NamespacedFailureKind = NewType("NamespacedFailureKind", str)
        value = NamespacedFailureKind
    elif name == "AnyFailureKind":
        import typing

        both = (__getattr__("FailureKindName"), __getattr__("NamespacedFailureKind"))
        value = getattr(typing, "Union")[both]  # noqa: B009
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


# The three typing names come from __getattr__ and the constants from the enum, so checkers cannot follow
# this list; the generated stub spells it out.
__all__ = [  # pyright: ignore[reportUnsupportedDunderAll]
    "FAILURE_KINDS",
    "OTHER_LABEL",
    "AnyFailureKind",  # pyright: ignore[reportUnsupportedDunderAll]
    "FailureKind",
    "FailureKindName",  # pyright: ignore[reportUnsupportedDunderAll]
    "NamespacedFailureKind",  # pyright: ignore[reportUnsupportedDunderAll]
    "is_namespaced",
    "is_registered",
    "metric_label",
    "namespaced",
    "suggest",
    "validate_failure_kind",
    *FailureKind.__members__,
]
