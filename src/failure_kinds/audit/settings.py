"""What decides an audit's counts: the field, the aliases, the declared namespaces and the caps, built and
checked once by ``settings_for``; the categories a value falls in; how a kept value is keyed and shown.

Aliases: labels counted as the registered kind they stand for (``--alias``, ``--aliases``). An alias of an
older label overrides the replacement the vocabulary gives it (see ``failure_kinds.history``).
"""

from __future__ import annotations

import dataclasses
import functools
import os
import re
import stat
from dataclasses import dataclass
from typing import Any, NamedTuple, cast

import failure_kinds
from failure_kinds._display import plain, shown
from failure_kinds._runtime import category as vocabulary_category

from .errors import AuditError, describe_read_error

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Collection, Iterable, Mapping
    from typing import Final


# At most this many distinct values of each capped category get a row of their own; the rest are counted
# together in one overflow row per category. The same cap bounds the servers in the per-server totals.
DISTINCT_LIMIT: Final = 10_000
# A value longer than this many characters is kept cut to it, with its full length and a digest, so a kept
# value costs at most about 4 * VALUE_CHARS bytes however long the value is.
VALUE_CHARS: Final = 256
# A line longer than this many bytes is unparseable and is skipped without being held in memory.
LINE_BYTES: Final = 64 * 1024 * 1024

REGISTERED: Final = "registered"
NAMESPACED: Final = "namespaced"
UNDECLARED: Final = "undeclared"
ALIASED: Final = "aliased"
LEGACY: Final = "legacy"  # an older label (failure_kinds.history): bounded by that table, so never capped
UNREGISTERED: Final = "unregistered"
CAPPED: Final = frozenset({NAMESPACED, UNDECLARED, UNREGISTERED})
SERVER: Final = "server"  # the one category of the per-server totals
# What follows the NUL of a cut key (see shorten): the full length and a 24-digit digest.
_CUT_TAIL: Final = re.compile(r"([1-9][0-9]{0,18}):[0-9a-f]{24}")


def category_of(name: str, namespaces: Mapping[str, Collection[str]] | None = None) -> str:
    """registered, namespaced, undeclared, legacy or unregistered: what the vocabulary says of ``name``
    (no aliases). ``undeclared`` only with ``namespaces`` (server -> declared kinds): a namespaced value
    whose server is declared there but whose kind is not. ``legacy``: a label of the older registry that
    is not a current kind (see ``failure_kinds.history``), with a replacement or without."""
    return vocabulary_category(name, namespaces or {})


def shorten(value: str, limit: int) -> str:
    """The key a value is kept under: itself when at most ``limit`` characters, else its first ``limit``
    characters, a NUL, its length and a digest (so distinct long values stay distinct)."""
    if len(value) <= limit:
        return value
    import hashlib

    digest = hashlib.blake2b(value.encode("utf-8", "surrogatepass"), digest_size=12).hexdigest()
    return f"{value[:limit]}\x00{len(value)}:{digest}"


def shown_value(key: str, limit: int) -> tuple[str, int]:
    """What a kept key shows, and the full length of the value it stands for."""
    if len(key) <= limit:
        return key, len(key)
    return key[:limit], int(key[limit + 1 :].partition(":")[0])


@dataclass(frozen=True)
class AuditSettings:
    """What decides the counts. Partials merge only when their settings are equal. Build them checked
    with ``settings_for``; the constructor only normalises (it is what a worker uses on settings the
    driver already checked)."""

    field: str = "failure_kind"
    """The dotted path of the kind in each object."""
    aliases: dict[str, str] = dataclasses.field(default_factory=dict[str, str])
    """Label -> the registered kind it stands for, given by the user; for an older label it overrides the
    replacement the vocabulary knows."""
    namespaces: dict[str, tuple[str, ...]] = dataclasses.field(default_factory=dict[str, tuple[str, ...]])
    """Declared namespaces: server -> its kinds (without the prefix)."""
    distinct_limit: int = DISTINCT_LIMIT
    value_chars: int = VALUE_CHARS
    line_bytes: int = LINE_BYTES

    def __post_init__(self) -> None:
        # Copies, so a caller's later change to its own dicts cannot change settings already in use.
        object.__setattr__(self, "aliases", dict(self.aliases))
        namespaces = {server: tuple(kinds) for server, kinds in self.namespaces.items()}
        object.__setattr__(self, "namespaces", namespaces)

    def __hash__(self) -> int:
        return hash((self.field, self.distinct_limit, self.value_chars, self.line_bytes))

    def category(self, value: str) -> str:
        return ALIASED if value in self.aliases else category_of(value, self.namespaces)

    def to_json(self) -> dict[str, object]:
        namespaces = {server: list(kinds) for server, kinds in self.namespaces.items()}
        return {**dataclasses.asdict(self), "namespaces": namespaces}

    @classmethod
    def from_json(cls, data: Mapping[str, object]) -> AuditSettings:
        """The settings of JSON that ``partial.check_partial`` checked."""
        fields = [data[field.name] for field in dataclasses.fields(cls)]
        return cls(*fields)  # type: ignore[arg-type]


