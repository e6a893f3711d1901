"""Building a Linux partition's initramfs (a newc cpio archive) from linux.initramfs: busybox (with a
udhcpc script), files and directories, symbolic links, dynamically linked programs with the shared
libraries they need, kernel modules with their dependencies, and the module index depmod writes."""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from elftools.common.exceptions import ELFError
from elftools.elf.elffile import ELFFile

from bulkhead import cpio
from bulkhead.diagnostics import Diagnostics
from bulkhead.model import InitramfsFile, InitramfsSpec, ModuleRef

BUSYBOX_PATH = "/bin/busybox"
SKELETON = ("bin", "dev", "proc", "root", "sbin", "sys", "tmp", "usr/bin", "usr/sbin")
MODULE_SUFFIX = ".ko"
EXTRA_MODULES = "extra"  # below lib/modules/<version>: modules given by their path
# Where the shared libraries of programs go: a directory the dynamic loader always searches.
LIBRARY_DEST = "/lib"
# Searched after a spec's library_dirs: the arm64 C library of Debian's libc6-arm64-cross
# (scripts/bootstrap.sh installs it), the same glibc build as Debian's arm64 libc6.
DEFAULT_LIBRARY_DIRS = (Path("/usr/aarch64-linux-gnu/lib"),)
EM_AARCH64 = 183
# Index files depmod writes, put into the archive beside the modules; the kernel's own lists go too.
DEPMOD_OUTPUTS = ("modules.alias", "modules.alias.bin", "modules.builtin.alias.bin", "modules.builtin.bin",
                  "modules.dep", "modules.dep.bin", "modules.devname", "modules.softdep", "modules.symbols",
                  "modules.symbols.bin")
KERNEL_LISTS = ("modules.builtin", "modules.order")

# busybox udhcpc runs this script (its default path: Debian's busybox /etc/udhcpc, upstream's
# /usr/share/udhcpc, a link here) with the lease in its environment: without it, udhcpc obtains a
# lease and configures nothing. The tool adds it with busybox.
UDHCPC_SCRIPT_PATH = "/etc/udhcpc/default.script"
UDHCPC_SCRIPT_LINK = "/usr/share/udhcpc/default.script"
UDHCPC_SCRIPT = """\
#!/bin/sh
# busybox udhcpc's default script, added by the bulkhead tool with busybox: it applies the lease
# udhcpc passes in its environment (interface, ip, subnet, broadcast, router, dns, domain).
RESOLV_CONF=/etc/resolv.conf
case "$1" in
deconfig)
	ifconfig "$interface" 0.0.0.0 up
	;;
bound|renew)
	ifconfig "$interface" "$ip" netmask "${subnet:-255.255.255.0}" ${broadcast:+broadcast "$broadcast"} up
	while route del default dev "$interface" 2>/dev/null; do :; done
	metric=0
	for gw in $router; do
		route add default gw "$gw" dev "$interface" metric $metric
		metric=$((metric + 1))
	done
	mkdir -p "${RESOLV_CONF%/*}"
	{
		[ -n "$domain" ] && echo "search $domain"
		for server in $dns; do echo "nameserver $server"; done
	} > "$RESOLV_CONF"
	echo "udhcpc: $interface $1 $ip netmask ${subnet:-255.255.255.0} router ${router:-none} dns ${dns:-none}"
	;;
leasefail|nak)
	echo "udhcpc: $interface: $1${message:+ ($message)}" >&2
	;;
esac
exit 0
"""


def module_key(name: str) -> str:
    """Module names are the same with - and _ (virtio-rng = virtio_rng)."""
    return name.removesuffix(MODULE_SUFFIX).replace("-", "_")


def valid_dest(dest: str, root_ok: bool = False) -> bool:
    """An absolute path naming a file: no empty, '.' or '..' components, no trailing '/' ("/" itself
    when root_ok: a directory's contents go to the archive's root)."""
    if root_ok and dest == "/":
        return True
    if not dest.startswith("/") or dest.endswith("/"):
        return False
    return all(part not in ("", ".", "..") for part in dest[1:].split("/"))


