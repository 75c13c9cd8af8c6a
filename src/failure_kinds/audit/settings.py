"""What decides an audit's counts: the field, the aliases, the declared namespaces and the caps, built and
checked once by ``settings_for``; the categories a value falls in; how a kept value is keyed and shown.

Aliases: labels counted as the registered kind they stand for (``--alias``, ``--aliases``). An alias of an
older label overrides the replacement the vocabulary gives it (see ``failure_kinds.history``).
"""

from __future__ import annotations

import dataclasses
import functools
import heapq
from collections import Counter
from dataclasses import dataclass

# With the module, not at first use: hashlib loaded short of memory comes up without its hashes.
from hashlib import blake2b
from typing import NamedTuple, cast
from zlib import adler32, crc32

import failure_kinds
from failure_kinds import FailureKindsError
from failure_kinds._display import plain, shown
from failure_kinds._runtime import classify
from failure_kinds._streams import describe_read_error, read_regular

from .sources import OTHER

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Collection, Iterable, Mapping, Sequence
    from typing import Final


class AuditError(FailureKindsError):
    """A problem with the audit's own arguments (not with the data): a usage error."""


# At most this many distinct values of each capped category get a row of their own; the rest are counted
# together in one overflow row per category. The same cap bounds the servers and the stages.
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
MALFORMED: Final = "malformed"  # has a colon, but is no <server>:<kind> in lower case
CAPPED: Final = frozenset({NAMESPACED, UNDECLARED, UNREGISTERED, MALFORMED})
SERVER: Final = "server"  # the one category of the per-server totals
STAGE_CAPPED: Final = frozenset({UNREGISTERED})


def category_of(name: str, namespaces: Mapping[str, Collection[str]] | None = None) -> str:
    """registered, namespaced, undeclared, legacy, malformed or unregistered: what the vocabulary says of
    ``name`` (no aliases), as ``check`` and the lint say it (see ``_runtime.classify``)."""
    return classify(name, namespaces or {})


def _stage_category(name: str) -> str:
    """registered (a ``FailureStage``), legacy (an older stage label, see ``history.OLDER_STAGES``) or
    unregistered."""
    from failure_kinds._stages import Stage
    from failure_kinds.history import OLDER_STAGES

    if name in Stage.__members__.values():
        return REGISTERED
    return LEGACY if name in OLDER_STAGES else UNREGISTERED


# Cached, as a kind's stages are judged again each time one more of them comes.
stage_category: Final = functools.lru_cache(maxsize=1 << 14)(_stage_category)


def shorten(value: str, limit: int) -> str:
    """The key a value is kept under: itself when at most ``limit`` characters, else its first ``limit``
    characters, a NUL, its length and a digest (so distinct long values stay distinct)."""
    if len(value) <= limit:
        return value
    digest = blake2b(value.encode("utf-8", "surrogatepass"), digest_size=12).hexdigest()
    return f"{value[:limit]}\x00{len(value)}:{digest}"


def shown_value(key: str, limit: int) -> tuple[str, int]:
    """What a kept key shows, and the full length of the value it stands for."""
    if len(key) <= limit:
        return key, len(key)
    return key[:limit], int(key[limit + 1 :].partition(":")[0])


def stage_path_of(field: str) -> str:
    """Where the stage of the kind at ``field`` is read by default: the key ``stage`` beside it."""
    parent, dot, _ = field.rpartition(".")
    return f"{parent}{dot}stage"


@dataclass(frozen=True)
class AuditSettings:
    """What decides the counts. Partials merge only when their settings are equal. Build them checked
    with ``settings_for``; the constructor only normalises (it is what a worker uses on settings the
    driver already checked)."""

    fields: tuple[str, ...] = ("failure_kind",)
    """The dotted paths of the kind fields, in the order their reports come."""
    stages: tuple[str, ...] = ("stage",)
    """The dotted path of each field's stage."""
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
        object.__setattr__(self, "fields", tuple(self.fields))
        object.__setattr__(self, "stages", tuple(self.stages))
        object.__setattr__(self, "aliases", dict(self.aliases))
        namespaces = {server: tuple(kinds) for server, kinds in self.namespaces.items()}
        object.__setattr__(self, "namespaces", namespaces)

    def __hash__(self) -> int:
        return hash((self.fields, self.stages, self.distinct_limit, self.value_chars, self.line_bytes))

    @property
    def paths(self) -> list[str]:
        """Every path a record is read at, each once: the fields, then the stages not already among them."""
        return list(dict.fromkeys((*self.fields, *self.stages)))

    def category(self, value: str) -> str:
        return ALIASED if value in self.aliases else category_of(value, self.namespaces)


