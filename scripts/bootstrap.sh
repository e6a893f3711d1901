#!/usr/bin/env bash
# One idempotent bootstrap for both README commands: installs what is missing, quiet otherwise.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"

need_apt=()
have() { command -v "$1" >/dev/null 2>&1; }
have aarch64-linux-gnu-gcc || need_apt+=(gcc-aarch64-linux-gnu binutils-aarch64-linux-gnu)
have qemu-system-aarch64   || need_apt+=(qemu-system-arm)
have dtc                   || need_apt+=(device-tree-compiler)
have cpio                  || need_apt+=(cpio)
# depmod (kmod): the tool writes the modules.dep of a Linux partition's initramfs with it.
have depmod || [ -x /sbin/depmod ] || [ -x /usr/sbin/depmod ] || need_apt+=(kmod)
have make                  || need_apt+=(make)
# A partition's FAT disk image (`disk:`): mkfs.vfat formats it, mtools (mmd, mcopy) fills it.
have mkfs.vfat || [ -x /sbin/mkfs.vfat ] || [ -x /usr/sbin/mkfs.vfat ] || need_apt+=(dosfstools)
have mcopy                 || need_apt+=(mtools)
have gcc                   || need_apt+=(gcc libc6-dev)
# The arm64 C library: static Linux benchmark programs (linux/bench, make bench).
[ -f /usr/aarch64-linux-gnu/lib/libc.a ] || need_apt+=(libc6-dev-arm64-cross)
python3 -c 'import venv, ensurepip' >/dev/null 2>&1 || need_apt+=(python3-venv)
# Debian's UEFI firmware for arm64 virtual machines (QEMU_EFI.fd): firmware partitions (test_firmware.py).
[ -f /usr/share/qemu-efi-aarch64/QEMU_EFI.fd ] || need_apt+=(qemu-efi-aarch64)
# Debian's U-Boot for QEMU's virt machine (qemu_arm64/u-boot.bin): another unmodified firmware (test_firmware.py).
[ -f /usr/lib/u-boot/qemu_arm64/u-boot.bin ] || need_apt+=(u-boot-qemu)

