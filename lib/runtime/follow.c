/* follow.c - MUTEXSTAT_FOLLOW=0: out of the children's LD_PRELOAD; see
 * follow.h.
 *
 * The environment is changed the way unsetenv() and putenv() change it --
 * the entry's pointer in environ is replaced (or removed, and the rest
 * moved up) -- never the strings the program or its loader put there, which
 * may be read-only or shared with someone's copy.  The new string is ours,
 * in static memory, and is never freed: setenv() and unsetenv() leave
 * strings they did not allocate alone.  No malloc, no setenv: this runs
 * during start-up, possibly inside an allocator's first call. */
#define _GNU_SOURCE
#include "runtime/follow.h"

#include <dlfcn.h>
#include <string.h>
#include <sys/stat.h>

extern char **environ;

static const char PREFIX[] = "LD_PRELOAD=";

/* ld.so splits LD_PRELOAD at spaces and colons. */
static int is_sep(char c)
{
	return c == ' ' || c == ':';
}

/* Does this entry (len bytes at p) name the library? */
static int names_us(const char *p, size_t len, const char *self,
		    const struct stat *self_st)
{
	const char *base = p;
	for (size_t i = 0; i < len; i++)
		if (p[i] == '/')
			base = p + i + 1;
	static const char lib[] = "libmutexstat.so";
	size_t blen = len - (size_t)(base - p);
	if (blen >= sizeof lib - 1 && !memcmp(base, lib, sizeof lib - 1))
		return 1;
	if (!self || len >= 4096)
		return 0;
	if (strlen(self) == len && !memcmp(self, p, len))
		return 1;
	/* another name for the same file (a symlink, a relative path) */
	char path[4096];
	struct stat st;
	memcpy(path, p, len);
	path[len] = 0;
	return self_st && memchr(p, '/', len) && stat(path, &st) == 0 &&
	       st.st_dev == self_st->st_dev && st.st_ino == self_st->st_ino;
}

int ms_follow_strip(const char *in, const char *self, char *out, size_t cap)
{
	struct stat self_st;
	const struct stat *sp = self && stat(self, &self_st) == 0 ? &self_st : NULL;
	size_t n = 0;
	const char *p = in;
	while (*p) {
		const char *sep = p;
		while (*p && is_sep(*p))
			p++;
		const char *word = p;
		while (*p && !is_sep(*p))
			p++;
		size_t len = (size_t)(p - word);
		if (!len || names_us(word, len, self, sp))
			continue; /* dropped with the separators before it */
		size_t seplen = n ? (size_t)(word - sep) : 0; /* none in front */
		if (n + seplen + len + 1 > cap)
			return -1;
		memcpy(out + n, sep, seplen);
		n += seplen;
		memcpy(out + n, word, len);
		n += len;
	}
	if (n + 1 > cap)
		return -1;
	out[n] = 0;
	return (int)n;
}

void ms_follow_stop(void)
{
	static char value[sizeof PREFIX + 8192];
	char **env = environ;
	if (!env)
		return;
	size_t i = 0;
	while (env[i] && strncmp(env[i], PREFIX, sizeof PREFIX - 1) != 0)
		i++;
	if (!env[i])
		return; /* linked, not preloaded: children do not get us anyway */
	Dl_info info;
	const char *self = dladdr((void *)ms_follow_stop, &info) ? info.dli_fname : NULL;
	memcpy(value, PREFIX, sizeof PREFIX - 1);
	int n = ms_follow_strip(env[i] + sizeof PREFIX - 1, self,
				value + sizeof PREFIX - 1,
				sizeof value - (sizeof PREFIX - 1));
	if (n < 0)
		return; /* longer than any real list: left as it is */
	if (n > 0) {
		env[i] = value;
		return;
	}
	/* nothing left: the variable goes, as unsetenv() would do it */
	for (; env[i]; i++)
		env[i] = env[i + 1];
}