def _cut_names(settings: AuditSettings) -> dict[str, str]:
    """The cut key (see ``shorten``) of every registered kind, older label and alias -> the name."""
    from failure_kinds.history import OLDER_LABELS

    names = (*failure_kinds.FAILURE_KINDS, *OLDER_LABELS, *settings.aliases)
    return {shorten(name, settings.value_chars): name for name in names}


# Assigned rather than decorated, so that checkers and the run time see the cache's one signature.
cut_names: Final = functools.lru_cache(maxsize=8)(_cut_names)


Location = tuple[int, int]  # (index into a partial's files, line or row in that file part, from 1)
Overflow = dict[str, tuple[int, Location]]  # category -> [records, first location] past the cap


def rank(key: str) -> int:
    """The order in which keys of a capped category keep their own row: by a stable hash, so the kept
    keys are the same however the input is cut (the ``limit`` smallest of all the input's keys)."""
    # Two checksums in C, one above the other: a cryptographic hash costs several times more per key, and
    # ranks need spread, not secrecy (equal ranks are ordered by the key).
    data = key.encode("utf-8", "surrogatepass")
    return crc32(data) << 32 | adler32(data)


# A kind's stages are ranked again each time one more of them comes: their ranks are cached.
_stage_rank: Final = functools.lru_cache(maxsize=1 << 14)(rank)


@dataclass(slots=True, eq=False)
class Tally:
    """Counts per key, with the distinct cap of the capped categories: a capped category keeps the
    ``limit`` keys of the smallest ``rank``, the records of the others go to one overflow bucket. A key
    one part drops has ``limit`` smaller keys there, so the whole drops it too: merges stay exact."""

    limit: int
    capped: frozenset[str]
    counts: dict[str, int] = dataclasses.field(init=False, default_factory=dict[str, int])
    first: dict[str, Location] = dataclasses.field(init=False, default_factory=dict[str, Location])
    categories: dict[str, str] = dataclasses.field(init=False, default_factory=dict[str, str])
    # Keys kept per capped category; once it holds ``limit``, its keys on a heap of (negated rank, key),
    # the next to lose its row on top: ranks are computed only for a category that reaches the cap.
    sizes: dict[str, int] = dataclasses.field(init=False, default_factory=dict[str, int])
    full: dict[str, list[tuple[int, str]]] = dataclasses.field(
        init=False, default_factory=dict[str, list[tuple[int, str]]]
    )
    overflow: Overflow = dataclasses.field(init=False, default_factory=Overflow)
    # Keys that lost their row -> their category. The bar a key must pass only rises, so none wins a row
    # back: a key met again is counted here without its rank. Bounded, and left out when pickled.
    lost: dict[str, str] = dataclasses.field(init=False, default_factory=dict[str, str])

    def __getstate__(self) -> tuple[None, dict[str, object]]:
        slots = {field.name: getattr(self, field.name) for field in dataclasses.fields(self)}
        return None, {**slots, "lost": {}}

    def add_lost(self, key: str, count: int) -> str:
        """Count ``key``, one of ``lost``; return its category."""
        category = self.lost[key]
        records, first = self.overflow[category]
        self.overflow[category] = (records + count, first)
        return category

    def absorb(self, later: Tally, shift: Shift) -> list[tuple[str, str]]:
        """Add ``later``, the tally of the input that follows (its locations moved by ``shift``), in
        place; the cost grows with ``later`` alone. Returns the keys that lost their row here (of this
        tally, or of ``later`` and never kept), with their category."""
        for category, (count, location) in later.overflow.items():
            spill(self.overflow, category, count, shift(location))
        counts = self.counts
        arriving: dict[str, list[str]] = {}  # capped category -> its keys new here
        for key, count in later.counts.items():
            known = counts.get(key)
            if known is not None:
                counts[key] = known + count
                continue
            category = later.categories[key]
            if category in self.capped:
                arriving.setdefault(category, []).append(key)
            else:
                self.keep(key, category, count, shift(later.first[key]))
        dropped: list[tuple[str, str]] = []
        for category, keys in arriving.items():
            dropped += self._admit(category, keys, later, shift)
        return dropped

    def keep(self, key: str, category: str, count: int, location: Location) -> None:
        """Count ``key`` of ``category``, met first at ``location``, with no cap: how a batch gathers its
        new keys, which the tally then admits at once (``absorb``)."""
        known = self.counts.get(key)
        if known is not None:
            self.counts[key] = known + count
            return
        self.counts[key] = count
        self.first[key] = location
        self.categories[key] = category

    def _admit(self, category: str, keys: list[str], later: Tally, shift: Shift) -> list[tuple[str, str]]:
        """Add the keys of one capped category that are new here: the kept keys are the ``limit`` best of
        those kept and those new, as one at a time would leave them, with the losers spilled in one go."""
        size = self.sizes.get(category, 0)
        if category not in self.full and size + len(keys) <= self.limit:
            self.sizes[category] = size + len(keys)
            for key in keys:
                self.keep(key, category, later.counts[key], shift(later.first[key]))
            return []
        ranked = {key: entry for entry, key in later.full.get(category, [])}
        arriving = [(ranked[key] if key in ranked else -rank(key), key) for key in keys]
        heap = self.full.get(category)
        if heap is None:  # past the cap for the first time: every key in play sorted once
            entries = [(-rank(key), key) for key, of in self.categories.items() if of == category]
            entries += arriving
            entries.sort(reverse=True)  # the best first: the heap's top is the worst kept
            heap = self.full[category] = entries[: self.limit]
            heapq.heapify(heap)
            losers = [key for _, key in entries[self.limit :]]
        else:
            replace = heapq.heapreplace
            losers = [replace(heap, entry)[1] if heap and entry > heap[0] else entry[1] for entry in arriving]
        mine = [key for key in losers if key in self.counts]
        theirs = [key for key in losers if key not in self.counts]
        if mine:
            spill(self.overflow, category, sum(map(self.counts.pop, mine)), min(map(self.first.pop, mine)))
            for key in mine:
                del self.categories[key]
        if theirs:
            first = min(map(later.first.__getitem__, theirs))
            spill(self.overflow, category, sum(map(later.counts.__getitem__, theirs)), shift(first))
        self.lost.update(dict.fromkeys(losers[: _LOST - len(self.lost)], category))
        lost = set(losers)
        for _, key in arriving:
            if key not in lost:
                self.keep(key, category, later.counts[key], shift(later.first[key]))
        return [(key, category) for key in losers]


