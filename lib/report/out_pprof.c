/* out_pprof.c - the pprof output; see out_pprof.h.
 *
 * The profile is encoded by hand: profile.proto needs varints, fixed field
 * keys and length-delimited messages, which is less code than a protobuf
 * library and its dependencies.  It is built in one buffer of anonymous
 * memory (no malloc: the report may run where malloc is not safe to call
 * again), the string table in another, then gzip'd and written.
 *
 * Field numbers are profile.proto's (github.com/google/pprof, proto/).
 * Repeated fields of a message may come in any order, so each Location and
 * Function is written the first time a sample needs it, just before that
 * sample; the mappings those locations fall in, then the string table,
 * come last. */
#define _GNU_SOURCE
#include "report/out_pprof.h"
#include "base/fds.h"
#include "report/out_modes.h"
#include "base/output.h"
#include "analysis/blame.h"
#include "base/clock.h"
#include "stacks/depot.h"
#include "base/fmt.h"
#include "base/internal.h"
#include "glibc/loader_lock.h"
#include "report/report_stacks.h"
#include "stacks/stack.h"
#include "report/lines.h"
#include "stacks/symbols.h"
#include "core/table.h"
#include "report/kinds.h"

#include <dlfcn.h>
#include <limits.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h> /* types only: libz is opened with dlopen */

/* ---- growable buffers of anonymous memory ------------------------------ */

struct buf {
	uint8_t *p;
	size_t len, cap;
};

static int failed; /* ENOMEM once a buffer could not grow */

static int reserve(struct buf *b, size_t more)
{
	if (failed)
		return -1;
	if (b->len + more <= b->cap)
		return 0;
	size_t cap = b->cap ? b->cap : 1 << 16;
	while (cap < b->len + more)
		cap *= 2;
	void *p = b->p ? mremap(b->p, b->cap, cap, MREMAP_MAYMOVE)
		       : mmap(NULL, cap, PROT_READ | PROT_WRITE,
			      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		failed = ENOMEM;
		return -1;
	}
	b->p = p;
	b->cap = cap;
	return 0;
}

static void put(struct buf *b, const void *p, size_t n)
{
	if (n && !reserve(b, n)) {
		memcpy(b->p + b->len, p, n);
		b->len += n;
	}
}

static void buf_free(struct buf *b)
{
	if (b->p)
		munmap(b->p, b->cap);
	*b = (struct buf){ 0 };
}

/* ---- protobuf encoding ------------------------------------------------- */

enum { VARINT = 0, LEN = 2 };

