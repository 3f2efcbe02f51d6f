/* report_stacks.h - the call-stack parts of the text report. */
#ifndef MUTEXSTAT_REPORT_STACKS_H
#define MUTEXSTAT_REPORT_STACKS_H

#include "stacks/depot.h"
#include "base/fmt.h"

#include <stdint.h>

/* One line for the report's header: how stacks were captured. */
void ms_report_stack_summary(struct ms_fmt *f, const char *noun); /* "mutex", "lock" */

/* For a live mutex: who waited, who made them wait, where it was first
 * locked and initialised. */
void ms_report_mutex_stacks(struct ms_fmt *f, uint32_t r);

/* The same for an ended site line: its lives' waits merged by stack, and
 * where the newest of them that waited, failed or was named was first
 * locked and initialised. */
struct ms_site;
void ms_report_site_stacks(struct ms_fmt *f, const struct ms_site *s);

/* A section of who-waited or who-made-them-wait stacks: its heading
 * (title, how many stacks in all) and columns, the third named `third`
 * ("max" for the run's, "mean" for an interval's); then a row each,
 * times in ticks, share of sum (kind: MS_BLAME_WAIT or _HOLD, whose
 * missed stack 0 says why). */
void ms_report_blame_head(struct ms_fmt *f, const char *title, int all, const char *what,
			  const char *third);
void ms_report_blame_row(struct ms_fmt *f, unsigned kind, uint64_t count, uint64_t total,
			 uint64_t third, uint64_t sum, ms_stack_id stack);

/* A stack, one frame a line: the first after `lead` (already printed, of
 * `indent` columns), the others indented to line up under it. */
void ms_report_stack(struct ms_fmt *f, ms_stack_id id, int indent);
/* The same from frame `first` on (0: the whole). */
void ms_report_stack_from(struct ms_fmt *f, ms_stack_id id, int first, int indent);
/* Under a "taken at" that is a lock wrapper's line: "through a wrapper,
 * first locked from" and the first lock's stack id past the wrapper (the
 * line a suppression hint names: suppress.c); nothing for id 0. */
void ms_report_wrapper_callers(struct ms_fmt *f, ms_stack_id id);

/* How many of a stack's frames (innermost first) to show: without the C
 * library's thread and process start at its end. */
int ms_stack_shown(const uintptr_t *frames, int n);

#endif