# A kind's row keeps apart the records of at most this many unregistered stages (those of the smallest
# rank, as the caps choose rows); the others' count as OTHER, so kinds times stages stays bounded.
KIND_STAGES: Final = 8


def limit_stages(counts: Counter[object]) -> None:
    """Keep apart in ``counts`` (a row's records per stage) the KIND_STAGES unregistered stages of the
    smallest rank; the others' records count as OTHER. Exact however the input is cut: a stage one part
    moves to OTHER has KIND_STAGES smaller ones in that part, so in the whole too."""
    if len(counts) <= KIND_STAGES:
        return
    unregistered = [key for key in counts if type(key) is str and stage_category(key) == UNREGISTERED]
    if len(unregistered) > KIND_STAGES:
        unregistered.sort(key=lambda stage: (_stage_rank(stage), stage))
        dropped = set(unregistered[KIND_STAGES:])
        kept = [(key, count) for key, count in counts.items() if key not in dropped]
        moved = counts.total() - sum(count for _, count in kept)
        counts.clear()  # a fresh table: a dict that only loses keys keeps its size
        counts.update(dict(kept))
        counts[OTHER] += moved


class FieldTally:
    """What one kind field's records hold: the counts, the capped tallies of its kinds, servers and
    stages, and each kind's records per stage (a stage key: the stage's, None for none, or INVALID)."""

    def __init__(self, settings: AuditSettings) -> None:
        self.with_kind: int = 0
        self.null: int = 0
        self.absent: int = 0
        self.invalid: int = 0
        self.first_invalid: Location | None = None
        self.stage_invalid: int = 0
        self.first_stage_invalid: Location | None = None
        self.kinds: Tally = Tally(settings.distinct_limit, CAPPED)
        self.servers: Tally = Tally(settings.distinct_limit, frozenset({SERVER}))
        self.stages: Tally = Tally(settings.distinct_limit, STAGE_CAPPED)
        self.by_stage: dict[str, Counter[object]] = {}
        self.overflow_by_stage: dict[str, Counter[object]] = {}

    def drop_kind(self, key: str, category: str) -> None:
        """A kind that lost its row: its records per stage join its category's overflow row."""
        counts = self.by_stage.pop(key, None)
        if counts is not None:
            self.add_stages(self.overflow_by_stage.setdefault(category, Counter()), counts)

    @staticmethod
    def add_stages(counts: Counter[object], more: Counter[object]) -> None:
        counts.update(more)
        limit_stages(counts)

    def absorb(self, later: FieldTally, shift: Shift) -> None:
        for name in ("with_kind", "null", "absent", "invalid", "stage_invalid"):
            setattr(self, name, getattr(self, name) + getattr(later, name))
        for name in ("first_invalid", "first_stage_invalid"):
            theirs = getattr(later, name)
            setattr(self, name, earliest(getattr(self, name), None if theirs is None else shift(theirs)))
        for key, category in self.kinds.absorb(later.kinds, shift):
            self.drop_kind(key, category)
        for key, counts in later.by_stage.items():
            if key in self.kinds.counts:
                self.add_stages(self.by_stage.setdefault(key, Counter()), counts)
            else:
                category = later.kinds.categories[key]
                self.add_stages(self.overflow_by_stage.setdefault(category, Counter()), counts)
        for category, counts in later.overflow_by_stage.items():
            self.add_stages(self.overflow_by_stage.setdefault(category, Counter()), counts)
        self.servers.absorb(later.servers, shift)
        self.stages.absorb(later.stages, shift)


