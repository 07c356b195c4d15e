/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * attach.h - how iolat's BPF programs meet the block tracepoints: typed
 * (tp_btf) where the kernel's BTF describes them, raw (raw_tp) where it
 * does not or the typed programs fail. Both kernel objects (the collector
 * and the tracer) carry every program in both forms; which form loads, and
 * the fallback from one to the other, are decided here for both.
 */
#ifndef IOLAT_ATTACH_H
#define IOLAT_ATTACH_H

#include <stdbool.h>
#include <stddef.h>

#include "core/probe.h"

struct bpf_program;

enum attach_mode {
	ATTACH_AUTO = 0, /* tp_btf, else raw_tp */
	ATTACH_TP_BTF,
	ATTACH_RAW_TP,
};

const char *attach_mode_name(enum attach_mode m);

/* What to do about an --attach mode attach_mode_parse refused. */
#define ATTACH_MODE_HINT "use auto, tp_btf or raw_tp"

/* --attach MODE: auto, tp_btf or raw_tp. Anything else gives -EINVAL with
 * "unknown --attach mode 'X'" in err. */
int attach_mode_parse(const char *arg, enum attach_mode *out, char *err, size_t errlen);

/* The mode tests force (the commands' IOLAT_FORCE_ATTACH: tp_btf or
 * raw_tp; NULL when unset), or `asked` for anything else. */
enum attach_mode attach_forced(enum attach_mode asked, const char *force);

/* A program in both forms, as a skeleton has them. */
enum { ATTACH_FORM_BTF, ATTACH_FORM_RAW, ATTACH_FORMS };

/*
 * Sets which form of a program loads: the one of mode (ATTACH_TP_BTF or
 * ATTACH_RAW_TP) if `wanted`, neither otherwise. Between open and load.
 * Returns the form that will load, or NULL.
 */
struct bpf_program *attach_pick(struct bpf_program *const forms[ATTACH_FORMS],
				enum attach_mode mode, bool wanted);

/*
 * One attempt in one mode (ATTACH_TP_BTF or ATTACH_RAW_TP): open, load and
 * attach. On failure it leaves nothing loaded, writes why into err and
 * returns -errno.
 */
typedef int (*attach_try_fn)(void *ctx, enum attach_mode mode, char *err, size_t errlen);

/*
 * Runs `try` in the mode asked for. ATTACH_AUTO tries tp_btf first when
 * the kernel's BTF describes block_rq_complete, and raw_tp if that fails
 * or BTF does not. Returns 0, or the last attempt's -errno with its reason
 * in err.
 */
int attach_with_fallback(enum attach_mode mode, const struct probe_result *pr, attach_try_fn try,
			 void *ctx, char *err, size_t errlen);

#endif
