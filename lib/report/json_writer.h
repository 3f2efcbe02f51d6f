/* json_writer.h - a small JSON writer over fmt.c for the report's
 * documents (out_json.c, run.c): it places the commas and escapes strings
 * (quotes, backslash, control characters as \u00XX, bytes that are not
 * UTF-8 as U+FFFD).  Objects and arrays nest up to MS_JW_DEPTH; the first
 * two levels get a line each. */
#ifndef MUTEXSTAT_JSON_WRITER_H
#define MUTEXSTAT_JSON_WRITER_H

#include "base/fmt.h"

#include <stdint.h>

#define MS_JW_DEPTH 32

struct ms_jw {
	struct ms_fmt f;
	int depth;
	int count[MS_JW_DEPTH]; /* values written at each level, for the commas */
};

/* Each writes one value, under key inside an object (NULL in an array). */
void ms_jw_obj(struct ms_jw *j, const char *key);
void ms_jw_arr(struct ms_jw *j, const char *key);
void ms_jw_obj_end(struct ms_jw *j);
void ms_jw_arr_end(struct ms_jw *j);
void ms_jw_num(struct ms_jw *j, const char *key, uint64_t v);
void ms_jw_null(struct ms_jw *j, const char *key);
void ms_jw_boolean(struct ms_jw *j, const char *key, int v);
void ms_jw_str(struct ms_jw *j, const char *key, const char *s); /* NULL: null */
void ms_jw_str_or_null(struct ms_jw *j, const char *key, const char *s); /* "" too */
void ms_jw_addr(struct ms_jw *j, const char *key, uintptr_t a); /* "0x..." */
void ms_jw_addr_or_null(struct ms_jw *j, const char *key, uintptr_t a); /* 0: null */
/* Before a value of the caller's own making: the comma, and "key":. */
void ms_jw_put_key(struct ms_jw *j, const char *key);

#endif