static int varint_size(uint64_t v)
{
	int n = 1;
	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

static void pb_varint(struct buf *b, uint64_t v)
{
	uint8_t tmp[10];
	int n = 0;
	while (v >= 0x80) {
		tmp[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	tmp[n++] = (uint8_t)v;
	put(b, tmp, (size_t)n);
}

static void pb_key(struct buf *b, unsigned field, unsigned wire)
{
	pb_varint(b, (uint64_t)field << 3 | wire);
}

/* A scalar field; zero, the default, is left out. */
static void pb_uint(struct buf *b, unsigned field, uint64_t v)
{
	if (v) {
		pb_key(b, field, VARINT);
		pb_varint(b, v);
	}
}

/* A packed repeated field of varints. */
static void pb_packed(struct buf *b, unsigned field, const uint64_t *v, int n)
{
	size_t len = 0;
	for (int i = 0; i < n; i++)
		len += (size_t)varint_size(v[i]);
	pb_key(b, field, LEN);
	pb_varint(b, len);
	for (int i = 0; i < n; i++)
		pb_varint(b, v[i]);
}

/* A nested message: begin returns where its body starts; end puts the
 * body's length in front of it. */
static size_t pb_begin(struct buf *b, unsigned field)
{
	pb_key(b, field, LEN);
	return b->len;
}

static void pb_end(struct buf *b, size_t start)
{
	if (failed)
		return;
	size_t len = b->len - start;
	int k = varint_size(len);
	if (reserve(b, (size_t)k))
		return;
	memmove(b->p + start + k, b->p + start, len);
	size_t end = b->len + (size_t)k;
	b->len = start;
	pb_varint(b, len);
	b->len = end;
}

/* profile.proto's field numbers. */
enum {
	PROFILE_SAMPLE_TYPE = 1, PROFILE_SAMPLE, PROFILE_MAPPING,
	PROFILE_LOCATION, PROFILE_FUNCTION, PROFILE_STRING_TABLE,
	PROFILE_TIME_NANOS = 9, PROFILE_DURATION_NANOS, PROFILE_PERIOD_TYPE,
	PROFILE_PERIOD, PROFILE_COMMENT, PROFILE_DEFAULT_SAMPLE_TYPE,
	VALUE_TYPE_TYPE = 1, VALUE_TYPE_UNIT,
	SAMPLE_LOCATION_ID = 1, SAMPLE_VALUE, SAMPLE_LABEL,
	LABEL_KEY = 1, LABEL_STR, LABEL_NUM,
	MAPPING_ID = 1, MAPPING_MEMORY_START, MAPPING_MEMORY_LIMIT,
	MAPPING_FILE_OFFSET, MAPPING_FILENAME, MAPPING_BUILD_ID,
	MAPPING_HAS_FUNCTIONS, MAPPING_HAS_FILENAMES, MAPPING_HAS_LINE_NUMBERS,
	LOCATION_ID = 1, LOCATION_MAPPING_ID, LOCATION_ADDRESS, LOCATION_LINE,
	LINE_FUNCTION_ID = 1, LINE_LINE,
	FUNCTION_ID = 1, FUNCTION_NAME, FUNCTION_SYSTEM_NAME, FUNCTION_FILENAME,
};

/* ---- hash maps: 64-bit key (0 = empty) to 32-bit value ----------------- */

struct map {
	struct buf keys, vals;
	size_t cap, n;
};

static uint64_t mix(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdull;
	k ^= k >> 33;
	return k;
}

/* The slot of key, or the empty slot where it would go.  With `same`, keys
 * may repeat (string hashes) and same(value, arg) picks the right one. */
static size_t map_slot(struct map *m, uint64_t key,
		       int (*same)(uint32_t val, const void *arg), const void *arg)
{
	const uint64_t *keys = (const uint64_t *)m->keys.p;
	const uint32_t *vals = (const uint32_t *)m->vals.p;
	size_t i = mix(key) & (m->cap - 1);
	while (keys[i] && (keys[i] != key || (same && !same(vals[i], arg))))
		i = (i + 1) & (m->cap - 1);
	return i;
}

static int map_init(struct map *m, size_t cap)
{
	*m = (struct map){ .cap = cap };
	if (reserve(&m->keys, cap * 8) || reserve(&m->vals, cap * 4))
		return -1;
	memset(m->keys.p, 0, cap * 8); /* fresh mmap is zero, mremap'd not */
	return 0;
}

static void map_free(struct map *m)
{
	buf_free(&m->keys);
	buf_free(&m->vals);
}

/* Add key (not present) with val; doubles the map when half full. */
static int map_add(struct map *m, size_t slot, uint64_t key, uint32_t val)
{
	((uint64_t *)m->keys.p)[slot] = key;
	((uint32_t *)m->vals.p)[slot] = val;
	if (++m->n * 2 <= m->cap)
		return 0;
	struct map bigger;
	if (map_init(&bigger, m->cap * 2))
		return -1;
	for (size_t i = 0; i < m->cap; i++) {
		uint64_t k = ((uint64_t *)m->keys.p)[i];
		if (!k)
			continue;
		size_t j = mix(k) & (bigger.cap - 1);
		while (((uint64_t *)bigger.keys.p)[j])
			j = (j + 1) & (bigger.cap - 1);
		((uint64_t *)bigger.keys.p)[j] = k;
		((uint32_t *)bigger.vals.p)[j] = ((uint32_t *)m->vals.p)[i];
	}
	bigger.n = m->n;
	map_free(m);
	*m = bigger;
	return 0;
}

/* ---- the profile being built ------------------------------------------- */

struct mapping {      /* an executable line of /proc/self/maps */
	uint64_t start, limit, offset;
	const char *path; /* in maps_text */
	uint32_t id;      /* 0 until a location falls in it */
	int funcs, files, lines; /* every location had one */
};

static struct {
	struct buf pb;        /* the Profile message */
	struct buf strtab;    /* string_table fields, in index order */
	struct buf str_at;    /* per string: uint32 offset, length in strtab */
	struct map strings;   /* hash -> string index */
	struct map locations; /* address -> location id */
	struct map functions; /* name index << 32 | file index -> function id */
	uint32_t nlocations, nfunctions, nmappings_used;
	uint32_t synthetic[4]; /* see synthetic_id */
	struct buf maps_text;
	struct mapping *maps; /* in maps_buf */
	struct buf maps_buf;
	size_t nmaps;
} prof;

struct str_key {
	const char *s;
	size_t n;
};

static int same_string(uint32_t idx, const void *arg)
{
	const struct str_key *k = arg;
	const uint32_t *at = (const uint32_t *)prof.str_at.p + 2 * (size_t)idx;
	/* (clang-tidy's analyzer sees str_at empty here: it does not know
	 * that map_slot only calls this for a key in use, one str() added) */
	return at[1] == k->n && // NOLINT(clang-analyzer-core.NullDereference)
	       !memcmp(prof.strtab.p + at[0], k->s, k->n);
}

/* The index of s in the string table, adding it if new. */
static uint64_t str(const char *s)
{
	struct str_key k = { s, strlen(s) };
	uint64_t h = 1469598103934665603ull;
	for (size_t i = 0; i < k.n; i++)
		h = (h ^ (uint8_t)s[i]) * 1099511628211ull;
	h |= 1;
	if (failed)
		return 0;
	size_t slot = map_slot(&prof.strings, h, same_string, &k);
	if (((uint64_t *)prof.strings.keys.p)[slot])
		return ((uint32_t *)prof.strings.vals.p)[slot];
	uint32_t idx = (uint32_t)(prof.str_at.len / 8);
	pb_key(&prof.strtab, PROFILE_STRING_TABLE, LEN);
	pb_varint(&prof.strtab, k.n);
	uint32_t at[2] = { (uint32_t)prof.strtab.len, (uint32_t)k.n };
	put(&prof.strtab, s, k.n);
	put(&prof.str_at, at, sizeof at);
	if (map_add(&prof.strings, slot, h, idx))
		return 0;
	return idx;
}

/* ---- mappings: /proc/self/maps and build ids ---------------------------- */

static void read_maps(void)
{
	/* this thread's view: the process's is empty once main has called
	 * pthread_exit (symbols.c) */
	int fd = open("/proc/thread-self/maps", O_RDONLY | O_CLOEXEC);
	if (fd < 0) /* Linux before 3.17 */
		fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	for (;;) {
		if (reserve(&prof.maps_text, 8192))
			break;
		ssize_t n = read(fd, prof.maps_text.p + prof.maps_text.len, 8191);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		prof.maps_text.len += (size_t)n;
	}
	ms_fd_close(fd);
	if (reserve(&prof.maps_text, 1))
		return;
	prof.maps_text.p[prof.maps_text.len] = 0;
	char *line = (char *)prof.maps_text.p;
	while (line && *line) {
		char *next = strchr(line, '\n');
		if (next)
			*next++ = 0;
		unsigned long long start, limit, offset;
		char perms[8];
		int path_at = 0;
		/* the kernel's own text: the number of fields read is checked */
		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %n", // NOLINT(cert-err34-c)
			   &start, &limit, perms, &offset, &path_at) >= 4 &&
		    perms[2] == 'x') {
			struct mapping m = { start, limit, offset,
					     path_at ? line + path_at : "", 0, 1, 1, 1 };
			put(&prof.maps_buf, &m, sizeof m);
		}
		line = next;
	}
	prof.maps = (struct mapping *)prof.maps_buf.p;
	prof.nmaps = prof.maps_buf.len / sizeof(struct mapping);
	/* pprof takes the first mapping for the main binary ("File:" in its
	 * output): the program's own, whatever frame came first -- mapping
	 * ids went in order of first use, and a program whose first frame
	 * was in libsqlite3 was named libsqlite3 */
	char exe[4096];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n <= 0)
		return;
	exe[n] = 0;
	for (size_t i = 0; i < prof.nmaps; i++)
		if (!strcmp(prof.maps[i].path, exe)) {
			prof.maps[i].id = ++prof.nmappings_used;
			break;
		}
}

