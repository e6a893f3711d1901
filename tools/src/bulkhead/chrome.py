"""Chrome trace event JSON (the format Perfetto UI and chrome://tracing open).

Times are microseconds ("ts", "dur"); the tool keeps nanoseconds and converts here. Events are
written one per line so the files diff well.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

Event = dict[str, Any]
PID = 0


def us(ns: int) -> int | float:
    """Nanoseconds as microseconds: an int when whole, else a float with ns precision."""
    return ns // 1000 if ns % 1000 == 0 else ns / 1000


def process_name(name: str) -> Event:
    return {"name": "process_name", "ph": "M", "pid": PID, "tid": 0, "args": {"name": name}}


def thread_name(tid: int, name: str) -> Event:
    return {"name": "thread_name", "ph": "M", "pid": PID, "tid": tid, "args": {"name": name}}


def thread_sort_index(tid: int, index: int) -> Event:
    return {"name": "thread_sort_index", "ph": "M", "pid": PID, "tid": tid, "args": {"sort_index": index}}


def complete(name: str, cat: str, start_ns: int, duration_ns: int, tid: int, args: dict[str, Any]) -> Event:
    return {"name": name, "cat": cat, "ph": "X", "ts": us(start_ns), "dur": us(duration_ns), "pid": PID,
            "tid": tid, "args": args}


def instant(name: str, cat: str, time_ns: int, tid: int, args: dict[str, Any], scope: str = "t") -> Event:
    """scope: "t" marks the thread's track, "g" the whole trace."""
    return {"name": name, "cat": cat, "ph": "i", "s": scope, "ts": us(time_ns), "pid": PID, "tid": tid,
            "args": args}


def document(events: list[Event]) -> str:
    body = ",\n".join(json.dumps(event) for event in events)
    return f'{{"traceEvents": [\n{body}\n], "displayTimeUnit": "ns"}}\n'


def write(path: str | Path, events: list[Event]) -> None:
    Path(path).write_text(document(events))
