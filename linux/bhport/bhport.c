/* bhport: Bulkhead ports and shared memory from a Linux shell (docs/ports.md, "From Linux").
 *
 *   bhport read PORT            print the sampling message, and whether it is still valid
 *   bhport write PORT TEXT      overwrite the sampling message
 *   bhport send PORT TEXT       queue a message
 *   bhport recv PORT            take the oldest queued message (exit 2 if there is none)
 *   bhport wait port|doorbell [MS]   wait for a notification (exit 2 on timeout)
 *   bhport ready                print the ready-port and rung-doorbell bitmaps
 *   bhport shm NAME             print the region's address, size, rights
 *   bhport peek NAME OFFSET LEN print LEN bytes of the region as text
 *   bhport poke NAME OFFSET TEXT   write TEXT into the region
 *   bhport ring NAME            ring the region's doorbell
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "bhport.h"

#define MESSAGE_MAX 4096

static int fail(const char *what, long rc)
{
	fprintf(stderr, "bhport: %s: %s (%ld)\n", what, bhp_error_name(rc), rc);
	return 1;
}

static void print_message(const char *buf, long len)
{
	fwrite(buf, 1, (size_t)len, stdout);
	putchar('\n');
}

static int port_cmd(const char *cmd, const char *name, const char *text)
{
	static char buf[MESSAGE_MAX];
	int valid;
	long desc = bhp_port_open(name, NULL), rc;

	if (desc < 0)
		return fail(name, desc);
	if (!strcmp(cmd, "read")) {
		rc = bhp_sampling_read((int)desc, buf, sizeof(buf), &valid);
		if (rc == BH_NO_ACTION) {
			puts("(never written)");
			return 2;
		}
		if (rc < 0)
			return fail(name, rc);
		printf("%s: ", valid ? "valid" : "stale");
		print_message(buf, rc);
		return 0;
	}
	if (!strcmp(cmd, "recv")) {
		rc = bhp_queuing_receive((int)desc, buf, sizeof(buf));
		if (rc == BH_NOT_AVAILABLE)
			return 2;
		if (rc < 0)
			return fail(name, rc);
		print_message(buf, rc);
		return 0;
	}
	rc = !strcmp(cmd, "write") ? bhp_sampling_write((int)desc, text, (unsigned)strlen(text))
				   : bhp_queuing_send((int)desc, text, (unsigned)strlen(text));
	return rc < 0 ? fail(name, rc) : 0;
}

static int shm_cmd(int argc, char **argv)
{
	struct bhp_region r;
	long rc = bhp_shm_open(argv[2], &r);

	if (rc < 0)
		return fail(argv[2], rc);
	if (!strcmp(argv[1], "shm")) {
		printf("%s: id %d, address 0x%llx, size %llu, rights %s%s%s, doorbell %s\n", argv[2],
		       r.id, r.info.guest_address, r.info.size, r.info.rights & BH_SHM_READ ? "r" : "",
		       r.info.rights & BH_SHM_WRITE ? "w" : "", r.info.rights & BH_SHM_EXEC ? "x" : "",
		       r.info.doorbell ? "yes" : "no");
		return 0;
	}
	if (!strcmp(argv[1], "ring")) {
		rc = bhp_shm_doorbell(r.id);
		return rc < 0 ? fail(argv[2], rc) : 0;
	}
	if (argc < 5)
		return fail("usage: peek NAME OFFSET LEN | poke NAME OFFSET TEXT", BH_INVALID_PARAM);
	unsigned long off = strtoul(argv[3], NULL, 0);
	unsigned long len = !strcmp(argv[1], "peek") ? strtoul(argv[4], NULL, 0) : strlen(argv[4]);
	if (off > r.info.size || len > r.info.size - off)
		return fail("offset and length must lie inside the region", BH_INVALID_PARAM);
	/* Byte by byte: /dev/mem maps it as device memory, where unaligned words fault. */
	for (unsigned long i = 0; i < len; i++) {
		if (!strcmp(argv[1], "peek"))
			putchar(r.mem[off + i] ? r.mem[off + i] : '.');
		else
			r.mem[off + i] = (unsigned char)argv[4][i];
	}
	if (!strcmp(argv[1], "peek"))
		putchar('\n');
	return 0;
}

static int usage(void)
{
	fputs("usage: bhport read|recv PORT | write|send PORT TEXT | wait port|doorbell [MS] | "
	      "ready | shm|ring NAME | peek NAME OFFSET LEN | poke NAME OFFSET TEXT\n", stderr);
	return 64;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return usage();
	if (bhp_open() != 0) {
		perror("bhport: cannot map the hypercall page from /dev/mem");
		return 1;
	}
	const char *cmd = argv[1];
	if (!strcmp(cmd, "ready")) {
		unsigned long long ports, rung;
		long rc = bhp_port_ready(&ports, &rung);
		if (rc < 0)
			return fail("ready", rc);
		printf("ports 0x%llx doorbells 0x%llx\n", ports, rung);
		return 0;
	}
	if (!strcmp(cmd, "wait") && argc >= 3) {
		unsigned line = !strcmp(argv[2], "doorbell") ? BH_EVENT_LINE_DOORBELL : BH_EVENT_LINE_PORT;
		int rc = bhp_wait_event(line, argc >= 4 ? atoi(argv[3]) : -1);
		if (rc < 0)
			perror("bhport: wait");
		return rc < 0 ? 1 : rc == 0 ? 2 : 0;
	}
	if ((!strcmp(cmd, "read") || !strcmp(cmd, "recv")) && argc == 3)
		return port_cmd(cmd, argv[2], NULL);
	if ((!strcmp(cmd, "write") || !strcmp(cmd, "send")) && argc == 4)
		return port_cmd(cmd, argv[2], argv[3]);
	if ((!strcmp(cmd, "shm") || !strcmp(cmd, "ring") || !strcmp(cmd, "peek") ||
	     !strcmp(cmd, "poke")) && argc >= 3)
		return shm_cmd(argc, argv);
	return usage();
}
