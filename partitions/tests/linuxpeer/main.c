/* linuxpeer: the real-time side of the Linux port tests (tests/system/configs/linux_ports.yaml).
 * Every 10 ms it publishes "temp=N" on the sampling port `sensor`, answers each message X on the
 * queuing port `cmd` with "ack X" on `reply`, and answers a doorbell on region `shared` by
 * writing "seen:" and the region's first 8 bytes at offset 64, then ringing back. */
#include "bulkhead/bulkhead.h"

#define PERIOD_NS 10000000ull
#define SHARED_GUEST 0x50000000ul

static void must(long rc, const char *what)
{
	if (rc < 0) {
		bh_printf("linuxpeer: %s failed: %ld\n", what, rc);
		bh_halt_self();
	}
}

static void answer_commands(int cmd, int reply)
{
	char in[64], out[80];
	long n;

	while ((n = bh_queuing_receive(cmd, in, sizeof(in) - 1, 0)) >= 0) {
		in[n] = 0;
		int len = bh_snprintf(out, sizeof(out), "ack %s", in);
		must(bh_queuing_send(reply, out, (unsigned)len), "send reply");
	}
}

static void answer_doorbell(unsigned region)
{
	volatile char *shm = (volatile char *)SHARED_GUEST;
	unsigned long long ports, rung = 0;

	if (bh_port_ready(&ports, &rung) < 0 || !(rung & (1ull << region)))
		return;
	const char seen[] = "seen:";
	for (unsigned i = 0; i < 5; i++)
		shm[64 + i] = seen[i];
	for (unsigned i = 0; i < 8; i++)
		shm[69 + i] = shm[i];
	must(bh_shm_doorbell(region), "doorbell");
}

int main(unsigned vcpu, unsigned boot_kind, unsigned restarts)
{
	int sensor, cmd, reply;
	char msg[32];
	(void)vcpu;
	(void)boot_kind;
	(void)restarts;
	must(bh_sampling_port_create("sensor", 32, BH_SOURCE_PORT, 100000000ull, &sensor), "sensor");
	must(bh_queuing_port_create("cmd", 64, BH_DESTINATION_PORT, 8, &cmd), "cmd");
	must(bh_queuing_port_create("reply", 80, BH_SOURCE_PORT, 8, &reply), "reply");
	long region = bh_shm_info("shared", &(struct bh_shm_info){ 0 });
	must(region, "shared");
	bh_printf("linuxpeer: ready\n");
	unsigned long long next = bh_now_ns();
	for (unsigned long n = 0;; n++) {
		int len = bh_snprintf(msg, sizeof(msg), "temp=%lu", n);
		must(bh_sampling_write(sensor, msg, (unsigned)len), "publish");
		answer_commands(cmd, reply);
		answer_doorbell((unsigned)region);
		next += PERIOD_NS;
		bh_sleep_until_ns(next);
	}
}
