/* attack_device: stores to devices it was not given: the hypervisor's UART, the GIC
 * distributor and a virtio-mmio slot. Each store must be stopped at stage 2. */
#include "bhtest.h"

#define UART_IPA     0x09000000ul
#define GICD_IPA     0x08000000ul
#define VIRTIO0_IPA  0x0a000000ul

static void attack(unsigned long addr, const char *what)
{
	bh_printf("attack_device: writing to 0x%08lx (%s)\n", addr, what);
	bh_write32(addr, 0x41);
	bh_test_report("attack_device_continued", 1, "");
}

int main(unsigned vcpu, unsigned boot_kind, unsigned restarts)
{
	(void)vcpu;
	(void)boot_kind;
	(void)restarts;
	attack(UART_IPA, "UART");
	attack(GICD_IPA, "GIC distributor");
	attack(VIRTIO0_IPA, "virtio-mmio slot");
	return 0;
}
