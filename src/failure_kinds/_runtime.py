"""The state behind validate_failure_kind and metric_label, and the one lock that guards it: bounded
whatever producers send (under 8 MiB), declared names aside. A value enters as a plain ``str``
(:func:`text_of`): a str subclass's own methods never decide what is cached, counted or shown."""

import logging
import re
import threading

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Collection, Iterable, Mapping
    from typing import Any

    _Snapshot = tuple[set[object], dict[str, frozenset[str]], set[object], dict[object, str], bool, int, int]

NAME_PATTERN = re.compile(r"[a-z][a-z0-9_]*")
NAMESPACED_PATTERN = re.compile(r"[a-z][a-z0-9_]*:[a-z][a-z0-9_]*")
# Compiled by re's own cache on first use: only a declaration needs it, so the import does not pay for it.
_NAME_LINES = r"(?:[a-z][a-z0-9_]*\n)*+"

logger = logging.getLogger("failure_kinds")

REGISTERED: "tuple[str, ...]" = ()  # the registered names in enum order, set by register() at import
REGISTERED_SET: "frozenset[str]" = frozenset()
DEPRECATED: "dict[str, str]" = {}  # deprecated registered name -> the name that replaces it

# Reported values: a str of up to REMEMBER_LENGTH characters as itself (discarding it re-arms its warning),
# a longer one by length, hash and start, anything else by a digest of its type and repr cut at REPR_LENGTH.
WARNED: set[object] = set()
WARNED_LIMIT = 1024
REMEMBER_LENGTH = 256
REPR_LENGTH = 4096
warned_overflow = False  # whether the notice that reports stopped was logged

# What passes at the cost of one set lookup: None, the registered and declared names, and up to
# SILENT_CACHE_LIMIT namespaced values of servers that declared nothing. Exact str objects only.
SILENT: set[object] = {None}
SILENT_CACHE_LIMIT = 4096
silent_limit = len(SILENT) + SILENT_CACHE_LIMIT
# The FailureKind members of the silent names: found by identity, without comparing a str subclass's text.
MEMBERS: set[object] = set()

# Each value with a metric label of its own -> it: registered and declared names, and at most LABEL_LIMIT
# namespaced values of servers that declared nothing, each at most LABEL_LENGTH characters.
LABELS: dict[object, str] = {}
LABEL_LIMIT = 512
LABEL_LENGTH = 100
labelled_namespaced = 0

# server -> its declared kinds (without "server:"); each set is replaced, never changed: readers need no lock.
DECLARED: "dict[str, frozenset[str]]" = {}

# Called with every value that does not pass silently, each time: the pytest plugin watches tests so.
OBSERVERS: "list[Callable[[object], object]]" = []

# Guards every change above. Reentrant: a warning is logged while it is held, and a handler may validate.
LOCK = threading.RLock()


def register(kinds: "Collection[tuple[str, str | None]]") -> None:
    """Make ``kinds`` (each name with its replacement, None unless deprecated) the registered names."""
    global REGISTERED, REGISTERED_SET, silent_limit
    REGISTERED = tuple(name for name, _ in kinds)  # pyright: ignore[reportConstantRedefinition]
    REGISTERED_SET = frozenset(REGISTERED)  # pyright: ignore[reportConstantRedefinition]
    DEPRECATED.clear()
    DEPRECATED.update({name: replacement for name, replacement in kinds if replacement is not None})
    SILENT.difference_update(DEPRECATED)
    SILENT.update(REGISTERED_SET - DEPRECATED.keys())
    LABELS.update({kind: kind for kind in REGISTERED})
    silent_limit = len(SILENT) + SILENT_CACHE_LIMIT
    from failure_kinds import FailureKind  # defined before the package registers its kinds

    MEMBERS.clear()
    MEMBERS.update(kind for kind in FailureKind if kind.value in SILENT)


def all_names(texts: "list[str]") -> bool:
    """Whether each of ``texts`` (exact ``str`` objects) matches NAME_PATTERN, in one match of them all (a
    match each would slow a declaration of thousands). A text holding a line end adds one: fails."""
    joined = "\n".join(texts) + "\n"
    return joined.count("\n") == len(texts) and re.fullmatch(_NAME_LINES, joined) is not None


def exact_strs(values: "Iterable[object]") -> bool:
    """Whether each of ``values`` is an exact ``str``, in one pass in C that runs none of their methods."""
    return {*map(id, map(type, values))} <= {id(str)}


def text_of(value: object) -> "str | None":
    """``value``'s text as an exact ``str`` when its type (not a ``__class__`` it claims) is a str."""
    return str.__str__(value) if issubclass(type(value), str) else None  # pyright: ignore[reportArgumentType]


