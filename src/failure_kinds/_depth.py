"""A call made from a few levels deeper than its caller.

Where a fast reading is backed by a careful one (msgspec by the standard library's JSON decoder), the fast
one must never succeed where the careful one would run out of stack: it would accept a document that the
careful reading refuses as nested too deeply. Made from a few levels deeper, the fast reading always runs
out first, and the careful one decides.
"""

from __future__ import annotations

from functools import partial

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import TypeVar

    _T = TypeVar("_T")


def deeper(call: Callable[[], _T], levels: int = 4) -> _T:
    """``call()``, made from ``levels`` more levels of calls than the caller's."""
    if levels == 0:
        return call()
    # Through map(): a call from C, which counts against the C recursion budget as well (3.12 and later).
    result: _T = next(map(partial(deeper, call), (levels - 1,)))
    return result