static struct mapping *mapping_of(uint64_t addr)
{
	for (size_t i = 0; i < prof.nmaps; i++)
		if (addr >= prof.maps[i].start && addr < prof.maps[i].limit)
			return &prof.maps[i];
	return NULL;
}

struct build_id {
	uint64_t addr;
	char hex[2 * 64 + 1];
};

/* dl_iterate_phdr: the GNU build-id note of the module loaded at addr. */
static int find_build_id(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	struct build_id *want = arg;
	int here = 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uint64_t start = info->dlpi_addr + ph->p_vaddr;
		if (ph->p_type == PT_LOAD && want->addr >= start &&
		    want->addr < start + ph->p_memsz)
			here = 1;
	}
	if (!here)
		return 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_NOTE)
			continue;
		const uint8_t *p = (const uint8_t *)(info->dlpi_addr + ph->p_vaddr);
		const uint8_t *end = p + ph->p_memsz;
		size_t align = ph->p_align == 8 ? 8 : 4;
		while (p + sizeof(ElfW(Nhdr)) <= end) {
			const ElfW(Nhdr) *nh = (const ElfW(Nhdr) *)p;
			const uint8_t *name = p + sizeof *nh;
			const uint8_t *desc =
				name + ((nh->n_namesz + align - 1) & ~(align - 1));
			if (desc + nh->n_descsz > end)
				break;
			if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 &&
			    !memcmp(name, "GNU", 4) && nh->n_descsz <= 64) {
				for (unsigned j = 0; j < nh->n_descsz; j++)
					(void)snprintf(want->hex + 2 * (size_t)j, 3, "%02x", desc[j]);
				return 1;
			}
			p = desc + ((nh->n_descsz + align - 1) & ~(align - 1));
		}
	}
	return 1; /* the module, without a build id */
}

