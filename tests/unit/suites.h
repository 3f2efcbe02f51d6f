/* suites.h - the unit test suites of mutexstat, one per feature file.
 *
 * Each test_*.c file builds one Check suite from the library internals it
 * tests (linked from libmscore, no interposition); main.c runs them all.
 * Tests run in fork mode: each test gets a fresh child process, so each can
 * map its own statistics table (ms_table_init works once per process). */
#ifndef MUTEXSTAT_TEST_SUITES_H
#define MUTEXSTAT_TEST_SUITES_H

#include <check.h>

Suite *table_suite(void);   /* test_table.c: index, records, lives, sites */
Suite *ring_suite(void);    /* test_ring.c: per-mutex history entries */
Suite *options_suite(void); /* test_options.c: MUTEXSTAT_* parsing */
Suite *fmt_suite(void);     /* test_fmt.c: formatter and durations */
Suite *depot_suite(void);   /* test_depot.c: stack depot and blame lines */
Suite *follow_suite(void);  /* test_follow.c: MUTEXSTAT_FOLLOW=0 and LD_PRELOAD */
Suite *symbols_suite(void); /* test_symbols.c: code addresses cut to a column */
Suite *cfi_suite(void);     /* test_cfi.c: the stack walker against libunwind */
Suite *lockgraph_suite(void); /* test_lockgraph.c: lock-order edges and cycles */
Suite *findings_suite(void);  /* test_findings.c: cycle findings from the lock path */
Suite *waitfor_suite(void);   /* test_waitfor.c: the live wait-for graph */
Suite *glibc_fast_suite(void); /* test_glibc_fast.c: inline lock steps against glibc's */
Suite *history_suite(void);   /* test_history.c: recent operations read back */
Suite *holds_suite(void);     /* test_holds.c: hold times summed and folded */
Suite *suppress_suite(void);  /* test_suppress.c: MUTEXSTAT_SUPPRESSIONS */
Suite *intervals_suite(void);  /* test_intervals.c: interval profiles add up to the run */
Suite *sym_index_suite(void); /* test_sym_index.c: names by sorted symbols, as libdw gives */
Suite *ptr_index_suite(void); /* test_ptr_index.c: pointers by hash, for the lock graph */
Suite *edge_window_suite(void); /* test_edge_window.c: a thread's windows of known edges */

/* Whether the mapping that holds p has the two-letter VmFlags word flag in
 * /proc/self/smaps ("hg": MADV_HUGEPAGE); -1 if smaps cannot tell. */
int unit_vm_flag(const void *p, const char *flag);
/* Whether this kernel marks memory for transparent huge pages. */
int unit_huge_pages_markable(void);

#endif
