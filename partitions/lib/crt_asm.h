/* Constants crt0.S needs from abi.h, spelled without C suffixes so the assembler accepts
 * them (abi.h writes 0xC6000000u). exception.c checks with _Static_assert that they still
 * equal the abi.h values, so the two cannot drift apart silently. */
#ifndef BH_CRT_ASM_H
#define BH_CRT_ASM_H

#define BH_ASM_HC_CONSOLE_WRITE 0xC6000000
#define BH_ASM_HC_HALT_SELF     0xC6000003

#endif
