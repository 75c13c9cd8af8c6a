"""The closest known name to a misspelled one, and the warning that offers it.

It catches case and separator variants (``Transport-Timeout``, ``TransportTimeout``), typos
(``verifer_error``) and truncations (``judge_fail``). Past SMALL candidates (thousands of declared kinds),
difflib ranks only a short list from an index built once per set, so each value costs a bounded time: the
names next to it in alphabetical order, forwards and backwards (a typo late in a name keeps its start, one
early keeps its end), and the few that share all its words but its last or first.

:func:`report` is what validate_failure_kind does with a value it does not let pass: it tells the observers
every time and logs one warning per distinct value, reading and changing the state in ``_runtime`` under
that module's lock. Loaded on the first suggestion or such value: ``import failure_kinds`` imports neither
this module nor :mod:`difflib`.
"""

import difflib
import re
from bisect import bisect_left

import failure_kinds._runtime as _runtime

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Collection, Mapping

# Longer input is not a typo of a name of a few dozen characters.
LIMIT = 64
# Up to this many candidates, difflib compares every one.
SMALL = 256
# Past SMALL, how many neighbours on each side of a value difflib ranks in each of the two sorted lists,
# and (with at most 4 * _NEAR names sharing its words, each way) at most how many names it ranks.
_NEAR = 4
SHORT_LIST = 12 * _NEAR
# How many candidate sets keep their index.
_KEPT = 8
# A domain with a single kind (verifier: verifier_error) names every failure of its layer, so a value of
# that domain gets it at a lower similarity than difflib's 0.8, though not whatever follows the domain.
SOLE_KIND_CUTOFF = 0.5

# Upstream warns "unregistered failure_kind %r; register it in nemo_gym/failure_kinds.py or namespace it
# as '<server>:<kind>'. Reported once per name." for every value neither registered nor namespaced (an
# older label, a malformed namespaced value). Ours keeps its first and last words, our detail and where the
# docs say how to register between them, so a log alert written against upstream still matches.
REGISTER = (
    "register it or namespace it as '<server>:<kind>'"
    " (how: docs/validation.md#declaring-an-environments-own-kinds)"
)

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_SEPARATORS = re.compile(r"[\s\-.]+")


def normal(name: str) -> str:
    """``name`` written as a kind is: lower case, words joined by underscores."""
    return _SEPARATORS.sub("_", _CAMEL.sub("_", name.strip())).lower()


class _Index:
    """One candidate set, ready to answer many lookups: compared in normal form, answered as written."""

    def __init__(self, candidates: "Collection[str]") -> None:
        if _runtime.exact_strs(candidates):  # a declaration's
            written = list(candidates)
        else:
            written = [text for text in map(_runtime.text_of, candidates) if text is not None]
        # A set's order changes with the hash seed; sorted, equally close names tie the same way every run.
        if isinstance(candidates, (set, frozenset)):
            written.sort()
        # normal form -> the candidate written so; the first of two that normalize alike wins.
        self.written: dict[str, str] = {}
        if _runtime.all_names(written):  # each its own normal form: a declaration's kinds, in one match
            self.written = dict(zip(written, written, strict=True))
        else:
            for candidate in written:
                plain = candidate if _runtime.NAME_PATTERN.fullmatch(candidate) else normal(candidate)
                self.written.setdefault(plain, candidate)
        self.candidates = tuple(self.written)
        self.ordered = sorted(self.candidates)
        self.longest = max(map(len, written), default=0)
        # The same names spelled backwards and sorted (one reversal of them all joined, as a slice of each
        # would slow a declaration of thousands), only for the sets difflib would take long to compare.
        backward = "\n".join(self.candidates)[::-1].split("\n") if len(self.written) > SMALL else []
        self.backward = sorted(backward)

    def short_list(self, text: str) -> "list[str]":
        """The candidates difflib should rank for ``text``, within difflib's length window (a ratio of 0.8
        needs the shorter of two names to be at least two thirds of the longer)."""
        if not self.backward:
            return list(self.candidates)
        near = _near(self.ordered, text)
        near += [name[::-1] for name in _near(self.backward, text[::-1])]
        low, high = 2 * len(text) / 3, 3 * len(text) / 2
        return [candidate for candidate in dict.fromkeys(near) if low <= len(candidate) <= high][:SHORT_LIST]


