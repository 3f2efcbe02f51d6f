/* top_table.h - the table of a report's top locks, one row each: how
 * often acquired and contended, wait and hold times, where first locked.
 * The text report's, and each interval's (interval_text.h). */
#ifndef MUTEXSTAT_TOP_TABLE_H
#define MUTEXSTAT_TOP_TABLE_H

#include "base/fmt.h"
#include "report/lines.h"

#include <stddef.h>

/* lines: n ranked lines of `size` bytes each, each beginning with its
 * struct ms_line (lines.h); `when` ends the title ("" or " in this
 * interval"); classes: the kinds of lock the report covers (1 << class),
 * beyond the lines' own -- a table of mutexes alone in a program that
 * used other locks too reads "locks", as the heading did. */
void ms_top_table(struct ms_fmt *f, const void *lines, size_t size, size_t n,
		  const char *when, uint32_t classes);

#endif
