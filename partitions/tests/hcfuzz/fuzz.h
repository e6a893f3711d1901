/* hcfuzz: shared declarations of the hypercall fuzzer (fuzzer.c), its victims (victim.c) and
 * the entry (main.c). See main.c for the system it runs in. */
#ifndef HCFUZZ_FUZZ_H
#define HCFUZZ_FUZZ_H

#include "bhtest.h"

typedef unsigned long long u64;

/* Partition ids in tests/system/configs/campaign_fuzz*.yaml. */
#define FUZZER 0u
#define VICTIM 1u
#define NEIGHBOUR 2u
#define FUZZ_VCPUS 2u

/* The fuzzer's memory map (its configuration): RAM rwx, a read-only area right after it (a
 * read may cross from one into the other, a write may not), a gap, and two shared regions. */
#define RAM_BASE 0x40000000ull
#define RAM_END 0x40400000ull
#define RO_BASE RAM_END
#define RO_END (RO_BASE + 0x10000ull)
#define SHM_BASE 0x50000000ull /* fz_shm: fuzzer rw, doorbell */
#define SHM_END (SHM_BASE + 0x10000ull)
#define QUIET_BASE 0x50100000ull /* fz_quiet: fuzzer r, no doorbell */
#define QUIET_END (QUIET_BASE + 0x10000ull)
/* The last 64 KiB of RAM hold a pattern (tail guard): pointers "just before the end" write
 * there. Only vCPU 0 passes them as output buffers, so the two vCPUs never race on it. */
#define TAIL_BASE (RAM_END - 0x10000ull)

/* Messages the victim sends: the fuzzer checks what it receives byte for byte. */
#define SAMPLE_LEN 16u /* victim -> fuzzer sampling message (s_in) */
#define QMSG_LEN 32u   /* victim -> fuzzer queuing messages (q_in) */
#define DONE_KEY 0x5a17c0de0dd5eedull

static inline u64 fz_mix(u64 x)
{
	x += 0x9E3779B97F4A7C15ull;
	x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
	x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
	return x ^ (x >> 31);
}

/* Byte i of the sampling message and of queuing message seq (first 8 bytes: seq itself). */
static inline unsigned char sample_byte(unsigned i) { return (unsigned char)(0x40 + i * 7); }
static inline unsigned char qmsg_byte(u64 seq, unsigned i)
{
	return i < 8 ? (unsigned char)(seq >> (8 * i)) : (unsigned char)fz_mix(seq * 64 + i);
}

static inline void fz_yield(void) { __asm__ volatile("yield" ::: "memory"); }

_Noreturn void fuzzer_main(unsigned vcpu);
_Noreturn void victim_main(void);
_Noreturn void neighbour_main(void);

#endif