def category(name: object, namespaces: "Mapping[str, Collection[str]] | None" = None) -> str:
    """``"registered"``, ``"namespaced"``, ``"undeclared"`` (a declared server's undeclared kind),
    ``"legacy"`` (an older label, see failure_kinds.history) or ``"unregistered"``. ``namespaces`` maps
    servers to their kinds; None means the declarations made with declare_namespace."""
    text = text_of(name)
    if text is None:
        return "unregistered"
    if text in REGISTERED_SET:
        return "registered"
    if NAMESPACED_PATTERN.fullmatch(text) is None:
        from failure_kinds.history import OLDER_LABELS

        return "legacy" if text in OLDER_LABELS else "unregistered"
    server, _, kind = text.partition(":")
    declared = (DECLARED if namespaces is None else namespaces).get(server)
    if isinstance(declared, tuple) and len(declared) > 16:
        # A configuration's kinds: a set made once per tuple, kept by identity (the tuple is held, so its
        # id is not reused), all forgotten past a few dozen.
        kept = _AS_SETS.get(id(declared))
        if kept is None or kept[0] is not declared:
            if len(_AS_SETS) >= 64:
                _AS_SETS.clear()
            kept = _AS_SETS[id(declared)] = (declared, frozenset(declared))
        declared = kept[1]
    return "undeclared" if declared is not None and kind not in declared else "namespaced"


def classify(name: str, namespaces: "Mapping[str, Collection[str]] | None" = None) -> str:
    """``category``, with ``"malformed"`` for an unregistered value holding a colon: meant as a
    namespaced kind and written wrong (``SWE_env:patch``). What ``check``, the lint and the audit say."""
    found = category(name, namespaces)
    return "malformed" if found == "unregistered" and ":" in name else found


_AS_SETS: "dict[int, tuple[tuple[str, ...], frozenset[str]]]" = {}


def declare(text: str, declared: "set[str]") -> None:
    """declare_namespace's work, on its arguments once checked (_arguments.declaration): see its docstring."""
    global silent_limit, labelled_namespaced
    prefix = text + ":"
    with LOCK:
        before = DECLARED.get(text)
        after = frozenset(declared) if before is None else before | declared
        if after == before:
            return
        DECLARED[text] = after
        # Values of this server cached or labelled while it declared nothing lose both unless declared now.
        stale = {value for value in (*SILENT, *LABELS) if isinstance(value, str) and value.startswith(prefix)}
        stale = {value for value in stale if value[len(prefix) :] not in after}
        SILENT.difference_update(stale)
        labelled_namespaced -= sum(LABELS.pop(value, None) is not None for value in stale)
        for kind in after if before is None else after - before:
            full = prefix + kind
            if full not in SILENT:
                SILENT.add(full)
                silent_limit += 1  # declared names never crowd out the cache of undeclared servers
            if full in LABELS:
                labelled_namespaced -= 1  # it was counted as a value of an undeclared server
            LABELS[full] = full


def passes(text: str) -> bool:
    """Whether ``text`` passes silently; a passing namespaced value is remembered (one lookup next time)."""
    if text in SILENT:
        return True
    if NAMESPACED_PATTERN.fullmatch(text) is None:
        return False
    server, _, kind = text.partition(":")
    declared = DECLARED.get(server)
    if declared is not None:
        return kind in declared
    if len(text) <= REMEMBER_LENGTH and len(SILENT) < silent_limit:
        with LOCK:
            # Checked again under the lock: declare may have run since the lookup above.
            if server not in DECLARED and len(SILENT) < silent_limit:
                SILENT.add(text)
    return True


def label(name: object) -> "str | None":
    """The metric label of ``name`` when it has one of its own, or None for the shared other label."""
    global labelled_namespaced
    text = text_of(name)
    if text is None or len(text) > LABEL_LENGTH:
        return None
    found = LABELS.get(text)
    if found is not None:
        return found
    if NAMESPACED_PATTERN.fullmatch(text) is None:
        from failure_kinds.history import OLDER_LABELS

        older = OLDER_LABELS.get(text)  # an older label with a single replacement counts as that kind
        return None if older is None else older.replacement
    with LOCK:
        if text in LABELS:
            return LABELS[text]
        if text.partition(":")[0] in DECLARED or labelled_namespaced >= LABEL_LIMIT:
            return None  # undeclared kind of a declared server (the declared are all labelled), or full
        LABELS[text] = text
        labelled_namespaced += 1
    return text


def snapshot() -> "_Snapshot":
    """Everything declarations and reports change, for :func:`restore`: what a test saves first."""
    with LOCK:
        state = (set(WARNED), dict(DECLARED), set(SILENT), dict(LABELS))
        return (*state, warned_overflow, silent_limit, labelled_namespaced)


def restore(saved: "_Snapshot") -> None:
    """Put back what :func:`snapshot` returned, refilling the same objects."""
    global warned_overflow, silent_limit, labelled_namespaced
    with LOCK:
        state: tuple[Any, ...] = (WARNED, DECLARED, SILENT, LABELS)  # each kept copy has its type
        for live, kept in zip(state, saved[:4], strict=True):
            live.clear()
            live.update(kept)
        warned_overflow, silent_limit, labelled_namespaced = saved[4:]


def forget_reports() -> None:
    """Report every value again, as a new process would: what a test does before it starts."""
    global warned_overflow
    with LOCK:
        WARNED.clear()
        warned_overflow = False