def is_executable(path: Path, data: bytes) -> bool:
    """Executable bits on the host, an ELF file or a script (#!): the archive gives it mode 0755."""
    return bool(path.stat().st_mode & 0o111) or data[:4] == b"\x7fELF" or data[:2] == b"#!"


@dataclass
class Module:
    key: str       # module_key of its name
    relpath: str   # below the modules directory, e.g. kernel/drivers/virtio/virtio_mmio.ko
    path: Path | None  # None: already in the archive (given by path, or through files)
    depends: list[str] = field(default_factory=list)  # module keys
    vermagic: str | None = None


def modinfo(path: Path) -> dict[str, str]:
    """The key=value strings of a module's .modinfo section (empty when it has none)."""
    try:
        return modinfo_bytes(path.read_bytes())
    except OSError:
        return {}


def modinfo_bytes(data: bytes) -> dict[str, str]:
    try:
        section = ELFFile(io.BytesIO(data)).get_section_by_name(".modinfo")
        data = section.data() if section is not None else b""
    except (ELFError, ValueError):
        return {}
    info = {}
    for item in data.split(b"\0"):
        key, sep, value = item.decode(errors="replace").partition("=")
        if sep:
            info.setdefault(key, value)
    return info


def index_modules(modules_dir: Path) -> dict[str, tuple[str, Path]]:
    """module key -> (path below modules_dir, file) for every .ko file under modules_dir."""
    found = {}
    for top, dirs, files in os.walk(modules_dir, followlinks=True):
        dirs.sort()
        for name in sorted(files):
            if name.endswith(MODULE_SUFFIX):
                path = Path(top) / name
                found.setdefault(module_key(name), (path.relative_to(modules_dir).as_posix(), path))
    return found


@dataclass
class Built:
    archive: bytes
    entries: list[cpio.Entry]
    modules_version: str | None = None  # the lib/modules/<version> the modules came from
    modules: list[str] = field(default_factory=list)  # relpaths in load order
    libraries: dict[str, str] = field(default_factory=dict)  # archive path -> host file, of programs' libraries


def elf_dynamic(path: Path) -> tuple[int, str | None, list[str]] | None:
    """(e_machine, PT_INTERP, DT_NEEDED names) of an ELF file, None if it is not one."""
    try:
        with open(path, "rb") as stream:
            elf = ELFFile(stream)
            interp = None
            for segment in elf.iter_segments():
                if segment["p_type"] == "PT_INTERP":
                    interp = segment.get_interp_name()
            needed = []
            dynamic = elf.get_section_by_name(".dynamic")
            if dynamic is None:
                for segment in elf.iter_segments():
                    if segment["p_type"] == "PT_DYNAMIC":
                        dynamic = segment
            if dynamic is not None:
                needed = [tag.needed for tag in dynamic.iter_tags() if tag.entry.d_tag == "DT_NEEDED"]
            return EM_AARCH64 if elf["e_machine"] == "EM_AARCH64" else -1, interp, needed
    except (ELFError, OSError, ValueError, KeyError, AttributeError):
        return None


def depmod_program() -> str | None:
    return shutil.which("depmod") or next((p for p in ("/sbin/depmod", "/usr/sbin/depmod") if os.access(p, os.X_OK)),
                                          None)