def key_problem(settings: AuditSettings, key: str, category: str, server: bool) -> tuple[int, str] | None:
    """Why a kept ``key`` (of the per-server totals when ``server``) cannot be of ``category`` under
    ``settings``: (0, why) for the key, (2, why) for its category; None: it can. A cut key keeps too
    little of its value to say its category, except that a registered kind, an older label or an alias
    cut the same way has the same key (an alias over an older label wins)."""
    limit = settings.value_chars
    tail = _CUT_TAIL.fullmatch(key, limit + 1) if len(key) > limit else None
    if len(key) > limit and (key[limit] != "\x00" or tail is None or int(tail[1]) <= limit):
        return 0, f"longer than {limit} characters, but not a cut value's key"
    if server or category not in (REGISTERED, NAMESPACED, UNDECLARED, ALIASED, LEGACY, UNREGISTERED):
        expected = SERVER if server else "a category"
        return None if category == SERVER and server else (2, f"{shown(category, 80)} is not {expected}")
    if len(key) <= limit:
        expected = settings.category(key)
        return None if category == expected else (2, f"{shown(key, 80)} is {expected}, not {category}")
    named = cut_names(settings).get(key, (None, None))[1]
    if named is not None and category != named:
        return 2, f"the key of a cut value is {named}, not {category}"
    if named is None and category in (REGISTERED, LEGACY, ALIASED):
        what = "older label" if category == LEGACY else f"{category} kind"
        return 2, f"a cut value that is no {what} is counted as one"
    return None


def _cut_names(settings: AuditSettings) -> dict[str, tuple[str, str]]:
    """The cut key (see ``shorten``) of every registered kind, older label and alias -> the name and its
    category (an alias over an older label): the only cut keys those categories can hold."""
    from failure_kinds.history import OLDER_LABELS

    cut = {shorten(name, settings.value_chars): (name, REGISTERED) for name in failure_kinds.FAILURE_KINDS}
    cut.update((shorten(name, settings.value_chars), (name, LEGACY)) for name in OLDER_LABELS)
    cut.update((shorten(name, settings.value_chars), (name, ALIASED)) for name in settings.aliases)
    return cut


# Assigned rather than decorated, so that checkers and the run time see the cache's one signature.
cut_names: Final = functools.lru_cache(maxsize=8)(_cut_names)


Location = tuple[int, int]  # (index into a partial's files, line or row in that file part, from 1)
Overflow = dict[str, tuple[int, Location]]  # category -> [records, first location] past the cap


