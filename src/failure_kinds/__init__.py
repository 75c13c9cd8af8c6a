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
    from collections.abc import Callable, Collection, Iterable, Mapping
    from typing import Self, TypeVar

    # Unbounded: validate_failure_kind takes anything a boundary hands it and returns it as it came.
    _T = TypeVar("_T")

__version__ = "0.2.0"


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
"""The metric label :func:`metric_label` gives any value that has no label of its own."""

_NAME_PATTERN = re.compile(r"[a-z][a-z0-9_]*")
_NAMESPACED_PATTERN = re.compile(r"[a-z][a-z0-9_]*:[a-z][a-z0-9_]*")

logger = logging.getLogger(__name__)

# The registered names in enum order: suggestions prefer the earlier kind when two are equally close.
_KIND_VALUES = tuple(kind.value for kind in FailureKind)

# Values already reported. Short strings are remembered as themselves, so that discarding one makes its
# next occurrence warn again; anything else (long strings, non-strings, unhashable values) by a tuple of
# a few small parts (see _report_key), never by the value itself: a stored value's own __eq__ would run
# on every later lookup.
_WARNED_UNKNOWN: set[object] = set()

# Past this many remembered values one last warning is logged and the rest go unreported, so a producer
# that emits unbounded garbage costs bounded memory and a bounded log.
_WARNED_LIMIT = 1024
_warned_overflow = False
_warned_lock = threading.Lock()
# Keys whose warning is being logged right now: another thread meeting the same value stays quiet, and
# the key moves to _WARNED_UNKNOWN only once the warning was emitted.
_REPORTING: set[object] = set()

# A string is remembered (as a reported value, a silent value or a label) only up to this many
# characters; a longer one is remembered by a fixed-size key. With the count limits this bounds what
# the module retains: at most 1,024 reported keys and 4,096 silent values of at most 256 characters each
# (4 bytes per character at worst) and 512 labels of at most 100, under 8 MiB in all (about 3 MiB at
# worst), whatever a producer sends. Declared names come on top: the program writes them, not its data.
_REMEMBER_LENGTH = 256

# Everything validate_failure_kind lets through without a word: None, the registered names, the declared
# namespaced names, and the namespaced values of undeclared servers seen so far, so a recurring value
# costs one set lookup rather than a regular expression. Only exact str objects are stored.
_SILENT: set[object] = {None, *FAILURE_KINDS}
_NAMESPACED_CACHE_LIMIT = 4096
_SILENT_LIMIT = len(_SILENT) + _NAMESPACED_CACHE_LIMIT

# Each value metric_label gives its own label, mapped to that label (an exact str): registered names,
# declared names, and at most _LABEL_LIMIT namespaced values of undeclared servers, each at most
# _LABEL_LENGTH characters. Anything else is OTHER_LABEL, so a metric stays bounded.
_LABELS: dict[object, str] = {value: value for value in FAILURE_KINDS}
_LABEL_LIMIT = 512
_LABEL_LENGTH = 100
_labelled_namespaced = 0

# The runtime declarations: server -> the kind names declared for it (without the "server:" prefix).
# Written only under _declared_lock, and each server's set is replaced rather than changed, so readers
# need no lock.
_DECLARED: dict[str, frozenset[str]] = {}
# Guards _DECLARED and every change to _SILENT and _LABELS, so a value seen while its server is being
# declared cannot be cached as silent after the declaration.
_declared_lock = threading.Lock()

# Called with every unregistered or undeclared value that reaches validate_failure_kind, each time, not
# only the first: the pytest plugin (failure_kinds.pytest_plugin) watches a test this way. Empty unless a
# test is watched.
_OBSERVERS: "list[Callable[[object], object]]" = []

# repr of a value in a log line or an error message is cut to this many characters.
_SHOWN_LIMIT = 200
# suggest() compares against names of at most a few dozen characters; longer input is not a typo.
_SUGGEST_LIMIT = 64
# How much of a non-string value _fingerprint reads: this many nodes, each leaf's text cut to
# _FINGERPRINT_LEAF characters, so keying a value costs bounded work however large it is.
_FINGERPRINT_NODES = 2048
_FINGERPRINT_LEAF = 256


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


