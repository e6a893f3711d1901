#!/bin/sh
# The stress plan of tests/system/configs/stressng_lat.yaml (test_stressng.py, under -icount): each
# phase named on the sampling port `phase` (bhport), where latvictim, sharing the core with both of
# Linux's vCPUs, files its lateness samples under the name. First `quiet` (Linux idle), then one
# phase per stressor, each with 2 instances (one a CPU) and bounded by bogo operations so that the
# run stays short (a few hundredths of a second of emulated time each: every emulated second costs about a
# minute of the host's), then `done`. It prints
#   BHSTRESS <phase> rc=<stress-ng's exit status>
phase() {
	name=$1
	shift
	bhport write phase "$name" > /dev/null || echo "BHSTRESS-LOG phase $name not written"
	if [ $# -gt 0 ]; then
		stress-ng --pathological -t 10 "$@" > /tmp/stress.out 2>&1
		echo "BHSTRESS $name rc=$?"
		grep -E " (fail|error): " /tmp/stress.out | sed 's/^/BHSTRESS-LOG /'
	fi
}
phase quiet
sleep 0.1
phase cpu-online --cpu-online 2 --cpu-online-ops 1
phase tlb-shootdown --tlb-shootdown 2 --tlb-shootdown-ops 50
phase opcode --opcode 2 --opcode-ops 5
phase priv-instr --priv-instr 2 --priv-instr-ops 100
phase timer --timer 2 --timer-freq 10000 --timer-ops 150
phase done
