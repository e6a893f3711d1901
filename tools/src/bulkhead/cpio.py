"""The newc ("070701") cpio format the Linux kernel unpacks as initramfs: a deterministic writer and a
reader (for tests and for checking archives)."""

from __future__ import annotations

import stat
from dataclasses import dataclass

MAGIC = b"070701"
TRAILER = "TRAILER!!!"
_FIELDS = 13  # after the magic: ino mode uid gid nlink mtime filesize devmajor devminor rdevmajor rdevminor namesize check


@dataclass(frozen=True)
class Entry:
    name: str          # without a leading '/', e.g. "bin/busybox"
    mode: int          # file type and permission bits (stat.S_IFREG | 0o755, ...)
    data: bytes = b""  # file contents, or the target of a symbolic link
    rdev: tuple[int, int] = (0, 0)  # (major, minor) of a device node

    @property
    def kind(self) -> str:
        for test, name in ((stat.S_ISDIR, "dir"), (stat.S_ISREG, "file"), (stat.S_ISLNK, "symlink"),
                           (stat.S_ISCHR, "char"), (stat.S_ISBLK, "block")):
            if test(self.mode):
                return name
        return "other"


def directory(name: str, perm: int = 0o755) -> Entry:
    return Entry(name, stat.S_IFDIR | perm)


def regular(name: str, data: bytes, perm: int = 0o644) -> Entry:
    return Entry(name, stat.S_IFREG | perm, data)


def symlink(name: str, target: str) -> Entry:
    return Entry(name, stat.S_IFLNK | 0o777, target.encode())


def char_device(name: str, major: int, minor: int, perm: int = 0o600) -> Entry:
    return Entry(name, stat.S_IFCHR | perm, rdev=(major, minor))


def _pad4(length: int) -> bytes:
    return b"\0" * (-length % 4)


def _record(ino: int, entry: Entry) -> bytes:
    name = entry.name.encode() + b"\0"
    nlink = 2 if stat.S_ISDIR(entry.mode) else 1
    values = (ino, entry.mode, 0, 0, nlink, 0, len(entry.data), 0, 0, entry.rdev[0], entry.rdev[1], len(name), 0)
    header = MAGIC + b"".join(b"%08X" % value for value in values)
    return header + name + _pad4(len(header) + len(name)) + entry.data + _pad4(len(entry.data))


def write(entries: list[Entry]) -> bytes:
    """The archive of entries sorted by name, every parent directory added (mode 0755), uid/gid 0,
    mtime 0, inode numbers in order: the same entries always give the same bytes."""
    by_name: dict[str, Entry] = {}
    for entry in entries:
        name = entry.name.strip("/")
        by_name[name] = Entry(name, entry.mode, entry.data, entry.rdev)
        parts = name.split("/")
        for depth in range(1, len(parts)):
            by_name.setdefault("/".join(parts[:depth]), directory("/".join(parts[:depth])))
    records = [_record(ino, by_name[name]) for ino, name in enumerate(sorted(by_name), start=1)]
    records.append(_record(0, Entry(TRAILER, 0)))
    return b"".join(records)


class CpioError(Exception):
    pass


def read(archive: bytes) -> list[Entry]:
    """The entries of a newc archive up to its trailer, in archive order."""
    entries, offset = [], 0
    while True:
        if archive[offset:offset + 6] != MAGIC:
            raise CpioError(f"no newc header at offset {offset:#x}")
        fields = [int(archive[offset + 6 + 8 * i:offset + 14 + 8 * i], 16) for i in range(_FIELDS)]
        mode, size, rdev, namesize = fields[1], fields[6], (fields[9], fields[10]), fields[11]
        name_at = offset + 6 + 8 * _FIELDS
        name = archive[name_at:name_at + namesize - 1].decode()
        data_at = name_at + namesize + (-(name_at + namesize - offset) % 4)
        if name == TRAILER:
            return entries
        if data_at + size > len(archive):
            raise CpioError(f"entry '{name}' is truncated")
        entries.append(Entry(name, mode, archive[data_at:data_at + size], rdev))
        offset = data_at + size + (-size % 4)
