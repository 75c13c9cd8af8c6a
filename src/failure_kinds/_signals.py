"""How a command stops on SIGINT, SIGTERM or SIGHUP: each becomes a KeyboardInterrupt in the main thread
(which no ``except Exception`` catches), so that what runs stops its worker processes on the way out, and
``main()`` ends as the signal asks (``received``). ``held()`` keeps a signal back while a call that crashes
when interrupted runs (msgspec's first import and decoder), and acts on it once the call has returned."""

from __future__ import annotations

import contextlib
import signal
import threading

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Generator
    from types import FrameType
    from typing import Final

# SIGHUP is not on Windows.
_NAMES: Final = ("SIGINT", "SIGTERM", "SIGHUP")
STOPPING: Final = tuple(getattr(signal, name) for name in _NAMES if hasattr(signal, name))


_stopping = False
received: int | None = None  # the signal that stopped the command, once ``stop`` has acted on one
_held: list[int] | None = None


def stop(number: int, frame: FrameType | None) -> None:
    """The handler ``main()`` installs: the first signal raises; one during the way out (a second Ctrl-C,
    SIGTERM to the whole group) must not cut short the stopping of the workers, and is not acted on."""
    global _stopping, received
    if _stopping:
        return
    _stopping, received = True, number
    raise KeyboardInterrupt


def _hold(number: int, frame: FrameType | None) -> None:
    if _held is not None:
        _held.append(number)


def catch() -> dict[int, Callable[[int, FrameType | None], object] | int | signal.Handlers | None]:
    """Have ``stop`` handle the signals that end a command, except those ignored (nohup, a background
    job); return the handlers it replaced, for ``restore``."""
    global _stopping, received
    _stopping, received = False, None
    if threading.current_thread() is not threading.main_thread():
        return {}  # its signals are not this call's to handle
    replaced = {number: signal.getsignal(number) for number in STOPPING}
    replaced = {
        number: handler
        for number, handler in replaced.items()
        if handler in (signal.SIG_DFL, signal.default_int_handler)
    }
    for number in replaced:
        signal.signal(number, stop)
    return replaced


def restore(
    replaced: dict[int, Callable[[int, FrameType | None], object] | int | signal.Handlers | None],
) -> None:
    global _stopping
    _stopping = True  # nothing is acted on while the handlers go back
    for number, handler in replaced.items():
        signal.signal(number, handler)


@contextlib.contextmanager
def held() -> Generator[None]:
    """Run the block with the Python handlers of the stopping signals only noting the signal, then raise
    each noted signal again for the handler that was there (one that has default action stays: it ends
    the process at once, which crashes nothing)."""
    global _held
    if _held is not None or threading.current_thread() is not threading.main_thread():
        yield  # held already; or signals run their handlers in the main thread only
        return
    handlers = {number: signal.getsignal(number) for number in STOPPING}
    handlers = {number: handler for number, handler in handlers.items() if callable(handler)}
    _held = []
    for number in handlers:
        signal.signal(number, _hold)
    try:
        yield
    finally:
        for number, handler in handlers.items():
            signal.signal(number, handler)
        noted, _held = _held, None
        for number in dict.fromkeys(noted):
            signal.raise_signal(number)
