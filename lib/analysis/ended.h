/* ended.h - what an ended mutex life leaves on its site's line; see
 * ended.c. */
#ifndef MUTEXSTAT_ENDED_H
#define MUTEXSTAT_ENDED_H

/* Give the table its hooks (start-up, before any mutex is recorded). */
void ms_ended_init(void);

#endif
