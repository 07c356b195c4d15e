// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* decoders.c - map key fields to label values (decoders.h). */
#define _GNU_SOURCE
#include "uprog/decoders.h"

#include <bpf/bpf.h>
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/bpf.h>
#include <regex.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sys/cgroup_cache.h"
#include "sys/disk_cache.h"
#include "sys/disks.h"
#include "sys/ksyms.h"
#include "syscall_names.h"
#include "util/buf.h"
#include "util/rawint.h"

/* Intermediate values of a chain; a final value goes to the caller's out. */
#define SCRATCH_LEN 4096

/* ---- the env --------------------------------------------------------- */

struct decoder_env {
	struct ksyms ksyms;
	struct disk_cache disks;
	struct cgroup_cache cgroups;
};

static void path_or(char *dst, const char *given, const char *dflt)
{
	size_t len;

	snprintf(dst, PATH_MAX, "%s", given ? given : dflt);
	/* The walk's relative paths start after the root: no trailing slash. */
	len = strlen(dst);
	while (len > 1 && dst[len - 1] == '/')
		dst[--len] = '\0';
}

struct decoder_env *decoder_env_new(const struct decoder_env_paths *paths)
{
	struct decoder_env_paths none = { 0 };
	struct decoder_env *env = calloc(1, sizeof(*env));
	char path[PATH_MAX];

	if (!env)
		return NULL;
	if (!paths)
		paths = &none;
	path_or(path, paths->kallsyms, "/proc/kallsyms");
	ksyms_init(&env->ksyms, path);
	path_or(path, paths->sys_dev_block, "/sys/dev/block");
	disk_cache_init(&env->disks, path);
	path_or(path, paths->cgroup_root, "/sys/fs/cgroup");
	cgroup_cache_init(&env->cgroups, path);
	return env;
}

void decoder_env_free(struct decoder_env *env)
{
	if (!env)
		return;
	ksyms_free(&env->ksyms);
	disk_cache_free(&env->disks);
	cgroup_cache_free(&env->cgroups);
	free(env);
}

void decoder_env_scrape_done(struct decoder_env *env)
{
	disk_cache_scrape_done(&env->disks);
}

void decoder_env_forget_disk(struct decoder_env *env, uint32_t dev)
{
	disk_cache_forget(&env->disks, dev);
}

void decoder_env_cache_sizes(const struct decoder_env *env, struct decoder_cache_sizes *out)
{
	*out = (struct decoder_cache_sizes){
		.majorminor = disk_cache_count(&env->disks),
		.majorminor_cap = DISK_CACHE_CAP,
		.cgroup = cgroup_cache_count(&env->cgroups),
		.cgroup_cap = CGROUP_CACHE_CAP,
		.ksyms = ksyms_count(&env->ksyms),
	};
}

/* ---- one decoder ----------------------------------------------------- */

/* The value a decoder reads: the field's bytes (first) or a string. */
struct dinput {
	const unsigned char *raw;
	size_t size;
	const char *str;
};

struct step {
	enum udec_kind kind;
	const struct udec_conf *conf; /* static_map's lists, allow_unknown */
	regex_t re;
	bool has_re;
	const char *replace;
	int map_fd;
	uint64_t *ips; /* kstack: one map value */
	size_t nips;
};

struct label_decoder {
	unsigned size;
	struct step *step;
	size_t nsteps;
	char buf[2][SCRATCH_LEN];
};

typedef int (*decode_fn)(const struct step *s, struct decoder_env *env, const struct dinput *in,
			 char *out, size_t outlen);

/* One decoder: how it decodes, and the field sizes it takes first. */
struct decoder_kind {
	decode_fn fn;
	unsigned sizes;
	const char *sizes_text;
	/* dec_named's: the system's name for a number, and how the number is
	 * written when the system has none. */
	const char *(*name_of)(struct decoder_env *env, uint64_t v);
	void (*number)(uint64_t v, char *out, size_t outlen);
};

static const struct decoder_kind *kind_of(enum udec_kind k);

