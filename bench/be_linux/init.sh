#!/bin/sh
# /init of bench/be_linux.yaml: a parallel CPU benchmark, 8 shell processes counting to WORK each;
# prints the virtual time they took together (make bench, bench/be_linux.py).
/bin/busybox --install -s
mount -t proc proc /proc
mount -t devtmpfs devtmpfs /dev
WORK=10000
grep '^cpu[0-9]' /proc/stat > /tmp/before
start=$(cut -d' ' -f1 /proc/uptime)
for n in 1 2 3 4 5 6 7 8; do
	sh -c "i=0; while [ \$i -lt $WORK ]; do i=\$((i + 1)); done; echo BEBENCH-WORKER \$i" &
done
wait
end=$(cut -d' ' -f1 /proc/uptime)
echo "BEBENCH cpus $(nproc) processes 8 work $WORK start $start end $end"
grep '^cpu[0-9]' /proc/stat > /tmp/after
# Each CPU's share (USER_HZ ticks): cpuN user nice system idle iowait irq softirq steal ...
paste -d' ' /tmp/before /tmp/after | while read -r c u n s i w q sq st rest; do
	set -- $rest
	shift 2
	echo "BEBENCH-CPU $c user $(($2 - u)) system $(($4 - s)) idle $(($5 - i)) steal $(($9 - st))"
done
echo "BENCH-DONE"
exec sh
