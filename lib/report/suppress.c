/* suppress.c - MUTEXSTAT_SUPPRESSIONS (suppress.h). */
#define _GNU_SOURCE
#include "report/suppress.h"
#include "base/fds.h"
#include "base/options.h"
#include "analysis/stall.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_RULES 256
#define MAX_PATTERN 256
#define MAX_LINE 4096

/* The kinds of finding a rule names, as the report's headings. */
static const struct {
	const char *name, *heading;
	int failing; /* counts for MUTEXSTAT_EXIT_CODE */
} kinds[] = {
	{ "deadlock", "DEADLOCK", 1 },
	{ "potential-deadlock", "POTENTIAL DEADLOCK", 1 },
	{ "guarded-inversion", "GUARDED INVERSION", 0 },
	{ "self-deadlock", "SELF-DEADLOCK", 1 },
	{ "held-at-exit", "HELD AT THREAD EXIT", 0 },
	{ "misuse", "MISUSE", 0 },
	{ "stall", "STALL", 1 },
	{ "owner-died", "OWNER DIED", 1 },
};
#define N_KINDS (sizeof kinds / sizeof kinds[0])

static struct rule {
	unsigned kind, line;
	const char *written; /* the kind as the file names it (an alias too) */
	char pattern[MAX_PATTERN];
	uint64_t hits; /* findings it left out of the report being written */
} rules[MAX_RULES];
static unsigned nrules;
static char load_error[600]; /* why no rule applies; "" when they do */
/* what a rule may begin with, said after a line that began otherwise */
static const char kinds_hint[] = "(the kinds: deadlock, potential-deadlock, guarded-inversion, "
				 "self-deadlock, held-at-exit, owner-died, misuse, stall)";
static int hint_kinds;

/* ---- reading the rules ------------------------------------------------- */

static void fail(unsigned line, const char *what, const char *detail)
{
	struct ms_fmt f;
	ms_fmt_init(&f, load_error, sizeof load_error, -1);
	if (line)
		ms_fmt(&f, "line %u: ", line);
	ms_fmt(&f, "%s", what);
	if (detail) {
		ms_fmt(&f, " '");
		ms_fmt_quoted(&f, detail, 80);
		ms_fmt(&f, "'");
	}
	ms_fmt_str(&f);
	nrules = 0;
	hint_kinds = 0;
}

/* One line, comments and blanks aside: KIND:PATTERN.  0, or -1 (failed). */
static int parse_line(char *s, size_t len, unsigned line)
{
	while (len && (s[len - 1] == ' ' || s[len - 1] == '\t' || s[len - 1] == '\r'))
		len--;
	s[len] = 0;
	while (*s == ' ' || *s == '\t')
		s++;
	if (!*s || *s == '#')
		return 0;
	char *colon = strchr(s, ':');
	if (!colon) {
		fail(line, "not KIND:PATTERN:", s);
		return -1;
	}
	*colon = 0;
	/* the JSON report's kind of it, copied into a rule, names it too */
	const char *written = NULL;
	if (!strcmp(s, "held-at-thread-exit"))
		written = "held-at-thread-exit";
	unsigned k = 0;
	while (k < N_KINDS && strcmp(kinds[k].name, written ? "held-at-exit" : s) != 0)
		k++;
	if (k == N_KINDS) {
		fail(line, "not a kind of finding:", s);
		hint_kinds = 1;
		return -1;
	}
	const char *pattern = colon + 1;
	while (*pattern == ' ' || *pattern == '\t')
		pattern++;
	if (!*pattern) {
		fail(line, "an empty pattern after", s);
		return -1;
	}
	size_t plen = strlen(pattern);
	if (plen >= MAX_PATTERN) {
		fail(line, "a pattern longer than 255 bytes", NULL);
		return -1;
	}
	if (nrules == MAX_RULES) {
		fail(line, "more than 256 rules", NULL);
		return -1;
	}
	struct rule *r = &rules[nrules++];
	r->kind = k;
	r->written = written ? written : kinds[k].name;
	r->line = line;
	memcpy(r->pattern, pattern, plen + 1);
	return 0;
}

static int parse_fd(int fd)
{
	char buf[8192], line[MAX_LINE + 1];
	size_t len = 0;
	unsigned n = 1;
	int skipping = 0; /* in a line too long, reported already */
	for (;;) {
		ssize_t got = read(fd, buf, sizeof buf);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			fail(0, "cannot read it:", strerrorname_np(errno));
			return -1;
		}
		if (got == 0)
			break;
		for (ssize_t i = 0; i < got; i++) {
			char c = buf[i];
			if (c == '\n') {
				if (!skipping && parse_line(line, len, n) != 0)
					return -1;
				n++;
				len = 0;
				skipping = 0;
			} else if (c == 0) {
				fail(n, "a NUL byte: not a text file", NULL);
				return -1;
			} else if (len == MAX_LINE) {
				fail(n, "longer than 4096 bytes", NULL);
				return -1;
			} else
				line[len++] = c;
		}
	}
	return len ? parse_line(line, len, n) : 0;
}