/* "123" or "0x7b", nothing else (no octal, no trailing junk). */
static int parse_num(const char *s, bool *neg, uint64_t *mag)
{
	int base = 10;
	char *end;

	*neg = *s == '-';
	s += *neg;
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		s += 2;
	}
	/* strtoull would take spaces and a sign here. */
	if (!(base == 16 ? isxdigit((unsigned char)*s) : isdigit((unsigned char)*s)))
		return -EINVAL;
	errno = 0;
	*mag = strtoull(s, &end, base);
	return errno || *end ? -EINVAL : 0;
}

static bool is_num_size(size_t size)
{
	return size == 1 || size == 2 || size == 4 || size == 8;
}

static int in_u64(const struct dinput *in, uint64_t *v)
{
	bool neg;

	if (in->str)
		return parse_num(in->str, &neg, v) || neg ? -EINVAL : 0;
	if (!is_num_size(in->size))
		return -EINVAL;
	*v = rawint_unsigned(in->raw, in->size);
	return 0;
}

/* Signed: errnos and stack ids are negative on errors. */
static int in_s64(const struct dinput *in, int64_t *v)
{
	uint64_t mag;
	bool neg;

	if (in->str) {
		if (parse_num(in->str, &neg, &mag) || mag > (uint64_t)INT64_MAX + neg)
			return -EINVAL;
		*v = neg ? (int64_t)(0 - mag) : (int64_t)mag;
		return 0;
	}
	if (!is_num_size(in->size))
		return -EINVAL;
	*v = rawint_signed(in->raw, in->size);
	return 0;
}

/*
 * The n chars at s into out, truncated to fit and terminated: what snprintf
 * "%.*s" writes, without a printf per label (a scrape decodes tens of
 * thousands).
 */
static void put_bytes(char *out, size_t outlen, const char *s, size_t n)
{
	if (!outlen)
		return;
	if (n >= outlen)
		n = outlen - 1;
	memcpy(out, s, n);
	out[n] = '\0';
}

static void put_str(char *out, size_t outlen, const char *s)
{
	put_bytes(out, outlen, s, strlen(s));
}

/* The field's bytes up to the first NUL, or all of them. */
static void raw_string(const struct dinput *in, char *out, size_t outlen)
{
	const unsigned char *nul = memchr(in->raw, '\0', in->size);

	put_bytes(out, outlen, (const char *)in->raw, nul ? (size_t)(nul - in->raw) : in->size);
}

static int dec_uint(const struct step *s, struct decoder_env *env, const struct dinput *in,
		    char *out, size_t outlen)
{
	uint64_t v;

	(void)s;
	(void)env;
	if (in_u64(in, &v))
		return -EINVAL;
	format_decimal(out, outlen, v, false);
	return DECODE_OK;
}

static void hex_bytes(const unsigned char *raw, size_t size, char *out, size_t outlen)
{
	size_t o = 0;

	for (size_t i = 0; i < size && o + 3 <= outlen; i++, o += 2)
		snprintf(out + o, 3, "%02x", raw[i]);
	if (outlen)
		out[o < outlen ? o : outlen - 1] = '\0';
}

static int dec_hex(const struct step *s, struct decoder_env *env, const struct dinput *in,
		   char *out, size_t outlen)
{
	uint64_t v;

	(void)s;
	(void)env;
	if (!in->str && !is_num_size(in->size)) {
		hex_bytes(in->raw, in->size, out, outlen);
		return DECODE_OK;
	}
	if (in_u64(in, &v))
		return -EINVAL;
	snprintf(out, outlen, "0x%" PRIx64, v);
	return DECODE_OK;
}

static int dec_string(const struct step *s, struct decoder_env *env, const struct dinput *in,
		      char *out, size_t outlen)
{
	(void)s;
	(void)env;
	if (in->str)
		put_str(out, outlen, in->str);
	else
		raw_string(in, out, outlen);
	return DECODE_OK;
}

static const char *ksym_name(struct decoder_env *env, uint64_t v)
{
	return ksyms_lookup(&env->ksyms, v);
}

static const char *disk_name(struct decoder_env *env, uint64_t v)
{
	/* The kernel's dev_t is 32 bits; more is no disk. */
	return v <= UINT32_MAX ? disk_cache_name(&env->disks, (uint32_t)v) : NULL;
}