class Shift(NamedTuple):
    """Moves a later partial's locations behind an earlier one's."""

    files: int
    lines: int  # added to lines of the later partial's first file (a continuation)

    def __call__(self, location: Location) -> Location:
        index, line = location
        return (index + self.files, line + self.lines if index == 0 else line)


UNMOVED: Final = Shift(0, 0)  # the shift of a batch's new keys, admitted to the tally that counted them

# Lost keys remembered per tally.
_LOST: Final = 100_000


def spill(overflow: Overflow, category: str, count: int, first: Location) -> None:
    known = overflow.get(category)
    overflow[category] = (count, first) if known is None else (known[0] + count, min(known[1], first))


def earliest(one: Location | None, other: Location | None) -> Location | None:
    return other if one is None else one if other is None else min(one, other)


def settings_for(
    field_path: str | Sequence[str] = "failure_kind",
    aliases: Mapping[str, str] | None = None,
    namespaces: Mapping[str, Iterable[str]] | None = None,
    *,
    stage_path: str | None = None,
    distinct_limit: int = DISTINCT_LIMIT,
    value_chars: int = VALUE_CHARS,
    line_bytes: int = LINE_BYTES,
) -> AuditSettings:
    """Checked settings: AuditError for an empty --field or --stage segment, a field given twice, or an
    alias that maps nowhere. ``field_path``: one path or several; ``stage_path``: the stage of every field
    (None: the key ``stage`` beside each)."""
    fields = [field_path] if isinstance(field_path, str) else list(field_path)
    if not fields:
        raise AuditError("give at least one --field")
    repeated = next((field for index, field in enumerate(fields) if field in fields[:index]), None)
    if repeated is not None:  # one report each: a path given twice would be one report, not two
        raise AuditError(f"--field {plain(repeated)} is given twice")
    stage = "stage" if stage_path is None else stage_path
    for option, path in [*(("--field", field) for field in fields), ("--stage", stage)]:
        if not all(path.split(".")):
            raise AuditError(f"{option} {path!r} has an empty segment")
    given = dict(aliases or {})
    check_aliases(given)
    declared = {server: tuple(kinds) for server, kinds in (namespaces or {}).items()}
    stages = [stage_path_of(field) if stage_path is None else stage_path for field in fields]
    return AuditSettings(
        tuple(fields), tuple(stages), given, declared, distinct_limit, value_chars, line_bytes
    )


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
        data = read_regular(path, ALIAS_FILE_LIMIT)
    except OSError as error:
        raise AuditError(f"--aliases {name}: {describe_read_error(error)}") from None
    if isinstance(data, str):
        raise AuditError(f"--aliases {name}: {data}")
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