void ms_suppress_load(void (*warn)(const char *msg))
{
	nrules = 0;
	load_error[0] = 0;
	hint_kinds = 0;
	const char *path = ms_opt.suppressions;
	if (!path)
		return;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	struct stat st;
	char why[64];
	if (fd < 0) {
		const char *e = strerrorname_np(errno);
		struct ms_fmt wf;
		ms_fmt_init(&wf, why, sizeof why, -1);
		ms_fmt(&wf, "cannot open it: %s", e ? e : "error");
		fail(0, ms_fmt_str(&wf), NULL);
	}
	else if (fstat(fd, &st) != 0 || S_ISDIR(st.st_mode))
		fail(0, "it is a directory", NULL);
	else if (!S_ISREG(st.st_mode))
		fail(0, "not a regular file", NULL);
	else
		(void)parse_fd(fd);
	if (fd >= 0)
		ms_fd_close(fd);
	if (load_error[0] && warn) {
		char msg[5000];
		struct ms_fmt f;
		ms_fmt_init(&f, msg, sizeof msg, -1);
		ms_fmt(&f, "mutexstat: MUTEXSTAT_SUPPRESSIONS '");
		ms_fmt_quoted(&f, path, 4096);
		ms_fmt(&f, "': %s; no rule of it applies\n", load_error);
		if (hint_kinds)
			ms_fmt(&f, "  %s\n", kinds_hint);
		warn(ms_fmt_str(&f));
	}
}

/* ---- matching -------------------------------------------------------- */

/* * any run, ? one byte, over the whole of text[0, len). */
static int glob_whole(const char *p, size_t plen, const char *t, size_t len)
{
	size_t i = 0, j = 0, star = (size_t)-1, mark = 0;
	while (j < len) {
		if (i < plen && (p[i] == '?' || p[i] == t[j])) {
			i++, j++;
		} else if (i < plen && p[i] == '*') {
			star = i++;
			mark = j;
		} else if (star != (size_t)-1) {
			i = star + 1;
			j = ++mark;
		} else
			return 0;
	}
	while (i < plen && p[i] == '*')
		i++;
	return i == plen;
}

int ms_suppress_glob(const char *pattern, const char *text, size_t len)
{
	char p[MAX_PATTERN + 2];
	size_t n = 0, plen = strlen(pattern);
	int start = pattern[0] == '^', end = plen > (size_t)start && pattern[plen - 1] == '$';
	if (plen >= MAX_PATTERN)
		return 0;
	if (!start)
		p[n++] = '*';
	memcpy(p + n, pattern + start, plen - (size_t)start - (size_t)end);
	n += plen - (size_t)start - (size_t)end;
	if (!end)
		p[n++] = '*';
	return glob_whole(p, n, text, len);
}

int ms_suppress_any(void)
{
	return nrules != 0;
}

int ms_suppress_rule_for(const char *kind, const char *word, char *out, size_t cap)
{
	for (unsigned i = 0; i < nrules; i++) {
		const struct rule *r = &rules[i];
		if (strcmp(kinds[r->kind].name, kind) != 0 ||
		    !ms_suppress_glob(r->pattern, word, strlen(word)))
			continue;
		struct ms_fmt f;
		ms_fmt_init(&f, out, cap, -1);
		ms_fmt(&f, "%s:%s", r->written, r->pattern);
		ms_fmt_str(&f);
		return 1;
	}
	return 0;
}

/* ---- findings ---------------------------------------------------------- */

/* A finding's heading: capitals, spaces and hyphens, then ": ", at the
 * start of a line (doc/report.md: a script can grep them). */
size_t ms_suppress_heading_len(const char *s, size_t len)
{
	size_t i = 0;
	while (i < len && ((s[i] >= 'A' && s[i] <= 'Z') || s[i] == ' ' || s[i] == '-'))
		i++;
	if (i >= 4 && i + 1 < len && s[0] >= 'A' && s[0] <= 'Z' && s[i] == ':' && s[i + 1] == ' ')
		return i;
	return 0;
}

static int kind_of(const char *s, size_t hlen)
{
	for (unsigned k = 0; k < N_KINDS; k++)
		if (strlen(kinds[k].heading) == hlen && !memcmp(kinds[k].heading, s, hlen))
			return (int)k;
	return -1;
}

