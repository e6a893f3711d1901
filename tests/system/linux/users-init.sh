#!/bin/sh
# /init of tests/system/configs/linux_users.yaml: Linux as users run it. modprobe loads the
# passed-through virtio-net device's driver with the modules it needs (modules.dep from the
# tool's depmod); /dev/shm is a tmpfs as on any distribution.
/bin/busybox --install -s
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mkdir -p /dev/shm /dev/pts && mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs /dev/shm
mount -t devpts devpts /dev/pts
modprobe virtio_mmio && modprobe virtio_net || echo "BHLINUX modprobe failed"
echo "BHLINUX online=$(cat /sys/devices/system/cpu/online)"  # nproc counts the CPUs init may use: not the isolated one
exec setsid cttyhack sh
