/* robust_text.h - robust mutexes in the text report. */
#ifndef MUTEXSTAT_ROBUST_TEXT_H
#define MUTEXSTAT_ROBUST_TEXT_H

#include "base/fmt.h"

#include <stdint.h>

/* The OWNER DIED findings (mutexes left not recoverable), written in the
 * report's findings section; returns how many (each fails a CI run). */
int ms_robust_print(struct ms_fmt *f);
/* The note in a mutex's section, or a site line's, if its owner died. */
void ms_robust_note(struct ms_fmt *f, uint32_t r);
void ms_robust_site_note(struct ms_fmt *f, uintptr_t site, const uint64_t *errors);

#endif
