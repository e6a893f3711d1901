/* The shared region `bulk` of the Linux shared-memory benchmark (bench/linux_shm.yaml), as both
 * sides see it: shmpeer.c here (a real-time partition) and linux/bench/shmbench.c (Linux user
 * space, through /dev/mem). Freestanding: no library calls. */
#ifndef SHMBENCH_H
#define SHMBENCH_H

#define SHM_SIZE 0x11000u        /* the region: a header page and the data area */
#define SHM_DATA_OFFSET 0x1000u  /* the data area: 64 KiB */
#define SHM_DATA_MAX 0x10000u

/* Header: 64-bit words at the start of the region. */
#define SHM_CMD 0          /* Linux: what to do on the next doorbell (SHM_PING...) */
#define SHM_SEQ 1          /* Linux: the request's sequence number */
#define SHM_LEN 2          /* Linux: bytes of the data area to checksum (SHM_SUM) */
#define SHM_ACK 3          /* peer: the sequence number it answered, before ringing back */
#define SHM_SUM_RESULT 4   /* peer: shm_checksum of the data (SHM_SUM) */
#define SHM_SUM_NS 5       /* peer: instructions the checksum took (stamps) */
#define SHM_PEER_READY 6   /* peer: SHM_READY_MAGIC once it waits for doorbells */
#define SHM_READY_MAGIC 0x5944414552524550ull /* "PEERREADY" */

#define SHM_PING 1         /* ring back at once */
#define SHM_PING_STAMP 2   /* ring back, then store the wake and ring stamps in slot seq */
#define SHM_SUM 3          /* checksum SHM_LEN bytes, store the result, ring back */

/* SHM_PING_STAMP: slot n is 2 words at SHM_STAMP_OFFSET + 16 n: the exact counter time (ns)
 * at which the peer's idle hypercall returned, and the one just before it rang back. */
#define SHM_STAMP_OFFSET SHM_DATA_OFFSET
#define SHM_STAMP_SLOTS (SHM_DATA_MAX / 16u)

/* FNV-1a over 64-bit words: order-sensitive, so a stale or misplaced word changes it. */
static inline unsigned long long shm_checksum(const unsigned long long *w, unsigned long long n)
{
	unsigned long long h = 0xcbf29ce484222325ull;

	for (unsigned long long i = 0; i < n; i++)
		h = (h ^ w[i]) * 0x100000001b3ull;
	return h;
}

#endif
