"""The argument checks of :func:`failure_kinds.namespaced` and :func:`failure_kinds.declare_namespace`, with
the errors they raise. Loaded on the first call of either: ``import failure_kinds`` does not import it."""

from failure_kinds._display import LIMIT, escaped, shown
from failure_kinds._runtime import NAME_PATTERN, text_of

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable


def type_name(value: object) -> str:
    """The name of ``value``'s type, escaped and cut, by type's own lookup: a metaclass's never runs."""
    return escaped(type.__getattribute__(type(value), "__qualname__"), LIMIT)


def malformed_part(server: object, kind: object, limit: int = LIMIT) -> "str | None":
    """Which part of ``server:kind`` does not match the name pattern, shown cut to ``limit``, or None."""
    for part, value in (("server", server), ("kind", kind)):
        text = text_of(value)  # checked although annotated: untyped callers exist
        if text is None or NAME_PATTERN.fullmatch(text) is None:
            return f"the {part} part {shown(value, limit)} does not match {NAME_PATTERN.pattern}"
    return None


def refuse_namespaced(server: object, kind: object) -> None:
    """Raise the :class:`ValueError` that names the part of ``server:kind`` not matching the name pattern."""
    problem = malformed_part(server, kind)
    if problem is not None:
        raise ValueError(f"namespaced failure kind: {problem}")


def declaration(server: str, kinds: "Iterable[str]") -> "tuple[str, set[str]]":
    """``server`` and ``kinds`` as declare_namespace records them, as plain strings; raises its ValueError."""
    text, pattern = text_of(server), NAME_PATTERN.pattern
    if text is None or NAME_PATTERN.fullmatch(text) is None:
        raise ValueError(f"declare_namespace: the server {shown(server)} does not match {pattern}")
    given: object = kinds  # checked although annotated: untyped callers exist
    if issubclass(type(given), (bytes, bytearray)):  # type, not __class__: a value may claim any class
        wrong = f"{shown(given)} of type {type_name(given)}{decoded(given, '[{}]')}"
        raise ValueError(f"declare_namespace: kinds must be an iterable of kind names (strings), not {wrong}")
    single = text_of(given) is not None
    try:
        listed = None if single else list(kinds)
    except TypeError:
        listed = None
    if listed is None:
        wrong = f"the single value {shown(kinds)}; write [{shown(kinds)}]" if single else f"{shown(kinds)}"
        wrong += "" if single else f" of type {type_name(kinds)}"
        raise ValueError(f"declare_namespace: kinds must be an iterable of kind names, not {wrong}")
    if not listed:
        raise ValueError(f"declare_namespace: the server {text!r} declares no kinds")
    declared: set[str] = set()
    for kind in listed:
        name = text_of(kind)  # an environment's own StrEnum member counts as its value
        if name is None or NAME_PATTERN.fullmatch(name) is None:
            wrong = f"is not a string but {type_name(kind)}" if name is None else f"does not match {pattern}"
            raise ValueError(
                f"declare_namespace: the kind {shown(kind)} of server {text!r} {wrong}{decoded(kind, '{}')}"
            )
        declared.add(name)
    return text, declared


def decoded(data: object, form: str) -> str:
    """``"; write ..."`` with ``data`` decoded into ``form`` when it is exact bytes holding the ASCII text of
    a kind name short enough to show whole; empty otherwise, rather than guess an encoding or run a
    subclass's own methods."""
    if not (type(data) is bytes or type(data) is bytearray) or len(data) > LIMIT:
        return ""
    try:
        text = data.decode("ascii")
    except UnicodeDecodeError:
        return ""
    return f"; write {form.format(repr(text))}" if NAME_PATTERN.fullmatch(text) else ""
