"""A griffe extension for the API reference: the members of an enum whose members have a description
(``FailureKind``, ``Stage``) are shown in the enum's order, each with its value and its own description,
then the enum's properties.

The package is inspected (see mkdocs.yml), and an inspected member has no source line to be ordered by
and no docstring of its own: it would show its class's docstring, sorted by name.
"""

import enum
from typing import Any

import griffe


class EnumMembers(griffe.Extension):
    def on_class_members(self, *, node: object, cls: griffe.Class, **kwargs: Any) -> None:
        members = getattr(node, "obj", None)
        if not (isinstance(members, type) and issubclass(members, enum.Enum)):
            return
        rest = dict(cls.members)
        cls.members.clear()
        for member in members:
            attribute = rest.pop(member.name)
            description = getattr(member, "description", None)
            if isinstance(attribute, griffe.Attribute) and isinstance(description, str):
                attribute.value = repr(member.value)
                attribute.docstring = griffe.Docstring(description, parent=attribute)
            cls.members[member.name] = attribute
        cls.members.update(rest)
        # The enum class hides its properties from dir(), so inspection never meets them.
        for name, value in vars(members).items():
            if isinstance(value, property) and not name.startswith("_") and name not in cls.members:
                returned = value.fget.__annotations__.get("return") if value.fget else None
                attribute = griffe.Attribute(name, annotation=getattr(returned, "__name__", returned))
                attribute.docstring = griffe.Docstring(value.__doc__ or "", parent=attribute)
                attribute.labels.add("property")
                cls.set_member(name, attribute)
