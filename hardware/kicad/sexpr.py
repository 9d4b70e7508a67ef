"""A small reader and writer of KiCad's S-expression files.

The generator copies symbols out of KiCad's own libraries into the schematic
(KiCad embeds every symbol a schematic uses), so it must read ``.kicad_sym``
files and write the same syntax back. Quoted strings stay quoted
(:class:`Quoted`) and bare atoms stay bare, so a copied symbol is written
exactly as KiCad spelled it.
"""

from __future__ import annotations

import re
from typing import Union

Node = Union[str, "Quoted", list["Node"]]

_TOKEN = re.compile(r'\s*(?:(\()|(\))|"((?:[^"\\]|\\.)*)"|([^\s()"]+))', re.S)


class Quoted(str):
    """A string written between double quotes."""


def parse(text: str) -> Node:
    """Parse one S-expression (a whole KiCad file)."""
    stack: list[list[Node]] = [[]]
    pos = 0
    end = len(text.rstrip())
    while pos < end:
        match = _TOKEN.match(text, pos)
        if match is None:
            raise ValueError(f"cannot parse S-expression at offset {pos}")
        pos = match.end()
        if match.group(1):
            stack.append([])
        elif match.group(2):
            done = stack.pop()
            stack[-1].append(done)
        elif match.group(3) is not None:
            stack[-1].append(Quoted(match.group(3).replace('\\"', '"').replace("\\\\", "\\")))
        else:
            stack[-1].append(match.group(4))
    return stack[0][0]


def quote(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def dump(node: Node, indent: int = 0) -> str:
    """Write a node the way KiCad does: one list per line when it holds lists."""
    if isinstance(node, Quoted):
        return quote(node)
    if isinstance(node, str):
        return node
    if not any(isinstance(child, list) for child in node):
        return "(" + " ".join(dump(child) for child in node) + ")"
    pad = "\t" * (indent + 1)
    parts = []
    head = []
    for child in node:
        if isinstance(child, list) or parts:
            parts.append("\n" + pad + dump(child, indent + 1))
        else:
            head.append(dump(child))
    return "(" + " ".join(head) + "".join(parts) + "\n" + "\t" * indent + ")"


def head(node: Node) -> str | None:
    """The first atom of a list (its keyword), or None."""
    if isinstance(node, list) and node and isinstance(node[0], str):
        return node[0]
    return None


def children(node: Node, keyword: str) -> list[list[Node]]:
    """The direct child lists of ``node`` that start with ``keyword``."""
    if not isinstance(node, list):
        return []
    return [c for c in node if isinstance(c, list) and head(c) == keyword]


def child(node: Node, keyword: str) -> list[Node] | None:
    found = children(node, keyword)
    return found[0] if found else None
