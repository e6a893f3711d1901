/* lbench: the /init of the Linux benchmark system (bench/linux.yaml, bench/linux.py), the same
 * initramfs booted bare on QEMU and in a Bulkhead partition, under -icount shift=0.
 *
 * Under -icount shift=0 one instruction is one nanosecond of virtual time, and the counter
 * (CNTVCT_EL0, readable at EL0, 62.5 MHz) ticks every 16 ns. Times are taken with stamps:
 * 16 back-to-back counter reads give the exact instruction time of the first
 * (partitions/bench/common/bench.h). CNTVOFF_EL2 is 0 in both cases, so the counter is the
 * virtual time since the machine started.
 *
 * Output, one line each, on the console:
 *   BHBOOT <counter ns> <CLOCK_BOOTTIME ns>      first thing init does
 *   LBENCH <name> <total ns> <operations>          a timed loop
 *   BENCH-CHECK <kernel> <result>                  a CPU kernel's result (bare and partition agree)
 *   BENCH-DONE                                     then init powers the machine off (PSCI)
 * Everything runs pinned to CPU 0; the other CPU idles. */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/reboot.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "stamp.h" /* exact instruction times, as every benchmark program takes them */

static void result(const char *name, unsigned long long ns, unsigned long ops)
{
	printf("LBENCH %s %llu %lu\n", name, ns, ops);
	fflush(stdout);
}

static void die(const char *what)
{
	printf("LBENCH-ERROR %s: %s\n", what, strerror(errno));
	fflush(stdout);
	exit(1);
}

/* --- CPU kernels (as partitions/bench/cpu, run longer: several scheduler ticks each) ----------- */

#define NQ_N 9u
#define NQ_REPS 100u
#define SUM_WORDS 16384u /* 64 KiB */
#define SUM_REPS 512u
#define MM_N 32u
#define MM_REPS 200u

#include "cpu_kernels.h"

static void cpu(const char *kernel, unsigned long long (*fn)(void))
{
	char name[64];
	struct bench_reads before, after;

	BENCH_READ16(before);
	unsigned long long check = fn();
	BENCH_READ16(after);
	snprintf(name, sizeof(name), "cpu_%s", kernel);
	result(name, bench_stamp_decode(&after) - bench_stamp_decode(&before), 1);
	printf("BENCH-CHECK %s %llu\n", kernel, check);
	fflush(stdout);
}

/* --- lmbench-like latencies ------------------------------------------------------------------ */

#define SYSCALL_REPS 20000ul
#define PIPE_REPS 2000ul
#define FORK_REPS 100ul

/* lat_syscall null: getppid(), which the C library does not cache. */
static void null_syscall(void)
{
	struct bench_reads before, after;

	BENCH_READ16(before);
	for (unsigned long i = 0; i < SYSCALL_REPS; i++)
		syscall(SYS_getppid);
	BENCH_READ16(after);
	result("null_syscall", bench_stamp_decode(&after) - bench_stamp_decode(&before), SYSCALL_REPS);
}

static void xwrite(int fd, char *c)
{
	if (write(fd, c, 1) != 1)
		die("write");
}

static void xread(int fd, char *c)
{
	if (read(fd, c, 1) != 1)
		die("read");
}

/* One process passes a byte through a pipe to itself: the pipe work of one context switch of
 * the ping-pong below, without the switch (lat_ctx's overhead). */
static void pipe_self(void)
{
	int p[2];
	char c = 'x';
	struct bench_reads before, after;

	if (pipe(p))
		die("pipe");
	BENCH_READ16(before);
	for (unsigned long i = 0; i < PIPE_REPS; i++) {
		xwrite(p[1], &c);
		xread(p[0], &c);
	}
	BENCH_READ16(after);
	result("pipe_self", bench_stamp_decode(&after) - bench_stamp_decode(&before), PIPE_REPS);
	close(p[0]);
	close(p[1]);
}