@dataclass(slots=True, eq=False)
class Tally:
    """Counts per key with the distinct cap of the capped categories: kept keys in input order, one
    overflow bucket per category, and pinned keys counted exactly even past the cap."""

    limit: int
    capped: frozenset[str]
    pinned: frozenset[str] = frozenset()
    counts: dict[str, int] = dataclasses.field(init=False, default_factory=dict[str, int])
    first: dict[str, Location] = dataclasses.field(init=False, default_factory=dict[str, Location])
    categories: dict[str, str] = dataclasses.field(init=False, default_factory=dict[str, str])
    # How many keys of each capped category are kept in input order (pinned extras not included).
    kept: dict[str, int] = dataclasses.field(init=False, default_factory=dict[str, int])
    # Keys counted only because they are pinned: past the cap, so in the overflow row of the report.
    extras: set[str] = dataclasses.field(init=False, default_factory=set[str])
    overflow: Overflow = dataclasses.field(init=False, default_factory=Overflow)
    # Counted keys whose count may lack records that a merged part put in its overflow bucket (it
    # could not know the key would be kept). Harmless once such a key is itself past the cap.
    uncertain: set[str] = dataclasses.field(init=False, default_factory=set[str])

    def add_new(self, key: str, category: str, count: int, location: Location) -> None:
        """Count ``key`` (not yet counted here) seen first at ``location``; calls come in input order."""
        if category in self.capped:
            kept = self.kept.get(category, 0)
            if kept >= self.limit:
                if key not in self.pinned:
                    records, first = self.overflow.get(category, (0, location))
                    self.overflow[category] = (records + count, first)
                    return
                self.extras.add(key)
            else:
                self.kept[category] = kept + 1
        self.counts[key] = count
        self.first[key] = location
        self.categories[key] = category

    def kept_keys(self) -> frozenset[str]:
        capped = {key for key, category in self.categories.items() if category in self.capped}
        return frozenset(capped - self.extras)

    def copy(self) -> Tally:
        copied = Tally(self.limit, self.capped, self.pinned)
        for field in dataclasses.fields(self):
            if not field.init:
                setattr(copied, field.name, getattr(self, field.name).copy())
        return copied

    def absorb(self, later: Tally, shift: Shift) -> None:
        """Add ``later``, the tally of the input that follows (its locations moved by ``shift``), to this
        one in place. The cost grows with ``later`` alone, never with what this tally holds already
        (except once per part that overflowed a category, whose size pays for it): an engine folds
        thousands of parts into one tally in time linear in their sum.

        Keys stay in input order (the order of their first locations): this tally's, then the keys
        ``later`` saw first. Which keys the whole keeps: this tally's, then (while a category has room)
        the keys ``later`` kept that this one never saw."""
        overflowed = frozenset(self.overflow)  # before ``later``'s overflow joins it
        own_pins = self.pinned
        counts, first, categories = self.counts, self.first, self.categories
        gone: set[str] = set()
        if later.pinned is not own_pins and later.pinned != own_pins:
            # Pins that only one side counted exactly: past the cap, its extras join the overflow.
            self.pinned = own_pins & later.pinned
            gone = {key for key in self.extras if key not in self.pinned}
            for key in gone:
                spill(self.overflow, categories.pop(key), counts.pop(key), first.pop(key))
                self.extras.discard(key)
                self.uncertain.discard(key)
        pinned = self.pinned
        if later.overflow:
            # ``later`` may have counted a key only this tally knows in its overflow bucket.
            for key, category in categories.items():
                if category in later.overflow and key not in later.counts and key not in later.pinned:
                    self.uncertain.add(key)
        for category, (count, location) in later.overflow.items():
            spill(self.overflow, category, count, shift(location))
        for key, count in later.counts.items():
            known = counts.get(key)
            if known is not None:
                counts[key] = known + count
                if key in later.uncertain:
                    self.uncertain.add(key)
                continue
            category = later.categories[key]
            location = shift(later.first[key])
            keep = key not in later.extras and key not in gone
            if keep and category in self.capped:
                kept = self.kept.get(category, 0)
                keep = category not in overflowed and kept < self.limit
                if keep:
                    self.kept[category] = kept + 1
            if not keep and key not in pinned:  # past the cap of the whole
                spill(self.overflow, category, count, location)
                continue
            counts[key] = count
            first[key] = location
            categories[key] = category
            if not keep:
                self.extras.add(key)
            if key in later.uncertain or (category in overflowed and key not in own_pins):
                self.uncertain.add(key)  # this tally may have counted it in its overflow bucket

    def to_json(self) -> dict[str, object]:
        def entry(key: str) -> list[object]:
            return [key, self.counts[key], self.categories[key], list(self.first[key])]

        return {
            "kept": [entry(key) for key in self.counts if key not in self.extras],
            "extras": [entry(key) for key in sorted(self.extras)],
            "overflow": {
                category: [count, list(first)] for category, (count, first) in self.overflow.items()
            },
            "pinned": sorted(self.pinned),
            "uncertain": sorted(self.uncertain),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, object], limit: int, capped: frozenset[str]) -> Tally:
        """The tally of JSON that ``partial.check_partial`` checked."""
        fields = cast("dict[str, Any]", data)
        tally = cls(limit, capped, frozenset(fields["pinned"]))
        entries = [(False, entry) for entry in fields["kept"]] + [(True, entry) for entry in fields["extras"]]
        if fields["extras"]:  # sent after the kept keys: back into input order, which ``absorb`` keeps
            entries.sort(key=lambda pair: tuple(pair[1][3]))
        for extra, (key, count, category, (index, line)) in entries:
            tally.counts[key] = count
            tally.categories[key] = category
            tally.first[key] = (index, line)
            if extra:
                tally.extras.add(key)
            elif category in capped:
                tally.kept[category] = tally.kept.get(category, 0) + 1
        for category, (records, (index, line)) in fields["overflow"].items():
            tally.overflow[category] = (records, (index, line))
        tally.uncertain = set(fields["uncertain"])
        return tally


class Shift(NamedTuple):
    """Moves a later partial's locations behind an earlier one's."""

    files: int
    lines: int  # added to lines of the later partial's first file (a continuation)

    def __call__(self, location: Location) -> Location:
        index, line = location
        return (index + self.files, line + self.lines if index == 0 else line)


def spill(overflow: Overflow, category: str, count: int, first: Location) -> None:
    known = overflow.get(category)
    overflow[category] = (count, first) if known is None else (known[0] + count, min(known[1], first))


def earliest(one: Location | None, other: Location | None) -> Location | None:
    return other if one is None else one if other is None else min(one, other)


