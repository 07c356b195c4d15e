// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * test_kubenames.c - Kubernetes names: the ids the cgroup paths of
 * containerd and CRI-O carry under cgroup v1 (cgroupfs) and v2 (systemd),
 * the kubelet's pod log directories and the CRI log links as a node has
 * them (built in a temporary directory), the workload cache's names from
 * them, and serve's label sets following pods that come and go.
 */
#define _GNU_SOURCE
#include <ftw.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* After setjmp.h, stdarg.h and stddef.h, which it needs. */
#include <cmocka.h>

#include "serve/wlabels.h"
#include "sys/kubenames.h"
#include "sys/workload.h"

#define UID_WEB "1a2b3c4d-0000-4000-8000-00000000abcd"
#define UID_WEB_SYSTEMD "1a2b3c4d_0000_4000_8000_00000000abcd" /* the slice's spelling */
#define UID_DNS "5e6f7a8b-1111-4111-8111-0000000000ef"
#define UID_ONE "9c9c9c9c-2222-4222-8222-000000000001"
#define ID_NGINX "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define ID_SIDECAR "fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210"
#define ID_DNS "aaaaaaaaaaaabbbbbbbbbbbbccccccccccccddddddddddddeeeeeeeeeeeeffff"
#define ID_PAUSE "1111111111112222222222223333333333334444444444445555555555556666"

static void expect_ids(const char *path, const char *kind, const char *uid, const char *id)
{
	struct workload w;

	workload_classify(path, &w);
	assert_string_equal(w.kind, kind);
	assert_string_equal(w.kube.pod_uid, uid);
	assert_string_equal(w.kube.container_id, id);
}

/* The cgroup paths the kubelet and the runtimes make, both drivers. */
static void test_cgroup_ids(void **state)
{
	(void)state;
	/* cgroup v2 (or v1) with the systemd driver: containerd, CRI-O. */
	expect_ids("/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_WEB_SYSTEMD
		   ".slice/cri-containerd-" ID_NGINX ".scope",
		   "pod", UID_WEB, ID_NGINX);
	expect_ids(
	    "/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" UID_WEB_SYSTEMD
	    ".slice/crio-" ID_NGINX ".scope",
	    "pod", UID_WEB, ID_NGINX);
	/* Guaranteed pods sit right under kubepods.slice. */
	expect_ids("/kubepods.slice/kubepods-pod" UID_WEB_SYSTEMD ".slice/cri-containerd-" ID_NGINX
		   ".scope",
		   "pod", UID_WEB, ID_NGINX);
	/* cgroup v1 with cgroupfs: containerd's bare id, CRI-O's crio-ID. */
	expect_ids("/kubepods/burstable/pod" UID_WEB "/" ID_NGINX, "pod", UID_WEB, ID_NGINX);
	expect_ids("/kubepods/besteffort/pod" UID_WEB "/crio-" ID_NGINX, "pod", UID_WEB, ID_NGINX);
	expect_ids("/kubepods/pod" UID_WEB "/" ID_NGINX, "pod", UID_WEB, ID_NGINX);
	/* The pod's own cgroup; CRI-O's monitor (conmon) is not a container. */
	expect_ids("/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_WEB_SYSTEMD
		   ".slice",
		   "pod", UID_WEB, "");
	expect_ids("/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_WEB_SYSTEMD
		   ".slice/crio-conmon-" ID_NGINX ".scope",
		   "pod", UID_WEB, "");
	/* Deeper than the container: still the container's. */
	expect_ids("/kubepods/burstable/pod" UID_WEB "/" ID_NGINX "/sub", "pod", UID_WEB, ID_NGINX);
	/* A VM in a pod (KubeVirt) is a VM; docker alone is no pod. */
	expect_ids("/kubepods/burstable/pod" UID_WEB "/" ID_NGINX
		   "/machine.slice/machine-qemu\\x2d1\\x2dvm1.scope",
		   "vm", "", "");
	expect_ids("/system.slice/docker-" ID_NGINX ".scope", "container", "", "");
}

/* A node's directories, as the kubelet and the CRI runtime leave them. */
struct node {
	char root[64], pods[96], ctrs[96];
};

static void mkdirs(const char *root, const char *rel)
{
	char path[1024];

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	for (char *p = path + 1; (p = strchr(p, '/')); p++) {
		*p = '\0';
		mkdir(path, 0755);
		*p = '/';
	}
	assert_true(mkdir(path, 0755) == 0 || access(path, F_OK) == 0);
}

