"""A producer with two mistakes the lint finds: the docs' lint example runs on this file."""

import failure_kinds as fk


def judge_result(verdict: str | None) -> dict[str, object]:
    if verdict is None:
        return {"failure_kind": "judge_faild", "failure_reason": "no verdict"}
    return {"verdict": verdict}


def quota_record() -> dict[str, object]:
    return {"failure_kind": fk.validate_failure_kind("my_env:Quota")}
