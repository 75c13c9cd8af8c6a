"""Counts per value with the distinct-value cap, and how two of them merge.

Each capped category (unregistered, namespaced, undeclared) keeps the first ``distinct_limit`` distinct
values in input order and counts the rest in its overflow bucket. Which values the whole input keeps is
decided by the first parts, so a part that overflowed cannot say how often it saw a value only an earlier
part kept: such a merge is marked uncertain, and the engine counts the parts again pinned to the values the
whole keeps (see ``Pins``), which makes the second merge exact.
"""

from __future__ import annotations

from typing import Any, cast

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

    def copy(self) -> Tally:
        copied = Tally(self.limit, self.capped, self.pinned)
        copied.counts = dict(self.counts)
        copied.first = dict(self.first)
        copied.categories = dict(self.categories)
        copied.kept = dict(self.kept)
        copied.extras = set(self.extras)
        copied.overflow = dict(self.overflow)
        copied.uncertain = set(self.uncertain)
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
        """The tally of JSON that ``wire.check_partial`` checked."""
        fields = cast("dict[str, Any]", data)
        tally = cls(limit, capped, frozenset(fields["pinned"]))
        counts, categories, first = tally.counts, tally.categories, tally.first
        for extra, entries in ((False, fields["kept"]), (True, fields["extras"])):
            for key, count, category, (index, line) in entries:
                counts[key] = count
                categories[key] = category
                first[key] = (index, line)
                if extra:
                    tally.extras.add(key)
                elif category in capped:
                    tally.kept[category] = tally.kept.get(category, 0) + 1
        for category, (records, (index, line)) in fields["overflow"].items():
            tally.overflow[category] = (records, (index, line))
        tally.uncertain = set(fields["uncertain"])
        if tally.extras:  # sent after the kept keys: back into input order, which ``absorb`` keeps
            order = sorted(counts, key=first.__getitem__)
            tally.counts = {key: counts[key] for key in order}
            tally.first = {key: first[key] for key in order}
            tally.categories = {key: categories[key] for key in order}
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
