"""Shapes that need an annotation in some checkers whatever the stub says: mypy gives an unannotated local
the type of its first value, so a second kind does not fit it; mypy, pyright and basedpyright widen an
unannotated list of constants to list[str]. Annotated, both pass everywhere (pass_locals.py)."""

import failure_kinds as fk
from failure_kinds import FailureKindName


def record(kind: FailureKindName) -> None: ...


def reassigned(crashed: bool) -> FailureKindName:
    outcome = fk.CANCELLED
    if crashed:
        outcome = fk.VERIFIER_ERROR  # expect-error: mypy
    return outcome


LIFECYCLE = [fk.CANCELLED, fk.SHUTDOWN]
for listed in LIFECYCLE:
    record(listed)  # expect-error: mypy pyright basedpyright
