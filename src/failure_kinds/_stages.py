"""The names of ``failure_kinds`` built on first use: the `Stage` vocabulary and the typing names.

Importing :mod:`typing` costs more than the whole vocabulary module on Python 3.12 and later, and only
introspection reads the typing names at run time (type checkers read them from the generated stub); the
stages serve only the producers that record one. So ``import failure_kinds`` builds none of them, and its
``__getattr__`` asks :func:`build` for each the first time it is looked up.

A stage is independent of the failure's kind and of any retry policy: ``transport_timeout`` may happen at
admission or during verification, and the stage says which. The failure record carries it beside the kind
(``stage: FailureStage | None = None``), and producers pass plain strings (``stage="agent"``).
"""

import enum
import threading
import typing

import failure_kinds

# Each stage's value -> what it covers. Beside the enum rather than in its members, so that every member's
# value is its plain literal for type checkers and for stubtest, which read this module as its own stub.
_MEANINGS = {
    "admission": "Accepting the episode to run, before anything is seeded for it.",
    "seed": "Preparing the episode's environment and initial state, after admission.",
    "agent": "The agent running the episode: its model calls, tool calls and commands.",
    "verification": "Scoring the finished episode: the verifier and any judge it asks.",
    "cleanup": "Releasing what the episode held after it ran, such as its environment session.",
}


class Stage(enum.StrEnum):
    """Where an episode failed, in the order an episode runs. ``description`` says what each covers.

    A transport failure that only the collector observed has no stage: the collector saw the delivery
    fail, not where execution stopped inside the environment server, so it leaves the stage unset.
    """

    ADMISSION = "admission"
    SEED = "seed"
    AGENT = "agent"
    VERIFICATION = "verification"
    CLEANUP = "cleanup"

    @property
    def description(self) -> str:
        """One line saying which part of the episode this stage covers."""
        return _MEANINGS[self.value]


# Held while a name is built and kept, so threads asking at once get one object (AnyFailureKind must hold
# the NamespacedFailureKind users see). Reentrant: AnyFailureKind is built from two of the other names.
_LOCK = threading.RLock()


def build(name: str) -> object:
    """The value of the name ``name`` that ``failure_kinds.__getattr__`` defers, built once and kept in
    that module's namespace, where later look-ups find it without asking again."""
    namespace = failure_kinds.__dict__
    with _LOCK:
        if name not in namespace:
            # Through getattr: to a type checker a NewType or a Literal is a module-level name, which these
            # are not.
            special = getattr(typing, "Literal"), getattr(typing, "NewType"), getattr(typing, "Union")  # noqa: B009
            if name == "FailureKindName":
                built = special[0][tuple(kind.value for kind in failure_kinds.FailureKind)]
            elif name == "NamespacedFailureKind":
                built = special[1]("NamespacedFailureKind", str)
                built.__module__ = "failure_kinds"  # where users import it from, not this module
            elif name == "AnyFailureKind":
                built = special[2][failure_kinds.FailureKindName, failure_kinds.NamespacedFailureKind]
            elif name == "FailureStage":
                built = special[0][tuple(stage.value for stage in Stage)]
            else:
                built = Stage
            namespace[name] = built
        return namespace[name]
