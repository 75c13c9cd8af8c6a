"""A raw string is not a namespaced kind: it must go through namespaced() or is_namespaced()."""

from failure_kinds import AnyFailureKind, NamespacedFailureKind, namespaced


def record_any(kind: AnyFailureKind) -> None: ...


def record_extension(kind: NamespacedFailureKind) -> None: ...


record_any(namespaced("my_env", "quota"))
record_any("my_env:quota")  # expect-error
record_extension("my_env:quota")  # expect-error
record_extension(namespaced("my_env", "quota"))


def pass_through(raw: str) -> None:
    record_any(raw)  # expect-error
