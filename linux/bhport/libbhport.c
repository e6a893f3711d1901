/* libbhport (see bhport.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <linux/gpio.h>
#include <poll.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>
#include "bhport.h"

/* Where the tool puts the hypercall page in every Linux partition (tools/src/bulkhead/linux.py). */
#define CALL_PAGE_ADDRESS 0x0b001000ul
#define PAGE 4096ul

static volatile uint64_t *call_page;

int bhp_open(void)
{
	int fd = open("/dev/mem", O_RDWR | O_SYNC);

	if (fd < 0)
		return -1;
	void *p = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, CALL_PAGE_ADDRESS);
	close(fd);
	if (p == MAP_FAILED)
		return -1;
	call_page = p;
	if (call_page[BH_CALL_PAGE_ID / 8] != BH_CALL_PAGE_MAGIC) {
		munmap(p, PAGE);
		call_page = NULL;
		errno = ENODEV; /* not a Bulkhead partition */
		return -1;
	}
	return 0;
}

long bhp_call(unsigned long long fn, unsigned long long a1, unsigned long long a2,
	      unsigned long long a3, unsigned long long a4, unsigned long long a5,
	      unsigned long long out[8])
{
	/* On the stack and just written: mapped, so the hypervisor can translate it. */
	struct bh_mmio_call block = { .x = { fn, a1, a2, a3, a4, a5 } };

	if (!call_page)
		return BH_INVALID_CONFIG;
	__asm__ volatile("" ::: "memory"); /* the block is in memory before the trap */
	call_page[BH_CALL_PAGE_BLOCK / 8] = (uint64_t)(uintptr_t)&block;
	__asm__ volatile("" ::: "memory"); /* the hypervisor wrote the block meanwhile */
	if ((long)call_page[BH_CALL_PAGE_STATUS / 8] != BH_OK)
		return (long)call_page[BH_CALL_PAGE_STATUS / 8];
	if (out)
		memcpy(out, (const void *)block.x, sizeof(block.x));
	return (long)block.x[0];
}

/* The hypervisor writes into buffers through the process's page tables: touch them first so
 * they are mapped and writable (not the shared zero page). */
static void prefault(void *buf, unsigned size)
{
	volatile unsigned char *p = buf;

	for (unsigned i = 0; i < size; i += 512)
		p[i] = p[i];
	if (size)
		p[size - 1] = p[size - 1];
}

long bhp_port_open(const char *name, struct bh_port_info *info)
{
	struct bh_port_info local;
	unsigned long long out[8] = { 0 };
	size_t len = strlen(name);

	info = info ? info : &local;
	memset(info, 0, sizeof(*info));
	long rc = bhp_call(BH_HC_PORT_INFO, (uintptr_t)name, len, (uintptr_t)info, 0, 0, NULL);
	if (rc < 0)
		return rc;
	unsigned long long param = info->kind == BH_SAMPLING_PORT ? info->refresh_ns
								   : info->max_messages;
	unsigned long long fn = info->kind == BH_SAMPLING_PORT ? BH_HC_SAMPLING_PORT_CREATE
								: BH_HC_QUEUING_PORT_CREATE;
	rc = bhp_call(fn, (uintptr_t)name, len, info->max_message_size, info->direction, param, out);
	return rc == BH_NO_ACTION ? (long)out[1] : rc;
}

long bhp_sampling_write(int desc, const void *buf, unsigned size)
{
	return bhp_call(BH_HC_SAMPLING_WRITE, (unsigned)desc, (uintptr_t)buf, size, 0, 0, NULL);
}

long bhp_sampling_read(int desc, void *buf, unsigned size, int *valid)
{
	unsigned long long out[8] = { 0 };

	prefault(buf, size);
	long rc = bhp_call(BH_HC_SAMPLING_READ, (unsigned)desc, (uintptr_t)buf, size, 0, 0, out);
	if (valid)
		*valid = rc >= 0 && (out[1] & BH_MSG_VALID);
	return rc;
}

long bhp_queuing_send(int desc, const void *buf, unsigned size)
{
	return bhp_call(BH_HC_QUEUING_SEND, (unsigned)desc, (uintptr_t)buf, size, 0, 0, NULL);
}

