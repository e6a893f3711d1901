/* flashcut: a firmware image for QEMU's virt machine that loses power in the middle of flash
 * programming. Its first run erases block 0 of bank 1, programs one word fully, then starts a word
 * program and a buffered program of four words without finishing either, and resets the machine
 * (PSCI SYSTEM_RESET: in a Bulkhead partition, a restart of the partition only). Its second run
 * finds the fully programmed word and prints what the unfinished programs left: each word must
 * hold its previous content (erased) or the new one, never a mix, and bank 1 must be back in read
 * array mode. Run by QEMU's -bios and as a partition's `firmware`, it must print the same lines
 * (tests/system/test_firmware.py). */
#define PROBE_NAME "flashcut"
#include "fwprobe.h"

#define DONE_WORD 0x10ul        /* programmed in full by the first run */
#define DONE_VALUE 0x11111111u
#define CUT_WORD 0x20ul         /* a word program cut between its setup and its data */
#define CUT_BUFFER 0x80ul       /* a buffered program cut before its confirm */

static void first_run(void)
{
	flash_cmd(0, 0x20); /* erase block 0 */
	flash_cmd(0, 0xd0);
	for (unsigned i = 0; i < 1u << 20 && !(flash_rd(0) & 0x80); i++)
		; /* status polls until the erase is done, as on real flash */
	flash_cmd(0, 0x50);
	flash_cmd(DONE_WORD, 0x40);
	flash_wr(DONE_WORD, DONE_VALUE);
	flash_cmd(0, 0x50);
	flash_cmd(0, 0xff);
	show("programmed", flash_rd(DONE_WORD));
	flash_cmd(CUT_BUFFER, 0xe8); /* a buffered program: count and data, no confirm */
	flash_wr(CUT_BUFFER, 3 << 16 | 3);
	for (unsigned i = 0; i < 4; i++)
		flash_wr(CUT_BUFFER + 4 * i, 0xa0b0c0d0u + i);
	flash_cmd(0, 0xff); /* (data, not a command, in the middle of a buffered program) */
	flash_cmd(CUT_WORD, 0x40); /* a word program: the setup, then the power goes */
	power_loss();
}

static void second_run(void)
{
	show("after the power loss, read", flash_rd(0));
	show("fully programmed word", flash_rd(DONE_WORD));
	show("word whose program was cut", flash_rd(CUT_WORD));
	for (unsigned i = 0; i < 4; i++)
		show("word of the cut buffered program", flash_rd(CUT_BUFFER + 4 * i));
	flash_cmd(0, 0x70);
	show("status", flash_rd(0));
	flash_cmd(0, 0xff);
	flash_cmd(CUT_WORD, 0x40); /* the flash still works */
	flash_wr(CUT_WORD, 0x22222222u);
	flash_cmd(0, 0xff);
	show("programmed after the power loss", flash_rd(CUT_WORD));
}

int main(void)
{
	puts_("flashcut: start\n");
	if (flash_rd(DONE_WORD) == DONE_VALUE)
		second_run();
	else
		first_run();
	puts_("flashcut: done\n");
	return 0;
}
