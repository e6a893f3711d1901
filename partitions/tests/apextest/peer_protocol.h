/* Messages between apextest and apexpeer (configs/apex.yaml: to_peer 32 bytes, from_peer 100). */
#ifndef APEXTEST_PEER_PROTOCOL_H
#define APEXTEST_PEER_PROTOCOL_H

enum { PEER_SLOW = 0, PEER_ECHO = 1 };

/* apex -> peer: wait delay_ns, then (PEER_ECHO) answer. */
struct peer_cmd {
	unsigned int op;
	unsigned int seq;
	unsigned long long delay_ns;
};

/* peer -> apex: 100 bytes, the channel's message size. */
struct peer_answer {
	unsigned int seq;
	unsigned int sent_lo, sent_hi;  /* the peer's clock (ns) just before its send */
	unsigned char fill[88];
};

_Static_assert(sizeof(struct peer_answer) == 100, "from_peer carries 100-byte messages");

#endif
