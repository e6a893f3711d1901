/* nosysadmin: runs a program as root without CAP_SYS_ADMIN, dropped from the bounding set so
 * that the exec does not give it back, for tests/system/linux/stressng-survive.sh: as root,
 * stress-ng's madvise stressor poisons pages of its own (MADV_HWPOISON, "Memory failure: ...
 * Recovered" in Linux's log) and now and then dies of it (rc 2), Linux's own business, not the
 * hypervisor's. Without the capability it gives every other advice.
 *
 *   nosysadmin PROGRAM [ARG...]
 */
#include <linux/capability.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: nosysadmin PROGRAM [ARG...]\n");
		return 2;
	}
	if (prctl(PR_CAPBSET_DROP, CAP_SYS_ADMIN, 0, 0, 0) != 0) {
		perror("nosysadmin: PR_CAPBSET_DROP");
		return 2;
	}
	execvp(argv[1], argv + 1);
	perror("nosysadmin: exec");
	return 127;
}
