// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* errors.c - error reporting for the command layer (errors.h). */
#include "errors.h"

#include <linux/capability.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

void errorf(const char *hint, const char *fmt, ...)
{
	va_list ap;

	fputs("iolat: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	if (hint)
		fprintf(stderr, " (%s)", hint);
	fputc('\n', stderr);
}

static int has_cap(const struct __user_cap_data_struct *d, int cap)
{
	return (d[cap / 32].effective >> (cap % 32)) & 1;
}

int require_bpf_privileges(void)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2] = {};

	if (syscall(SYS_capget, &h, d) == 0 &&
	    (has_cap(d, CAP_SYS_ADMIN) ||
	     (has_cap(d, 39 /* CAP_BPF */) && has_cap(d, 38 /* CAP_PERFMON */))))
		return 1;
	errorf("run it as root, or grant CAP_BPF and CAP_PERFMON",
	       "not allowed to load BPF programs");
	return 0;
}
