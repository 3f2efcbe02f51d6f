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

/* One interval of MUTEXSTAT_INTERVAL (interval_lines.h) as a JSON
 * document: the interval, its totals and findings, and its top locks with
 * the whole report's fields for the numbers that add up and the stacks.
 * See doc/report.md, "Interval files". */
struct ms_iv;
struct ms_span;
int ms_write_interval_json(int fd, const struct ms_iv *iv, const struct ms_span *sp);

#endif
