"""The state behind validate_failure_kind and metric_label, and the one lock that guards it.

Everything here is bounded whatever a producer sends: at most WARNED_LIMIT reported keys, SILENT_CACHE_LIMIT
remembered namespaced values and LABEL_LIMIT labels, each string at most REMEMBER_LENGTH characters, under
8 MiB in all (about 3 MiB at worst). Declared names come on top: the program writes them, not its data.

A value enters as a plain ``str`` (see :func:`plain`): from then on only ``str``'s own methods run on it, so a
str subclass's ``__eq__``, ``__hash__`` or ``__len__`` cannot change what is cached, counted or shown.
"""

import logging
import re
import threading

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Collection, Iterable, Mapping

NAME_PATTERN = re.compile(r"[a-z][a-z0-9_]*")
NAMESPACED_PATTERN = re.compile(r"[a-z][a-z0-9_]*:[a-z][a-z0-9_]*")

logger = logging.getLogger("failure_kinds")

# The registered names in enum order, set once by the package as it loads (see register).
REGISTERED: "tuple[str, ...]" = ()
REGISTERED_SET: "frozenset[str]" = frozenset()

# Values already reported. A string of at most REMEMBER_LENGTH characters is remembered as itself, so
# discarding it re-arms its warning; a longer one by its length, hash and start; anything else by the
# text of its warning, which names its type. Keys are builtin values only: comparing them runs no
# caller's code.
WARNED: set[object] = set()
WARNED_LIMIT = 1024
REMEMBER_LENGTH = 256
# Set once the notice that reports stopped was logged; cleared with the reports (see forget_reports).
warned_overflow = False

# What passes without a word and costs one set lookup: None, the registered names, the declared names,
# and up to SILENT_CACHE_LIMIT namespaced values of servers that declared nothing. Exact str objects only.
SILENT: set[object] = {None}
SILENT_CACHE_LIMIT = 4096
silent_limit = len(SILENT) + SILENT_CACHE_LIMIT

# Each value with a metric label of its own, mapped to it: registered and declared names, and at most
# LABEL_LIMIT namespaced values of servers that declared nothing, each at most LABEL_LENGTH characters.
LABELS: dict[object, str] = {}
LABEL_LIMIT = 512
LABEL_LENGTH = 100
labelled_namespaced = 0

# server -> its declared kind names (without the "server:" prefix). A server's set is replaced, never
# changed, so readers need no lock.
DECLARED: "dict[str, frozenset[str]]" = {}

# Called with every value that does not pass silently, each time: the pytest plugin watches tests so.
OBSERVERS: "list[Callable[[object], object]]" = []

# Guards every change to the state above. Reentrant because a warning is logged while it is held (so two
# threads never both report a value) and a log handler may itself validate or declare.
_lock = threading.RLock()


def register(kinds: "tuple[str, ...]") -> None:
    """Make ``kinds`` the registered names: silent, and their own labels. Called once, by the package."""
    global REGISTERED, REGISTERED_SET, silent_limit
    REGISTERED, REGISTERED_SET = kinds, frozenset(kinds)
    SILENT.update(kinds)
    LABELS.update({kind: kind for kind in kinds})
    silent_limit = len(SILENT) + SILENT_CACHE_LIMIT


def plain(value: object) -> "str | None":
    """The text of ``value`` as an exact ``str`` when it is a string (a subclass included), else None."""
    # issubclass on the type, not isinstance: an object can claim a __class__ it does not have.
    return str.__str__(value) if issubclass(type(value), str) else None  # type: ignore[arg-type]


def category(name: object, namespaces: "Mapping[str, Collection[str]] | None" = None) -> str:
    """``"registered"``, ``"namespaced"``, ``"undeclared"`` or ``"unregistered"``.

    ``"undeclared"`` is a well-formed namespaced value whose server is declared and whose kind is not.
    ``namespaces`` maps servers to their kinds; None means the declarations made with declare_namespace.
    """
    text = plain(name)
    if text is None:
        return "unregistered"
    if text in REGISTERED_SET:
        return "registered"
    if NAMESPACED_PATTERN.fullmatch(text) is None:
        return "unregistered"
    server, _, kind = text.partition(":")
    declared = (DECLARED if namespaces is None else namespaces).get(server)
    return "undeclared" if declared is not None and kind not in declared else "namespaced"


