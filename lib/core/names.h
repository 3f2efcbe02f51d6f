/* names.h - the names mutexstat_name() gives mutexes: copied once each
 * into memory of ours that is never freed, since a record may point at a
 * name until the end of the run. */
#ifndef MUTEXSTAT_NAMES_H
#define MUTEXSTAT_NAMES_H

/* The kept copy of raw as the report prints it (control characters and
 * bytes that are not UTF-8 as '?', cut to 63 bytes), the same pointer for
 * the same name; NULL if the names' memory is spent. */
const char *ms_name_keep(const char *raw);
/* A fork child: the arena's lock may have been held by another thread. */
void ms_names_after_fork_child(void);

#endif