static const char *cgroup_path(struct decoder_env *env, uint64_t v)
{
	return cgroup_cache_path(&env->cgroups, v);
}

static void hex_number(uint64_t v, char *out, size_t outlen)
{
	snprintf(out, outlen, "0x%" PRIx64, v);
}

static void majorminor_number(uint64_t v, char *out, size_t outlen)
{
	disk_number((uint32_t)v, out, outlen);
}

static void decimal_number(uint64_t v, char *out, size_t outlen)
{
	format_decimal(out, outlen, v, false);
}

/* ksym, majorminor and cgroup: a number the system may have a name for
 * (their rows' name_of and number). */
static int dec_named(const struct step *s, struct decoder_env *env, const struct dinput *in,
		     char *out, size_t outlen)
{
	const char *name;
	uint64_t v;

	if (in_u64(in, &v))
		return -EINVAL;
	name = kind_of(s->kind)->name_of(env, v);
	if (name)
		put_str(out, outlen, name);
	else
		kind_of(s->kind)->number(v, out, outlen);
	return DECODE_OK;
}

/* First decoders of the string kinds read the field as a string. */
static const char *in_str(const struct dinput *in, char *buf, size_t len)
{
	if (in->str)
		return in->str;
	raw_string(in, buf, len);
	return buf;
}

static int dec_static_map(const struct step *s, struct decoder_env *env, const struct dinput *in,
			  char *out, size_t outlen)
{
	char buf[SCRATCH_LEN];
	const char *v = in_str(in, buf, sizeof(buf));

	(void)env;
	for (size_t i = 0; i < s->conf->nmap; i++)
		if (!strcmp(v, s->conf->from[i])) {
			put_str(out, outlen, s->conf->to[i]);
			return DECODE_OK;
		}
	put_str(out, outlen, s->conf->allow_unknown ? v : "unknown");
	return DECODE_OK;
}

/* The replacement with \0..\9 taken from the match's groups. */
static void expand(const char *tmpl, const char *v, const regmatch_t *m, char *out, size_t outlen)
{
	size_t o = 0;

	for (const char *t = tmpl; *t && o + 1 < outlen; t++) {
		if (t[0] == '\\' && t[1] >= '0' && t[1] <= '9') {
			const regmatch_t *g = &m[t[1] - '0'];

			for (regoff_t i = g->rm_so; g->rm_so >= 0 && i < g->rm_eo && o + 1 < outlen;
			     i++)
				out[o++] = v[i];
			t++;
		} else {
			out[o++] = *t;
		}
	}
	if (outlen)
		out[o] = '\0';
}

static int dec_regexp(const struct step *s, struct decoder_env *env, const struct dinput *in,
		      char *out, size_t outlen)
{
	char buf[SCRATCH_LEN];
	const char *v = in_str(in, buf, sizeof(buf));
	regmatch_t m[10];

	(void)env;
	if (regexec(&s->re, v, 10, m, 0))
		return DECODE_DROP;
	if (s->replace)
		expand(s->replace, v, m, out, outlen);
	else
		put_str(out, outlen, v);
	return DECODE_OK;
}

static int dec_syscall(const struct step *s, struct decoder_env *env, const struct dinput *in,
		       char *out, size_t outlen)
{
	const size_t n = sizeof(syscall_names) / sizeof(syscall_names[0]);
	int64_t v;

	(void)s;
	(void)env;
	if (in_s64(in, &v))
		return -EINVAL;
	if (v >= 0 && (uint64_t)v < n && syscall_names[v])
		put_str(out, outlen, syscall_names[v]);
	else
		snprintf(out, outlen, "%" PRId64, v);
	return DECODE_OK;
}

static int dec_errno(const struct step *s, struct decoder_env *env, const struct dinput *in,
		     char *out, size_t outlen)
{
	const char *name = NULL;
	int64_t v;

	(void)s;
	(void)env;
	if (in_s64(in, &v))
		return -EINVAL;
	/* Kernel functions return -ENOENT, user space sets errno = ENOENT. */
	if (v && v > -INT_MAX && v <= INT_MAX)
		name = strerrorname_np((int)(v < 0 ? -v : v));
	if (name)
		put_str(out, outlen, name);
	else
		snprintf(out, outlen, "%" PRId64, v);
	return DECODE_OK;
}

