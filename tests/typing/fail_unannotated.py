"""Shapes that need an annotation in some checkers whatever the stub says: mypy gives an unannotated local
the type of its first value, so a second kind does not fit it; mypy, pyright and basedpyright widen an
unannotated list of constants to list[str]. mypy and pyrefly type a class attribute, a list or a dict
given one constant by that constant's literal, which another kind does not fit: the literal that lets a
local pass (pass_locals.py). Annotated, each passes everywhere (pass_locals.py, the typing page's
recipe)."""

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


# As upstream producers write them: a subclass's kind, a list and a dict given another kind later.
class JudgeServer:
    failure_kind = fk.JUDGE_FAILED


class VerifierServer(JudgeServer):
    failure_kind = fk.VERIFIER_ERROR  # expect-error: mypy pyrefly


OBSERVED = [fk.TRANSPORT_TIMEOUT]
OBSERVED.append(fk.namespaced("my_env", "quota_hit"))  # expect-error: mypy pyrefly
BY_STAGE = {"agent": fk.AGENT_TIMEOUT}
BY_STAGE["agent"] = fk.AGENT_RUN_ERROR  # expect-error: mypy pyrefly