class Builder:
    """Collects the entries of one archive; problems become errors in diags (title: "partition 'x'")."""

    def __init__(self, spec: InitramfsSpec, title: str, diags: Diagnostics) -> None:
        self.spec, self.title, self.diags = spec, title, diags
        self.entries: dict[str, cpio.Entry] = {}
        for name in SKELETON:
            self.put(cpio.directory(name, 0o1777 if name == "tmp" else 0o755))
        self.put(cpio.char_device("dev/console", 5, 1))
        self.libraries: dict[str, str] = {}
        self.ok = True

    def put(self, entry: cpio.Entry) -> None:
        name = entry.name.strip("/")
        self.entries[name] = cpio.Entry(name, entry.mode, entry.data, entry.rdev)

    def error(self, pos, message: str) -> None:
        self.diags.error(pos, f"{self.title}: {message}")
        self.ok = False

    def read_input(self, path: Path | None, what: str, pos, directory_ok: bool = False) -> bytes | None:
        if path is None:
            return None
        if not path.exists():
            self.error(pos, f"{what} does not exist (relative paths start at the directory of the configuration "
                       f"file); build it or fix the path")
        elif not path.is_file():
            if not (directory_ok and path.is_dir()):
                self.error(pos, f"{what} is not a regular file; give the path of a file")
        else:
            try:
                return path.read_bytes()
            except OSError as exc:
                self.error(pos, f"{what} cannot be read ({exc.strerror}); fix its permissions")
        return None

    def add_busybox(self) -> None:
        data = self.read_input(self.spec.busybox_path, f"initramfs busybox '{self.spec.busybox}'",
                               self.spec.at("busybox"))
        if data is not None:
            self.put(cpio.regular(BUSYBOX_PATH, data, 0o755))
            self.put(cpio.symlink("/bin/sh", "busybox"))
            self.put(cpio.regular(UDHCPC_SCRIPT_PATH, UDHCPC_SCRIPT.encode(), 0o755))
            self.put(cpio.symlink(UDHCPC_SCRIPT_LINK, UDHCPC_SCRIPT_PATH))

    def add_file(self, item: InitramfsFile) -> None:
        """A host file (followed if it is a link), or a directory with everything below it: files,
        directories and symbolic links as they are (a link's target unchanged)."""
        what = f"'{item.source}' (initramfs file {item.dest})"
        data = self.read_input(item.path, what, item.at("source"), directory_ok=True)
        if data is not None:
            self.put(cpio.regular(item.dest, data, 0o755 if is_executable(item.path, data) else 0o644))
        elif item.path is not None and item.path.is_dir():
            self._add_tree(item, what)

    def _add_tree(self, item: InitramfsFile, what: str) -> None:
        base = item.dest.rstrip("/")
        if base:
            self.put(cpio.directory(base))
        for top, dirs, files in os.walk(item.path):
            dirs.sort()
            rel = Path(top).relative_to(item.path).as_posix()
            where = base if rel == "." else f"{base}/{rel}"
            for name in list(dirs):
                host = Path(top) / name
                if host.is_symlink():  # os.walk does not enter it: the link goes in as a link
                    dirs.remove(name)
                    self.put(cpio.symlink(f"{where}/{name}", os.readlink(host)))
                else:
                    self.put(cpio.directory(f"{where}/{name}"))
            for name in sorted(files):
                host = Path(top) / name
                if host.is_symlink():
                    self.put(cpio.symlink(f"{where}/{name}", os.readlink(host)))
                    continue
                if not host.is_file():
                    continue  # sockets, fifos, devices: not from a host tree
                try:
                    data = host.read_bytes()
                except OSError as exc:
                    self.error(item.at("source"), f"{what}: {host} cannot be read ({exc.strerror}); fix its "
                               f"permissions")
                    continue
                self.put(cpio.regular(f"{where}/{name}", data, 0o755 if is_executable(host, data) else 0o644))

    def add_symlink(self, item: InitramfsFile) -> None:
        if item.source:
            self.put(cpio.symlink(item.dest, item.source))

    def library_dirs(self) -> list[Path]:
        return [d.path for d in self.spec.library_dirs if d.path is not None] + list(DEFAULT_LIBRARY_DIRS)

    def add_program(self, item: InitramfsFile) -> None:
        """A dynamically linked arm64 program, its dynamic loader (at its PT_INTERP path) and every
        shared library it needs (DT_NEEDED, recursively), found in library_dirs, in LIBRARY_DEST."""
        what = f"program '{item.source}' (initramfs {item.dest})"
        data = self.read_input(item.path, what, item.at("source"))
        if data is None:
            return
        info = elf_dynamic(item.path)
        if info is None or info[0] != EM_AARCH64:
            self.error(item.at("source"), f"{what} is not an arm64 ELF program; give an aarch64 executable, or "
                       f"list it under files")
            return
        self.put(cpio.regular(item.dest, data, 0o755))
        _, interp, needed = info
        dirs = self.library_dirs()
        searched = ", ".join(str(d) for d in dirs)
        queue: list[tuple[str, str, str]] = []  # (archive path, name to find, who needs it)
        if interp:
            queue.append((interp, Path(interp).name, item.source))
        queue += [(f"{LIBRARY_DEST}/{name}", name, item.source) for name in needed]
        while queue:
            dest, name, who = queue.pop(0)
            if dest.strip("/") in self.entries:
                continue
            host = next((d / name for d in dirs if (d / name).is_file()
                         and (elf_dynamic(d / name) or (0,))[0] == EM_AARCH64), None)
            if host is None:
                self.error(item.at("source"), f"{what}: '{who}' needs the shared library {name}, which is in "
                           f"none of the library directories ({searched}); add the directory that holds the "
                           f"arm64 {name} to initramfs.library_dirs")
                continue
            self.put(cpio.regular(dest, host.read_bytes(), 0o755))
            self.libraries[dest] = str(host.resolve())
            for dep in elf_dynamic(host)[2]:
                queue.append((f"{LIBRARY_DEST}/{dep}", dep, name))

    def add_modules(self, modules_dir: Path | None, version: str, kernel_version: str | None) -> list[str]:
        """Add the listed modules and their dependencies from modules_dir (the kernel's
        lib/modules/<version>) below /lib/modules/<version>, modules given by their path below its
        extra/, and the index depmod writes for every module in that directory of the archive (also
        those put there through files); returns the modules in load order."""
        index = index_modules(modules_dir) if modules_dir is not None else {}
        chosen: dict[str, Module] = {}
        base = self._modules_base = f"lib/modules/{version}"
        for ref in self.spec.modules:
            if ref.name is None:
                continue
            if ref.path is not None:
                data = self.read_input(ref.path, f"kernel module '{ref.name}'", ref.pos)
                if data is not None:
                    self.put(cpio.regular(f"{base}/{EXTRA_MODULES}/{ref.path.name}", data))
                continue
            if module_key(ref.name) not in index:
                self.error(ref.pos, f"kernel module '{ref.name}' is not in {modules_dir} (no {ref.name}.ko, also "
                           f"written with - or _, below it); check the name, or the kernel's modules directory")
                continue
            self._collect(module_key(ref.name), index, chosen, ref.pos, ref.name, modules_dir)
        # Modules of the archive that are not the kernel's: given by path, or put there through files.
        for name, entry in sorted(self.entries.items()):
            if not (name.startswith("lib/modules/") and name.endswith(MODULE_SUFFIX) and entry.kind == "file"):
                continue
            if not name.startswith(f"{base}/"):
                self.error(self._pos_of_archive_file(name), f"kernel module /{name} is not below /{base}, where "
                           f"modprobe looks for the modules of the partition's kernel ({version}); put it there")
                continue
            self._own_module(name.removeprefix(f"{base}/"), entry, chosen, kernel_version)
        for module in [m for m in chosen.values() if m.path is None]:
            pos, where = self._pos_of_archive_file(f"{base}/{module.relpath}"), f"/{base}/{module.relpath}"
            for dep in module.depends:
                if dep in index:
                    self._collect(dep, index, chosen, pos, where, modules_dir)
                elif dep not in chosen:
                    self.error(pos, f"kernel module {where} needs module '{dep}', which is neither in {modules_dir} "
                               f"nor in the archive; add it")
        self._check_vermagic(chosen, kernel_version, modules_dir)
        order = _load_order(chosen)
        for module in order:
            if module.path is not None:
                self.put(cpio.regular(f"{base}/{module.relpath}", module.path.read_bytes()))
        if self.ok:
            self._depmod(modules_dir, version, order)
        return [m.relpath for m in order]

    def _own_module(self, relpath: str, entry: cpio.Entry, chosen: dict[str, Module],
                    kernel_version: str | None) -> None:
        """A module of the archive that is not from the kernel's tree: its vermagic must name the
        partition's kernel (the kernel's modules it depends on come along: add_modules)."""
        pos = self._pos_of_archive_file(f"{self._modules_base}/{relpath}")
        where = f"/{self._modules_base}/{relpath}"
        info = modinfo_bytes(entry.data)
        built_for = info.get("vermagic", "").split()[:1]
        if kernel_version is not None and built_for != [kernel_version]:
            found = f"is built for Linux {built_for[0]}" if built_for else "has no vermagic (not a kernel module?)"
            self.error(pos, f"kernel module {where} {found}, but the partition's kernel is {kernel_version}; "
                       f"build it against that kernel's headers (its vermagic must start with {kernel_version})")
            return
        key = module_key(Path(relpath).name)
        depends = [module_key(d) for d in info.get("depends", "").split(",") if d]
        chosen[key] = Module(key, relpath, None, depends, info.get("vermagic"))

    def _pos_of_archive_file(self, name: str):
        """Where a module of the archive (name: its path there) came from: the modules or files entry
        that put it there."""
        for ref in self.spec.modules:
            if ref.path is not None and name == f"{self._modules_base}/{EXTRA_MODULES}/{ref.path.name}":
                return ref.pos
        for item in self.spec.files:
            dest = item.dest.strip("/")
            if name == dest or not dest or name.startswith(dest + "/"):
                return item.pos
        return self.spec.at("files", "modules")

    def _depmod(self, modules_dir: Path | None, version: str, order: list[Module]) -> None:
        """Run depmod on a copy of the archive's lib/modules/<version> and put its index into the
        archive: modprobe then finds every module there and loads its dependencies first."""
        program = depmod_program()
        if program is None:
            self.error(self.spec.at("modules", "files"), "depmod is not installed (Debian package kmod), and the "
                       "initramfs' modules need the index it writes; run scripts/bootstrap.sh")
            return
        base = f"lib/modules/{version}"
        with tempfile.TemporaryDirectory(prefix="bulkhead-depmod-") as tmp:
            root = Path(tmp) / base
            root.mkdir(parents=True)
            present = []
            for name, entry in sorted(self.entries.items()):
                if name.startswith(f"{base}/") and entry.kind == "file" and name.endswith(MODULE_SUFFIX):
                    target = Path(tmp) / name
                    target.parent.mkdir(parents=True, exist_ok=True)
                    target.write_bytes(entry.data)
                    present.append(name.removeprefix(f"{base}/"))
            # modules.order fixes depmod's order of lines (else the host directory's order).
            listed = [m.relpath for m in order if m.relpath in present]
            rest = sorted(set(present) - set(listed))
            (root / "modules.order").write_text("".join(f"{p}\n" for p in listed + rest))
            if modules_dir is not None and (modules_dir / "modules.builtin").is_file():
                (root / "modules.builtin").write_bytes((modules_dir / "modules.builtin").read_bytes())
            (Path(tmp) / "depmod.conf").write_text("")
            try:
                result = subprocess.run([program, "-b", tmp, "-C", str(Path(tmp) / "depmod.conf"), version],
                                        capture_output=True, text=True, timeout=120)
            except (OSError, subprocess.TimeoutExpired) as exc:
                self.error(self.spec.at("modules", "files"), f"depmod could not run ({exc})")
                return
            if result.returncode != 0:
                self.error(self.spec.at("modules", "files"), f"depmod failed for the initramfs' modules: "
                           f"{result.stderr.strip()}")
                return
            for name in KERNEL_LISTS + DEPMOD_OUTPUTS:
                if (root / name).is_file():
                    self.put(cpio.regular(f"{base}/{name}", (root / name).read_bytes()))

    def _collect(self, key: str, index, chosen: dict[str, Module], pos, asked: str, modules_dir: Path) -> None:
        if key in chosen:
            return
        relpath, path = index[key]
        info = modinfo(path)
        depends = [module_key(d) for d in info.get("depends", "").split(",") if d]
        chosen[key] = Module(key, relpath, path, depends, info.get("vermagic"))
        for dep in depends:
            if dep not in index:
                self.error(pos, f"kernel module '{asked}' needs module '{dep}', which is not in {modules_dir}; "
                           f"the modules directory is incomplete")
                continue
            self._collect(dep, index, chosen, pos, asked, modules_dir)

    def _check_vermagic(self, chosen: dict[str, Module], kernel_version: str | None, modules_dir: Path) -> None:
        if kernel_version is None:
            return
        for module in chosen.values():
            if module.path is None:
                continue  # checked by _own_module
            built_for = module.vermagic.split()[0] if module.vermagic else None
            if built_for and built_for != kernel_version:
                self.error(self.spec.at("modules_dir", "modules"), f"kernel module {module.relpath} in "
                           f"{modules_dir} is built for Linux {built_for}, but the kernel is {kernel_version}; "
                           f"take the modules of the same kernel build")
                return


