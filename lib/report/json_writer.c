/* json_writer.c - see json_writer.h. */
#include "report/json_writer.h"

static void put_string(struct ms_jw *j, const char *s)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *p = (const unsigned char *)s;
	ms_fmt(&j->f, "\"");
	while (*p) {
		unsigned c = *p;
		if (c == '"' || c == '\\') {
			ms_fmt(&j->f, "\\%c", (char)c);
			p++;
		} else if (c < 0x20 || c == 0x7f) {
			ms_fmt(&j->f, "\\u00%c%c", hex[c >> 4], hex[c & 15]);
			p++;
		} else if (c < 0x80) {
			ms_fmt(&j->f, "%c", (char)c);
			p++;
		} else {
			/* a whole, shortest-form UTF-8 sequence, or U+FFFD */
			int len = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3
				: c >= 0xf0 && c <= 0xf4 ? 4 : 0;
			int ok = len > 0;
			for (int i = 1; ok && i < len; i++)
				ok = (p[i] & 0xc0) == 0x80;
			if (ok && len == 3 && ((c == 0xe0 && p[1] < 0xa0) ||
					       (c == 0xed && p[1] >= 0xa0)))
				ok = 0; /* overlong, or a surrogate */
			if (ok && len == 4 && ((c == 0xf0 && p[1] < 0x90) ||
					       (c == 0xf4 && p[1] >= 0x90)))
				ok = 0; /* overlong, or beyond U+10FFFF */
			if (ok) {
				ms_fmt(&j->f, "%.*s", len, (const char *)p);
				p += len;
			} else {
				ms_fmt(&j->f, "\\ufffd");
				p++;
			}
		}
	}
	ms_fmt(&j->f, "\"");
}

void ms_jw_put_key(struct ms_jw *j, const char *key)
{
	if (j->count[j->depth]++)
		ms_fmt(&j->f, ",");
	if (j->depth > 0 && j->depth <= 2)
		ms_fmt(&j->f, "\n%*s", 2 * j->depth, "");
	if (key) {
		put_string(j, key);
		ms_fmt(&j->f, ":");
	}
}

static void open_(struct ms_jw *j, const char *key, char c)
{
	ms_jw_put_key(j, key);
	ms_fmt(&j->f, "%c", c);
	if (j->depth < MS_JW_DEPTH - 1)
		j->depth++;
	j->count[j->depth] = 0;
}

void ms_jw_obj(struct ms_jw *j, const char *key) { open_(j, key, '{'); }
void ms_jw_arr(struct ms_jw *j, const char *key) { open_(j, key, '['); }

static void end(struct ms_jw *j, char c)
{
	int had = j->count[j->depth];
	if (j->depth > 0)
		j->depth--;
	if (had && j->depth < 2)
		ms_fmt(&j->f, "\n%*s", 2 * j->depth, "");
	ms_fmt(&j->f, "%c", c);
}

void ms_jw_obj_end(struct ms_jw *j) { end(j, '}'); }
void ms_jw_arr_end(struct ms_jw *j) { end(j, ']'); }

void ms_jw_num(struct ms_jw *j, const char *key, uint64_t v)
{
	ms_jw_put_key(j, key);
	ms_fmt(&j->f, "%llu", (unsigned long long)v);
}

void ms_jw_null(struct ms_jw *j, const char *key)
{
	ms_jw_put_key(j, key);
	ms_fmt(&j->f, "null");
}

void ms_jw_boolean(struct ms_jw *j, const char *key, int v)
{
	ms_jw_put_key(j, key);
	ms_fmt(&j->f, v ? "true" : "false");
}

void ms_jw_str(struct ms_jw *j, const char *key, const char *s)
{
	if (!s) {
		ms_jw_null(j, key);
		return;
	}
	ms_jw_put_key(j, key);
	put_string(j, s);
}

/* A string, or null when empty. */
void ms_jw_str_or_null(struct ms_jw *j, const char *key, const char *s)
{
	ms_jw_str(j, key, s && s[0] ? s : NULL);
}

void ms_jw_addr(struct ms_jw *j, const char *key, uintptr_t a)
{
	ms_jw_put_key(j, key);
	ms_fmt(&j->f, "\"0x%lx\"", (unsigned long)a);
}

/* A mutex's address, or null when gone. */
void ms_jw_addr_or_null(struct ms_jw *j, const char *key, uintptr_t a)
{
	if (a)
		ms_jw_addr(j, key, a);
	else
		ms_jw_null(j, key);
}
