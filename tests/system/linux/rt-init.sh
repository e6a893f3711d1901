#!/bin/sh
# /init of the Linux system tests beside a real-time partition (tests/system/configs/linux_rt.yaml).
/bin/busybox --install -s
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
# Drivers for the passed-through virtio-mmio device (Debian builds them as modules).
for module in $(find /lib/modules -name '*.ko'); do
	insmod "$module" || echo "BHLINUX insmod $module failed"
done
echo "BHLINUX nproc=$(nproc)"
exec setsid cttyhack sh