def _near(ordered: "list[str]", text: str) -> "list[str]":
    """The names around ``text`` in ``ordered``, then those that start with all its words but its last when
    they are few: a typo in a short last word (a number, say) can sort away from its name among many."""
    at = bisect_left(ordered, text)
    near = ordered[max(at - _NEAR, 0) : at + _NEAR]
    head, separator, _ = text.rpartition("_")
    if separator:
        low, high = bisect_left(ordered, head + "_"), bisect_left(ordered, head + "`")  # "`" follows "_"
        near += ordered[low:high] if high - low <= 4 * _NEAR else []
    return near


_INDEXES: "dict[int, tuple[Collection[str], _Index]]" = {}


def _index(candidates: "Collection[str]") -> _Index:
    # Kept by identity for the immutable sets (each server's declared kinds, a configuration's tuples);
    # any other collection may change, so it is read anew.
    if not isinstance(candidates, (tuple, frozenset)):
        return _Index(candidates)
    kept = _INDEXES.get(id(candidates))
    if kept is not None and kept[0] is candidates:
        return kept[1]
    built = _Index(candidates)
    if len(_INDEXES) >= _KEPT:
        del _INDEXES[next(iter(_INDEXES))]
    _INDEXES[id(candidates)] = (candidates, built)
    return built


def closest(name: str, candidates: "Collection[str]") -> "str | None":
    """The candidate ``name`` most likely meant, or None. A candidate suggests itself."""
    text = _runtime.text_of(name)
    if text is None or not candidates:
        return None
    index = _index(candidates)
    if not index.candidates or len(text) > max(LIMIT, 2 * index.longest):
        return None
    wanted = normal(text)
    if wanted in index.written:
        return index.written[wanted]
    # A cut-off name is only a guess when exactly one candidate continues it and enough was written.
    at = bisect_left(index.ordered, wanted)
    continuing = [name for name in index.ordered[at : at + 2] if name.startswith(wanted)]
    if len(continuing) == 1 and len(wanted) >= 5:
        return index.written[continuing[0]]
    close = difflib.get_close_matches(wanted, index.short_list(wanted), n=1, cutoff=0.8)
    return index.written[close[0]] if close else None


def suggest(name: object) -> "str | None":
    """The registered kind ``name`` most likely meant (what :func:`failure_kinds.suggest` returns)."""
    text = _runtime.text_of(name)
    if text is None or len(text) > LIMIT:
        return None
    from failure_kinds import FailureKind

    found = closest(text, _runtime.REGISTERED)
    if found is None:  # an older label in another case or spelling (Timeout): the kind that replaced it
        from failure_kinds.history import older_label

        older = older_label(normal(text))
        found = None if older is None else older.replacement
    # A name's domain (its first word, with more after it) is the layer that observed the failure: a value
    # that begins with one most likely means a kind of that layer (verifier_unavailable, verifier_error), not
    # a look-alike of another's (provider_unavailable).
    first, separator, rest = normal(text).partition("_")
    domain = [kind.value for kind in FailureKind if kind.domain == first] if separator and rest else []
    if not domain or found in domain:
        return found
    # A list, not a tuple: these small sets must not take a kept index's place.
    same = closest(text, domain)
    if same is None and len(domain) == 1:
        ratio = difflib.SequenceMatcher(None, normal(text), domain[0]).ratio()
        same = domain[0] if ratio >= SOLE_KIND_CUTOFF else None
    return same if same is not None else found


def suggest_any(name: object, namespaces: "Mapping[str, Collection[str]] | None" = None) -> "str | None":
    """The name ``name`` most likely meant: a declared ``server:kind`` when its server part names a
    declared server (in any case or spelling of separators), else a registered kind. ``namespaces`` maps
    servers to their kinds; None means the declarations made with declare_namespace."""
    text = _runtime.text_of(name)
    if text is None:
        return None
    declarations = _runtime.DECLARED if namespaces is None else namespaces
    server, colon, kind = text.partition(":")
    if colon and len(server) <= LIMIT:
        written = normal(server)
        declared = declarations.get(written)
        if declared is not None:
            # Kind against kind: the shared "server:" prefix would make every declared kind look close.
            found = closest(kind, declared)
            if found is not None:
                return f"{written}:{found}"
            if _runtime.category(text, namespaces) == "undeclared":
                return None  # a well-formed value of a declared server means one of its kinds or nothing
    return suggest(text)