/* What a rule is matched against, in one line of a finding: the frame at
 * its end -- "function+0x2a (file.c:42, module)", "function (file.c:42)",
 * "function+0x2a (module)" -- and a lock's variable and name: 0x55..
 * <cache_lock> "name", either of them left out where it has none.  A
 * variable is marked: a suggested rule names it only where no function
 * sets the finding apart (suggest). */
#define LINE_WORDS 8 /* a condition's variable, its mutex's and its name, a frame's 3 */

struct words {
	const char *w[LINE_WORDS];
	size_t len[LINE_WORDS];
	unsigned char variable[LINE_WORDS];
	unsigned n;
};

static void add_word(struct words *ws, const char *s, size_t len, int variable)
{
	while (len && (*s == ' '))
		s++, len--;
	while (len && s[len - 1] == ' ')
		len--;
	if (len && ws->n < LINE_WORDS) {
		ws->w[ws->n] = s;
		ws->len[ws->n] = len;
		ws->variable[ws->n++] = (unsigned char)variable;
	}
}

static void add(struct words *ws, const char *s, size_t len)
{
	add_word(ws, s, len, 0);
}

/* The frame at the end of a line: its function, and where it is -- a
 * source file (its line left out) or a module, and the module after a
 * file. */
struct frame_words {
	const char *fn, *place, *module;
	size_t fnlen, placelen, modlen;
};

/* A function's name without what the compiler adds to a copy of it --
 * GCC's ".constprop.0", ".isra.0", ".part.0", ".lto_priv.0", ".cold", and
 * in C++ " [clone .constprop.0]" -- which another build names otherwise
 * (at -O0 none): a rule that named them stopped matching the same code
 * built another way.  The length of what is left. */
static size_t without_clone_suffix(const char *fn, size_t len)
{
	static const char *const clones[] = { ".constprop.", ".isra.", ".part.", ".lto_priv." };
	for (;;) {
		if (len > 8 && fn[len - 1] == ']') { /* " [clone .xxx]" */
			size_t at = len - 1;
			while (at > 0 && fn[at] != '[')
				at--;
			if (at > 0 && fn[at - 1] == ' ' && len - at > 7 && !memcmp(fn + at, "[clone .", 8)) {
				len = at - 1;
				continue;
			}
		}
		if (len > 5 && !memcmp(fn + len - 5, ".cold", 5)) {
			len -= 5;
			continue;
		}
		size_t d = len;
		while (d > 0 && fn[d - 1] >= '0' && fn[d - 1] <= '9')
			d--;
		int stripped = 0;
		for (size_t i = 0; d < len && i < sizeof clones / sizeof clones[0]; i++) {
			size_t n = strlen(clones[i]);
			if (d > n && !memcmp(fn + d - n, clones[i], n)) {
				len = d - n;
				stripped = 1;
				break;
			}
		}
		if (!stripped)
			return len;
	}
}

/* Line s[0, len)'s frame, if it ends in one that names a function. */
static int frame_words(const char *s, size_t len, struct frame_words *fw)
{
	if (!len || s[len - 1] != ')')
		return 0;
	size_t open = len;
	while (open > 1 && !(s[open - 2] == ' ' && s[open - 1] == '('))
		open--;
	if (open <= 1)
		return 0;
	/* the function: after the last "  " or " at " before the frame */
	size_t fn_end = open - 2, fn = 0;
	for (size_t i = 0; i + 1 < fn_end; i++) {
		if (s[i] == ' ' && s[i + 1] == ' ')
			fn = i + 2;
		else if (i + 3 < fn_end && !memcmp(s + i, " at ", 4))
			fn = i + 4;
	}
	size_t e = fn_end;
	for (size_t i = fn; i + 2 < fn_end; i++)
		if (s[i] == '+' && s[i + 1] == '0' && s[i + 2] == 'x')
			e = i;
	while (fn < e && s[fn] == ' ')
		fn++;
	if (fn >= e)
		return 0; /* no function: a note, "at  (stack not captured)" */
	const char *in = s + open, *comma = NULL;
	size_t inlen = len - 1 - open;
	for (size_t i = 0; i + 1 < inlen; i++)
		if (in[i] == ',' && in[i + 1] == ' ')
			comma = in + i;
	size_t filelen = comma ? (size_t)(comma - in) : inlen;
	/* a file or module has no space: "(all by one thread: ...)" at the
	 * end of a heading is words, not where code is */
	if (memchr(in, ' ', filelen))
		return 0;
	/* file.c:42 has a line; a module has none */
	size_t colon = filelen;
	while (colon > 0 && in[colon - 1] >= '0' && in[colon - 1] <= '9')
		colon--;
	*fw = (struct frame_words){ .fn = s + fn, .fnlen = without_clone_suffix(s + fn, e - fn),
				    .place = in };
	if (colon > 1 && colon < filelen && in[colon - 1] == ':')
		fw->placelen = colon - 1;
	else if (!comma)
		fw->placelen = filelen; /* (module) */
	if (comma) {
		fw->module = comma + 2;
		fw->modlen = (size_t)(in + inlen - comma - 2);
	}
	return 1;
}

