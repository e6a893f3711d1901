#!/bin/sh
# /init of bench/be_linux.yaml (make bench, bench/be_linux.py): one busy loop per CPU for a
# second, then each CPU's user, system, idle and stolen time over it (USER_HZ ticks, /proc/stat).
/bin/busybox --install -s
mount -t proc proc /proc
mount -t devtmpfs devtmpfs /dev
grep '^cpu[0-9]' /proc/stat > /tmp/before
start=$(cut -d' ' -f1 /proc/uptime)
cpu=0
while [ $cpu -lt "$(nproc)" ]; do
	taskset -c $cpu sh -c 'while :; do :; done' &
	cpu=$((cpu + 1))
done
sleep 1
kill $(jobs -p)
end=$(cut -d' ' -f1 /proc/uptime)
grep '^cpu[0-9]' /proc/stat > /tmp/after
echo "BEBENCH wall $start $end"
# cpuN user nice system idle iowait irq softirq steal ...
paste -d' ' /tmp/before /tmp/after | while read -r c u n s i w q sq st rest; do
	set -- $rest
	shift 2
	echo "BEBENCH-CPU $c user $(($2 - u)) system $(($4 - s)) idle $(($5 - i)) steal $(($9 - st))"
done
echo "BENCH-DONE"
exec sh
