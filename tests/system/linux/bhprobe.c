/* bhprobe: hypercall-page calls from Linux user space with buffers an attacker chooses, for
 * tests/system/test_arch_linux.py. Each command prints one line "NAME rc=RESULT".
 *
 *   bhprobe kread ADDR      BH_HC_PORT_INFO whose name is read from ADDR (e.g. kernel text):
 *                           INVALID_CONFIG means the hypervisor read it, INVALID_PARAM not.
 *   bhprobe alias PORT      the process's own page through the kernel's linear map: the name
 *                           of PORT read from there (PORT_INFO), then the port's information
 *                           written there. Its own addresses work, the kernel's must not.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "bhport.h"

#define PAGE 4096ul
#define PAGEMAP_PRESENT (1ull << 63)
#define PAGEMAP_PFN ((1ull << 55) - 1)

static void report(const char *what, long rc)
{
	printf("%s rc=%s\n", what, rc >= 0 ? "OK" : bhp_error_name(rc));
}

/* The physical address of a mapped page of this process (root: /proc/self/pagemap). */
static uint64_t phys_of(const void *p)
{
	uint64_t entry = 0;
	int fd = open("/proc/self/pagemap", O_RDONLY);

	if (fd < 0 || pread(fd, &entry, 8, (off_t)((uintptr_t)p / PAGE * 8)) != 8)
		exit(3);
	close(fd);
	if (!(entry & PAGEMAP_PRESENT) || !(entry & PAGEMAP_PFN))
		exit(3);
	return (entry & PAGEMAP_PFN) * PAGE + (uintptr_t)p % PAGE;
}

/* arm64 with 48-bit VAs and no KASLR seed (none in the generated device tree): the linear map
 * starts at 0xffff000000000000 with the RAM base rounded down to 1 GiB. */
static uint64_t linear_alias(const void *p)
{
	return 0xffff000000000000ull + (phys_of(p) - 0x40000000ull);
}

static int alias(const char *port)
{
	static char page[PAGE] __attribute__((aligned(4096)));
	struct bh_port_info *info = (struct bh_port_info *)(page + 256);
	size_t len = strlen(port);

	memcpy(page, port, len);
	memset(info, 0, sizeof(*info));
	report("own", bhp_call(BH_HC_PORT_INFO, (uintptr_t)page, len, (uintptr_t)info, 0, 0, NULL));
	uint64_t k = linear_alias(page);
	printf("alias 0x%llx\n", (unsigned long long)k);
	memset(info, 0, sizeof(*info));
	report("kernel-name", bhp_call(BH_HC_PORT_INFO, k, len, (uintptr_t)info, 0, 0, NULL));
	report("kernel-buf", bhp_call(BH_HC_PORT_INFO, (uintptr_t)page, len, k + 256, 0, 0, NULL));
	printf("written-through-alias %s\n", info->max_message_size ? "yes" : "no");
	return 0;
}

int main(int argc, char **argv)
{
	if (argc != 3 || bhp_open() < 0) {
		fprintf(stderr, "usage: bhprobe kread ADDR | alias PORT (as root)\n");
		return 2;
	}
	if (!strcmp(argv[1], "kread")) {
		report("kread", bhp_call(BH_HC_PORT_INFO, strtoull(argv[2], NULL, 0), 8, 0, 0, 0, NULL));
		return 0;
	}
	if (!strcmp(argv[1], "alias"))
		return alias(argv[2]);
	return 2;
}