/* The end of the variable whose "<" is at s[at] (kinds.h: " <cache_lock>"
 * after a lock's address): its ">", past those of a C++ template's
 * arguments ("<registry<int>::mu>") -- or, where the name was cut to fit
 * its column, the one after the "..." that ends it.  0 if none. */
static size_t variable_end(const char *s, size_t len, size_t at)
{
	unsigned depth = 0;
	for (size_t i = at; i < len; i++) {
		if (s[i] == '<')
			depth++;
		else if (s[i] == '>' && (--depth == 0 || (i >= 3 && !memcmp(s + i - 3, "...", 3))))
			return i;
	}
	return 0;
}

/* The locks of a line: each address, 0x55.., followed by its variable in
 * angle brackets and its name in quotes, where it has them. */
static void lock_words(const char *s, size_t len, struct words *ws)
{
	for (size_t i = 0; i + 3 < len; i++) {
		if (s[i] != '0' || s[i + 1] != 'x' || (i > 0 && s[i - 1] != ' '))
			continue;
		size_t j = i + 2;
		while (j < len && ((s[j] >= '0' && s[j] <= '9') || (s[j] >= 'a' && s[j] <= 'f')))
			j++;
		size_t end;
		if (j + 2 < len && s[j] == ' ' && s[j + 1] == '<' &&
		    (end = variable_end(s, len, j + 1)) != 0) {
			add_word(ws, s + j + 2, end - (j + 2), 1);
			j = end + 1;
		}
		if (j + 2 < len && s[j] == ' ' && s[j + 1] == '"') {
			const char *q = memchr(s + j + 2, '"', len - j - 2);
			if (q)
				add(ws, s + j + 2, (size_t)(q - (s + j + 2)));
		}
		i = j - 1;
	}
}

static void words_of(const char *s, size_t len, struct words *ws)
{
	ws->n = 0;
	lock_words(s, len, ws);
	/* the frame at the end of the line */
	struct frame_words fw;
	if (!frame_words(s, len, &fw))
		return;
	if (fw.placelen)
		add(ws, fw.place, fw.placelen);
	if (fw.module)
		add(ws, fw.module, fw.modlen);
	add(ws, fw.fn, fw.fnlen);
}

#define CODE_NAMES 64 /* functions a finding's code lists */

/* Name a before name b (bytes, then the shorter first). */
static int name_before(const char *a, size_t alen, const char *b, size_t blen)
{
	int c = memcmp(a, b, alen < blen ? alen : blen);
	return c < 0 || (c == 0 && alen < blen);
}

size_t ms_suppress_finding_code(const char *text, size_t len, char *out, size_t cap)
{
	const char *name[CODE_NAMES];
	size_t nlen[CODE_NAMES], k = 0;
	int more = 0;
	if (cap < 8) {
		if (cap)
			out[0] = 0;
		return 0;
	}
	/* each function once, in order of name: the same finding lists the
	 * same code whichever thread's edge came first */
	for (const char *p = text, *end = text + len; p < end;) {
		const char *line = p, *nl = memchr(p, '\n', (size_t)(end - p));
		size_t l = nl ? (size_t)(nl - p) : (size_t)(end - p);
		p += l + (nl != NULL);
		struct frame_words fw;
		if (!frame_words(line, l, &fw))
			continue;
		size_t at = 0;
		while (at < k && name_before(name[at], nlen[at], fw.fn, fw.fnlen))
			at++;
		if (at < k && nlen[at] == fw.fnlen && !memcmp(name[at], fw.fn, fw.fnlen))
			continue; /* listed */
		if (k == CODE_NAMES) {
			more = 1;
			continue;
		}
		memmove(name + at + 1, name + at, (k - at) * sizeof *name);
		memmove(nlen + at + 1, nlen + at, (k - at) * sizeof *nlen);
		name[at] = fw.fn;
		nlen[at] = fw.fnlen;
		k++;
	}
	size_t n = 0;
	for (size_t i = 0; i < k; i++) {
		size_t sep = n ? 2 : 0;
		/* each step leaves room for ", ..." and the 0 */
		if (n + sep + nlen[i] + 5 >= cap) {
			more = 1;
			break;
		}
		memcpy(out + n, ", ", sep);
		memcpy(out + n + sep, name[i], nlen[i]);
		n += sep + nlen[i];
	}
	if (more) {
		const char *tail = n ? ", ..." : "...";
		memcpy(out + n, tail, strlen(tail));
		n += strlen(tail);
	}
	out[n] = 0;
	return n;
}

