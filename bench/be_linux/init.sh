#!/bin/sh
# /init of bench/be_linux.yaml (make bench, bench/be_linux.py): one busy loop per CPU for a
# second, then each CPU's user, system, idle and stolen time over it (cpu-times.sh).
/bin/busybox --install -s
mount -t proc proc /proc
mount -t devtmpfs devtmpfs /dev
sh /bin/cpu-times.sh BEBENCH BEBENCH-CPU
echo "BENCH-DONE"
exec sh
