"""Where in an episode a failure happened: the `Stage` vocabulary.

A stage is independent of the failure's kind and of any retry policy: ``transport_timeout`` may happen at
admission or during verification, and the stage says which. The failure record carries it beside the kind
(``stage: FailureStage | None = None``), and producers pass plain strings (``stage="agent"``).

Loaded on first use of ``failure_kinds.Stage`` or ``failure_kinds.FailureStage``: ``import failure_kinds``
does not build it.
"""

import enum

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
