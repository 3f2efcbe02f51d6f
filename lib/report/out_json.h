/* out_json.h - the whole report as one JSON document (PREFIX.json), for
 * scripts and dashboards: the summary, every live mutex with its counters,
 * histograms, call stacks and recent operations, the ended mutexes by
 * first-lock site, the threads, and the findings.  See doc/report.md,
 * "JSON". */
#ifndef MUTEXSTAT_OUT_JSON_H
#define MUTEXSTAT_OUT_JSON_H

/* Report time only (it symbolises).  Returns 0, or -1 if writing failed
 * (errno says why). */
int ms_write_json(int fd);

#endif