if [ ${#need_apt[@]} -gt 0 ]; then
  echo "bootstrap: installing ${need_apt[*]}"
  sudo_cmd=""
  [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo_cmd apt-get update -qq
  $sudo_cmd apt-get install -y -qq --no-install-recommends "${need_apt[@]}" >/dev/null
fi

venv="$top/.venv"
stamp="$venv/.bulkhead-installed"
if [ ! -x "$venv/bin/python" ]; then
  echo "bootstrap: creating $venv"
  python3 -m venv "$venv"
fi
# The tool this tree's venv runs must be this tree's (an editable install made from another
# clone with this venv's pip would build every image with that clone's tool).
tool_is_ours() {
  "$venv/bin/python" - "$top/tools/src" <<'PY' 2>/dev/null
import os, sys
import bulkhead
sys.exit(os.path.dirname(os.path.dirname(os.path.realpath(bulkhead.__file__))) != os.path.realpath(sys.argv[1]))
PY
}
if [ ! -f "$stamp" ] || [ "$top/tools/pyproject.toml" -nt "$stamp" ] || ! tool_is_ours; then
  echo "bootstrap: installing the bulkhead tool into $venv"
  "$venv/bin/pip" install -q --disable-pip-version-check -e "$top/tools[test]"
  touch "$stamp"
fi

# Debian arm64 guest packages for Linux partitions (docs/linux.md): the generic and the PREEMPT_RT
# kernel (resolved through their meta packages), a static busybox, and Debian's dynamically linked
# cyclictest (rt-tests) with the library it needs beside the C library (libnuma1; the C library
# itself is the cross one, libc6-arm64-cross, above: the same glibc build), and Debian's dynamically
# linked stress-ng with the libraries its DT_NEEDED entries name, and theirs, until nothing is missing
# (STRESS_NG_LIBS: the loader needs each to start it; package dependencies it never loads, such as
# libegl1's Mesa drivers, are left out). Downloads and unpacked trees
# live in a cache outside the repository, so clean clones on this machine share them; build/debian
# holds stable links into it:
#   build/debian/arm64/vmlinuz            the kernel Image; build/debian/arm64/lib/modules/<version>/
#   build/debian/rt-arm64/vmlinuz         the same for the PREEMPT_RT kernel
#   build/debian/busybox                  static arm64 busybox
#   build/debian/rt-tests, libnuma1       the unpacked packages (usr/bin/cyclictest, usr/lib/aarch64-linux-gnu)
#   build/debian/stress-ng                the unpacked package (usr/bin/stress-ng)
#   build/debian/stress-ng-lib/           links to the shared libraries of STRESS_NG_LIBS, one directory
#                                         for a partition's initramfs.library_dirs
# BULKHEAD_NO_DEBIAN=1 skips this part.
deb_cache="${XDG_CACHE_HOME:-$HOME/.cache}/bulkhead/debian"
deb_links="$top/build/debian"
as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }
apt_updated=""
apt_update() {
  [ -z "$apt_updated" ] || return 0
  echo "bootstrap: apt-get update (arm64 package lists)"
  as_root apt-get update -qq
  apt_updated=1
}
# The versioned kernel package a meta package depends on (linux-image-arm64 -> linux-image-6.1.0-56-arm64).
kernel_of() {
  { apt-cache depends "$1:arm64" 2>/dev/null || true; } | sed -n 's/^ *Depends: \(linux-image-[^ :<>]*\).*/\1/p' | head -n1
}
candidate_of() { apt-cache policy "$1:arm64" 2>/dev/null | sed -n 's/^ *Candidate: //p' | grep -v '(none)' || true; }
# unpack PACKAGE: prints the directory holding the package's unpacked files (downloads it if needed).
unpack() {
  local pkg=$1 version root deb tmp
  version=$(candidate_of "$pkg")
  [ -n "$version" ] || { echo "bootstrap: no arm64 candidate for $pkg" >&2; return 1; }
  root="$deb_cache/root/${pkg}_${version//:/_}"
  if [ ! -f "$root/.complete" ]; then
    mkdir -p "$deb_cache/debs" "$deb_cache/root"
    deb="$deb_cache/debs/${pkg}_${version//:/_}_arm64.deb"
    if [ ! -f "$deb" ]; then
      echo "bootstrap: downloading $pkg:arm64 $version into $deb_cache" >&2
      tmp=$(mktemp -d)
      # apt downloads as user _apt when it can: give it the directory (else a harmless warning).
      [ "$(id -u)" -ne 0 ] || ! id _apt >/dev/null 2>&1 || chown _apt "$tmp"
      if ! (cd "$tmp" && apt-get download -qq "$pkg:arm64=$version" >&2); then
        rm -rf "$tmp"
        return 2  # the lists may be stale: the caller updates them and retries
      fi
      mv "$tmp"/*.deb "$deb" || { rm -rf "$tmp"; return 1; }
      rm -rf "$tmp"
    fi
    rm -rf "$root.tmp"
    # (this runs with set -e off: see debian_setup; a damaged download is removed and fetched again)
    dpkg-deb -x "$deb" "$root.tmp" || { rm -rf "$root.tmp" "$deb"; return 1; }
    touch "$root.tmp/.complete"
    rm -rf "$root"
    mv "$root.tmp" "$root"
  fi
  echo "$root"
}
# link_kernel META NAME: build/debian/NAME -> the unpacked kernel, with a vmlinuz link inside.
link_kernel() {
  local pkg root image
  pkg=$(kernel_of "$1")
  [ -n "$pkg" ] || { echo "bootstrap: cannot resolve $1:arm64" >&2; return 1; }
  root=$(unpack "$pkg") || return $?
  image=$(cd "$root/boot" && ls vmlinuz-* | head -n1)
  [ -n "$image" ] || { echo "bootstrap: $pkg has no boot/vmlinuz-*" >&2; return 1; }
  ln -sfn "boot/$image" "$root/vmlinuz" && ln -sfn "$root" "$deb_links/$2"
}
debian_guest() {
  mkdir -p "$deb_links"
  link_kernel linux-image-arm64 arm64 || return $?
  link_kernel linux-image-rt-arm64 rt-arm64 || return $?
  local root
  root=$(unpack busybox-static) || return $?
  ln -sfn "$root/bin/busybox" "$deb_links/busybox"
  for pkg in rt-tests libnuma1 stress-ng; do
    root=$(unpack "$pkg") || return $?
    ln -sfn "$root" "$deb_links/$pkg"
  done
  stress_ng_libs
}
# stress-ng's libraries beside the C library: DT_NEEDED of usr/bin/stress-ng (libEGL.so.1, libGLESv2.so.2,
# libJudy.so.1, libapparmor.so.1, libbsd.so.0, libcrypt.so.1, libgbm.so.1, libjpeg.so.62, libkmod.so.2,
# libsctp.so.1, libxxhash.so.0, libz.so.1) and of those (libGLdispatch.so.0; libmd.so.0; libdrm.so.2,
# libwayland-server.so.0, libexpat.so.1; libzstd.so.1, liblzma.so.5, libcrypto.so.3; libffi.so.8).
STRESS_NG_LIBS="libegl1 libgles2 libglvnd0 libjudydebian1 libapparmor1 libbsd0 libmd0 libcrypt1 libgbm1
  libdrm2 libwayland-server0 libexpat1 libffi8 libjpeg62-turbo libkmod2 libzstd1 liblzma5 libssl3 libsctp1
  libxxhash0 zlib1g"
# build/debian/stress-ng-lib: one directory of links to their shared objects, filled aside and moved in
# whole, so a half-filled one is never taken for done.
stress_ng_libs() {
  local dir="$deb_links/stress-ng-lib" pkg root lib
  rm -rf "$dir.tmp" && mkdir -p "$dir.tmp" || return 1
  for pkg in $STRESS_NG_LIBS; do
    root=$(unpack "$pkg") || return $?
    for lib in "$root"/lib/aarch64-linux-gnu/*.so.* "$root"/usr/lib/aarch64-linux-gnu/*.so.*; do
      [ ! -e "$lib" ] || ln -sfn "$lib" "$dir.tmp/${lib##*/}" || return 1
    done
  done
  rm -rf "$dir" && mv "$dir.tmp" "$dir"
}
# Called as an if condition, so set -e is off inside: every step checks its own status.
debian_setup() {
  if ! dpkg --print-foreign-architectures | grep -qx arm64; then
    echo "bootstrap: adding the arm64 architecture to dpkg"
    as_root dpkg --add-architecture arm64 || return 1
    apt_update || return 1
  fi
  [ -n "$(kernel_of linux-image-arm64)" ] || apt_update || return 1
  debian_guest || { apt_update && debian_guest; }
}
# apt-cache takes about a second per call here: resolve again only when the package lists changed.
debian_stamp="$deb_links/.resolved"
debian_current() {
  [ -f "$debian_stamp" ] && [ "$debian_stamp" -nt /var/lib/apt/lists ] && [ -e "$deb_links/arm64/vmlinuz" ] &&
    [ -e "$deb_links/rt-arm64/vmlinuz" ] && [ -e "$deb_links/busybox" ] && [ -e "$deb_links/rt-tests/usr/bin" ] &&
    [ -e "$deb_links/libnuma1/usr/lib" ] && [ -e "$deb_links/stress-ng/usr/bin/stress-ng" ] &&
    [ -e "$deb_links/stress-ng-lib/libz.so.1" ]
}
if [ "${BULKHEAD_NO_DEBIAN:-}" != 1 ] && ! debian_current; then
  # Without them only Linux partitions cannot be built: warn, and let everything else go on.
  if debian_setup; then
    touch "$debian_stamp"
  else
    echo "bootstrap: warning: could not fetch Debian's arm64 kernels and busybox; Linux partitions" \
      "(docs/linux.md) will not build until a later bootstrap succeeds" >&2
  fi
fi