def _deps_in_order(module: Module, chosen: dict[str, Module]) -> list[str]:
    """Every module that module needs, directly or not, in load order (dependencies first)."""
    seen: list[str] = []

    def visit(key: str) -> None:
        for dep in chosen[key].depends:
            if dep in chosen and dep not in seen:
                visit(dep)
                seen.append(dep)
    visit(module.key)
    return seen


def _load_order(chosen: dict[str, Module]) -> list[Module]:
    order: list[str] = []
    for key in chosen:
        for dep in _deps_in_order(chosen[key], chosen) + [key]:
            if dep not in order:
                order.append(dep)
    return [chosen[key] for key in order]


def modules_dir_of(spec: InitramfsSpec, kernel_path: Path | None, kernel_version: str | None) -> Path | str:
    """The lib/modules/<version> directory to take modules from, or a message completing "...; " why not."""
    if spec.modules_dir_path is not None:
        if spec.modules_dir_path.is_dir():
            return spec.modules_dir_path
        return f"initramfs modules_dir '{spec.modules_dir}' is not a directory; give the kernel's lib/modules/<version>"
    root = kernel_path.parent / "lib" / "modules" if kernel_path else None
    versions = sorted(p for p in root.iterdir() if p.is_dir()) if root and root.is_dir() else []
    if kernel_version and root and (root / kernel_version).is_dir():
        return root / kernel_version
    if len(versions) == 1:
        return versions[0]
    found = "none" if not versions else ", ".join(p.name for p in versions)
    return (f"cannot find the kernel's modules: {root} should hold one lib/modules/<version> directory (found: "
            f"{found}); set modules_dir under initramfs")


def build(spec: InitramfsSpec, title: str, kernel_path: Path | None, kernel_version: str | None,
          diags: Diagnostics) -> Built | None:
    """The archive for spec, or None after reporting why it cannot be built."""
    builder = Builder(spec, title, diags)
    builder.add_busybox()
    for item in spec.files:
        builder.add_file(item)
    for item in spec.symlinks:
        builder.add_symlink(item)
    for item in spec.programs:
        builder.add_program(item)
    version, loaded = None, []
    own = any(name.startswith("lib/modules/") and name.endswith(MODULE_SUFFIX) for name in builder.entries) or \
        any(ref.path is not None for ref in spec.modules)
    if spec.modules or own:
        where = modules_dir_of(spec, kernel_path, kernel_version)
        if isinstance(where, str) and (any(ref.path is None for ref in spec.modules) or not kernel_version):
            builder.error(spec.at("modules_dir", "modules", "files"), where)
        else:
            modules_dir = where if isinstance(where, Path) else None
            version = modules_dir.name if modules_dir is not None else kernel_version
            loaded = builder.add_modules(modules_dir, version, kernel_version)
    if not builder.ok:
        return None
    entries = list(builder.entries.values())
    return Built(cpio.write(entries), entries, version, loaded, builder.libraries)
