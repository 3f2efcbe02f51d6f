/* interval_text.h - one interval of MUTEXSTAT_INTERVAL as text: what the
 * run did in it (acquisitions, contention, wait, findings made), its top
 * locks in the text report's table, and for each the stacks that waited
 * and made others wait in it. */
#ifndef MUTEXSTAT_INTERVAL_TEXT_H
#define MUTEXSTAT_INTERVAL_TEXT_H

#include "report/interval_lines.h"
#include "report/span.h"

/* Returns 0, or -1 if writing failed (errno set). */
int ms_write_interval_text(int fd, const struct ms_iv *iv, const struct ms_span *sp);

#endif
