/* output.h - where reports and warnings go. */
#ifndef MUTEXSTAT_OUTPUT_H
#define MUTEXSTAT_OUTPUT_H

/* At start-up: keep a private copy of the stderr the program started with,
 * so a report reaches it even if the program closes or redirects fd 2. */
void ms_output_init(void);

/* The descriptor for the original stderr, or -1 if it is gone (closed, and
 * the number now names another file). */
int ms_output_stderr(void);

/* Open the report's destination: MUTEXSTAT_OUTPUT with %p replaced by the
 * pid, or the original stderr.  *close_it says whether to close it after. */
int ms_output_open(int *close_it);
/* The same with a suffix after the expanded path (live dumps: ".1"). */
int ms_output_open_suffix(const char *suffix, int *close_it);
/* A file of a report in several formats (seq 0: at exit). */
int ms_output_open_format(unsigned seq, const char *ext, int *close_it);

#endif
