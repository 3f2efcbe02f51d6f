/* main.c - runs every unit test suite of mutexstat (see suites.h).
 *
 * Fork mode is forced, whatever CK_FORK says: the statistics table is
 * global and can be mapped only once per process, so every test must run in
 * its own child.  Exit status is non-zero if any test failed.  Set
 * MS_TEST_VERBOSE=1 to see the measurements some tests make. */
#include "suites.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* libmscore's thread.c reads ms_active, which start-up (init.c, not part of
 * libmscore) defines.  The tests never start the library, so a weak
 * stand-in that stays 0 is enough; a real definition, if libmscore ever
 * gets one, takes precedence. */
__attribute__((weak)) int ms_active;

int unit_vm_flag(const void *p, const char *flag)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	if (!f)
		return -1;
	char line[512];
	int in = 0, found = -1;
	while (fgets(line, sizeof line, f)) {
		unsigned long lo, hi;
		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' '))
			in = (uintptr_t)p >= lo && (uintptr_t)p < hi;
		else if (in && !strncmp(line, "VmFlags:", 8)) {
			char word[4];
			snprintf(word, sizeof word, " %s", flag);
			found = strstr(line, word) != NULL;
			break;
		}
	}
	fclose(f);
	return found;
}

int unit_huge_pages_markable(void)
{
	void *probe = mmap(NULL, 4u << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			   -1, 0);
	if (probe == MAP_FAILED)
		return 0;
	int can = madvise(probe, 4u << 20, MADV_HUGEPAGE) == 0 && unit_vm_flag(probe, "hg") == 1;
	munmap(probe, 4u << 20);
	return can;
}

int main(void)
{
	SRunner *sr = srunner_create(table_suite());
	srunner_add_suite(sr, ring_suite());
	srunner_add_suite(sr, options_suite());
	srunner_add_suite(sr, fmt_suite());
	srunner_add_suite(sr, depot_suite());
	srunner_add_suite(sr, follow_suite());
	srunner_add_suite(sr, symbols_suite());
	srunner_add_suite(sr, sym_index_suite());
	srunner_add_suite(sr, cfi_suite());
	srunner_add_suite(sr, ptr_index_suite());
	srunner_add_suite(sr, edge_window_suite());
	srunner_add_suite(sr, lockgraph_suite());
	srunner_add_suite(sr, findings_suite());
	srunner_add_suite(sr, waitfor_suite());
	srunner_add_suite(sr, glibc_fast_suite());
	srunner_add_suite(sr, history_suite());
	srunner_add_suite(sr, holds_suite());
	srunner_add_suite(sr, suppress_suite());
	srunner_add_suite(sr, intervals_suite());
	srunner_set_fork_status(sr, CK_FORK);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
