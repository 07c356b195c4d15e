// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* attach.c - tp_btf or raw_tp, and the fallback between them (attach.h). */
#include "core/attach.h"

#include <bpf/libbpf.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

const char *attach_mode_name(enum attach_mode m)
{
	return m == ATTACH_TP_BTF ? "tp_btf" : m == ATTACH_RAW_TP ? "raw_tp" : "auto";
}

int attach_mode_parse(const char *arg, enum attach_mode *out, char *err, size_t errlen)
{
	for (enum attach_mode m = ATTACH_AUTO; m <= ATTACH_RAW_TP; m++)
		if (!strcmp(arg, attach_mode_name(m))) {
			*out = m;
			return 0;
		}
	snprintf(err, errlen, "unknown --attach mode '%s'", arg);
	return -EINVAL;
}

struct bpf_program *attach_pick(struct bpf_program *const forms[ATTACH_FORMS],
				enum attach_mode mode, bool wanted)
{
	int chosen = mode == ATTACH_TP_BTF ? ATTACH_FORM_BTF : ATTACH_FORM_RAW;

	for (int k = 0; k < ATTACH_FORMS; k++)
		bpf_program__set_autoload(forms[k], wanted && k == chosen);
	return wanted ? forms[chosen] : NULL;
}

enum attach_mode attach_forced(enum attach_mode asked, const char *force)
{
	if (force && !strcmp(force, "tp_btf"))
		return ATTACH_TP_BTF;
	if (force && !strcmp(force, "raw_tp"))
		return ATTACH_RAW_TP;
	return asked;
}

int attach_with_fallback(enum attach_mode mode, const struct probe_result *pr, attach_try_fn try,
			 void *ctx, char *err, size_t errlen)
{
	char ignored[256];
	int rc;

	if (mode == ATTACH_RAW_TP || (mode == ATTACH_AUTO && !pr->tp_btf[TP_RQ_COMPLETE]))
		return try(ctx, ATTACH_RAW_TP, err, errlen);
	if (mode == ATTACH_TP_BTF)
		return try(ctx, ATTACH_TP_BTF, err, errlen);
	/* Under auto, only the raw_tp attempt's reason matters if both fail. */
	rc = try(ctx, ATTACH_TP_BTF, ignored, sizeof(ignored));
	return rc ? try(ctx, ATTACH_RAW_TP, err, errlen) : 0;
}
