"""Loading a system description: read, check, and return the model or every error found."""

from __future__ import annotations

from pathlib import Path

from bulkhead import apex, board, checks, firmware, linux, memmap, rawimage
from bulkhead.channels import check_channels
from bulkhead.diagnostics import ConfigError, Diagnostic, Diagnostics, Pos
from bulkhead.elfimage import ElfProblem, read_elf
from bulkhead.model import Partition, System
from bulkhead.rawimage import read_raw
from bulkhead.reader import read_system
from bulkhead.yamlsrc import YamlSyntaxError, compose


def check(path: str | Path, images: bool = True) -> tuple[System | None, list[Diagnostic]]:
    """The model (None if the YAML cannot be parsed) and the sorted errors (empty when valid).
    images=False skips reading and checking the partition images (for plan and trace views)."""
    source = Path(path)
    try:
        data = source.read_bytes()
    except OSError as exc:
        return None, [Diagnostic(None, f"cannot read the configuration: {_reason(exc)}")]
    try:
        text = data.decode("utf-8").replace("\r\n", "\n")
    except UnicodeDecodeError as exc:
        return None, [Diagnostic(_byte_pos(data, exc.start), f"cannot read the configuration: {_reason(exc)}")]
    try:
        root = compose(text)
    except YamlSyntaxError as exc:
        return None, [exc.diagnostic]
    diags = Diagnostics()
    system = read_system(root, source, diags)
    checks.check_system(system, diags)
    check_channels(system, diags)
    apex.check_apex(system, diags)
    for part in system.partitions if images else ():
        if part.linux is not None:
            linux.load_payload(system, part, diags)
            continue
        _load_image(part, diags)
        rawimage.check_entry_alignment(part, diags)
        if part.apex is not None and part.elf is not None and rawimage.apex_allowed(part, diags):
            apex.bind_image(system, part, diags)
        memmap.bind_image(part, diags)
        checks.check_image(system, part, diags)
        board.check_image(part, diags)
        firmware.check_image(part, diags)
    return system, diags.sorted()


def load(path: str | Path, images: bool = True) -> System:
    """The checked model; raises ConfigError (with .messages, one line per error) if invalid.
    With images=False the partition images are not read (part.elf stays None)."""
    system, errors = check(path, images)
    if errors:
        raise ConfigError(str(path), errors)
    return system


def _byte_pos(data: bytes, offset: int) -> Pos:
    """Line and column (in characters) of a byte offset of UTF-8 text."""
    line_start = data.rfind(b"\n", 0, offset) + 1
    column = len(data[line_start:offset].decode("utf-8", errors="replace")) + 1
    return Pos(data.count(b"\n", 0, offset) + 1, column)


def _reason(exc: Exception) -> str:
    if isinstance(exc, OSError):
        return exc.strerror or str(exc)
    return f"it is not UTF-8 text (byte {exc.object[exc.start]:#04x} here); save it as UTF-8"


def _load_image(part: Partition, diags: Diagnostics) -> None:
    if part.image_path is None:
        return
    pos = part.at("image")
    if not part.image_path.exists():
        diags.error(pos, f"{part.title}: image '{part.image}' does not exist (relative paths start at the "
                    f"directory of the configuration file); build the image or fix the path")
        return
    try:
        part.elf = read_elf(part.image_path) if part.load is None else read_raw(part.image_path, part.load)
    except ElfProblem as exc:
        diags.error(pos, f"{part.title}: image '{part.image}' {exc}")
    except OSError as exc:
        diags.error(pos, f"{part.title}: image '{part.image}' cannot be read ({_reason(exc)}); fix the path "
                    f"or its permissions")