/* lat_pipe: a byte goes to a second process and back over two pipes, both processes on one
 * CPU, so every round trip is two context switches. */
static void pipe_roundtrip(void)
{
	int there[2], back[2];
	char c = 'x';
	struct bench_reads before, after;

	if (pipe(there) || pipe(back))
		die("pipe");
	pid_t child = fork();
	if (child < 0)
		die("fork");
	if (child == 0) {
		for (unsigned long i = 0; i < PIPE_REPS + 1; i++) {
			xread(there[0], &c);
			xwrite(back[1], &c);
		}
		_exit(0);
	}
	xwrite(there[1], &c); /* one round trip first: the child is up and waiting */
	xread(back[0], &c);
	BENCH_READ16(before);
	for (unsigned long i = 0; i < PIPE_REPS; i++) {
		xwrite(there[1], &c);
		xread(back[0], &c);
	}
	BENCH_READ16(after);
	result("pipe_roundtrip", bench_stamp_decode(&after) - bench_stamp_decode(&before), PIPE_REPS);
	waitpid(child, NULL, 0);
	close(there[0]);
	close(there[1]);
	close(back[0]);
	close(back[1]);
}

/* lat_proc fork and exec: fork, the child exits at once or execs /bin/nop, the parent waits. */
static void fork_loop(const char *name, int exec)
{
	static char *const argv[] = { "/bin/nop", NULL }, *const envp[] = { NULL };
	struct bench_reads before, after;

	BENCH_READ16(before);
	for (unsigned long i = 0; i < FORK_REPS; i++) {
		pid_t child = fork();

		if (child < 0)
			die("fork");
		if (child == 0) {
			if (exec)
				execve(argv[0], argv, envp);
			_exit(exec ? 127 : 0);
		}
		int status;

		if (waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status))
			die(name);
	}
	BENCH_READ16(after);
	result(name, bench_stamp_decode(&after) - bench_stamp_decode(&before), FORK_REPS);
}

int main(void)
{
	struct bench_reads boot;
	struct timespec up;

	BENCH_READ16(boot);
	clock_gettime(CLOCK_BOOTTIME, &up);
	printf("BHBOOT %llu %llu\n", bench_stamp_decode(&boot),
	       (unsigned long long)up.tv_sec * 1000000000ull + (unsigned long long)up.tv_nsec);
	fflush(stdout);

	cpu_set_t one;

	CPU_ZERO(&one);
	CPU_SET(0, &one);
	if (sched_setaffinity(0, sizeof(one), &one))
		die("sched_setaffinity");
	/* Nothing seeds the kernel's random number generator here (no entropy device, no seed in
	 * the device tree under -icount), and until it is seeded every system call pays for a
	 * ChaCha20 block (the random kernel stack offset): about 9,400 instructions instead of ~450.
	 * A blocking getrandom() makes the kernel seed it from timer jitter, as a machine with
	 * an entropy source would be at boot. */
	char seed[16];
	struct bench_reads before, after;

	BENCH_READ16(before);
	if (getrandom(seed, sizeof(seed), 0) != (ssize_t)sizeof(seed))
		die("getrandom");
	BENCH_READ16(after);
	result("crng_seed", bench_stamp_decode(&after) - bench_stamp_decode(&before), 1);

	/* Let what the boot left behind settle (idle time costs no instructions under icount). */
	struct timespec settle = { 0, 200000000 };

	nanosleep(&settle, NULL);

	init_data();
	cpu("nqueens", kernel_nqueens);
	cpu("arraysum", kernel_arraysum);
	cpu("matmul", kernel_matmul);

	null_syscall();
	pipe_self();
	pipe_roundtrip();
	fork_loop("fork_exit", 0);
	fork_loop("fork_exec", 1);

	printf("BENCH-DONE\n");
	fflush(stdout);
	sync();
	reboot(RB_POWER_OFF);
	for (;;)
		pause();
}
