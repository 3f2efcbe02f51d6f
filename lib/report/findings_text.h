/* findings_text.h - the text of the findings (findings_text.c). */
#ifndef MUTEXSTAT_FINDINGS_TEXT_H
#define MUTEXSTAT_FINDINGS_TEXT_H

#include "base/fmt.h"

/* Print every finding (headings DEADLOCK:, POTENTIAL DEADLOCK:, ...).
 * Returns how many would fail a CI run (MUTEXSTAT_EXIT_CODE). */
int ms_findings_print(struct ms_fmt *f);

/* Print each relock that glibc refused (EDEADLK), a MISUSE with the
 * stacks of the hold and of the relock, as the MISUSE lines are (no blank
 * line between); NULL f: only count them.  Returns how many. */
int ms_findings_print_refused(struct ms_fmt *f);

/* "mutexstat: SELF-DEADLOCK: ..." on fd for each self-deadlock that never
 * returns and was not said yet. */
void ms_findings_say_unsaid(int fd);

#endif
