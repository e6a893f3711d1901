#!/bin/sh
# cpu-times.sh WALL_TAG CPU_TAG: one busy loop per CPU for a second, then "WALL_TAG wall START END"
# (/proc/uptime) and per CPU "CPU_TAG cpuN user U system S idle I steal T other O", the USER_HZ
# ticks /proc/stat counted meanwhile (other: nice, iowait, irq and softirq). Used by the best-effort Linux test (be-init.sh) and bench
# (bench/be_linux/init.sh), both as /bin/cpu-times.sh.
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
echo "$1 wall $start $end"
cpu_tag=$2
# /proc/stat: cpuN user nice system idle iowait irq softirq steal guest guest_nice
paste -d' ' /tmp/before /tmp/after | while read -r c u n s i w q sq st rest; do
	set -- $rest
	shift 2   # guest guest_nice of the first line
	echo "$cpu_tag $c user $(($2 - u)) system $(($4 - s)) idle $(($5 - i)) steal $(($9 - st))" \
		"other $(($3 - n + $6 - w + $7 - q + $8 - sq))"
done
