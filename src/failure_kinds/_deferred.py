"""The names of ``failure_kinds`` built on first use: its typing names and the :class:`Stage` enum.

Importing :mod:`typing` costs more than the whole vocabulary module on Python 3.12 and later, and only
introspection reads the typing names at run time (type checkers read them from the generated stub); the
stages serve only the producers that record one. So ``import failure_kinds`` builds none of them, and its
``__getattr__`` asks :func:`build` for each the first time it is looked up.
"""

import threading
import typing

import failure_kinds

# Held while a name is built and kept, so threads asking at once get one object (AnyFailureKind must hold
# the NamespacedFailureKind users see). Reentrant: AnyFailureKind is built from two of the other names.
_LOCK = threading.RLock()


def build(name: str) -> object:
    """The value of the name ``name`` that ``failure_kinds.__getattr__`` defers, built once and kept in
    that module's namespace, where later look-ups find it without asking again."""
    namespace = failure_kinds.__dict__
    with _LOCK:
        if name not in namespace:
            namespace[name] = _built(name)
        return namespace[name]


def _built(name: str) -> object:
    """The value of ``name``, derived from the enums."""
    if name == "FailureKindName":
        return getattr(typing, "Literal")[tuple(kind.value for kind in failure_kinds.FailureKind)]  # noqa: B009
    if name == "NamespacedFailureKind":
        # Called through getattr: to a type checker a NewType is a module-level name, which this is not.
        new_type = getattr(typing, "NewType")("NamespacedFailureKind", str)  # noqa: B009
        new_type.__module__ = "failure_kinds"  # where users import it from, not this module
        return new_type
    if name == "AnyFailureKind":
        both = (failure_kinds.FailureKindName, failure_kinds.NamespacedFailureKind)
        return getattr(typing, "Union")[both]  # noqa: B009
    from failure_kinds._stages import Stage

    if name == "FailureStage":
        return getattr(typing, "Literal")[tuple(stage.value for stage in Stage)]  # noqa: B009
    return Stage