long bhp_queuing_receive(int desc, void *buf, unsigned size)
{
	prefault(buf, size);
	return bhp_call(BH_HC_QUEUING_RECEIVE, (unsigned)desc, (uintptr_t)buf, size, 0, 0, NULL);
}

long bhp_port_ready(unsigned long long *ports, unsigned long long *doorbells)
{
	unsigned long long out[8] = { 0 };
	long rc = bhp_call(BH_HC_PORT_READY, 0, 0, 0, 0, 0, out);

	if (ports)
		*ports = out[1];
	if (doorbells)
		*doorbells = out[2];
	return rc;
}

long bhp_shm_open(const char *name, struct bhp_region *region)
{
	memset(region, 0, sizeof(*region));
	long rc = bhp_call(BH_HC_SHM_INFO, (uintptr_t)name, strlen(name), (uintptr_t)&region->info,
			   0, 0, NULL);
	if (rc < 0)
		return rc;
	region->id = (int)rc;
	int fd = open("/dev/mem", O_RDWR | O_SYNC);
	if (fd < 0)
		return BH_PERM_ERROR;
	int prot = PROT_READ | (region->info.rights & BH_SHM_WRITE ? PROT_WRITE : 0);
	void *p = mmap(NULL, region->info.size, prot, MAP_SHARED, fd,
		       (off_t)region->info.guest_address);
	close(fd);
	if (p == MAP_FAILED)
		return BH_PERM_ERROR;
	region->mem = p;
	return rc;
}

long bhp_shm_doorbell(int id)
{
	return bhp_call(BH_HC_SHM_DOORBELL, (unsigned)id, 0, 0, 0, 0, NULL);
}

/* The GPIO chip and offset of the event line named name, as the device tree names them. */
static int find_line(const char *name, unsigned *offset)
{
	glob_t chips;
	int found = -1;

	if (glob("/dev/gpiochip*", 0, NULL, &chips) != 0)
		return -1;
	for (size_t c = 0; c < chips.gl_pathc && found < 0; c++) {
		int fd = open(chips.gl_pathv[c], O_RDONLY);
		struct gpiochip_info chip;
		if (fd < 0)
			continue;
		if (ioctl(fd, GPIO_GET_CHIPINFO_IOCTL, &chip) == 0) {
			for (unsigned i = 0; i < chip.lines && found < 0; i++) {
				struct gpio_v2_line_info line = { .offset = i };
				if (ioctl(fd, GPIO_V2_GET_LINEINFO_IOCTL, &line) == 0 &&
				    strcmp(line.name, name) == 0) {
					*offset = i;
					found = fd;
				}
			}
		}
		if (found != fd)
			close(fd);
	}
	globfree(&chips);
	return found;
}

int bhp_wait_event(unsigned line, int timeout_ms)
{
	unsigned offset;
	int chip = find_line(line == BH_EVENT_LINE_PORT ? "bulkhead-port" : "bulkhead-doorbell",
			     &offset);

	if (chip < 0)
		return -1;
	struct gpio_v2_line_request req = { .offsets = { offset }, .num_lines = 1 };
	req.config.flags = GPIO_V2_LINE_FLAG_INPUT | GPIO_V2_LINE_FLAG_EDGE_RISING;
	strcpy(req.consumer, "bhport");
	int rc = ioctl(chip, GPIO_V2_GET_LINE_IOCTL, &req);
	close(chip);
	if (rc < 0)
		return -1;
	struct pollfd pfd = { .fd = req.fd, .events = POLLIN };
	struct gpio_v2_line_event event;
	rc = poll(&pfd, 1, timeout_ms);
	if (rc > 0)
		rc = read(req.fd, &event, sizeof(event)) == sizeof(event) ? 1 : -1;
	close(req.fd);
	return rc;
}

const char *bhp_error_name(long rc)
{
	static const char *const names[] = { "OK", "NO_ACTION", "UNKNOWN_HYPERCALL",
					     "INVALID_PARAM", "PERM_ERROR", "INVALID_CONFIG",
					     "INVALID_MODE", "NOT_AVAILABLE", "OP_NOT_ALLOWED" };

	return rc <= 0 && -rc < (long)(sizeof(names) / sizeof(names[0])) ? names[-rc] : "?";
}
