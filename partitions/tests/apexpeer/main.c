/* apexpeer: the other end of the APEX test's queuing ports (configs/apex.yaml), a plain
 * libbhpart partition on its own core. It takes one command at a time from cmd_in (blocked
 * in BH_HC_QUEUING_RECEIVE_WAIT, so it reads nothing while it works), waits the command's
 * delay, and for an echo sends a 100-byte answer on rsp_out stamped with the time of the send. */
#include "bhtest.h"

#include "../apextest/peer_protocol.h"

static void answer(int rsp, const struct peer_cmd *c)
{
	struct peer_answer a = { 0 };

	a.seq = c->seq;
	unsigned long long now = bh_now_ns();

	a.sent_lo = (unsigned)now;
	a.sent_hi = (unsigned)(now >> 32);
	if (bh_queuing_send(rsp, &a, sizeof(a)) != BH_OK)
		bh_printf("apexpeer: answer %u not sent\n", (unsigned)c->seq);
}

int main(unsigned vcpu, unsigned boot_kind, unsigned restarts)
{
	int cmd = (int)bh_port_open("cmd_in"), rsp = (int)bh_port_open("rsp_out");
	struct peer_cmd c;

	(void)vcpu;
	(void)boot_kind;
	(void)restarts;
	if (cmd < 0 || rsp < 0) {
		bh_printf("apexpeer: ports not opened (%d, %d)\n", cmd, rsp);
		return 0;
	}
	for (;;) {
		long n = bh_queuing_receive_wait(cmd, &c, sizeof(c), 0);

		if (n < 0) {
			bh_irq_poll(); /* an interrupt ended the wait: take it */
			continue;
		}
		if (c.delay_ns)
			bh_sleep_ns(c.delay_ns);
		if (c.op == PEER_ECHO)
			answer(rsp, &c);
	}
}