def declare(server: str, kinds: "Iterable[str]") -> None:
    """declare_namespace's work; see its docstring for what it promises."""
    from failure_kinds._display import shown, type_name

    global silent_limit, labelled_namespaced
    text = plain(server)
    if text is None or NAME_PATTERN.fullmatch(text) is None:
        raise ValueError(f"declare_namespace: the server {shown(server)} does not match {NAME_PATTERN.pattern}")
    if plain(kinds) is not None or isinstance(kinds, (bytes, bytearray)):
        raise ValueError(
            f"declare_namespace: kinds must be an iterable of kind names, not the single value "
            f"{shown(kinds)}; write [{shown(kinds)}]"
        )
    try:
        listed = list(kinds)
    except TypeError:
        raise ValueError(
            f"declare_namespace: kinds must be an iterable of kind names, not {shown(kinds)} of type "
            f"{type_name(kinds)}"
        ) from None
    if not listed:
        raise ValueError(f"declare_namespace: the server {text!r} declares no kinds")
    declared: set[str] = set()
    for kind in listed:
        name = plain(kind)  # an environment's own StrEnum member counts as its value
        if name is None:
            raise ValueError(
                f"declare_namespace: the kind {shown(kind)} of server {text!r} is not a string but "
                f"{type_name(kind)}"
            )
        if NAME_PATTERN.fullmatch(name) is None:
            raise ValueError(
                f"declare_namespace: the kind {shown(name)} of server {text!r} does not match "
                f"{NAME_PATTERN.pattern}"
            )
        declared.add(name)
    prefix = text + ":"
    with _lock:
        before = DECLARED.get(text)
        after = frozenset(declared) if before is None else before | declared
        if after == before:
            return
        DECLARED[text] = after
        # Values of this server cached or labelled while it declared nothing lose both unless declared now.
        for value in [value for value in SILENT if isinstance(value, str) and value.startswith(prefix)]:
            if value[len(prefix) :] not in after:
                SILENT.discard(value)
        for value in [value for value in LABELS if isinstance(value, str) and value.startswith(prefix)]:
            if value[len(prefix) :] not in after:
                del LABELS[value]
                labelled_namespaced -= 1
        for kind in after if before is None else after - before:
            full = prefix + kind
            if full not in SILENT:
                SILENT.add(full)
                silent_limit += 1  # declared names never crowd out the cache of undeclared servers
            if full in LABELS:
                labelled_namespaced -= 1  # it was counted as a value of an undeclared server
            LABELS[full] = full


def passes(text: str) -> bool:
    """Whether ``text`` passes silently; remembers a namespaced value of an undeclared server when it
    does, so its next occurrence costs one set lookup."""
    if text in SILENT:
        return True
    if NAMESPACED_PATTERN.fullmatch(text) is None:
        return False
    server, _, kind = text.partition(":")
    declared = DECLARED.get(server)
    if declared is not None:
        return kind in declared
    if len(text) <= REMEMBER_LENGTH and len(SILENT) < silent_limit:
        with _lock:
            # Checked again under the lock: declare may have run since the lookup above.
            if server not in DECLARED and len(SILENT) < silent_limit:
                SILENT.add(text)
    return True


def note(name: object, describe: "Callable[[object], str]") -> None:
    """Tell the observers about ``name`` unless it passes silently, and warn about it once."""
    text = plain(name)
    if name is None or (text is not None and passes(text)):
        return
    for observer in OBSERVERS:
        try:
            observer(name)
        except Exception:  # noqa: PERF203 - one broken observer must not silence the others
            pass
    if warned_overflow and len(WARNED) >= WARNED_LIMIT:
        return  # nothing new is reported any more: not worth working out the value's key
    message = None
    key: object
    if text is None:
        key = message = describe(name)
    elif len(text) <= REMEMBER_LENGTH:
        key = text
    else:
        # A str caches its hash, so a long value seen again costs no rehash.
        key = ("long str", len(text), hash(text), text[:64])
    _report_once(key, name if text is None else text, message, describe)


def _report_once(key: object, value: object, message: "str | None", describe: "Callable[[object], str]") -> None:
    global warned_overflow
    with _lock:
        if key in WARNED:
            return
        if len(WARNED) >= WARNED_LIMIT:
            if warned_overflow:
                return
            warned_overflow = True
            try:
                logger.warning(
                    "%d distinct unregistered failure kinds reported; further distinct unregistered kinds "
                    "are no longer reported one by one",
                    WARNED_LIMIT,
                )
            except Exception:
                warned_overflow = False  # not emitted: the notice is still owed
            return
        # Marked before logging, so a handler validating the same value on this thread stays quiet, and
        # unmarked when logging raised, so the warning is still owed. Other threads wait on the lock.
        WARNED.add(key)
        try:
            logger.warning("%s", describe(value) if message is None else message)
        except Exception:
            WARNED.discard(key)


def label(name: object) -> "str | None":
    """The metric label of ``name`` when it has one of its own, or None for the shared other label."""
    global labelled_namespaced
    text = plain(name)
    if text is None or len(text) > LABEL_LENGTH:
        return None
    found = LABELS.get(text)
    if found is not None or NAMESPACED_PATTERN.fullmatch(text) is None:
        return found
    with _lock:
        if text in LABELS:
            return LABELS[text]
        if text.partition(":")[0] in DECLARED or labelled_namespaced >= LABEL_LIMIT:
            return None  # undeclared kind of a declared server (the declared are all labelled), or full
        LABELS[text] = text
        labelled_namespaced += 1
    return text


def snapshot() -> object:
    """Everything declarations and reports changed, for :func:`restore`: what a test saves first."""
    with _lock:
        return (
            set(WARNED),
            warned_overflow,
            dict(DECLARED),
            set(SILENT),
            silent_limit,
            dict(LABELS),
            labelled_namespaced,
        )


def restore(saved: object) -> None:
    """Put back the state :func:`snapshot` returned (the same objects, refilled: others hold them)."""
    global warned_overflow, silent_limit, labelled_namespaced
    warned, overflow, declared, silent, limit, labels, labelled = saved  # type: ignore[misc]
    with _lock:
        WARNED.clear()
        WARNED.update(warned)
        DECLARED.clear()
        DECLARED.update(declared)
        SILENT.clear()
        SILENT.update(silent)
        LABELS.clear()
        LABELS.update(labels)
        warned_overflow, silent_limit, labelled_namespaced = overflow, limit, labelled


def forget_reports() -> None:
    """Report every value again, as a new process would: what a test does before it starts."""
    global warned_overflow
    with _lock:
        WARNED.clear()
        warned_overflow = False