static void write_mappings(void)
{
	for (uint32_t id = 1; id <= prof.nmappings_used; id++) {
		const struct mapping *m = NULL;
		for (size_t i = 0; i < prof.nmaps && !m; i++)
			if (prof.maps[i].id == id)
				m = &prof.maps[i];
		if (!m) /* never: ids are given to mappings in prof.maps */
			continue;
		struct build_id bid = { m->start, "" };
		if (!ms_loader_locked_since_fork()) /* else it waits for ever */
			dl_iterate_phdr(find_build_id, &bid);
		size_t at = pb_begin(&prof.pb, PROFILE_MAPPING);
		pb_uint(&prof.pb, MAPPING_ID, id);
		pb_uint(&prof.pb, MAPPING_MEMORY_START, m->start);
		pb_uint(&prof.pb, MAPPING_MEMORY_LIMIT, m->limit);
		pb_uint(&prof.pb, MAPPING_FILE_OFFSET, m->offset);
		pb_uint(&prof.pb, MAPPING_FILENAME, str(m->path));
		pb_uint(&prof.pb, MAPPING_BUILD_ID, str(bid.hex));
		pb_uint(&prof.pb, MAPPING_HAS_FUNCTIONS, (uint64_t)m->funcs);
		pb_uint(&prof.pb, MAPPING_HAS_FILENAMES, (uint64_t)m->files);
		pb_uint(&prof.pb, MAPPING_HAS_LINE_NUMBERS, (uint64_t)m->lines);
		pb_end(&prof.pb, at);
	}
}

/* ---- functions and locations ------------------------------------------- */

static uint32_t function_id(const char *name, const char *file)
{
	uint64_t n = str(name), f = str(file);
	uint64_t key = n << 32 | f;
	if (failed)
		return 0;
	size_t slot = map_slot(&prof.functions, key, NULL, NULL);
	if (((uint64_t *)prof.functions.keys.p)[slot])
		return ((uint32_t *)prof.functions.vals.p)[slot];
	uint32_t id = ++prof.nfunctions;
	size_t at = pb_begin(&prof.pb, PROFILE_FUNCTION);
	pb_uint(&prof.pb, FUNCTION_ID, id);
	pb_uint(&prof.pb, FUNCTION_NAME, n);
	pb_uint(&prof.pb, FUNCTION_SYSTEM_NAME, n);
	pb_uint(&prof.pb, FUNCTION_FILENAME, f);
	pb_end(&prof.pb, at);
	map_add(&prof.functions, slot, key, id);
	return id;
}

