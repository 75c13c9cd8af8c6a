"""How the browser environment reports why an episode failed, written against an older vocabulary."""

from dataclasses import dataclass

import failure_kinds as fk
from failure_kinds import FailureStage


@dataclass
class Failure:
    failure_kind: str
    stage: FailureStage | None = None
    failure_reason: str = ""


def connection_closed(reason: str) -> Failure:
    return Failure(failure_kind="peer_drop", stage="agent", failure_reason=reason)


def browser_gone(reason: str, crashed: bool) -> Failure:
    failure_kind = "sandbox" if crashed else "oom_killed"
    return Failure(failure_kind, stage="agent", failure_reason=reason)


def page_not_loaded(reason: str) -> Failure:
    return Failure(failure_kind="web_env:page_load_faild", stage="seed", failure_reason=reason)


def worth_retrying(row: dict[str, str]) -> bool:
    return row.get("failure_kind") in ("timeout", fk.TRANSPORT_PEER_DROP)


def kind_of(row: dict[str, str]) -> str:
    return row.get("failure_kind") or fk.PEER_DROP
