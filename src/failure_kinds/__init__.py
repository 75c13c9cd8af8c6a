"""Shared names for why a rollout failed.

Producers describe failures with free text and component-local labels, so one failure reaches a collector,
a log line and a metric under three names and cannot be grouped. This module holds the one vocabulary they
share. A name says what kind of thing went wrong and nothing else: whether to retry, replay or mask, and
what to tell a person, belong to the occurrence (the failure record and ``failure_reason``), since metadata
on a name goes stale the moment one caller wants to retry what another does not. Names are low cardinality
on purpose, safe as a metric label or a span dimension; ``failure_reason`` never is.

A released kind is never removed or re-valued. A member records the release it first appeared in (a third
element, "0.1.0" when left out); a later release deprecates one with a fourth, its replacement's value: it
stays registered, and validate_failure_kind and every tool name the replacement.

``import failure_kinds`` loads only the standard library (not even `typing`): the runtime state is in
``_runtime``; display and suggestions load with a warning, `failure_kinds.history` for a value neither
registered nor namespaced, the stages and typing names on first use. Static types are in ``__init__.pyi``.
"""

import enum

import failure_kinds._runtime as _runtime

TYPE_CHECKING = False  # for type checkers alone (string annotations): costs neither typing nor __future__
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Self, TypeVar

    _T = TypeVar("_T")  # unbounded: validation takes anything a boundary hands it, returned as it came

__version__ = "0.3.0"


class FailureKindsError(Exception):
    """The base of every exception the package raises on purpose; each keeps its builtin base too."""


