"""Error reporting: positions in the YAML file and the error list a load collects."""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import NamedTuple


class Pos(NamedTuple):
    """A 1-based line/column in the configuration file."""

    line: int
    col: int


@dataclass(frozen=True)
class Diagnostic:
    pos: Pos | None  # None: about the file as a whole (e.g. it cannot be read)
    message: str

    def format(self, path: str) -> str:
        if self.pos is None:
            return f"{path}: error: {self.message}"
        return f"{path}:{self.pos.line}:{self.pos.col}: error: {self.message}"


def suggest(word: str, choices) -> str:
    """'did you mean 'x'? ' when one of choices is close to word, else ''."""
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f"did you mean '{close[0]}'? " if close else ""


class Diagnostics:
    """Collects errors; a load reports them all, sorted by position."""

    def __init__(self) -> None:
        self._items: list[Diagnostic] = []

    def error(self, pos: Pos | None, message: str) -> None:
        self._items.append(Diagnostic(pos, message))

    def __bool__(self) -> bool:
        return bool(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def sorted(self) -> list[Diagnostic]:
        unique = list(dict.fromkeys(self._items))
        return sorted(unique, key=lambda d: d.pos or Pos(0, 0))


class ConfigError(Exception):
    """The configuration is invalid; messages holds one formatted line per error."""

    def __init__(self, path: str, diagnostics: list[Diagnostic]) -> None:
        self.path = path
        self.diagnostics = diagnostics
        self.messages = [d.format(path) for d in diagnostics]
        super().__init__("\n".join(self.messages))
