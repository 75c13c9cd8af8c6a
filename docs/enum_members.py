"""A griffe extension for the API reference: the members of an enum whose members have a description
(``FailureKind``, ``Stage``) are shown in the enum's order, each with its value and its own description.

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
