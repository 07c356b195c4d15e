// SPDX-License-Identifier: GPL-2.0
/*
 * bad_attach.bpf.c - loads, but one program has a SEC libbpf cannot
 * auto-attach (a socket filter), for test_uprog.sh: uprog_open names it
 * and detaches the program it had attached already.
 */
#include "vmlinux.h"

#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

SEC("tp_btf/block_rq_issue")
int uprog_t_att_ok(void *ctx)
{
	return 0;
}

SEC("socket")
int uprog_t_sock(void *ctx)
{
	return 0;
}
