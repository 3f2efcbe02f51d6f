/* main.c - runs every unit test suite of mutexstat (see suites.h).
 *
 * Fork mode is forced, whatever CK_FORK says: the statistics table is
 * global and can be mapped only once per process, so every test must run in
 * its own child.  Exit status is non-zero if any test failed.  Set
 * MS_TEST_VERBOSE=1 to see the measurements some tests make. */
#include "suites.h"

#include <stdio.h>
#include <stdlib.h>

/* libmscore's thread.c reads ms_active, which start-up (init.c, not part of
 * libmscore) defines.  The tests never start the library, so a weak
 * stand-in that stays 0 is enough; a real definition, if libmscore ever
 * gets one, takes precedence. */
__attribute__((weak)) int ms_active;

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
