"""What decides an audit's counts: the field, the aliases, the declared namespaces and the caps, built and
checked once by ``settings_for``; the categories a value falls in; how a kept value is keyed and shown."""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from typing import cast

from failure_kinds._runtime import category

from .aliases import check_aliases
from .errors import AuditError

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
    return category(name, namespaces or {})


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
        return {
            "field": self.field,
            "aliases": dict(self.aliases),
            "namespaces": {server: list(kinds) for server, kinds in self.namespaces.items()},
            "distinct_limit": self.distinct_limit,
            "value_chars": self.value_chars,
            "line_bytes": self.line_bytes,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, object]) -> AuditSettings:
        """The settings of JSON that ``wire.check_partial`` checked."""
        fields = [data[field.name] for field in dataclasses.fields(cls)]
        return cls(*fields)  # type: ignore[arg-type]


def key_problem(settings: AuditSettings, key: str, category: str, server: bool) -> tuple[int, str] | None:
    """Why a kept ``key`` (of the per-server totals when ``server``) cannot be of ``category`` under
    ``settings``: (0, why) for the key, (2, why) for its category; None: it can. A cut key keeps too
    little of its value to say its category, except that a registered kind, an older label or an alias
    cut the same way has the same key (an alias over an older label wins)."""
    from failure_kinds._display import shown

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
    import failure_kinds
    from failure_kinds.history import OLDER_LABELS

    cut = {shorten(name, limit): REGISTERED for name in failure_kinds.FAILURE_KINDS}
    cut.update((shorten(name, limit), LEGACY) for name in OLDER_LABELS)
    cut.update((shorten(name, limit), ALIASED) for name in settings.aliases)
    named = cut.get(key)
    if named is not None and category != named:
        return 2, f"the key of a cut value is {named}, not {category}"
    if named is None and category in (REGISTERED, LEGACY, ALIASED):
        what = "older label" if category == LEGACY else f"{category} kind"
        return 2, f"a cut value that is no {what} is counted as one"
    return None


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
    check_aliases(dict(aliases or {}))
    return AuditSettings(
        field_path,
        dict(aliases or {}),
        {server: tuple(kinds) for server, kinds in (namespaces or {}).items()},
        distinct_limit,
        value_chars,
        line_bytes,
    )


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