/* The words of a finding text[0, len), line by line (words_of). */
struct word_walk {
	const char *p, *end;
	struct words ws;
	unsigned at;
};

static void walk_begin(struct word_walk *c, const char *text, size_t len)
{
	c->p = text;
	c->end = text + len;
	c->ws.n = c->at = 0;
}

static int next_word(struct word_walk *c, const char **w, size_t *wlen)
{
	while (c->at == c->ws.n) {
		if (c->p >= c->end)
			return 0;
		const char *nl = memchr(c->p, '\n', (size_t)(c->end - c->p));
		size_t l = nl ? (size_t)(nl - c->p) : (size_t)(c->end - c->p);
		words_of(c->p, l, &c->ws);
		c->at = 0;
		c->p += l + (nl != NULL);
	}
	*w = c->ws.w[c->at];
	*wlen = c->ws.len[c->at++];
	return 1;
}

/* The rule of kind k that matches a word of the finding text[0, len). */
static struct rule *matching(int k, const char *text, size_t len)
{
	struct word_walk c;
	const char *w;
	size_t wl;
	walk_begin(&c, text, len);
	while (next_word(&c, &w, &wl))
		for (unsigned i = 0; i < nrules; i++)
			if (rules[i].kind == (unsigned)k && ms_suppress_glob(rules[i].pattern, w, wl))
				return &rules[i];
	return NULL;
}

/* Whether a rule with this pattern matches a word of text[0, len). */
static int pattern_matches(const char *pattern, const char *text, size_t len)
{
	struct word_walk c;
	const char *w;
	size_t wl;
	walk_begin(&c, text, len);
	while (next_word(&c, &w, &wl))
		if (ms_suppress_glob(pattern, w, wl))
			return 1;
	return 0;
}

static size_t line_at(const char *s, size_t *hlen);

/* The next piece of a findings text at *p: a finding (its heading hlen
 * long), or the text before the first (hlen 0).  0 at the end. */
static int next_piece(const char **p, const char **start, size_t *len, size_t *hlen)
{
	if (!**p)
		return 0;
	*start = *p;
	const char *q = *p + line_at(*p, hlen);
	while (*q) {
		size_t h;
		size_t l = line_at(q, &h);
		if (h)
			break;
		q += l;
	}
	*len = (size_t)(q - *start);
	*p = q;
	return 1;
}

/* How many findings of kind k in the whole text `all`, but the one at
 * `self` and those a rule leaves out already, a rule with this pattern
 * would leave out too. */
static unsigned others_matched(const char *all, int k, const char *self, const char *pattern)
{
	unsigned n = 0;
	const char *p = all, *start;
	size_t len, hlen;
	while (next_piece(&p, &start, &len, &hlen))
		if (start != self && hlen && kind_of(start, hlen) == k &&
		    pattern_matches(pattern, start, len) && !(nrules && matching(k, start, len)))
			n++;
	return n;
}

/* How many findings of each kind the text being filtered has (counted once
 * a report, by ms_suppress_filter). */
static unsigned kind_count[N_KINDS];

static void count_kinds(const char *all)
{
	memset(kind_count, 0, sizeof kind_count);
	const char *p = all, *start;
	size_t len, hlen;
	while (next_piece(&p, &start, &len, &hlen)) {
		int k = hlen ? kind_of(start, hlen) : -1;
		if (k >= 0)
			kind_count[k]++;
	}
}

/* Past this many findings of a kind, a suggestion is not checked against
 * the others: each check reads them all, and a report of 10,000 MISUSEs
 * took 29 s at exit. */
#define CHECKED_FINDINGS 64

/* Frames every thread's or every program's stack has: a rule naming one
 * would leave out findings that have nothing to do with this one.  main
 * is the program's, but under every stack of its first thread: named only
 * if nothing else is. */
static int generic(const char *w, size_t len)
{
	static const char *const names[] = {
		"start_thread", "clone", "clone3", "__clone", "__clone3", "_start",
		"__libc_start_main", "__libc_start_call_main", "g_thread_proxy",
		"std::thread::_State_impl<...>::_M_run()", "execute_native_thread_routine",
	};
	/* nor the standard library's own functions, which every program's
	 * std::mutex goes through (unoptimised, std::mutex::lock() and
	 * __gthread_mutex_lock are frames of their own): a rule naming one
	 * would leave out every finding of a std::mutex */
	static const char *const prefixes[] = {
		"std::", "__gthread_", "__gnu_cxx::",
	};
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (strlen(names[i]) == len && !memcmp(names[i], w, len))
			return 1;
	/* past a template function's return type ("void std::__invoke_impl<...>"):
	 * a space before any parenthesis */
	const char *sp = memchr(w, ' ', len), *paren = memchr(w, '(', len);
	if (sp && (!paren || sp < paren)) {
		len -= (size_t)(sp + 1 - w);
		w = sp + 1;
	}
	for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++) {
		size_t n = strlen(prefixes[i]);
		if (len > n && !memcmp(prefixes[i], w, n))
			return 1;
	}
	return 0;
}

