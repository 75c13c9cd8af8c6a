"""What decides an audit's counts: the field, the aliases, the declared namespaces and the caps, built and
checked once by ``settings_for``; the categories a value falls in; how a kept value is keyed and shown."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from failure_kinds._runtime import category

from .aliases import check_aliases
from .errors import AuditError
from .wire import integer, mapping, sequence

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
        return cls(
            field=str(data["field"]),
            aliases={str(old): str(new) for old, new in mapping(data["aliases"]).items()},
            namespaces={
                str(server): tuple(str(kind) for kind in sequence(kinds))
                for server, kinds in mapping(data["namespaces"]).items()
            },
            distinct_limit=integer(data["distinct_limit"]),
            value_chars=integer(data["value_chars"]),
            line_bytes=integer(data["line_bytes"]),
        )


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
        return cls(
            (str(value) for value in sequence(data["values"])),
            (str(server) for server in sequence(data["servers"])),
        )