def declare_namespace(server: str, kinds: "Iterable[str]") -> None:
    """Declare the kinds of an environment's own namespace ``server``.

    After it, a ``"<server>:<kind>"`` value whose kind was not declared is reported by
    :func:`validate_failure_kind` (once, with the closest declared kind as a suggestion), labelled
    :data:`OTHER_LABEL` by :func:`metric_label` and fails a test under the pytest strict mode. Servers never
    declared keep passing silently. Calling it again for the same server adds kinds; repeating a call
    changes nothing. Safe to call from several threads, and before or after values were validated.

    Raises :class:`ValueError` naming the bad part when ``server`` or a kind does not match
    ``[a-z][a-z0-9_]*``, when a kind is not a string, or when ``kinds`` is a single string or not iterable.
    Nothing is declared when it raises.
    """
    # Checked although annotated: untyped callers exist, and the message beats a TypeError.
    if not isinstance(server, str) or _NAME_PATTERN.fullmatch(server) is None:  # pyright: ignore[reportUnnecessaryIsInstance]
        raise ValueError(
            f"declare_namespace: the server {_shown(server)} does not match {_NAME_PATTERN.pattern}"
        )
    server = str.__str__(server)  # the text of a str subclass, whatever its own methods do
    if isinstance(kinds, (str, bytes, bytearray)):
        raise ValueError(
            f"declare_namespace: kinds must be an iterable of kind names, not the single value "
            f"{_shown(kinds)}; write [{_shown(kinds)}]"
        )
    try:
        listed = list(kinds)
    except TypeError:
        raise ValueError(
            f"declare_namespace: kinds must be an iterable of kind names, not {_shown(kinds)} of type "
            f"{_type_name(kinds)}"
        ) from None
    declared: set[str] = set()
    for kind in listed:
        if not isinstance(kind, str):  # pyright: ignore[reportUnnecessaryIsInstance]
            raise ValueError(
                f"declare_namespace: the kind {_shown(kind)} of server {server!r} is not a string but "
                f"{_type_name(kind)}"
            )
        plain = str.__str__(kind)  # an environment's own StrEnum member counts as its value
        if _NAME_PATTERN.fullmatch(plain) is None:
            raise ValueError(
                f"declare_namespace: the kind {_shown(plain)} of server {server!r} does not match "
                f"{_NAME_PATTERN.pattern}"
            )
        declared.add(plain)
    global _SILENT_LIMIT, _labelled_namespaced
    with _declared_lock:
        before = _DECLARED.get(server)
        after = frozenset(declared) if before is None else before | declared
        if after == before:
            return
        _DECLARED[server] = after
        prefix = server + ":"
        # Values of this server seen while it declared nothing were cached as silent and labelled; the
        # ones it does not declare lose both. (Iterating over copies: these sets are small and bounded.)
        for value in [value for value in _SILENT if isinstance(value, str) and value.startswith(prefix)]:
            if value[len(prefix) :] not in after:
                _SILENT.discard(value)
        for value in [value for value in _LABELS if isinstance(value, str) and value.startswith(prefix)]:
            if value[len(prefix) :] not in after:
                del _LABELS[value]
                _labelled_namespaced -= 1
        for kind in after if before is None else after - before:
            full = prefix + kind
            if full not in _SILENT:
                # Declared names are written by the program, not by its data: they never crowd out.
                _SILENT.add(full)
                _SILENT_LIMIT += 1  # pyright: ignore[reportConstantRedefinition]
            if full in _LABELS:
                _labelled_namespaced -= 1  # was counted as a value of an undeclared server
            _LABELS[full] = full