static void write_location(uint32_t id, uint32_t mapping, uint64_t address,
			   uint32_t function, int line)
{
	size_t at = pb_begin(&prof.pb, PROFILE_LOCATION);
	pb_uint(&prof.pb, LOCATION_ID, id);
	pb_uint(&prof.pb, LOCATION_MAPPING_ID, mapping);
	pb_uint(&prof.pb, LOCATION_ADDRESS, address);
	size_t l = pb_begin(&prof.pb, LOCATION_LINE);
	pb_uint(&prof.pb, LINE_FUNCTION_ID, function);
	pb_uint(&prof.pb, LINE_LINE, line > 0 ? (uint64_t)line : 0);
	pb_end(&prof.pb, l);
	pb_end(&prof.pb, at);
}

/* The location of a return address of a captured stack.  Its address is
 * the one before (inside the call instruction), as profile.proto asks of
 * non-leaf frames and as the symbolizer looks lines up. */
static uint32_t location_id(uintptr_t addr)
{
	if (failed)
		return 0;
	size_t slot = map_slot(&prof.locations, addr, NULL, NULL);
	if (((uint64_t *)prof.locations.keys.p)[slot])
		return ((uint32_t *)prof.locations.vals.p)[slot];
	struct ms_frame fr;
	ms_symbolize_frame(addr, 1, &fr);
	char name[sizeof fr.func + sizeof fr.module + 24];
	if (fr.func[0])
		(void)snprintf(name, sizeof name, "%s", fr.func);
	else if (fr.module[0])
		(void)snprintf(name, sizeof name, "%s+0x%lx", fr.module, fr.offset);
	else
		(void)snprintf(name, sizeof name, "0x%lx", (unsigned long)addr);
	uint32_t function = function_id(name, fr.file);
	struct mapping *m = mapping_of(addr - 1);
	if (m) {
		if (!m->id)
			m->id = ++prof.nmappings_used;
		m->funcs &= fr.func[0] != 0;
		m->files &= fr.file[0] != 0;
		m->lines &= fr.line > 0;
	}
	uint32_t id = ++prof.nlocations;
	write_location(id, m ? m->id : 0, addr - 1, function, fr.line);
	map_add(&prof.locations, slot, addr, id);
	return id;
}

/* A synthetic frame: the root of every stack (which side), or the leaf
 * standing for a stack that is not there (as the text report says it). */
enum { WAITING, HOLDING, NOT_CAPTURED, MISSED };

static uint32_t synthetic_id(int which)
{
	static const char *const names[] = {
		[WAITING] = "waiting", [HOLDING] = "holding",
		[NOT_CAPTURED] = "[stack not captured]",
		[MISSED] = "[not attributed: whose hold it was is not known]",
	};
	if (!prof.synthetic[which]) {
		prof.synthetic[which] = ++prof.nlocations;
		write_location(prof.synthetic[which], 0, 0,
			       function_id(names[which], ""), 0);
	}
	return prof.synthetic[which];
}

/* ---- samples ------------------------------------------------------------ */

static void label(uint64_t key, uint64_t value)
{
	size_t at = pb_begin(&prof.pb, SAMPLE_LABEL);
	pb_uint(&prof.pb, LABEL_KEY, key);
	pb_uint(&prof.pb, LABEL_STR, value);
	pb_end(&prof.pb, at);
}

/* What labels a sample besides its side: the lock (mutex=, mutex_name=
 * if named), its kind of lock (kind=), and for a read-write lock the
 * mode of the sample's stack (mode=), where its calls tell it (out_modes.h;
 * calls NULL for other locks). */
struct sample_labels {
	const char *mutex, *name, *kind;
	const struct ms_out_calls *calls;
	const char *symbol; /* the variable the lock is, or NULL */
};

/* What every sample says of the process, and the span profiled. */
static struct {
	uint64_t k_program, v_program, k_pid, v_pid, k_host, v_host;
	const struct ms_span *span;
} process;

/* The samples of one mutex life's (birth) or site line's (0) blame lines
 * in list, labelled as `l` says.  The lines' ticks are turned into
 * nanoseconds as running sums per side (each line gets ns(sum so far) -
 * ns(sum before it)), so each side adds up to
 * exactly ns(its total ticks): a wait is charged to both sides, and the
 * sides then agree to the nanosecond, however the ticks are split between
 * stacks. */
