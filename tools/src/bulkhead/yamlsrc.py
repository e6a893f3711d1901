"""YAML text -> PyYAML node tree. Nodes keep their positions (start_mark) for messages."""

from __future__ import annotations

import re

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


# Deeper than any description needs (the schema nests about 7 levels), and shallow enough that
# PyYAML's recursive composer and the reader never come near Python's recursion limit.
MAX_DEPTH = 32
_LINE_BREAK = re.compile("\r\n|[\r\n\x85\u2028\u2029]")  # YAML's line breaks


def compose(text: str) -> Node | None:
    """The document's root node (None for an empty document); raises YamlSyntaxError."""
    try:
        _check_depth(text)
        return yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.MarkedYAMLError as exc:
        raise YamlSyntaxError(_syntax_diagnostic(exc)) from exc
    except yaml.reader.ReaderError as exc:
        raise YamlSyntaxError(_reader_diagnostic(text, exc)) from exc
    except yaml.YAMLError as exc:
        raise YamlSyntaxError(Diagnostic(Pos(1, 1), f"YAML error: {exc}; fix the file")) from exc


def _check_depth(text: str) -> None:
    """PyYAML's parser is iterative but its composer recurses once per level: walk the events first."""
    depth = 0
    for event in yaml.parse(text, Loader=yaml.SafeLoader):
        if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
            depth += 1
            if depth > MAX_DEPTH:
                mark = event.start_mark
                raise YamlSyntaxError(Diagnostic(Pos(mark.line + 1, mark.column + 1), f"YAML nesting deeper than "
                                      f"{MAX_DEPTH} levels here; a system description needs far fewer, remove the "
                                      f"extra lists or mappings"))
        elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
            depth -= 1


def _reader_diagnostic(text: str, exc: yaml.reader.ReaderError) -> Diagnostic:
    """A character YAML does not allow (a NUL byte, a control character): PyYAML gives only its
    index in the text."""
    lines = _LINE_BREAK.split(text[:exc.position])
    line, column = len(lines), len(lines[-1]) + 1
    return Diagnostic(Pos(line, column), f"character U+{exc.character:04X} is not allowed in YAML; remove it "
                      f"(the file may be damaged)")


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