static void touch(const char *root, const char *rel)
{
	char path[1024];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	f = fopen(path, "w");
	assert_non_null(f);
	fclose(f);
}

/* The CRI's link: POD_NAMESPACE_CONTAINER-ID.log -> the pod log file. */
static void link_log(const struct node *n, const char *name, const char *target)
{
	char path[1024], to[1024];

	snprintf(path, sizeof(path), "%s/%s", n->ctrs, name);
	snprintf(to, sizeof(to), "%s/%s", n->pods, target);
	assert_int_equal(symlink(to, path), 0);
}

static void node_make(struct node *n)
{
	snprintf(n->root, sizeof(n->root), "/tmp/iolat-test-kube.XXXXXX");
	assert_non_null(mkdtemp(n->root));
	snprintf(n->pods, sizeof(n->pods), "%s/pods", n->root);
	snprintf(n->ctrs, sizeof(n->ctrs), "%s/containers", n->root);
	mkdirs(n->pods, "default_web-0_" UID_WEB "/nginx");
	mkdirs(n->pods, "default_web-0_" UID_WEB "/istio-proxy");
	touch(n->pods, "default_web-0_" UID_WEB "/nginx/0.log");
	mkdirs(n->pods, "kube-system_coredns-5d78c9869d-x2x9q_" UID_DNS "/coredns");
	mkdirs(n->pods, "batch_one_" UID_ONE "/worker");
	/* Not a pod's: no name, no UID. */
	mkdirs(n->pods, "lost+found");
	mkdirs(n->ctrs, "");
	link_log(n, "web-0_default_nginx-" ID_NGINX ".log",
		 "default_web-0_" UID_WEB "/nginx/0.log");
	link_log(n, "web-0_default_istio-proxy-" ID_SIDECAR ".log",
		 "default_web-0_" UID_WEB "/istio-proxy/0.log");
	link_log(n, "coredns-5d78c9869d-x2x9q_kube-system_coredns-" ID_DNS ".log",
		 "kube-system_coredns-5d78c9869d-x2x9q_" UID_DNS "/coredns/0.log");
	/* Not links of a container: no id, no .log, an id that is not hex. */
	touch(n->ctrs, "web-0_default_nginx.log");
	touch(n->ctrs, "web-0_default_nginx-" ID_NGINX);
	touch(n->ctrs, "web-0_default_nginx-xyz.log");
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static void node_remove(struct node *n)
{
	assert_int_equal(nftw(n->root, rm_entry, 16, FTW_DEPTH | FTW_PHYS), 0);
}

static void expect_names(const struct kubenames *k, const char *uid, const char *id, const char *ns,
			 const char *pod, const char *container)
{
	struct kube_names got;

	assert_true(kubenames_find(k, uid, id, &got));
	assert_string_equal(got.ns, ns);
	assert_string_equal(got.pod, pod);
	assert_string_equal(got.container, container);
}

static void test_names(void **state)
{
	struct kube_names got;
	struct kubenames *k;
	struct node n = { .root = "" };

	(void)state;
	node_make(&n);
	k = kubenames_new(n.pods, n.ctrs);
	assert_non_null(k);
	assert_true(kubenames_refresh(k));
	expect_names(k, UID_WEB, ID_NGINX, "default", "web-0", "nginx");
	/* A name with dashes; its id split at the last one. */
	expect_names(k, UID_WEB, ID_SIDECAR, "default", "web-0", "istio-proxy");
	expect_names(k, UID_DNS, ID_DNS, "kube-system", "coredns-5d78c9869d-x2x9q", "coredns");
	/* The pod's own cgroup, the sandbox (no log link): the pod only. */
	expect_names(k, UID_WEB, "", "default", "web-0", "");
	expect_names(k, UID_WEB, ID_PAUSE, "default", "web-0", "");
	/* Another pod's container id names no container of this one. */
	expect_names(k, UID_WEB, ID_DNS, "default", "web-0", "");
	/* With the links there, one container directory is no reason to guess. */
	expect_names(k, UID_ONE, ID_PAUSE, "batch", "one", "");
	assert_false(kubenames_find(k, "00000000-0000-0000-0000-000000000000", ID_NGINX, &got));
	assert_string_equal(got.pod, "");
	/* Nothing changed: nothing to say, however often it is asked. */
	assert_false(kubenames_refresh(k));
	assert_false(kubenames_refresh(k));
	kubenames_free(k);

	/* Without the links (not mounted): a pod of one container names it. */
	k = kubenames_new(n.pods, "");
	assert_non_null(k);
	assert_true(kubenames_refresh(k));
	expect_names(k, UID_ONE, ID_PAUSE, "batch", "one", "worker");
	expect_names(k, UID_WEB, ID_NGINX, "default", "web-0", "");
	expect_names(k, UID_ONE, "", "batch", "one", "");
	kubenames_free(k);
	node_remove(&n);
}

/* Pods that come and go: a refresh sees them, and says so once. */
static void test_refresh(void **state)
{
	struct kube_names got;
	struct kubenames *k;
	char path[1024];
	struct node n = { .root = "" };

	(void)state;
	node_make(&n);
	k = kubenames_new(n.pods, n.ctrs);
	assert_non_null(k);
	assert_true(kubenames_refresh(k));
	snprintf(path, sizeof(path), "%s/batch_one_" UID_ONE "/worker", n.pods);
	assert_int_equal(rmdir(path), 0);
	snprintf(path, sizeof(path), "%s/batch_one_" UID_ONE, n.pods);
	assert_int_equal(rmdir(path), 0);
	assert_true(kubenames_refresh(k));
	assert_false(kubenames_find(k, UID_ONE, "", &got));
	assert_false(kubenames_refresh(k));
	mkdirs(n.pods, "batch_two_" UID_ONE);
	assert_true(kubenames_refresh(k));
	expect_names(k, UID_ONE, "", "batch", "two", "");
	/* A container's link gone: its pod stays, its name goes. */
	snprintf(path, sizeof(path), "%s/web-0_default_nginx-" ID_NGINX ".log", n.ctrs);
	assert_int_equal(unlink(path), 0);
	assert_true(kubenames_refresh(k));
	expect_names(k, UID_WEB, ID_NGINX, "default", "web-0", "");
	/* The whole directory gone: nothing named. */
	node_remove(&n);
	assert_true(kubenames_refresh(k));
	assert_false(kubenames_find(k, UID_WEB, "", &got));
	assert_false(kubenames_refresh(k));
	kubenames_free(k);
}

/* A cgroup tree and a node, for the cache and the label sets. */
struct fixture {
	struct node n;
	char cg[64];
	uint64_t nginx, dns, pod_slice;
	struct workload_cache *c;
};

static uint64_t make_cgroup(const char *root, const char *rel)
{
	char path[1024];
	struct stat st;

	mkdirs(root, rel);
	snprintf(path, sizeof(path), "%s/%s", root, rel);
	assert_int_equal(stat(path, &st), 0);
	return (uint64_t)st.st_ino;
}

#define SLICE_WEB                                                                                  \
	"kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_WEB_SYSTEMD ".slice"

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	struct kubenames *k;

	assert_non_null(f);
	node_make(&f->n);
	snprintf(f->cg, sizeof(f->cg), "%s/cgroup", f->n.root);
	f->pod_slice = make_cgroup(f->cg, SLICE_WEB);
	f->nginx = make_cgroup(f->cg, SLICE_WEB "/cri-containerd-" ID_NGINX ".scope");
	f->dns = make_cgroup(f->cg, "kubepods/besteffort/pod" UID_DNS "/crio-" ID_DNS);
	f->c = workload_cache_new_at(f->cg);
	assert_non_null(f->c);
	k = kubenames_new(f->n.pods, f->n.ctrs);
	assert_non_null(k);
	workload_cache_set_kube(f->c, k);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	workload_cache_free(f->c);
	node_remove(&f->n);
	free(f);
	return 0;
}

