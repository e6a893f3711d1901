#!/bin/sh
# /init of the Linux system tests beside a real-time partition (tests/system/configs/linux_rt.yaml).
/bin/busybox --install -s
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mkdir -p /dev/shm && mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs /dev/shm
# Drivers for the passed-through virtio-mmio device (Debian builds them as modules).
for module in virtio_mmio virtio-rng; do
	modprobe "$module" || echo "BHLINUX modprobe $module failed"
done
echo "BHLINUX nproc=$(nproc)"
exec setsid cttyhack sh