/* The anchored rule for a word as the report prints it: "^word$", where
 * what a long name lost ("(...)", "<...>", "..": two dots or more) matches
 * anything, so that the rule also matches the whole name the JSON report
 * gives.  0 if it does not fit a rule. */
static int anchored(char *out, size_t cap, const char *w, size_t len)
{
	size_t n = 0;
	if (cap < 3)
		return 0;
	out[n++] = '^';
	for (size_t i = 0; i < len; i++) {
		/* two dots or more: what a cut took ("..", "(...)", and a
		 * cut inside one, "....)"); no C++ name has them */
		if (i + 1 < len && w[i] == '.' && w[i + 1] == '.') {
			if (n + 1 >= cap)
				return 0;
			if (n == 0 || out[n - 1] != '*')
				out[n++] = '*';
			while (i + 1 < len && w[i + 1] == '.')
				i++;
			continue;
		}
		if (n + 1 >= cap)
			return 0;
		/* the rules have no escape: a * or ? of the name itself
		 * (operator*, a Foo* parameter) matches one byte, itself
		 * among them -- as a * it matched operator+ and Bar* too */
		char c = w[i];
		if (c == '*')
			c = '?';
		out[n++] = c;
	}
	if (n + 2 > cap)
		return 0;
	out[n++] = '$';
	out[n] = 0;
	return 1;
}

#define MAX_CANDIDATES 24

/* The words a finding's rule may name, in the order they are tried. */
struct candidates {
	const char *w[MAX_CANDIDATES];
	size_t len[MAX_CANDIDATES];
	unsigned n;
};

static void candidate(struct candidates *c, const char *w, size_t len)
{
	if (c->n < MAX_CANDIDATES) {
		c->w[c->n] = w;
		c->len[c->n++] = len;
	}
}

/* Which round of suggest's a word is tried in: the program's functions
 * (and locks' names) first, then those with a * or ? in their name
 * (operator*, a Foo* parameter: the rule's ? for it matches any byte
 * there), then the locks' variables, then main.  -1: never (generic). */
static int round_of(const char *w, size_t len, int variable)
{
	if (variable)
		return 2;
	if (generic(w, len))
		return -1;
	if (len == 4 && !memcmp(w, "main", 4))
		return 3;
	return memchr(w, '*', len) || memchr(w, '?', len) ? 1 : 0;
}

/* The last word of a line but a variable -- its frame's function, or a
 * lock's name -- as an index + 1 into ws, 0 if none. */
static unsigned last_named(const struct words *ws)
{
	unsigned last = ws->n;
	while (last > 0 && ws->variable[last - 1])
		last--;
	return last;
}

static int starts_with(const char *s, size_t len, const char *head)
{
	size_t n = strlen(head);
	return len >= n && !memcmp(s, head, n);
}

/* Whether line s[0, len) describes one of the finding's locks -- its
 * line ("A   mutex 0x55.. <m>, first locked at ..."), the callers of its
 * first lock past a wrapper, where its life ended -- rather than the code
 * the finding is about: the code that first locked a mutex may be any
 * code that uses it (t14: a function that took A and B one at a time was
 * the rule for an inversion between two others). */
static int describes_lock(const char *s, size_t len)
{
	static const char *const heads[] = {
		MS_WRAPPER_CALLERS, "destroyed at ", "initialised again at ",
		"its memory used as another kind of lock at ",
	};
	while (len && *s == ' ')
		s++, len--;
	for (size_t i = 0; i < sizeof heads / sizeof heads[0]; i++)
		if (starts_with(s, len, heads[i]))
			return 1;
	static const char mid[] = ", first locked at ";
	return memmem(s, len, mid, sizeof mid - 1) != NULL;
}

/* The lock wrappers a finding shows: each line followed by "through a
 * wrapper, first locked from" ends in the wrapper's frame.  Every lock
 * taken through one shares its frame, so a rule naming it would leave
 * out every finding of those locks. */