static void expect_workload(struct workload_cache *c, uint64_t id, const char *kind,
			    const char *name)
{
	const struct workload *w = workload_lookup(c, id);

	assert_string_equal(w->kind, kind);
	assert_string_equal(w->name, name);
}

/* The cache names pods' cgroups from the directories, and follows them. */
static void test_cache(void **state)
{
	struct fixture *f = *state;
	struct workload_cache *plain = workload_cache_new_at(f->cg);
	char path[1024];

	assert_non_null(plain);
	expect_workload(f->c, f->nginx, "container", "default/web-0/nginx");
	expect_workload(f->c, f->pod_slice, "pod", "default/web-0");
	expect_workload(f->c, f->dns, "container", "kube-system/coredns-5d78c9869d-x2x9q/coredns");
	assert_string_equal(workload_lookup(f->c, f->nginx)->kube.names.pod, "web-0");
	/* Without directories: the UID, as before. */
	expect_workload(plain, f->nginx, "pod", UID_WEB);
	workload_cache_free(plain);
	/* The pod leaves the directories (still running: its cgroup stays). */
	snprintf(path, sizeof(path), "%s/default_web-0_" UID_WEB, f->n.pods);
	assert_int_equal(nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS), 0);
	expect_workload(f->c, f->nginx, "container", "default/web-0/nginx"); /* not refreshed */
	workload_cache_refresh(f->c);
	expect_workload(f->c, f->nginx, "pod", UID_WEB);
	assert_string_equal(workload_lookup(f->c, f->nginx)->kube.names.ns, "");
	expect_workload(f->c, f->dns, "container", "kube-system/coredns-5d78c9869d-x2x9q/coredns");
}

