#!/bin/sh
# /init of the linux_basic system test (tests/system/configs/linux_basic.yaml), run by busybox sh:
# /bin/sh is the tool's link to /bin/busybox; the other applets are installed here.
/bin/busybox --install -s
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mkdir -p /dev/shm && mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs /dev/shm
echo "BHLINUX nproc=$(nproc)"
# A shell on the console (cttyhack gives it the console as controlling terminal, so Ctrl-C works).
exec setsid cttyhack sh