def validate_failure_kind(name: "_T") -> "_T":
    """Return ``name`` unchanged, warning once per unregistered value.

    Producers call this at their boundary. ``None``, registered and namespaced values pass silently;
    anything else is logged once as a WARNING on the ``failure_kinds`` logger, with a suggestion where one
    is close. A namespaced value of a server given to :func:`declare_namespace` passes only when its kind
    was declared. It warns rather than raises so a component that still emits an old label stays visible
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
    """A label for ``name`` that keeps a metric's cardinality bounded. Never raises.

    Registered and declared names are their own label, as a plain ``str``. So is a namespaced value of a
    server that declared nothing, while it is at most 100 characters long and among the first 512 such
    distinct values; any other value, including an undeclared kind of a declared server, is
    :data:`OTHER_LABEL`.
    """
    try:
        # The stored label, never ``name`` itself: a str subclass that claims equality with a label must
        # not smuggle its own text (of any length) into a metric.
        label = _LABELS.get(name)
        if label is not None:
            return label
    except Exception:
        pass  # unhashable, or a hostile __hash__ or __eq__: judged by its text below
    try:
        return _new_label(name)
    except Exception:
        return OTHER_LABEL


def suggest(name: object) -> str | None:
    """The registered kind ``name`` most likely meant, or ``None`` when nothing is close.

    Catches case and separator variants (``"Transport-Timeout"``, ``"TransportTimeout"``), typos
    (``"verifer_error"``) and truncations (``"judge_fail"``). A registered name suggests itself.
    """
    try:
        if not isinstance(name, str) or str.__len__(name) > _SUGGEST_LIMIT:
            return None
        return _closest(str.__str__(name), _KIND_VALUES)
    except Exception:
        return None


def _closest(name: str, candidates: "Collection[str]") -> str | None:
    """The candidate ``name`` most likely meant, or ``None``: the typo, case, separator and truncation
    matcher behind :func:`suggest`, for any set of candidates (such as declared ``"server:kind"`` names).
    A candidate suggests itself. Never raises."""
    try:
        name = str.__str__(name)
        listed = [str.__str__(candidate) for candidate in candidates]
        longest = max((len(candidate) for candidate in listed), default=0)
        if not listed or len(name) > max(_SUGGEST_LIMIT, 2 * longest):
            return None
        # Imported here: only the slow path of an unreported value ever needs it.
        import difflib

        words = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name.strip())
        normal = re.sub(r"[\s\-.]+", "_", words).lower()
        if normal in listed:
            return normal
        # A cut-off name is only a guess when exactly one candidate continues it and enough was written.
        continuing = [candidate for candidate in listed if candidate.startswith(normal)]
        if len(continuing) == 1 and len(normal) >= 5:
            return continuing[0]
        close = difflib.get_close_matches(normal, listed, n=1, cutoff=0.8)
        return close[0] if close else None
    except Exception:
        return None


def _category(name: str, namespaces: "Mapping[str, Collection[str]] | None" = None) -> str:
    """``"registered"``, ``"namespaced"``, ``"undeclared"`` or ``"unregistered"``.

    ``"undeclared"`` is a well-formed namespaced value whose server is declared and whose kind is not.
    ``namespaces`` maps servers to their declared kind names (without the prefix); ``None`` means the
    runtime declarations made with :func:`declare_namespace`. Never raises.
    """
    value: object = name  # checked although annotated: untyped callers exist
    try:
        if not isinstance(value, str):  # pyright: ignore[reportUnnecessaryIsInstance]
            return "unregistered"
        name = str.__str__(value)
        if name in FAILURE_KINDS:
            return "registered"
        if _NAMESPACED_PATTERN.fullmatch(name) is None:
            return "unregistered"
        server, _, kind = name.partition(":")
        declared = (_DECLARED if namespaces is None else namespaces).get(server)
        if declared is not None and kind not in declared:
            return "undeclared"
        return "namespaced"
    except Exception:
        return "unregistered"


def _suggest_any(name: str, namespaces: "Mapping[str, Collection[str]] | None" = None) -> str | None:
    """For an undeclared value, the closest declared ``"server:kind"`` of its server; otherwise
    :func:`suggest`. Never raises."""
    try:
        if _category(name, namespaces) != "undeclared":
            return suggest(name)
        server, _, kind = str.__str__(name).partition(":")
        declared = (_DECLARED if namespaces is None else namespaces).get(server, ())
        # Kind against kind: the shared "server:" prefix would make every declared kind look close.
        closest = _closest(kind, declared)
        return None if closest is None else f"{server}:{closest}"
    except Exception:
        return None


def _new_label(name: object) -> str:
    global _labelled_namespaced
    if not isinstance(name, str) or str.__len__(name) > _LABEL_LENGTH:
        return OTHER_LABEL
    plain = str.__str__(name)
    label = _LABELS.get(plain)
    if label is not None:
        return label
    if _NAMESPACED_PATTERN.fullmatch(plain) is None:
        return OTHER_LABEL
    with _declared_lock:
        if plain in _LABELS:
            return _LABELS[plain]
        if plain.partition(":")[0] in _DECLARED or _labelled_namespaced >= _LABEL_LIMIT:
            # Declared names are all in _LABELS already, so this one is undeclared, or past the cap.
            return OTHER_LABEL
        _LABELS[plain] = plain
        _labelled_namespaced += 1
    return plain


def _passes(name: object) -> bool:
    """Whether ``name`` passes silently, judged by its text alone (so a str subclass whose __hash__ or
    __eq__ misbehaves is judged like the plain string); caches a namespaced value when it passes."""
    if not isinstance(name, str):
        return False
    plain = str.__str__(name)
    if plain in _SILENT:
        return True
    if _NAMESPACED_PATTERN.fullmatch(plain) is None:
        return False
    server, _, kind = plain.partition(":")
    declared = _DECLARED.get(server)
    if declared is not None:
        return kind in declared
    if len(plain) <= _REMEMBER_LENGTH and len(_SILENT) < _SILENT_LIMIT:
        with _declared_lock:
            # Checked again under the lock: declare_namespace may have run since the lookup above, and
            # other threads may have filled the cache.
            if server not in _DECLARED and len(_SILENT) < _SILENT_LIMIT:
                _SILENT.add(plain)
    return True


def _note_unsilenced(name: object) -> None:
    try:
        if name is None or _passes(name):
            return
    except Exception:
        pass  # a hostile str subclass: reported below like any other value
    # (try statements rather than contextlib.suppress: this path runs on every call with a bad value.)
    for observer in _OBSERVERS:
        try:  # noqa: SIM105
            observer(name)
        except Exception:
            pass  # one broken observer must not keep the warning or the other observers from running
    if _warned_overflow and len(_WARNED_UNKNOWN) >= _WARNED_LIMIT:
        return  # nothing new is reported any more: no need to work out what the value's key is
    try:  # noqa: SIM105
        _report_once(name)
    except Exception:
        pass  # reporting is a courtesy; the producer's failure record matters more than our warning


def _report_key(name: object) -> "str | tuple[str, int, int, str] | tuple[str, bytes]":
    """The key ``name`` is remembered by once reported: its text when it is a short string, else a tuple
    of a str, ints and bytes. Made only of builtin values, so comparing keys never runs a caller's code,
    and bounded in work and size whatever ``name`` is."""
    if isinstance(name, str):
        try:
            length = str.__len__(name)
            if length <= _REMEMBER_LENGTH:
                return str.__str__(name)  # a str subclass counts as its text
            # str.__hash__ is computed once per string object and cached, so repeats cost nothing.
            return ("long str", length, str.__hash__(name), str.__getitem__(name, slice(0, 64)))
        except Exception:
            pass  # an object that claims to be a str without being one
    return ("fingerprint", _fingerprint(name))


def _fingerprint(value: object) -> bytes:
    """A 16-byte digest of ``value``'s type and content, reading at most _FINGERPRINT_NODES parts of it.

    Values differing within that budget get different digests (two lists that agree on their first
    thousand elements but not later are told apart); values that agree on all of it share one.
    """
    import hashlib

    digest = hashlib.blake2b(digest_size=16)

    def feed(text: str) -> None:
        digest.update(text.encode("utf-8", "surrogatepass"))
        digest.update(b"\0")

    pending: list[object] = [value]
    nodes = 0
    while pending and nodes < _FINGERPRINT_NODES:
        item = pending.pop()
        nodes += 1
        kind = type(item)
        feed(_type_name(item))
        room = _FINGERPRINT_NODES - nodes - len(pending)
        try:
            # Only the exact builtin types are taken apart: a subclass may redefine len, slicing or
            # iteration. Everything else is its type and cut repr.
            if isinstance(item, (list, tuple)) and kind in (list, tuple):
                sequence: list[object] | tuple[object, ...] = item  # pyright: ignore[reportUnknownVariableType]
                feed(str(len(sequence)))
                pending.extend(reversed(sequence[: max(room, 0)]))
            elif isinstance(item, dict) and kind is dict:
                mapping: dict[object, object] = item  # pyright: ignore[reportUnknownVariableType]
                feed(str(len(mapping)))
                for index, (key, element) in enumerate(mapping.items()):
                    if 2 * index >= room:
                        break
                    pending.append(element)
                    pending.append(key)
            elif isinstance(item, str) and kind is str:
                # The hash covers the whole string (computed once per string object, then cached).
                feed(f"{len(item)}:{hash(item)}:{item[:_FINGERPRINT_LEAF]}")
            elif isinstance(item, (bytes, bytearray)) and kind in (bytes, bytearray):
                whole = hash(item) if isinstance(item, bytes) else ""
                feed(f"{len(item)}:{whole}:{bytes(item[:_FINGERPRINT_LEAF])!r}")
            elif isinstance(item, int) and kind is int:
                feed(f"{item.bit_length()}:{hash(item)}:{item & 0xFFFFFFFFFFFFFFFF}")
            else:
                feed(_printable(item, _FINGERPRINT_LEAF))  # pyright: ignore[reportUnknownArgumentType]
        except Exception:
            feed("<unreadable>")
    feed(f"{len(pending)} unread")
    return digest.digest()


def _report_once(name: object) -> None:
    global _warned_overflow
    key = _report_key(name)
    with _warned_lock:
        if key in _WARNED_UNKNOWN or key in _REPORTING:
            return
        if len(_WARNED_UNKNOWN) + len(_REPORTING) >= _WARNED_LIMIT:
            if _warned_overflow or _REPORTING:
                return
            overflow = True
        else:
            overflow = False
        _REPORTING.add(key)
    # Logged outside the lock: a handler may itself validate a kind. The key counts as reported only
    # when logging returned; a raising filter or handler leaves it free to be reported next time.
    emitted = False
    try:
        if overflow:
            logger.warning(
                "%d distinct unregistered failure kinds reported; further distinct unregistered kinds are "
                "no longer reported one by one",
                _WARNED_LIMIT,
            )
        else:
            logger.warning("%s", _describe(name))
        emitted = True
    finally:
        with _warned_lock:
            _REPORTING.discard(key)
            if emitted:
                if overflow:
                    _warned_overflow = True
                else:
                    _WARNED_UNKNOWN.add(key)


def _describe(name: object) -> str:
    """The warning for a value that does not pass silently, escaped and bounded."""
    if not isinstance(name, str):
        return f"failure kind is not a string: {_shown(name)} of type {_type_name(name)}"
    hint = _suggest_any(name)
    suggestion = f"; did you mean {hint!r}?" if hint is not None else ""
    if _category(name) == "undeclared":
        server = str.__str__(name).partition(":")[0]
        return f"undeclared failure kind {_shown(name)} in declared namespace {server!r}{suggestion}"
    return f"unregistered failure kind {_shown(name)}{suggestion}"


def _printable(value: object, limit: int) -> str:
    """``repr(value)`` cut to at most ``limit`` characters and escaped, so that no control character,
    line break, escape sequence, bidirectional override or lone surrogate reaches a log line or a
    terminal raw, whatever ``value``'s repr returns. Costs O(limit) for a string of any length.
    Never raises."""
    try:
        text = _bounded_repr(value, max(limit, 0))
    except Exception:
        text = f"<{_type_name(value)} object whose repr failed>"
    return _cut(_escape(str.__getitem__(text, slice(0, limit + 1))), limit)


# How _bounded_repr writes the builtin containers it takes apart itself.
_BRACKETS: "dict[type, tuple[str, str]]" = {
    list: ("[", "]"),
    tuple: ("(", ")"),
    set: ("{", "}"),
    frozenset: ("frozenset({", "})"),
    dict: ("{", "}"),
}


def _pieces(container: object, limit: int) -> "list[tuple[bool, object]]":
    """A builtin container (exactly one of _BRACKETS) as brackets, separators and its first elements,
    each marked True when it is text to write as it is: more than ``limit`` elements print more than
    ``limit`` characters, so the rest is never read."""
    opening, closing = _BRACKETS[type(container)]
    pieces: list[tuple[bool, object]] = [(True, opening)]
    if isinstance(container, dict):
        mapping: dict[object, object] = container  # pyright: ignore[reportUnknownVariableType]
        for index, (key, element) in enumerate(mapping.items()):
            if index > limit:
                break
            pieces.extend(((True, ", " if index else ""), (False, key), (True, ": "), (False, element)))
    elif isinstance(container, (list, tuple, set, frozenset)):
        elements: list[object] | tuple[object, ...] | set[object] | frozenset[object] = container  # pyright: ignore[reportUnknownVariableType]
        for index, element in enumerate(elements):
            if index > limit:
                break
            pieces.extend(((True, ", " if index else ""), (False, element)))
        if type(elements) is tuple and len(elements) == 1:
            closing = ",)"
    pieces.append((True, closing))
    return pieces


def _bounded_repr(value: object, limit: int) -> str:
    """What ``repr(value)`` starts with, at least its first ``limit`` characters when it is longer.

    Strings are cut before their repr, and the builtin containers (exactly list, tuple, set, frozenset
    and dict) are written here, element by element, stopping once ``limit`` characters are out, so a
    megabyte string or a list of millions costs what a short one does. A string's own repr is used even
    for a str subclass, which is shown as its text. Any other object's repr is its own.
    """
    written: list[str] = []
    size = 0
    pending: list[tuple[bool, object]] = [(False, value)]
    while pending and size <= limit:
        is_text, item = pending.pop()
        if is_text and isinstance(item, str):
            text = item
        elif isinstance(item, str):
            text = str.__repr__(str.__getitem__(item, slice(0, limit + 1)))
        elif type(item) in _BRACKETS and item:
            pending.extend(reversed(_pieces(item, limit)))
            continue
        else:
            text = repr(item)
        written.append(text)
        size += str.__len__(text)
    return "".join(written)


def _shown(value: object) -> str:
    """``repr(value)`` cut to at most _SHOWN_LIMIT characters and escaped (see _printable); never raises."""
    return _printable(value, _SHOWN_LIMIT)


def _type_name(value: object) -> str:
    """The qualified name of ``value``'s type, escaped and cut; never raises."""
    try:
        qualname = type(value).__qualname__
        return _cut(_escape(str.__getitem__(qualname, slice(0, _SHOWN_LIMIT + 1))), _SHOWN_LIMIT)
    except Exception:
        return "<unnamed type>"


def _escape(text: str) -> str:
    if str.isprintable(text):
        return text
    return "".join(character if character.isprintable() else _escape_one(character) for character in text)


def _escape_one(character: str) -> str:
    code = ord(character)
    if code < 0x100:
        return f"\\x{code:02x}"
    if code < 0x10000:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def _cut(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    if limit < 4:
        return text[: max(limit, 0)]
    return text[: limit - 3] + "..."


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
    "declare_namespace",
    "is_namespaced",
    "is_registered",
    "metric_label",
    "namespaced",
    "suggest",
    "validate_failure_kind",
    *FailureKind.__members__,
]