def settings_for(
    field_path: str = "failure_kind",
    aliases: Mapping[str, str] | None = None,
    namespaces: Mapping[str, Iterable[str]] | None = None,
    *,
    distinct_limit: int = DISTINCT_LIMIT,
    value_chars: int = VALUE_CHARS,
    line_bytes: int = LINE_BYTES,
) -> AuditSettings:
    """Checked settings: AuditError for an empty --field segment or an alias that maps nowhere."""
    if not all(field_path.split(".")):
        raise AuditError(f"--field {field_path!r} has an empty segment")
    given = dict(aliases or {})
    check_aliases(given)
    declared = {server: tuple(kinds) for server, kinds in (namespaces or {}).items()}
    return AuditSettings(field_path, given, declared, distinct_limit, value_chars, line_bytes)


@dataclass(frozen=True, init=False)
class Pins:
    """Values (and servers) every part must count exactly, whatever its own overflow: the kept set of a
    first, inexact merge, handed back to the parts for the second pass."""

    values: frozenset[str] = frozenset()
    servers: frozenset[str] = frozenset()

    def __init__(self, values: Iterable[str] = (), servers: Iterable[str] = ()) -> None:
        object.__setattr__(self, "values", frozenset(values))
        object.__setattr__(self, "servers", frozenset(servers))

    def __repr__(self) -> str:
        return f"Pins({len(self.values)} values, {len(self.servers)} servers)"

    def to_json(self) -> dict[str, object]:
        return {"values": sorted(self.values), "servers": sorted(self.servers)}

    @classmethod
    def from_json(cls, data: Mapping[str, object]) -> Pins:
        values, servers = data["values"], data["servers"]
        for names in (values, servers):
            if not isinstance(names, list) or any(
                type(name) is not str for name in cast("list[object]", names)
            ):
                raise ValueError("pins: expected lists of strings")
        return cls(cast("list[str]", values), cast("list[str]", servers))


# An alias file larger than this is refused: it cannot be a real one, and a device must not be read whole.
ALIAS_FILE_LIMIT = 4 * 1024 * 1024


def check_aliases(aliases: dict[str, str]) -> None:
    """Raise AuditError unless every alias maps an unregistered label to a registered kind."""
    for old, new in aliases.items():
        pair = f"alias {shown(old, 80)} = {shown(new, 80)}"
        if not failure_kinds.is_registered(new):
            hint = failure_kinds.suggest(new)
            suggestion = f"; did you mean {hint!r}?" if hint else ""
            raise AuditError(f"{pair}: {shown(new, 80)} is not a registered kind{suggestion}")
        if failure_kinds.is_registered(old):
            raise AuditError(f"{pair}: {shown(old, 80)} is already a registered kind")


def merged_aliases(path: str | None, options: Iterable[str]) -> dict[str, str]:
    """The aliases of the ``--aliases`` file ``path`` (None: none) with the ``--alias OLD=NEW`` options
    over them: the command line wins over the file, so one run can correct a file it shares with others.
    One label given two different kinds on the command line is a usage error."""
    aliases = load_alias_file(path) if path is not None else {}
    given: dict[str, str] = {}
    for option in options:
        old, separator, new = option.partition("=")
        if not separator or not old or not new:
            raise AuditError(f"--alias {shown(option, 80)}: expected OLD=NEW")
        if given.setdefault(old, new) != new:
            raise AuditError(
                f"--alias {plain(old)} is given twice, as {plain(given[old])} and as {plain(new)}"
            )
    aliases.update(given)
    return aliases


def load_alias_file(path: str) -> dict[str, str]:
    """The ``[aliases]`` table of a TOML file: ``old = "new"`` lines."""
    import tomllib

    name = plain(path)
    try:
        with open(path, "rb") as file:
            if not stat.S_ISREG(os.fstat(file.fileno()).st_mode):
                raise AuditError(f"--aliases {name}: not a regular file")
            data = file.read(ALIAS_FILE_LIMIT + 1)
    except OSError as error:
        raise AuditError(f"--aliases {name}: {describe_read_error(error)}") from None
    if len(data) > ALIAS_FILE_LIMIT:
        raise AuditError(f"--aliases {name}: larger than {ALIAS_FILE_LIMIT:,} bytes, not an alias file")
    try:
        document = tomllib.loads(data.decode())
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        raise AuditError(f"--aliases {name}: not valid TOML ({error})") from None
    except RecursionError:
        raise AuditError(f"--aliases {name}: nested too deeply to read") from None
    table = document.get("aliases")
    if not isinstance(table, dict):
        raise AuditError(f'--aliases {name}: no [aliases] table (old = "new" lines under [aliases])')
    for old, new in cast("dict[str, object]", table).items():
        if not isinstance(new, str):
            raise AuditError(
                f"--aliases {name}: the alias for {shown(old, 80)} must be a string, not {type(new).__name__}"
            )
    return cast("dict[str, str]", table)