/* Appends one frame; false once out is full (the rest is cut off). */
static bool append_frame(char *out, size_t outlen, size_t *o, const char *frame)
{
	int n = snprintf(out + *o, outlen - *o, "%s%s", *o ? ";" : "", frame);

	if (n < 0 || (size_t)n >= outlen - *o) {
		out[outlen - 1] = '\0';
		*o = outlen - 1;
		return false;
	}
	*o += (size_t)n;
	return true;
}

/* The stack's frames, outermost first (flame-graph order): the map holds
 * them innermost first, ended by a 0 when shorter than the value. */
static void format_stack(struct decoder_env *env, const uint64_t *ips, size_t nips, char *out,
			 size_t outlen)
{
	size_t depth = 0, o = 0;
	char hex[32];

	while (depth < nips && ips[depth])
		depth++;
	out[0] = '\0';
	for (size_t i = depth; i-- > 0;) {
		const char *name = ksyms_lookup(&env->ksyms, ips[i]);

		if (!name) {
			snprintf(hex, sizeof(hex), "0x%" PRIx64, ips[i]);
			name = hex;
		}
		if (!append_frame(out, outlen, &o, name))
			break;
	}
}

static int dec_kstack(const struct step *s, struct decoder_env *env, const struct dinput *in,
		      char *out, size_t outlen)
{
	uint32_t key;
	int64_t id;

	if (in_s64(in, &id))
		return -EINVAL;
	if (!outlen)
		return DECODE_OK;
	/* Negative: bpf_get_stackid's error (-EFAULT, -EEXIST...), no stack. */
	key = (uint32_t)id;
	if (id < 0 || id > UINT32_MAX || bpf_map_lookup_elem(s->map_fd, &key, s->ips)) {
		snprintf(out, outlen, "[unknown]");
		return DECODE_OK;
	}
	format_stack(env, s->ips, s->nips, out, outlen);
	return DECODE_OK;
}

/* Field sizes a first decoder accepts, as a bit mask of 1 << size. */
#define SIZES_ANY 0u
#define SIZES_NUM ((1u << 1) | (1u << 2) | (1u << 4) | (1u << 8))
#define SIZES_4_8 ((1u << 4) | (1u << 8))
#define SIZES_8 (1u << 8)

#define PLAIN(fn, sizes, text)                                                                     \
	{                                                                                          \
		fn, sizes, text, NULL, NULL                                                        \
	}
#define NAMED(sizes, text, name_of, number)                                                        \
	{                                                                                          \
		dec_named, sizes, text, name_of, number                                            \
	}

/* A row per kind of UDEC_KINDS (uconfig.h), which also names them: a kind
 * without its DECODER_ row here does not build. */
#define DECODER_UINT PLAIN(dec_uint, SIZES_NUM, "1, 2, 4 or 8")
#define DECODER_HEX PLAIN(dec_hex, SIZES_ANY, NULL)
#define DECODER_STRING PLAIN(dec_string, SIZES_ANY, NULL)
#define DECODER_KSYM NAMED(SIZES_8, "8", ksym_name, hex_number)
#define DECODER_MAJORMINOR NAMED(SIZES_4_8, "4 or 8", disk_name, majorminor_number)
#define DECODER_CGROUP NAMED(SIZES_8, "8", cgroup_path, decimal_number)
#define DECODER_STATIC_MAP PLAIN(dec_static_map, SIZES_ANY, NULL)
#define DECODER_REGEXP PLAIN(dec_regexp, SIZES_ANY, NULL)
#define DECODER_SYSCALL PLAIN(dec_syscall, SIZES_NUM, "1, 2, 4 or 8")
#define DECODER_ERRNO PLAIN(dec_errno, SIZES_NUM, "1, 2, 4 or 8")
#define DECODER_KSTACK PLAIN(dec_kstack, SIZES_4_8, "4 or 8")

