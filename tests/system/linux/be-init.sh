#!/bin/sh
# /init of the be_linux system test (tests/system/configs/be_linux.yaml): Linux SMP with CPU 0 on
# a dedicated core and CPUs 1-3 best-effort. One busy loop per CPU for a second of wall time, then
# each CPU's times from /proc/stat (user, system, idle, steal; in USER_HZ ticks) and the wall time
# they cover, so the test can check that the best-effort CPUs ran and were told what was stolen.
/bin/busybox --install -s
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
for module in $(find /lib/modules -name '*.ko'); do
	insmod "$module" || echo "BHLINUX insmod $module failed"
done
echo "BHLINUX nproc=$(nproc)"
dmesg | grep -i "stolen time" | sed 's/^/BHDMESG /'
sh /bin/cpu-times.sh BHBE BHBE
# The passed-through device's interrupt to CPU 2, a best-effort vCPU: it must follow that vCPU
# to whichever core runs it.
irq=$(grep virtio0 /proc/interrupts | cut -d: -f1 | tr -d ' ')
echo 4 > /proc/irq/$irq/smp_affinity
echo "BHBE hwrng $(head -c 4096 /dev/hwrng | wc -c) bytes"
grep virtio0 /proc/interrupts | sed 's/^/BHBE irq /'
echo "BHLINUX-BE-DONE"
exec setsid cttyhack sh