static void samples(const struct ms_blame *list, uint64_t birth,
		    const struct sample_labels *l)
{
	uint64_t ticks[2] = { 0, 0 }, ns[2] = { 0, 0 };
	for (const struct ms_blame *b = list; b; b = b->next) {
		if (b->birth != birth || failed)
			continue;
		uint64_t count = LOAD(&b->count), total = LOAD(&b->total);
		if (process.span) /* (the report's own lines: it takes their share) */
			ms_blame_since((struct ms_blame *)b, MS_BLAME_PPROF, &count, &total);
		if (!count)
			continue;
		int side = b->kind == MS_BLAME_WAIT ? WAITING : HOLDING;
		uint64_t locs[MS_MAX_FRAMES + 2];
		const uintptr_t *frames;
		int n = ms_depot_get(b->stack, &frames), k = 0;
		if (n > MS_MAX_FRAMES)
			n = MS_MAX_FRAMES;
		if (!n)
			locs[k++] = synthetic_id(b->stack || side == WAITING
							 ? NOT_CAPTURED : MISSED);
		int shown = n ? ms_stack_shown(frames, n) : 0;
		for (int i = 0; i < shown; i++)
			locs[k++] = location_id(frames[i]);
		locs[k++] = synthetic_id(side);
		uint64_t k_side = str("side");
		uint64_t v_side = str(side == WAITING ? "waiting" : "holding");
		uint64_t k_mutex = str("mutex"), v_mutex = str(l->mutex);
		uint64_t k_name = str("mutex_name"), v_name = l->name ? str(l->name) : 0;
		uint64_t k_sym = str("mutex_symbol"), v_sym = l->symbol ? str(l->symbol) : 0;
		uint64_t k_kind = str("kind"), v_kind = str(l->kind);
		const char *mode = l->calls ? ms_out_stack_mode(l->calls, b->stack) : NULL;
		uint64_t k_mode = str("mode"), v_mode = mode ? str(mode) : 0;
		ticks[side] += total;
		uint64_t delay = ms_ticks_to_ns(ticks[side]) - ns[side];
		ns[side] += delay;
		uint64_t values[2] = { count, delay };
		size_t at = pb_begin(&prof.pb, PROFILE_SAMPLE);
		pb_packed(&prof.pb, SAMPLE_LOCATION_ID, locs, k);
		pb_packed(&prof.pb, SAMPLE_VALUE, values, 2);
		label(k_side, v_side);
		label(k_mutex, v_mutex);
		if (l->name)
			label(k_name, v_name);
		if (l->symbol)
			label(k_sym, v_sym);
		label(k_kind, v_kind);
		if (mode)
			label(k_mode, v_mode);
		label(process.k_program, process.v_program);
		size_t pid_at = pb_begin(&prof.pb, SAMPLE_LABEL);
		pb_uint(&prof.pb, LABEL_KEY, process.k_pid);
		pb_uint(&prof.pb, LABEL_NUM, process.v_pid);
		pb_end(&prof.pb, pid_at);
		label(process.k_host, process.v_host);
		pb_end(&prof.pb, at);
	}
}

static void one_mutex(uintptr_t key, uint32_t r, void *arg)
{
	(void)arg;
	uint64_t birth = LOAD(&ms_rec(r)->birth);
	const struct ms_blame *list = ms_blame_of(r, birth);
	if (!list)
		return;
	char addr[32], var[MS_VARIABLE_CAP];
	(void)snprintf(addr, sizeof addr, "%p", (void *)key);
	uint32_t flags = LOAD(&ms_rec(r)->flags);
	const struct ms_cold *c = &ms_table.cold[r]; /* list: a cold part */
	struct ms_out_calls calls;
	struct sample_labels l = { addr, LOAD(&c->name), ms_out_lock_name(flags), NULL,
				   ms_lock_symbol(key, var, sizeof var) ? var : NULL };
	if (ms_lock_class(flags) == MS_CLASS_RWLOCK) {
		ms_out_calls_of(&calls, r, NULL);
		l.calls = &calls;
	}
	samples(list, birth, &l);
}

/* The lives that ended, by site line: labelled mutex="ended at SITE". */
static void one_site(const struct ms_site *s, const struct ms_blame *lines, void *arg)
{
	(void)arg;
	char label_text[200], site[180];
	(void)snprintf(label_text, sizeof label_text, "ended at %s",
		       ms_site_name(s->site, site, sizeof site, 1));
	uint32_t classes = LOAD(&s->classes);
	struct ms_out_calls calls;
	struct sample_labels l = { label_text, LOAD(&s->name), ms_out_classes_name(classes),
				   NULL, NULL };
	if (classes == 1u << MS_CLASS_RWLOCK) {
		ms_out_calls_of(&calls, 0, s);
		l.calls = &calls;
	}
	samples(lines, 0, &l);
}

