"""YAML text -> PyYAML node tree. Nodes keep their positions (start_mark) for messages."""

from __future__ import annotations

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from bulkhead.diagnostics import Diagnostic, Pos

TAG_NULL = "tag:yaml.org,2002:null"
TAG_BOOL = "tag:yaml.org,2002:bool"
TAG_INT = "tag:yaml.org,2002:int"
TAG_FLOAT = "tag:yaml.org,2002:float"

__all__ = ["MappingNode", "Node", "ScalarNode", "SequenceNode", "YamlSyntaxError", "compose", "pos_of", "describe"]


class YamlSyntaxError(Exception):
    def __init__(self, diagnostic: Diagnostic) -> None:
        super().__init__(diagnostic.message)
        self.diagnostic = diagnostic


def pos_of(node: Node) -> Pos:
    return Pos(node.start_mark.line + 1, node.start_mark.column + 1)


def compose(text: str) -> Node | None:
    """The document's root node (None for an empty document); raises YamlSyntaxError."""
    try:
        return yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.MarkedYAMLError as exc:
        raise YamlSyntaxError(_syntax_diagnostic(exc)) from exc
    except yaml.YAMLError as exc:
        raise YamlSyntaxError(Diagnostic(Pos(1, 1), f"YAML error: {exc}; fix the file")) from exc


def _syntax_diagnostic(exc: yaml.MarkedYAMLError) -> Diagnostic:
    mark = exc.problem_mark or exc.context_mark
    pos = Pos(mark.line + 1, mark.column + 1) if mark else Pos(1, 1)
    problem = (exc.problem or "invalid syntax").removeprefix("but ")
    context = ""
    if exc.context and exc.context_mark:
        context = f" ({exc.context} at line {exc.context_mark.line + 1})"
    return Diagnostic(pos, f"YAML syntax error: {problem}{context}; fix the YAML syntax here")


def describe(node: Node) -> str:
    """How a node reads in a message: 'a list', 'a string 'abc'', 'nothing (an empty value)'."""
    if isinstance(node, MappingNode):
        return "a mapping"
    if isinstance(node, SequenceNode):
        return "a list"
    if node.tag == TAG_NULL:
        return "nothing (an empty value)"
    if node.tag == TAG_BOOL:
        return f"the boolean {node.value}"
    if node.tag in (TAG_INT, TAG_FLOAT):
        return f"the number {node.value}"
    return f"the string '{node.value}'"
