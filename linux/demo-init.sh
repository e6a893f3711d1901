#!/bin/sh
# /init of the demo's Linux partition: a busybox system on the initramfs the tool builds.
/bin/busybox --install -s
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mkdir -p /dev/shm && mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs /dev/shm
mkdir -p /tmp && mount -t tmpfs tmpfs /tmp
# Drivers for the passed-through virtio-mmio device (Debian builds them as modules; the
# description lists them). modprobe loads the modules each one needs first (modules.dep).
modprobe virtio_mmio
modprobe virtio-rng
hostname bulkhead-linux
cat <<'BANNER'

This Linux runs unmodified in a Bulkhead partition on cores 2 and 3. The real-time partitions
on core 0 keep printing beside it. Ctrl-A three times moves console input to the next
partition that takes it; Ctrl-] then x quits QEMU.

BANNER
exec setsid cttyhack sh -l
