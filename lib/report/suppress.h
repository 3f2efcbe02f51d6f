/* suppress.h - MUTEXSTAT_SUPPRESSIONS: findings a team knows of, in code
 * it cannot change, left out of the report and of MUTEXSTAT_EXIT_CODE.
 *
 * One rule a line, KIND:PATTERN, as ThreadSanitizer's suppressions: KIND
 * is a finding's heading (deadlock, potential-deadlock, guarded-inversion,
 * self-deadlock, held-at-exit, owner-died, misuse, stall), PATTERN a glob
 * (* and ?) matched against the function, source file and module of every
 * frame of the finding and the variables and names of its locks (0x55..
 * <cache_lock> "name": cache_lock, name); it matches anywhere in them
 * unless it begins with ^ or ends with $.  '#' begins a comment.  A file
 * with a bad line applies no rule at all, and says why once at start-up
 * and in every report.  The rules are read once, at start-up, into a
 * table of our own: nothing is allocated. */
#ifndef MUTEXSTAT_SUPPRESS_H
#define MUTEXSTAT_SUPPRESS_H

#include "base/fmt.h"

#include <stddef.h>

/* Read MUTEXSTAT_SUPPRESSIONS (start-up); warn(msg) about a bad file. */
void ms_suppress_load(void (*warn)(const char *msg));

/* The findings text `in` (headings at the start of a line, as the report
 * prints them) to out, less the suppressed findings; each finding kept
 * says the rule that would suppress it.  Returns how many of the
 * suppressed ones were failing (DEADLOCK, POTENTIAL DEADLOCK,
 * SELF-DEADLOCK, STALL), to take off the report's count. */
int ms_suppress_filter(const char *in, struct ms_fmt *out);

/* The report's lines about the rules: how many findings each suppressed
 * since the last ms_suppress_begin, which matched nothing, or why none
 * applies.  Nothing without MUTEXSTAT_SUPPRESSIONS. */
void ms_suppress_begin(void);
void ms_suppress_print(struct ms_fmt *f);

/* The length of the heading that begins line s[0, len) -- capitals,
 * spaces and hyphens before ": ", as the report's findings begin -- or 0
 * (run.c reads its findings' first lines by it too). */
size_t ms_suppress_heading_len(const char *s, size_t len);

/* The functions a finding text[0, len) names, each once, in order of
 * name, joined by ", " into out (cut with "..." at cap, 0 ended): what
 * tells findings with one heading apart across processes (run.c), the
 * same whichever thread's part came first.  Returns its length; 0 where
 * no frame names a function. */
size_t ms_suppress_finding_code(const char *text, size_t len, char *out, size_t cap);

/* The words before a held lock's first-lock stack past a wrapper of the
 * program's (HELD AT THREAD EXIT): a finding's "to suppress it" names
 * that stack's first function, not the wrapper's, which every finding
 * through the wrapper shares. */
#define MS_WRAPPER_CALLERS "through a wrapper, first locked from"

/* For the JSON report, which names its findings' frames and locks word by
 * word: the first rule of kind `kind` (a rule's KIND, as "deadlock")
 * that matches `word` -- a frame's function, source file or module, or a
 * lock's variable or name, cut as the text prints them -- written to out
 * as KIND:PATTERN.  Returns 1, or 0 (none; out untouched).  Counts
 * nothing: the text report's counts stand. */
int ms_suppress_rule_for(const char *kind, const char *word, char *out, size_t cap);

/* Whether any rule applies: a word that costs a look-up (a lock's
 * variable) is looked up for the JSON's "suppressed_by" only then. */
int ms_suppress_any(void);

/* For the tests: whether a glob of the rules' syntax matches text. */
int ms_suppress_glob(const char *pattern, const char *text, size_t len);

#endif