static void find_wrappers(const char *text, size_t len, struct candidates *w)
{
	const char *prev = NULL;
	size_t prevlen = 0;
	w->n = 0;
	for (const char *p = text; p < text + len;) {
		const char *nl = memchr(p, '\n', (size_t)(text + len - p));
		size_t l = nl ? (size_t)(nl - p) : (size_t)(text + len - p), lead = 0;
		while (lead < l && p[lead] == ' ')
			lead++;
		if (prev && starts_with(p + lead, l - lead, MS_WRAPPER_CALLERS)) {
			struct words ws;
			words_of(prev, prevlen, &ws);
			unsigned last = last_named(&ws);
			if (last)
				candidate(w, ws.w[last - 1], ws.len[last - 1]);
		}
		prev = p;
		prevlen = l;
		p += l + (nl != NULL);
	}
}

static int is_wrapper(const struct candidates *w, const char *fn, size_t len)
{
	for (unsigned i = 0; i < w->n; i++)
		if (w->len[i] == len && !memcmp(w->w[i], fn, len))
			return 1;
	return 0;
}

/* A rule that would leave this finding out: its kind, and an anchored
 * pattern for a word of its frames -- the first function of the code the
 * finding is about that is no lock wrapper's, then those of the lines
 * that describe its locks (where they were first locked, past a wrapper),
 * else a lock's name -- that no other finding of this report has, and no
 * frame that every stack has.
 * Where no function (but main) is this finding's alone, a variable of its
 * locks that is: two inversions through one helper, of locks in static
 * variables, each get one naming a lock of their own, where they both got
 * the helper's, with "it leaves out 1 other finding here too".
 * Before, the first function whole, unanchored: "transfer" also left out
 * transfer_all's findings, and a lambda's (a frame every std::thread
 * has) every finding in a thread. */
static void suggest(struct ms_fmt *out, const char *all, int k, const char *text, size_t len)
{
	struct candidates code = { .n = 0 }, vars = { .n = 0 }, described = { .n = 0 };
	struct candidates wrappers;
	find_wrappers(text, len, &wrappers);
	for (const char *p = text; p < text + len;) {
		const char *nl = memchr(p, '\n', (size_t)(text + len - p));
		size_t l = nl ? (size_t)(nl - p) : (size_t)(text + len - p);
		struct words ws;
		words_of(p, l, &ws);
		unsigned last = last_named(&ws);
		if (last && !is_wrapper(&wrappers, ws.w[last - 1], ws.len[last - 1]))
			candidate(describes_lock(p, l) ? &described : &code, ws.w[last - 1],
				  ws.len[last - 1]);
		for (unsigned i = 0; i < ws.n; i++)
			if (ws.variable[i])
				candidate(&vars, ws.w[i], ws.len[i]);
		p += l + (nl != NULL);
	}
	for (unsigned i = 0; i < described.n; i++)
		candidate(&code, described.w[i], described.len[i]);
	char rule[MAX_PATTERN], first[MAX_PATTERN];
	first[0] = 0;
	unsigned shared = 0;
	int found = 0;
	int checked = kind_count[k] <= CHECKED_FINDINGS;
	for (int pass = 0; pass < 4 && !found; pass++) {
		const struct candidates *c = pass == 2 ? &vars : &code;
		for (unsigned i = 0; i < c->n && !found; i++) {
			if (round_of(c->w[i], c->len[i], pass == 2) != pass ||
			    !anchored(rule, sizeof rule, c->w[i], c->len[i]))
				continue;
			unsigned others = checked ? others_matched(all, k, text, rule) : 0;
			if (!first[0]) {
				memcpy(first, rule, strlen(rule) + 1);
				shared = others;
			}
			found = others == 0;
		}
	}
	if (!found) {
		if (!first[0])
			return; /* no word to name: frames without functions */
		memcpy(rule, first, strlen(first) + 1);
	}
	char note[96] = "";
	if (!found || !checked) {
		struct ms_fmt nf;
		ms_fmt_init(&nf, note, sizeof note, -1);
		if (!checked)
			ms_fmt(&nf, "; not checked against the %u others of its kind", kind_count[k] - 1);
		else
			ms_fmt(&nf, "; it leaves out %u other finding%s here too", shared,
			       shared == 1 ? "" : "s");
	}
	/* the rule whole, to be copied; what it is on the next line where
	 * both would pass 120 columns (a long C++ name) */
	size_t cols = 18 + strlen(kinds[k].name) + 1 + strlen(rule) + 35 + strlen(note);
	ms_fmt(out, "  to suppress it: %s:%s%s(a line of MUTEXSTAT_SUPPRESSIONS%s)\n",
	       kinds[k].name, rule, cols > 120 ? "\n    " : " ", note);
}

/* The heading of a section that is no finding, a line of its own: a live
 * dump's "WAIT CHAIN:".  Its length, or 0. */
