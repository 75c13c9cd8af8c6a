"""Counts per value with the distinct-value cap, and how two of them merge.

Each capped category (unregistered, namespaced, undeclared) keeps the first ``distinct_limit`` distinct
values in input order and counts the rest in its overflow bucket. Which values the whole input keeps is
decided by the first parts, so a part that overflowed cannot say how often it saw a value only an earlier
part kept: such a merge is marked uncertain, and the engine counts the parts again pinned to the values the
whole keeps (see ``Pins``), which makes the second merge exact.
"""

from __future__ import annotations

from . import wire
from .wire import Location

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping


class Tally:
    """Counts per key with the distinct cap of the capped categories: kept keys in input order, one
    overflow bucket per category, and pinned keys counted exactly even past the cap."""

    __slots__ = (
        "capped",
        "categories",
        "counts",
        "extras",
        "first",
        "kept",
        "limit",
        "overflow",
        "pinned",
        "uncertain",
    )

    def __init__(self, limit: int, capped: frozenset[str], pinned: frozenset[str] = frozenset()) -> None:
        self.limit: int = limit
        self.capped: frozenset[str] = capped
        self.pinned: frozenset[str] = pinned
        self.counts: dict[str, int] = {}
        self.first: dict[str, Location] = {}
        self.categories: dict[str, str] = {}
        # How many keys of each capped category are kept in input order (pinned extras not included).
        self.kept: dict[str, int] = {}
        # Keys counted only because they are pinned: past the cap, so in the overflow row of the report.
        self.extras: set[str] = set()
        # category -> [records, first location] of what went past the cap.
        self.overflow: dict[str, tuple[int, Location]] = {}
        # Counted keys whose count may lack records that a merged part put in its overflow bucket (it
        # could not know the key would be kept). Harmless once such a key is itself past the cap.
        self.uncertain: set[str] = set()

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

    def overflowed(self, category: str) -> bool:
        return category in self.overflow

    def kept_keys(self) -> frozenset[str]:
        return frozenset(
            key
            for key, category in self.categories.items()
            if category in self.capped and key not in self.extras
        )

    def shifted(self, shift: Shift) -> Tally:
        moved = Tally(self.limit, self.capped, self.pinned)
        moved.counts = dict(self.counts)
        moved.first = {key: shift(location) for key, location in self.first.items()}
        moved.categories = dict(self.categories)
        moved.kept = dict(self.kept)
        moved.extras = set(self.extras)
        moved.overflow = {
            category: (count, shift(first)) for category, (count, first) in self.overflow.items()
        }
        moved.uncertain = set(self.uncertain)
        return moved

    def merged(self, later: Tally) -> Tally:
        """This tally followed by ``later`` (already shifted)."""
        pinned = self.pinned & later.pinned
        result = Tally(self.limit, self.capped, pinned)
        # Which keys the whole keeps: this tally's kept keys, then (while a category has room) the keys
        # ``later`` kept that this tally never saw, in their input order.
        kept: dict[str, None] = {}
        for key in self.categories:
            if key not in self.extras:
                kept[key] = None
        room = {category: self.limit - count for category, count in self.kept.items()}
        for key in sorted(later.categories, key=later.first.__getitem__):
            category = later.categories[key]
            if key in later.extras or key in self.categories:
                continue
            if category in self.capped:
                if self.overflowed(category) or room.get(category, self.limit) <= 0:
                    continue
                room[category] = room.get(category, self.limit) - 1
            kept[key] = None
        overflow = dict(self.overflow)
        for category, (count, first) in later.overflow.items():
            spill(overflow, category, count, first)
        # Pinned keys past the cap stay counted (as extras), so a later merge still knows them exactly.
        keys = list(kept) + [
            key
            for key in self.categories.keys() | later.categories.keys()
            if key in pinned and key not in kept
        ]
        for key in self.categories.keys() | later.categories.keys():
            if key in kept or key in pinned:
                continue
            # Past the cap of the whole: its records go to the overflow bucket.
            category = self.categories.get(key) or later.categories[key]
            for side in (self, later):
                if key in side.counts:
                    spill(overflow, category, side.counts[key], side.first[key])
        for key in sorted(keys, key=lambda key: self.first.get(key) or later.first[key]):
            category = self.categories.get(key) or later.categories[key]
            count = 0
            for side in (self, later):
                known = side.counts.get(key)
                if known is not None:
                    count += known
                    if key in side.uncertain:
                        result.uncertain.add(key)
                elif category in side.capped and side.overflowed(category) and key not in side.pinned:
                    result.uncertain.add(key)  # ``side`` may have counted it in its overflow bucket
            result.counts[key] = count
            result.first[key] = self.first[key] if key in self.first else later.first[key]
            result.categories[key] = category
            if key in kept:
                if category in self.capped:
                    result.kept[category] = result.kept.get(category, 0) + 1
            else:
                result.extras.add(key)
        result.overflow = overflow
        return result

    def to_json(self) -> dict[str, object]:
        return {
            "kept": [
                [key, self.counts[key], self.categories[key], list(self.first[key])]
                for key in self.counts
                if key not in self.extras
            ],
            "extras": [
                [key, self.counts[key], self.categories[key], list(self.first[key])]
                for key in sorted(self.extras)
            ],
            "overflow": {
                category: [count, list(first)] for category, (count, first) in self.overflow.items()
            },
            "pinned": sorted(self.pinned),
            "uncertain": sorted(self.uncertain),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, object], limit: int, capped: frozenset[str]) -> Tally:
        tally = cls(limit, capped, frozenset(str(key) for key in wire.sequence(data["pinned"])))
        for extra, entries in ((False, data["kept"]), (True, data["extras"])):
            for entry in wire.sequence(entries):
                key, count, category, first = wire.sequence(entry)
                key, category = str(key), str(category)
                tally.counts[key] = wire.integer(count)
                tally.categories[key] = category
                tally.first[key] = wire.location(first)
                if extra:
                    tally.extras.add(key)
                elif category in capped:
                    tally.kept[category] = tally.kept.get(category, 0) + 1
        for category, entry in wire.mapping(data["overflow"]).items():
            count, first = wire.sequence(entry)
            tally.overflow[str(category)] = (wire.integer(count), wire.location(first))
        tally.uncertain = {str(key) for key in wire.sequence(data["uncertain"])}
        return tally


class Shift:
    """Moves a later partial's locations behind an earlier one's."""

    __slots__ = ("files", "lines")

    def __init__(self, files: int, lines: int) -> None:
        self.files: int = files
        self.lines: int = lines  # added to lines of the later partial's first file (a continuation)

    def __call__(self, location: Location) -> Location:
        index, line = location
        return (index + self.files, line + self.lines if index == 0 else line)

    def optional(self, location: Location | None) -> Location | None:
        return None if location is None else self(location)


def spill(overflow: dict[str, tuple[int, Location]], category: str, count: int, first: Location) -> None:
    known = overflow.get(category)
    overflow[category] = (count, first) if known is None else (known[0] + count, min(known[1], first))


def earliest(one: Location | None, other: Location | None) -> Location | None:
    if one is None:
        return other
    if other is None:
        return one
    return min(one, other)
