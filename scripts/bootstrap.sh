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
have make                  || need_apt+=(make)
have gcc                   || need_apt+=(gcc libc6-dev)
python3 -c 'import venv, ensurepip' >/dev/null 2>&1 || need_apt+=(python3-venv)

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
if [ ! -f "$stamp" ] || [ "$top/tools/pyproject.toml" -nt "$stamp" ]; then
  echo "bootstrap: installing the bulkhead tool into $venv"
  "$venv/bin/pip" install -q --disable-pip-version-check -e "$top/tools[test]"
  touch "$stamp"
fi