static size_t section_heading_len(const char *s, size_t len)
{
	size_t i = 0;
	while (i < len && ((s[i] >= 'A' && s[i] <= 'Z') || s[i] == ' ' || s[i] == '-'))
		i++;
	return i >= 4 && i + 1 == len && s[0] >= 'A' && s[0] <= 'Z' && s[i] == ':' ? i : 0;
}

/* The line at s: its length, and whether it begins a finding or another
 * section (hlen: its heading's length), which ends the finding before. */
static size_t line_at(const char *s, size_t *hlen)
{
	const char *nl = strchr(s, '\n');
	size_t l = nl ? (size_t)(nl - s) : strlen(s);
	*hlen = ms_suppress_heading_len(s, l);
	if (!*hlen)
		*hlen = section_heading_len(s, l);
	return l + (nl != NULL);
}

/* The blank lines that end text[0, len) (all of it if it is blank):
 * where its body ends. */
static size_t body_of(const char *text, size_t len)
{
	size_t body = len;
	while (body > 1 && text[body - 1] == '\n' && text[body - 2] == '\n')
		body--;
	if (body == 1 && text[0] == '\n')
		body = 0;
	return body;
}

/* The blank lines between two findings printed (pending: after the one
 * before, kept for the next), so that a finding left out takes the
 * blank line before it along: none doubles, none is left at the end. */
struct gap {
	const char *text;
	size_t len;
};

/* One finding (text[0, len), its heading hlen long; 0: the text before
 * the first, as it is): out, or left out by a rule.  Returns 1 if it was
 * a failing one left out, and sets *kept. */
static int one(struct ms_fmt *out, const char *all, const char *text, size_t len,
	       size_t hlen, struct gap *gap, int *kept)
{
	int k = hlen ? kind_of(text, hlen) : -1;
	struct rule *r = k >= 0 && nrules ? matching(k, text, len) : NULL;
	*kept = !r;
	if (r) {
		r->hits++;
		/* a STALL a signal may end was not counted (stall.h) */
		if (!strcmp(kinds[k].name, "stall") &&
		    memmem(text, len, MS_STALL_SIGNAL_CAVEAT, sizeof MS_STALL_SIGNAL_CAVEAT - 1))
			return 0;
		return kinds[k].failing;
	}
	size_t body = body_of(text, len); /* the blank lines after it stay after the rule */
	ms_fmt(out, "%.*s", (int)gap->len, gap->text);
	ms_fmt(out, "%.*s", (int)body, text);
	if (k >= 0)
		suggest(out, all, k, text, body);
	gap->text = text + body;
	gap->len = len - body;
	return 0;
}

int ms_suppress_filter(const char *in, struct ms_fmt *out)
{
	count_kinds(in);
	int removed = 0, kept = 1;
	struct gap gap = { "", 0 };
	const char *chunk = in;
	size_t hlen;
	const char *p = in + line_at(in, &hlen);
	size_t chunk_hlen = hlen;
	for (;;) {
		size_t h = 0;
		while (*p) {
			size_t l = line_at(p, &h);
			if (h)
				break;
			p += l;
		}
		removed += one(out, in, chunk, (size_t)(p - chunk), chunk_hlen, &gap, &kept);
		if (!*p)
			break;
		chunk = p;
		chunk_hlen = h;
		p += line_at(p, &h);
	}
	if (kept) /* the text's own end; after a finding left out, none */
		ms_fmt(out, "%.*s", (int)gap.len, gap.text);
	return removed;
}

void ms_suppress_begin(void)
{
	for (unsigned i = 0; i < nrules; i++)
		rules[i].hits = 0;
}

void ms_suppress_print(struct ms_fmt *f)
{
	if (!ms_opt.suppressions)
		return;
	ms_fmt(f, "\nsuppressions from ");
	ms_fmt_quoted(f, ms_opt.suppressions, 200);
	if (load_error[0]) {
		/* the reason on a line of its own: with the path, one line
		 * would pass the report's 120 columns */
		ms_fmt(f, ": none applied\n  %s\n", load_error);
		if (hint_kinds)
			ms_fmt(f, "  %s\n", kinds_hint);
		return;
	}
	uint64_t all = 0;
	for (unsigned i = 0; i < nrules; i++)
		all += rules[i].hits;
	ms_fmt(f, ": %llu finding%s left out\n", (unsigned long long)all, all == 1 ? "" : "s");
	for (unsigned i = 0; i < nrules; i++) {
		ms_fmt(f, "  line %-4u %s:%s  ", rules[i].line, rules[i].written,
		       rules[i].pattern);
		if (rules[i].hits)
			ms_fmt(f, "%llu\n", (unsigned long long)rules[i].hits);
		else
			ms_fmt(f, "matched nothing\n");
	}
}