static void value_type(unsigned field, const char *type, const char *unit)
{
	uint64_t t = str(type), u = str(unit);
	size_t at = pb_begin(&prof.pb, field);
	pb_uint(&prof.pb, VALUE_TYPE_TYPE, t);
	pb_uint(&prof.pb, VALUE_TYPE_UNIT, u);
	pb_end(&prof.pb, at);
}

/* ---- gzip --------------------------------------------------------------- */

struct zlib {
	__typeof__(deflateInit2_) *init;
	__typeof__(deflate) *deflate;
	__typeof__(deflateEnd) *end;
};

static int gzip_zlib(int fd, const struct zlib *z, const uint8_t *p, size_t n)
{
	z_stream s = { 0 };
	if (z->init(&s, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16 /* gzip */, 8,
		    Z_DEFAULT_STRATEGY, ZLIB_VERSION, (int)sizeof s) != Z_OK)
		return ENOMEM;
	uint8_t out[16384];
	int err = 0, rc;
	s.next_in = (Bytef *)p;
	s.avail_in = (uInt)n; /* profiles stay far below 4 GiB */
	do {
		s.next_out = out;
		s.avail_out = sizeof out;
		rc = z->deflate(&s, Z_FINISH);
		if (rc == Z_STREAM_ERROR)
			err = EIO;
		else
			err = ms_write_all(fd, (const char *)out, sizeof out - s.avail_out);
	} while (!err && rc != Z_STREAM_END);
	z->end(&s);
	return err;
}

/* Without zlib: a gzip stream of stored (uncompressed) blocks. */
static int gzip_stored(int fd, const uint8_t *p, size_t n)
{
	static const uint8_t header[10] = { 0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3 };
	int err = ms_write_all(fd, (const char *)header, sizeof header);
	uint32_t crc = 0xffffffffu;
	for (size_t i = 0; i < n; i++) {
		crc ^= p[i];
		for (int j = 0; j < 8; j++)
			crc = crc >> 1 ^ (0xedb88320u & -(crc & 1));
	}
	crc = ~crc;
	size_t done = 0;
	do {
		size_t len = n - done > 65535 ? 65535 : n - done;
		uint8_t h[5] = { done + len == n, (uint8_t)len, (uint8_t)(len >> 8),
				 (uint8_t)~len, (uint8_t)(~len >> 8) };
		if (!err)
			err = ms_write_all(fd, (const char *)h, sizeof h);
		if (!err)
			err = ms_write_all(fd, (const char *)p + done, len);
		done += len;
	} while (done < n);
	uint8_t tail[8];
	for (int i = 0; i < 4; i++) {
		tail[i] = (uint8_t)(crc >> 8 * i);
		tail[4 + i] = (uint8_t)(n >> 8 * i);
	}
	return err ? err : ms_write_all(fd, (const char *)tail, sizeof tail);
}

/* libz stays open once opened: a dlclose that unloaded it (a program
 * without zlib, and no libdw, which needs it) would count as a library
 * the program unloaded (ms_symbols_unloaded) in the formats and reports
 * written after this one. */
static void *zlib_handle;

/* Whether the program defines zlib functions of its own (node, varnishd:
 * a copy of zlib built in, its functions exported).  libz.so's functions
 * call each other through its PLT, which finds the program's first: its
 * deflateInit2_ would set up a stream for the program's deflateReset,
 * whose state is another zlib's (node crashed).  Then the profile goes
 * out uncompressed, in gzip's stored blocks. */
static int zlib_shadowed(void *h)
{
	static const char *const called_inside[] = {
		"deflateInit2_", "deflateReset", "deflateResetKeep", "deflate",
		"deflateEnd", "crc32", "adler32", "crc32_z", "adler32_z",
	};
	for (size_t i = 0; i < sizeof called_inside / sizeof *called_inside; i++) {
		void *global = dlsym(RTLD_DEFAULT, called_inside[i]);
		if (global && global != dlsym(h, called_inside[i]))
			return 1;
	}
	return 0;
}