#define DECODER_ROW(kind, name) [UDEC_##kind] = DECODER_##kind,
static const struct decoder_kind kinds[] = { UDEC_KINDS(DECODER_ROW) };
#undef DECODER_ROW
_Static_assert(sizeof(kinds) / sizeof(kinds[0]) == UDEC_COUNT, "a decoder without its row");

static const struct decoder_kind *kind_of(enum udec_kind k)
{
	return &kinds[k];
}

/* ---- compiling a chain ----------------------------------------------- */

/* "line:col: what" into err, at the decoder's place in the config;
 * returns rc, its -errno. */
static int fail(int rc, char *err, size_t errlen, const struct udec_conf *c, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

static int fail(int rc, char *err, size_t errlen, const struct udec_conf *c, const char *fmt, ...)
{
	char what[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	snprintf(err, errlen, "%d:%d: %s", c->line, c->col, what);
	return rc;
}

/* The highest \N a replacement uses, or -1. */
static int max_group(const char *tmpl)
{
	int max = -1;

	for (const char *t = tmpl; *t; t++)
		if (t[0] == '\\' && t[1] >= '0' && t[1] <= '9') {
			if (t[1] - '0' > max)
				max = t[1] - '0';
			t++;
		}
	return max;
}

static int compile_regexp(struct step *s, const struct udec_conf *c, char *err, size_t errlen)
{
	int rc, group;
	char why[256];

	if (!c->regexp)
		return fail(-EINVAL, err, errlen, c, "regexp decoder without a regexp");
	rc = regcomp(&s->re, c->regexp, REG_EXTENDED | (c->replace ? 0 : REG_NOSUB));
	if (rc) {
		regerror(rc, &s->re, why, sizeof(why));
		return fail(-EINVAL, err, errlen, c, "bad regexp \"%s\": %s", c->regexp, why);
	}
	s->has_re = true;
	s->replace = c->replace;
	group = c->replace ? max_group(c->replace) : -1;
	if (group > (int)s->re.re_nsub)
		return fail(-EINVAL, err, errlen, c,
			    "replace uses \\%d, the regexp has %zu group(s)", group, s->re.re_nsub);
	return 0;
}

/* Checks the map is a kernel stack-trace map and sizes the lookup buffer. */
static int open_stack_map(struct step *s, const struct udec_conf *c, decoder_map_fd_fn fd_of,
			  void *arg, char *err, size_t errlen)
{
	struct bpf_map_info info = { 0 };
	__u32 len = sizeof(info);

	if (!c->stack_map || !c->stack_map[0])
		return fail(-EINVAL, err, errlen, c, "kstack decoder without a stack_map");
	s->map_fd = fd_of ? fd_of(arg, c->stack_map) : -1;
	if (s->map_fd < 0)
		return fail(-ENOENT, err, errlen, c, "kstack: no map named \"%s\"", c->stack_map);
	if (bpf_obj_get_info_by_fd(s->map_fd, &info, &len))
		return fail(-errno, err, errlen, c, "kstack: map \"%s\": %s", c->stack_map,
			    strerror(errno));
	if (info.type != BPF_MAP_TYPE_STACK_TRACE || info.key_size != 4 || info.value_size < 8 ||
	    info.value_size % 8)
		return fail(-EINVAL, err, errlen, c,
			    "kstack: map \"%s\" is no BPF_MAP_TYPE_STACK_TRACE", c->stack_map);
	if (info.map_flags & BPF_F_STACK_BUILD_ID)
		return fail(-EINVAL, err, errlen, c,
			    "kstack: map \"%s\" holds build ids, not addresses", c->stack_map);
	s->nips = info.value_size / 8;
	s->ips = calloc(s->nips, 8);
	return s->ips ? 0 : fail(-ENOMEM, err, errlen, c, "out of memory");
}

/* Whether a first decoder taking sizes (a SIZES_ mask) reads a field of size bytes. */
static bool size_fits(unsigned sizes, unsigned size)
{
	if (!size)
		return false;
	return sizes == SIZES_ANY || (size <= 8 && (sizes & (1u << size)));
}

static int compile_step(struct step *s, const struct udec_conf *c, bool first, unsigned size,
			decoder_map_fd_fn fd_of, void *arg, char *err, size_t errlen)
{
	if ((unsigned)c->kind >= UDEC_COUNT)
		return fail(-EINVAL, err, errlen, c, "unknown decoder %d", (int)c->kind);
	s->kind = c->kind;
	s->conf = c;
	s->map_fd = -1;
	if (first && !size_fits(kinds[c->kind].sizes, size))
		return fail(-EINVAL, err, errlen, c, "decoder %s takes a field of %s bytes, not %u",
			    udec_name(c->kind), kinds[c->kind].sizes_text ?: "1 or more", size);
	if (c->kind == UDEC_STATIC_MAP && c->nmap && (!c->from || !c->to))
		return fail(-EINVAL, err, errlen, c, "static_map without its values");
	if (c->kind == UDEC_REGEXP)
		return compile_regexp(s, c, err, errlen);
	if (c->kind == UDEC_KSTACK)
		return open_stack_map(s, c, fd_of, arg, err, errlen);
	return 0;
}

int label_decoder_new(const struct ulabel_conf *l, decoder_map_fd_fn fd_of, void *arg,
		      struct label_decoder **out, char *err, size_t errlen)
{
	struct label_decoder *d;

	*out = NULL;
	if (!l->ndec) {
		snprintf(err, errlen, "%d:%d: label \"%s\" has no decoders", l->line, l->col,
			 l->name ? l->name : "");
		return -EINVAL;
	}
	d = calloc(1, sizeof(*d));
	if (!d || !(d->step = calloc(l->ndec, sizeof(*d->step)))) {
		free(d);
		snprintf(err, errlen, "%d:%d: out of memory", l->line, l->col);
		return -ENOMEM;
	}
	d->size = l->size;
	for (size_t i = 0; i < l->ndec; i++) {
		int rc;

		d->nsteps++;
		rc =
		    compile_step(&d->step[i], &l->dec[i], i == 0, l->size, fd_of, arg, err, errlen);
		if (rc) {
			label_decoder_free(d);
			return rc;
		}
	}
	*out = d;
	return 0;
}

void label_decoder_free(struct label_decoder *d)
{
	if (!d)
		return;
	/* The map fds belong to the loaded object, not to the decoder. */
	for (size_t i = 0; i < d->nsteps; i++) {
		if (d->step[i].has_re)
			regfree(&d->step[i].re);
		free(d->step[i].ips);
	}
	free(d->step);
	free(d);
}

/* Whether kind k's output depends on its input alone. Every kind is
 * listed, no default: a new one does not build (-Wswitch) until it is
 * said which it is. */
static bool kind_pure(enum udec_kind k)
{
	switch (k) {
	case UDEC_UINT:
	case UDEC_HEX:
	case UDEC_STRING:
	case UDEC_STATIC_MAP:
	case UDEC_REGEXP:
	case UDEC_SYSCALL: /* this architecture's table, built in */
	case UDEC_ERRNO:
		return true;
	case UDEC_KSYM:	      /* modules come and go */
	case UDEC_MAJORMINOR: /* disk numbers are reused */
	case UDEC_CGROUP:     /* cgroups are renamed, ids reused */
	case UDEC_KSTACK:     /* a stack id's frames change */
		return false;
	}
	return false;
}

bool label_decoder_pure(const struct label_decoder *d)
{
	for (size_t i = 0; i < d->nsteps; i++)
		if (!kind_pure(d->step[i].kind))
			return false;
	return true;
}

int label_decode(struct label_decoder *d, struct decoder_env *env, const void *raw, char *out,
		 size_t outlen)
{
	struct dinput in = { .raw = raw, .size = d->size };

	if (!outlen)
		return -EINVAL;
	for (size_t i = 0; i < d->nsteps; i++) {
		bool last = i + 1 == d->nsteps;
		/* Two scratch buffers in turn: a step never writes what it reads. */
		char *dst = last ? out : d->buf[i & 1];
		size_t dstlen = last ? outlen : sizeof(d->buf[0]);
		int rc = kinds[d->step[i].kind].fn(&d->step[i], env, &in, dst, dstlen);

		if (rc != DECODE_OK)
			return rc;
		in = (struct dinput){ .str = dst };
	}
	return DECODE_OK;
}
