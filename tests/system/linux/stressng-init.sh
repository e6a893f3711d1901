#!/bin/sh
# /init of the stress-ng system tests (tests/system/test_stressng.py): Debian's stress-ng in a Linux
# partition beside real-time partitions. Sets up what stress-ng's stressors expect of a
# distribution (/dev/shm, /dev/pts, /tmp on a tmpfs), loads the driver of a passed-through
# virtio-rng device when the partition has one, then runs the description's stress plan,
# /bin/stress-plan (tests/system/linux/stressng-*.sh), and prints BHSTRESS-DONE after it.
/bin/busybox --install -s
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mkdir -p /dev/shm /dev/pts && mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs /dev/shm
mount -t devpts devpts /dev/pts
mount -t tmpfs -o mode=1777 tmpfs /tmp
if ls /proc/device-tree | grep -q "^virtio_mmio@"; then
	modprobe virtio_mmio && modprobe virtio-rng || echo "BHLINUX modprobe failed"
fi
echo "BHLINUX online=$(cat /sys/devices/system/cpu/online)"
cd /tmp && sh /bin/stress-plan
echo "BHSTRESS-DONE"
exec setsid cttyhack sh