def describe(name: object) -> str:
    """The warning for a value that does not pass silently: escaped, bounded, with a suggestion."""
    from failure_kinds._display import shown

    text = _runtime.text_of(name)
    if text is None:
        from failure_kinds._arguments import type_name

        return f"failure kind is not a string: {shown(name)} of type {type_name(name)}"
    found = _runtime.category(text)
    if found == "registered":  # only a deprecated kind is registered and not silent
        replacement = _runtime.DEPRECATED.get(text)
        return f"deprecated failure kind {shown(text)}; use {replacement!r}"
    hint = suggest_any(text) if found != "legacy" else None
    if found == "undeclared":
        server, suggestion = text.partition(":")[0], "" if hint is None else f"; did you mean {hint!r}?"
        return f"undeclared failure kind {shown(text)} in declared namespace {server!r}{suggestion}"
    detail = None
    if found == "legacy":
        from failure_kinds.history import OLDER_LABELS

        older = OLDER_LABELS[text]  # a label of the table: its note is plain text
        if older.replacement is None:
            detail = f"an older label without a single replacement: {older.note}"
        else:
            detail = f"an older label: use {older.replacement!r}"
    elif ":" in text:  # meant as <server>:<kind> and written wrong: the lint's FK002, check's malformed
        from failure_kinds._arguments import malformed_part

        server, _, kind = text.partition(":")
        detail = f"a malformed namespaced kind: {malformed_part(server, kind, limit=80)}"
    said = "; ".join([*([detail] if detail else []), *([f"did you mean {hint!r}?"] if hint else [])])
    advice = f"{said}{'' if hint else '.'} Otherwise {REGISTER}" if said else REGISTER
    return f"unregistered failure_kind {shown(text)}; {advice}. Reported once per name."


def report(name: object) -> None:
    """Tell the observers about ``name``, which does not pass silently, and warn about it once."""
    for observer in _runtime.OBSERVERS:
        try:  # noqa: SIM105 - as in validate_failure_kind: no call per value for contextlib.suppress
            observer(name)
        except Exception:
            pass  # one broken observer must not silence the others
    warned = _runtime.WARNED
    if _runtime.warned_overflow and len(warned) >= _runtime.WARNED_LIMIT:
        return  # nothing new is reported any more: not worth working out the value's key
    text = _runtime.text_of(name)
    message = describe(name) if text is None else None
    if text is None:
        key: object = ("not a string", _digest(name))
    elif len(text) <= _runtime.REMEMBER_LENGTH:
        key = text
    else:
        key = ("long str", len(text), hash(text), text[:64])  # a str caches its hash: no rehash next time
    with _runtime.LOCK:
        if key in warned:
            return
        if len(warned) >= _runtime.WARNED_LIMIT:
            if not _runtime.warned_overflow:
                _runtime.warned_overflow = True
                try:
                    # In upstream's words at both ends, so a log alert written against upstream fires.
                    from failure_kinds._display import shown

                    _runtime.logger.warning(
                        "unregistered failure_kind %s; %d distinct names are reported already, so this "
                        "and later new ones are no longer reported one by one. Reported once per name.",
                        shown(name),
                        _runtime.WARNED_LIMIT,
                    )
                except Exception:
                    _runtime.warned_overflow = False  # not emitted: the notice is still owed
            return
        # Marked before logging, so a handler validating the same value on this thread stays quiet, and
        # unmarked when logging raised, so the warning is still owed. Other threads wait on the lock.
        warned.add(key)
        try:
            _runtime.logger.warning("%s", describe(text) if message is None else message)
        except Exception:
            warned.discard(key)


def _digest(name: object) -> bytes:
    """What tells the value ``name`` (not a str) from another: its type and repr, cut at REPR_LENGTH."""
    from hashlib import blake2b

    from failure_kinds._arguments import type_name
    from failure_kinds._display import shown

    seen = f"{type_name(name)} {shown(name, _runtime.REPR_LENGTH)}"  # escaped: no lone surrogate is left
    return blake2b(seen.encode(), digest_size=16).digest()
