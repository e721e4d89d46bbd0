"""Text in arguments must be valid Unicode: one check, before execution, for every argument.

JSON lets a client send a lone surrogate (``"\\udfff"``); Python keeps it in a ``str``
that cannot be encoded, so it failed deep inside the store, the model or the save
(INTERNAL_SERVER_ERROR, or worse, a write applied in memory and never saved).
Rather than guard each resolver, :func:`invalid_argument` walks the operation
once (each fragment once) and refuses, naming the argument, any string that reaches
an argument, literally or through a variable, at any depth of an input object or list,
before execution (the extension in :mod:`api.graphql.extension` calls it).
The papers of ``addPapers`` are the exception: each is checked as a record (graph.corpus),
so one bad paper is a problem in the report and the others still go in.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from graphql import (
    FieldNode,
    FragmentDefinitionNode,
    FragmentSpreadNode,
    InlineFragmentNode,
    ListValueNode,
    ObjectValueNode,
    OperationDefinitionNode,
    SelectionSetNode,
    StringValueNode,
    ValueNode,
    VariableNode,
)

from graph.errors import InvalidArgumentError

_SURROGATE = re.compile("[\ud800-\udfff]")


def bad_text(value: str) -> str | None:
    """Why ``value`` is not valid Unicode text, or None when it is."""
    m = _SURROGATE.search(value)
    if m is None:
        return None
    return (
        f"holds a lone surrogate (U+{ord(m.group()):04X}) at character {m.start()}: "
        "not valid Unicode; send UTF-8 text"
    )


def _in_value(value: Any, where: str) -> tuple[str, str] | None:
    """(path, reason) of the first invalid string inside a JSON-like value."""
    if isinstance(value, str):
        reason = bad_text(value)
        return (where, reason) if reason else None
    if isinstance(value, Mapping):
        for k, v in value.items():
            found = _in_value(k, where) or _in_value(v, f"{where}.{k}")
            if found:
                return found
    elif isinstance(value, list | tuple):
        for i, v in enumerate(value):
            found = _in_value(v, f"{where}[{i}]")
            if found:
                return found
    return None


#: (field, argument) pairs whose text is checked record by record further in: a paper
#: with bad text is one problem in addPapers' report, and the good papers still go in
PER_RECORD = frozenset({("addPapers", "input")})


class _Walker:
    def __init__(self, fragments: Mapping[str, FragmentDefinitionNode],
                 variables: Mapping[str, Any]) -> None:
        self.fragments = fragments
        self.variables = variables
        self.seen: set[str] = set()

    def node(self, value: ValueNode, where: str) -> tuple[str, str] | None:
        if isinstance(value, StringValueNode):
            reason = bad_text(value.value)
            return (where, reason) if reason else None
        if isinstance(value, VariableNode):
            return _in_value(self.variables.get(value.name.value), where)
        if isinstance(value, ListValueNode):
            for i, v in enumerate(value.values):
                found = self.node(v, f"{where}[{i}]")
                if found:
                    return found
        if isinstance(value, ObjectValueNode):
            for f in value.fields:
                found = self.node(f.value, f"{where}.{f.name.value}")
                if found:
                    return found
        return None

    def selections(self, node: SelectionSetNode | None) -> tuple[str, str] | None:
        if node is None:
            return None
        for sel in node.selections:
            found: tuple[str, str] | None = None
            if isinstance(sel, FieldNode):
                for arg in sel.arguments or ():
                    if (sel.name.value, arg.name.value) in PER_RECORD:
                        continue
                    found = found or self.node(arg.value, arg.name.value)
                found = found or self.selections(sel.selection_set)
            elif isinstance(sel, InlineFragmentNode):
                found = self.selections(sel.selection_set)
            elif isinstance(sel, FragmentSpreadNode) and sel.name.value not in self.seen:
                self.seen.add(sel.name.value)
                frag = self.fragments.get(sel.name.value)
                found = self.selections(frag.selection_set) if frag else None
            if found:
                return found
        return None


def invalid_argument(
    document: Any, operation_name: str | None, variables: Mapping[str, Any] | None
) -> InvalidArgumentError | None:
    """The error for the first argument holding invalid text, or None."""
    defs = document.definitions
    fragments = {d.name.value: d for d in defs if isinstance(d, FragmentDefinitionNode)}
    walker = _Walker(fragments, variables or {})
    for op in defs:
        if not isinstance(op, OperationDefinitionNode):
            continue
        if operation_name is not None and (op.name is None or op.name.value != operation_name):
            continue
        found = walker.selections(op.selection_set)
        if found:
            path, reason = found
            argument = path.split(".")[0].split("[")[0]
            inside = "" if path == argument else f"{path} "
            return InvalidArgumentError(argument, f"{inside}{reason}")
    return None
