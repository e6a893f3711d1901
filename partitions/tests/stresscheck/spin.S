/* be_spin from bework (fills x19-x28 and v0-v31, spins, counts what changed): the same check,
 * here across everything a Linux neighbour makes the hypervisor do. */
#include "../bework/spin.S"
