"""What validate_failure_kind does with a value it does not let pass: it tells the observers every time and
logs one warning per distinct value, with the text ``_suggest.describe`` writes.

Loaded, with the suggestions and the display it needs, on the first such value: ``import failure_kinds``
does not import it, and it reads and changes the state in ``_runtime`` under that module's lock.
"""

import failure_kinds._runtime as _runtime
from failure_kinds._suggest import describe


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
                    _runtime.logger.warning(
                        "%d distinct unregistered failure kinds reported; further distinct "
                        "unregistered kinds are no longer reported one by one",
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