class FailureKind(enum.StrEnum):
    """Why a rollout failed. Each member's value is the shared name; ``description`` says what it means."""

    _value_: str
    _description: str
    _since: str
    _replacement: str

    def __new__(cls, value: str, description: str, since: str = "0.1.0", replacement: str = "") -> "Self":
        member = str.__new__(cls, value)
        member._value_ = value
        member._description, member._since, member._replacement = description, since, replacement
        return member

    @property
    def description(self) -> str:
        """One line saying what went wrong for this kind."""
        return self._description

    @property
    def since(self) -> str:
        """The package version this kind first appeared in."""
        return self._since

    @property
    def replaced_by(self) -> "FailureKind | None":
        """The kind to write instead, when this one is deprecated (it stays registered); None otherwise."""
        return FailureKind(self._replacement) if self._replacement else None  # type: ignore[call-arg]

    @property
    def domain(self) -> str:
        """The name's first word, but ``lifecycle`` for the process's life, ``environment`` for protocols."""
        if self in (FailureKind.CANCELLED, FailureKind.KILL_SHAPED, FailureKind.SHUTDOWN):
            return "lifecycle"
        return "environment" if self is FailureKind.PROTOCOL_VIOLATION else self.value.partition("_")[0]

    # The connection to a peer (model server, environment, judge) failed below the application.
    TRANSPORT_UNREACHABLE = (
        "transport_unreachable",
        "The peer could not be reached at all: connection refused, name not resolved or no route to it.",
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
        "The local side ran out of what the request needed, such as file descriptors, ports or pool slots.",
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
    AGENT_TIMEOUT = ("agent_timeout", "The agent did not finish the rollout within its time limit.")
    AGENT_NO_GENERATION = ("agent_no_generation", "The agent produced no generation at all.", "0.3.0")

    # The environment server running one episode attempt.
    ENVIRONMENT_SERVER_FAILED = (
        "environment_server_failed",
        "The environment server failed while running the episode, with an error of its own.",
        "0.3.0",
    )
    PROTOCOL_VIOLATION = (
        "protocol_violation",
        "A party to the episode broke its protocol: a malformed, missing or out-of-order message.",
        "0.3.0",
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
        "The provider could not supply an environment: it was down, overloaded or gave a server error.",
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
    CANCELLED = ("cancelled", "The rollout was cancelled by its caller before it finished.")
    KILL_SHAPED = (
        "kill_shaped",
        "The rollout's process ended as a kill ends it (SIGKILL, status 137); no other cause was recorded.",
    )
    SHUTDOWN = ("shutdown", "The rollout was interrupted because the service running it was shutting down.")

    # After the rollout ran.
    PERSISTENCE_FAILED = ("persistence_failed", "The rollout's result could not be written to storage.")
    COHORT_INCOMPLETE = (
        "cohort_incomplete",
        "Another rollout of the group this one is scored with failed, so the group could not be completed.",
    )


# Plain ``str`` constants, not members: they serialize alike everywhere (json, yaml, pickle without us).
globals().update({kind.name: kind.value for kind in FailureKind})
FAILURE_KINDS: frozenset[str] = frozenset(kind.value for kind in FailureKind)
OTHER_LABEL = "_other"
"""The metric label `metric_label` gives any value that has no label of its own."""

# The seed's four names, as upstream tests use them, then four that save validate_failure_kind a lookup.
_runtime.register([(kind.value, kind.replaced_by and kind.replaced_by.value) for kind in FailureKind])
_NAME_PATTERN, _NAMESPACED_PATTERN = _runtime.NAME_PATTERN, _runtime.NAMESPACED_PATTERN
_WARNED_UNKNOWN, logger = _runtime.WARNED, _runtime.logger
_SILENT, _MEMBERS, _LABELS = _runtime.SILENT, _runtime.MEMBERS, _runtime.LABELS
_OBSERVERS = _runtime.OBSERVERS


def is_registered(name: object) -> bool:
    """Whether ``name`` is part of the shared vocabulary. Never raises."""
    return _runtime.text_of(name) in _runtime.REGISTERED_SET


def is_namespaced(name: object) -> bool:
    """Whether ``name`` is an environment's own ``<server>:<kind>`` extension. Never raises."""
    return _NAMESPACED_PATTERN.fullmatch(_runtime.text_of(name) or "") is not None


def namespaced(server: str, kind: str) -> str:
    """Build the namespaced kind ``"<server>:<kind>"``. Raises `ValueError` naming the malformed
    part when ``server`` or ``kind`` does not match ``[a-z][a-z0-9_]*``."""
    text = f"{_runtime.text_of(server)}:{_runtime.text_of(kind)}"  # a part that is not a str reads "None"
    if _NAMESPACED_PATTERN.fullmatch(text) is None:
        from failure_kinds._arguments import refuse_namespaced

        refuse_namespaced(server, kind)
    return text


def declare_namespace(server: str, kinds: "Iterable[str]") -> None:
    """Declare the kinds of an environment's own namespace ``server``.

    After it, a ``"<server>:<kind>"`` value whose kind was not declared is reported by
    `validate_failure_kind` (once, with the closest declared kind as a suggestion), labelled
    `OTHER_LABEL` by `metric_label` and fails a test under the pytest strict mode. Servers never
    declared keep passing silently. Calling it again for the same server adds kinds; repeating a call
    changes nothing. Safe to call from several threads, and before or after values were validated.

    Raises `ValueError` naming the bad part when ``server`` or a kind does not match
    ``[a-z][a-z0-9_]*``, when a kind is not a string, when ``kinds`` is empty, a single string or not
    iterable. Nothing is declared when it raises.
    """
    from failure_kinds._arguments import declaration  # the checks load on the first declaration

    _runtime.declare(*declaration(server, kinds))


def validate_failure_kind(name: "_T") -> "_T":
    """Return ``name`` unchanged, warning once per unregistered value.

    Producers call this at their boundary. ``None``, registered and namespaced values pass silently; anything
    else is logged once as a WARNING on the ``failure_kinds`` logger: an older label or a deprecated kind with
    its replacement, anything else with a suggestion where one is close. A namespaced value of a server given
    to `declare_namespace` passes only when its kind was declared. It warns rather than raises so a
    component that still emits an old label stays visible during migration: rejecting it would turn an
    observable wrong name into an invisible dropped failure. It never raises.
    """
    # One lookup only for an exact str or a member (the enum's methods): a caller's __eq__ never decides.
    if type(name) is str:
        if name in _SILENT or (name in _WARNED_UNKNOWN and not _OBSERVERS):
            return name
    elif name is None or (type(name) is FailureKind and name in _MEMBERS):
        return name
    try:  # a try costs nothing here, where contextlib.suppress would cost a call per bad value
        if (text := _runtime.text_of(name)) is None or not _runtime.passes(text):
            from failure_kinds._suggest import report  # with the suggestions and display a warning needs

            report(name)
    except Exception:  # never BaseException: a KeyboardInterrupt in a caller's __repr__ or observer goes up
        pass  # a warning is a courtesy: the producer's failure record matters more
    return name


def metric_label(name: object) -> str:
    """A label for ``name`` that keeps a metric's cardinality bounded. Never raises.

    Registered and declared names are their own label, as a plain ``str``, and an older label with a single
    replacement has the replacement's. So has a namespaced value of a server that declared nothing its own,
    while at most 100 characters long and among the first 512 such distinct values; any other value,
    including an undeclared kind of a declared server, is `OTHER_LABEL`.
    """
    # Only an exact str is looked up, and the stored label returned: the caller's methods never find one.
    return (_LABELS.get(name) if type(name) is str else None) or _runtime.label(name) or OTHER_LABEL


def suggest(name: object) -> str | None:
    """The registered kind ``name`` most likely meant, or ``None`` when nothing is close.

    Catches case and separator variants (``"Transport-Timeout"``, ``"TransportTimeout"``), typos
    (``"verifer_error"``) and truncations (``"judge_fail"``). A registered name suggests itself.
    """
    from failure_kinds._suggest import suggest as registered_closest

    return registered_closest(name)


def __getattr__(name: str) -> object:
    # Typing names and stages are built once on first use (_stages), older names resolved from history.
    if name in ("FailureKindName", "NamespacedFailureKind", "AnyFailureKind", "FailureStage", "Stage"):
        from failure_kinds._stages import build

        return build(name)
    if name.startswith("_"):  # a probe for a private or special name must not load history
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from failure_kinds.history import older_name

    return older_name(name)


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})  # with the names built on first use, before they are


# Checkers cannot follow this list (enum constants, __getattr__ names): the generated stub spells it out.
__all__ = ["FAILURE_KINDS", "OTHER_LABEL", "FailureKind", *FailureKind.__members__, "AnyFailureKind"]  # pyright: ignore[reportUnsupportedDunderAll]
__all__ += ["FailureKindName", "FailureStage", "NamespacedFailureKind", "Stage", "declare_namespace"]  # pyright: ignore[reportUnsupportedDunderAll]
__all__ += ["FailureKindsError", "is_namespaced", "is_registered", "metric_label", "namespaced", "suggest"]
__all__ += ["validate_failure_kind"]
