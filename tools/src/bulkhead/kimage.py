"""Reading an arm64 Linux kernel Image: its boot header (Documentation/arm64/booting.rst) and version."""

from __future__ import annotations

import gzip
import re
import struct
import zlib
from dataclasses import dataclass
from pathlib import Path

HEADER = struct.Struct("<IIQQQQQQ4sI")  # code0, code1, text_offset, image_size, flags, res2-4, magic, res5
MAGIC = b"ARM\x64"
MAGIC_OFFSET = 56
GZIP_MAGIC = b"\x1f\x8b"
FLAG_BIG_ENDIAN = 1 << 0
_VERSION = re.compile(rb"Linux version (\S+) \(")


class KernelProblem(Exception):
    """The file is not a usable arm64 Image; the message completes "kernel 'x' ..."."""


@dataclass(frozen=True)
class KernelImage:
    data: bytes          # the Image itself (decompressed when the file was gzip)
    compressed: bool     # the file was gzip-compressed
    text_offset: int     # the Image is loaded this far above a 2 MiB aligned base
    image_size: int      # bytes from the load address the kernel uses (bss included)
    flags: int
    version: str | None  # from the banner "Linux version X (...", None when not found

    @property
    def size(self) -> int:
        """Bytes the kernel occupies from its load address."""
        return max(self.image_size, len(self.data))


def read_kernel(path: Path) -> KernelImage:
    data = path.read_bytes()
    compressed = data[:2] == GZIP_MAGIC
    if compressed:
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError, zlib.error) as exc:
            raise KernelProblem(f"is a damaged gzip file ({exc})") from exc
    return parse_kernel(data, compressed)


def parse_kernel(data: bytes, compressed: bool = False) -> KernelImage:
    what = "decompresses to" if compressed else "is"
    if len(data) < HEADER.size or data[MAGIC_OFFSET:MAGIC_OFFSET + 4] != MAGIC:
        raise KernelProblem(f"{what} not an arm64 Linux Image (no \"ARM\\x64\" magic at offset 56; a vmlinux "
                            f"ELF, a zImage or an EFI-only file cannot be booted)")
    _, _, text_offset, image_size, flags, _, _, _, _, _ = HEADER.unpack_from(data)
    if image_size == 0:
        raise KernelProblem(f"{what} an arm64 Image without image_size in its header (older than Linux 3.17)")
    if flags & FLAG_BIG_ENDIAN:
        raise KernelProblem(f"{what} a big-endian arm64 Image; Bulkhead runs little-endian guests")
    match = _VERSION.search(data)
    version = match.group(1).decode(errors="replace") if match else None
    return KernelImage(data, compressed, text_offset, image_size, flags, version)


def make_header(text_offset: int = 0, image_size: int = 0x200000, flags: int = 0xA) -> bytes:
    """A 64-byte Image header (for tests and tools that wrap a binary as an Image)."""
    return HEADER.pack(0x14000010, 0, text_offset, image_size, flags, 0, 0, 0, MAGIC, 0)