static int no_retire(void *ctx, const struct iolat_key *k, uint64_t into)
{
	(void)ctx;
	(void)k;
	(void)into;
	return 0;
}

static int no_refold(void *ctx, uint64_t from, uint64_t into)
{
	(void)ctx;
	(void)from;
	(void)into;
	return 0;
}

static void expect_label(struct wlabels *w, uint64_t id, const char *kind, const char *name,
			 const char *ns, const char *pod, const char *container)
{
	const struct wl_label *l = wlabels_of(w, id);

	assert_non_null(l);
	assert_string_equal(l->kind, kind);
	assert_string_equal(l->name, name);
	assert_string_equal(l->ns, ns);
	assert_string_equal(l->pod, pod);
	assert_string_equal(l->container, container);
}

/* serve's label sets: the names, and a pod's cgroups moved when they change. */
static void test_label_sets(void **state)
{
	struct fixture *f = *state;
	const struct wlabels_ops ops = { .retire = no_retire, .refold = no_refold };
	const struct wlabels_opts o = { .max_sets = 16, .expire_s = 10 };
	struct wlabels *w = wlabels_new(&ops, f->c, &o);
	struct series s[2] = { { .key = { .cgroup = f->nginx }, .val = { .ios = 1 } },
			       { .key = { .cgroup = f->dns }, .val = { .ios = 1 } } };
	struct snapshot snap = { .s = s, .n = 2 };
	struct wlabels_stats st;
	char path[1024];

	assert_non_null(w);
	assert_int_equal(wlabels_assign(w, &snap, 100), 0);
	expect_label(w, f->nginx, "container", "default/web-0/nginx", "default", "web-0", "nginx");
	expect_label(w, f->dns, "container", "kube-system/coredns-5d78c9869d-x2x9q/coredns",
		     "kube-system", "coredns-5d78c9869d-x2x9q", "coredns");
	/* The pod gone from the directories: back to its UID, at the next pass. */
	snprintf(path, sizeof(path), "%s/default_web-0_" UID_WEB, f->n.pods);
	assert_int_equal(nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS), 0);
	assert_int_equal(wlabels_assign(w, &snap, 101), 0);
	expect_label(w, f->nginx, "pod", UID_WEB, "", "", "");
	expect_label(w, f->dns, "container", "kube-system/coredns-5d78c9869d-x2x9q/coredns",
		     "kube-system", "coredns-5d78c9869d-x2x9q", "coredns");
	/* Named again, under another name: a set of its own. */
	mkdirs(f->n.pods, "default_web-1_" UID_WEB "/nginx");
	assert_int_equal(wlabels_assign(w, &snap, 102), 0);
	expect_label(w, f->nginx, "pod", "default/web-1", "default", "web-1", "");
	wlabels_stats(w, &st);
	assert_int_equal(st.sets, 4); /* web-0's nginx and the UID empty, awaiting expiry */
	assert_int_equal(st.cgroups, 2);
	wlabels_free(w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cgroup_ids),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_refresh),
		cmocka_unit_test_setup_teardown(test_cache, setup, teardown),
		cmocka_unit_test_setup_teardown(test_label_sets, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