static int write_gzip(int fd, const uint8_t *p, size_t n)
{
	void *h = __atomic_load_n(&zlib_handle, __ATOMIC_ACQUIRE);
	/* else dlopen waits for ever */
	if (!h && !ms_loader_locked_since_fork() && !ms_loader_busy()) {
		h = dlopen("libz.so.1", RTLD_LAZY | RTLD_LOCAL);
		void *none = NULL;
		if (h && !__atomic_compare_exchange_n(&zlib_handle, &none, h, 0,
						      __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
			dlclose(h); /* another report's open holds it */
		h = __atomic_load_n(&zlib_handle, __ATOMIC_ACQUIRE);
	}
	struct zlib z = { 0 };
	if (h && !zlib_shadowed(h)) {
		z.init = (__typeof__(z.init))dlsym(h, "deflateInit2_");
		z.deflate = (__typeof__(z.deflate))dlsym(h, "deflate");
		z.end = (__typeof__(z.end))dlsym(h, "deflateEnd");
	}
	int err = z.init && z.deflate && z.end ? gzip_zlib(fd, &z, p, n)
					       : gzip_stored(fd, p, n);
	return err;
}

/* ---- the profile -------------------------------------------------------- */

/* The labels of the process: program and host as strings, pid as a
 * number (go tool pprof -tagfocus=pid=1234 reads a number as a number). */
static void process_labels(const struct ms_span *span)
{
	char host[HOST_NAME_MAX + 1];
	if (gethostname(host, sizeof host) != 0)
		strcpy(host, "unknown");
	host[sizeof host - 1] = 0; /* (a name cut to fit has none) */
	process.k_program = str("program");
	process.v_program = str(ms_program_name());
	process.k_pid = str("pid");
	process.v_pid = (uint64_t)getpid();
	process.k_host = str("host");
	process.v_host = str(host);
	process.span = span;
}

int ms_write_pprof(int fd, const struct ms_span *span)
{
	memset(&prof, 0, sizeof prof);
	failed = 0;
	map_init(&prof.strings, 1024);
	map_init(&prof.locations, 1024);
	map_init(&prof.functions, 1024);
	str(""); /* index 0, as the format requires */
	read_maps();

	value_type(PROFILE_SAMPLE_TYPE, "contentions", "count");
	value_type(PROFILE_SAMPLE_TYPE, "delay", "nanoseconds");
	pb_uint(&prof.pb, PROFILE_DEFAULT_SAMPLE_TYPE, str("delay"));
	value_type(PROFILE_PERIOD_TYPE, "contentions", "count");
	pb_uint(&prof.pb, PROFILE_PERIOD, 1);
	/* when what it covers began, and how long: a series of interval
	 * profiles lines up on a time axis, the run's starts with the first */
	if (span) {
		pb_uint(&prof.pb, PROFILE_TIME_NANOS, span->start_ns);
		pb_uint(&prof.pb, PROFILE_DURATION_NANOS, span->duration_ns);
	} else {
		uint64_t mono, wall;
		ms_clock_run_start(&mono, &wall);
		pb_uint(&prof.pb, PROFILE_TIME_NANOS, wall);
		pb_uint(&prof.pb, PROFILE_DURATION_NANOS, ms_run_ns());
	}
	process_labels(span);
	char comment[160];
	if (span)
		(void)snprintf(comment, sizeof comment, "%s (pid %d), interval %u", /* may be cut */
			       ms_program_name(), (int)getpid(), span->n);
	else
		(void)snprintf(comment, sizeof comment, "%s (pid %d)", /* may be cut */
			       ms_program_name(), (int)getpid());
	pb_uint(&prof.pb, PROFILE_COMMENT, str("mutexstat"));
	pb_uint(&prof.pb, PROFILE_COMMENT, str(comment));

	ms_table_each(one_mutex, NULL);
	ms_blame_each_site(one_site, NULL);
	write_mappings();
	put(&prof.pb, prof.strtab.p, prof.strtab.len);

	int err = failed ? failed : write_gzip(fd, prof.pb.p, prof.pb.len);
	buf_free(&prof.pb);
	buf_free(&prof.strtab);
	buf_free(&prof.str_at);
	buf_free(&prof.maps_text);
	buf_free(&prof.maps_buf);
	map_free(&prof.strings);
	map_free(&prof.locations);
	map_free(&prof.functions);
	if (err)
		errno = err;
	return err ? -1 : 0;
}
