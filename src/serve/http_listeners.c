// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * http_listeners.c - the HTTP server's listening sockets: one
 * libmicrohttpd daemon per socket, started with the one list of options
 * (daemon_options), and http_update's move to new addresses and TLS
 * settings: new sockets bound, successors on the kept sockets when TLS
 * changes, everything undone if one fails, old listeners drained after.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "serve/http_internal.h"
#include "util/log.h"
#include "util/monotonic.h"

const char *http_listen_describe(const char *spec, char *buf, size_t len)
{
	struct listen_addr a[LISTEN_ADDR_MAX];
	const char *const one[] = { spec };
	char err[256];
	size_t n;

	/* For "fd:N", the address systemd bound, as a listen address is written. */
	if (strncmp(spec, LISTEN_FD_PREFIX, strlen(LISTEN_FD_PREFIX)) ||
	    listen_addr_expand(one, 1, a, &n, err, sizeof(err)))
		return spec;
	a[0].kind = LISTEN_ADDR;
	listen_addr_format(&a[0], buf, len);
	return buf;
}

/* libmicrohttpd's own messages go to the debug log: the caller reports
 * failures itself, once, in words the operator can act on. */
static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	char msg[512];

	(void)cls;
	if (!log_enabled(LOG_DEBUG_L))
		return;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	msg[strcspn(msg, "\n")] = '\0';
	log_debug("libmicrohttpd", LOG_STR("err", msg));
}

/* Room for every option daemon_options can add, MHD_OPTION_END included. */
#define MAX_MHD_OPTIONS 16

/*
 * The one list of libmicrohttpd options for a site, so the daemons that
 * serve and the TLS check that vets a certificate first cannot drift apart.
 * With dc NULL it is the check's list: no socket and no connection hooks,
 * only the logger and tls. Otherwise the listener is listen_fd when that is
 * not -1, else a new socket on ss, and tls is dc's. The limits are ours
 * (http_conns.c); libmicrohttpd's connection cap sits above them, with
 * room for connections we shut down that it has not yet reaped.
 * libmicrohttpd reads the TLS strings only while the daemon starts.
 */
static void daemon_options(struct MHD_OptionItem o[MAX_MHD_OPTIONS], struct daemon_ctx *dc,
			   const struct site *site, const struct tls_settings *tls,
			   const struct sockaddr_storage *ss, int listen_fd)
{
	size_t n = 0;

#define OPT(name, value, ptr) (o[n++] = (struct MHD_OptionItem){ name, (intptr_t)(value), ptr })
	OPT(MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL);
	if (dc) {
		OPT(MHD_OPTION_NOTIFY_CONNECTION, http_conns_notify, dc);
		OPT(MHD_OPTION_NOTIFY_COMPLETED, http_conns_completed, dc->s);
		OPT(MHD_OPTION_CONNECTION_LIMIT, 2 * site->limits.max_connections + 16, NULL);
		OPT(MHD_OPTION_CONNECTION_TIMEOUT, site->limits.read_header_timeout_s, NULL);
		OPT(MHD_OPTION_CONNECTION_MEMORY_LIMIT, 32768, NULL);
		if (listen_fd >= 0)
			OPT(MHD_OPTION_LISTEN_SOCKET, listen_fd, NULL);
		else
			OPT(MHD_OPTION_SOCK_ADDR, 0, (void *)ss);
	}
	if (tls->cert_pem) {
		OPT(MHD_OPTION_HTTPS_MEM_CERT, 0, tls->cert_pem);
		OPT(MHD_OPTION_HTTPS_MEM_KEY, 0, tls->key_pem);
		OPT(MHD_OPTION_HTTPS_PRIORITIES, 0, tls->priorities ? tls->priorities : "NORMAL");
		/* Named in the certificate request; what is asked for is tls.c's. */
		if (tls->client_ca_pem)
			OPT(MHD_OPTION_HTTPS_MEM_TRUST, 0, tls->client_ca_pem);
	}
	OPT(MHD_OPTION_END, 0, NULL);
#undef OPT
}

/* One daemon for one address with a site's settings (daemon_options). */
static struct MHD_Daemon *start_daemon(struct http_server *s, const struct sockaddr_storage *ss,
				       const struct site *site, int listen_fd)
{
	unsigned int flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ITC |
			     MHD_USE_ERROR_LOG | (ss->ss_family == AF_INET6 ? MHD_USE_IPv6 : 0) |
			     (site->tls.cert_pem ? MHD_USE_TLS : 0);
	struct MHD_OptionItem o[MAX_MHD_OPTIONS];
	struct daemon_ctx *dc = calloc(1, sizeof(*dc));

	if (!dc || tlsconf_copy(&dc->tls, &site->tls)) {
		free(dc);
		errno = ENOMEM;
		return NULL;
	}
	dc->s = s;
	daemon_options(o, dc, site, &dc->tls, ss, listen_fd);
	dc->d = MHD_start_daemon(flags, 0, http_conns_accept, s, http_answer, s, MHD_OPTION_ARRAY,
				 o, MHD_OPTION_END);
	if (!dc->d) {
		int e = errno;

		tlsconf_free(&dc->tls);
		free(dc);
		errno = e; /* bind()'s, for the caller's message */
		return NULL;
	}
	pthread_mutex_lock(&s->conn_lock);
	dc->next = s->daemons;
	s->daemons = dc;
	pthread_mutex_unlock(&s->conn_lock);
	return dc->d;
}

/* Stops d (every connection closed when this returns) and frees its context. */
static void stop_daemon(struct http_server *s, struct MHD_Daemon *d)
{
	struct daemon_ctx **pp, *dc = NULL;

	MHD_stop_daemon(d);
	pthread_mutex_lock(&s->conn_lock);
	for (pp = &s->daemons; *pp; pp = &(*pp)->next)
		if ((*pp)->d == d) {
			dc = *pp;
			*pp = dc->next;
			break;
		}
	pthread_mutex_unlock(&s->conn_lock);
	if (dc) {
		tlsconf_free(&dc->tls);
		free(dc);
	}
}

static bool same_tls(const struct site *a, const struct site *b)
{
	return tlsconf_equal(&a->tls, &b->tls);
}

/* Whether libmicrohttpd takes a site's certificate and key, tried without a
 * socket, so a bad pair is found before any listener is touched. */
static bool tls_loads(const struct site *t)
{
	struct MHD_OptionItem o[MAX_MHD_OPTIONS];
	struct MHD_Daemon *d;

	if (!t->tls.cert_pem)
		return true;
	daemon_options(o, NULL, t, &t->tls, NULL, -1);
	d = MHD_start_daemon(MHD_USE_NO_LISTEN_SOCKET | MHD_USE_TLS | MHD_USE_ERROR_LOG, 0, NULL,
			     NULL, http_answer, NULL, MHD_OPTION_ARRAY, o, MHD_OPTION_END);
	if (d)
		MHD_stop_daemon(d);
	return d != NULL;
}

bool http_tls_pair_loads(const char *cert_pem, const char *key_pem)
{
	const struct site t = { .tls = { .cert_pem = (char *)cert_pem,
					 .key_pem = (char *)key_pem,
					 .priorities = (char *)"NORMAL" } };

	return tls_loads(&t);
}

/* Waits (up to the write timeout) until no request on d is under way, then
 * stops it. d no longer accepts (quiesced). */
static void drain_and_stop(struct http_server *s, struct MHD_Daemon *d)
{
	uint64_t until = monotonic_ns() + (uint64_t)s->lim.write_timeout_s * NSEC_PER_SEC;

	/*
	 * Polled in 10 ms steps rather than woken by a condition: this runs
	 * only at a reload (and its undo), for at most the write timeout, and
	 * a step adds at most 10 ms to it; a condition would need a signal at
	 * the end of every request for the sake of a rare reload.
	 */
	while (http_conns_busy_on(s, d) && monotonic_ns() <= until)
		nanosleep(&(struct timespec){ .tv_nsec = 10 * NSEC_PER_MSEC }, NULL);
	stop_daemon(s, d);
}

static int find_listener(const struct listener *l, size_t n, const char *spec)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(l[i].spec, spec))
			return (int)i;
	return -1;
}

/*
 * The listener for one wanted address, into *next: the running one if its
 * TLS settings stay, a successor on its socket if they change (*moved: the
 * old one's index; the old one stops accepting), else a new socket. 0, or
 * -errno with a reason in err and nothing of this address started.
 */
static int plan_one(struct http_server *s, const struct listen_addr *want, const struct site *fresh,
		    bool tls_changed, struct listener *next, int *moved, char *err, size_t len)
{
	const struct sockaddr_storage *ss = &want->ss;
	int old, rc;

	*moved = -1;
	next->addr = *want;
	listen_addr_format(want, next->spec, sizeof(next->spec));
	next->d = NULL;
	old = find_listener(s->l, s->n, next->spec);
	if (old >= 0 && !tls_changed) {
		next->d = s->l[old].d;
		return 0;
	}
	if (old >= 0) {
		struct MHD_Daemon *was = s->l[old].d;
		int fd = (int)MHD_quiesce_daemon(was);

		next->d = fd < 0 ? NULL : start_daemon(s, ss, fresh, fd);
		if (next->d) {
			*moved = old;
		} else if (fd >= 0) {
			/* Give the socket back to a daemon as it was. */
			s->l[old].d = start_daemon(s, ss, &s->site, fd);
			drain_and_stop(s, was);
		}
	} else {
		int fd = want->fd;

		if (fd < 0) {
			rc = listen_addr_open(want, &fd, err, len);
			if (rc)
				return rc;
		}
		/* libmicrohttpd owns fd from here, closing it if it fails. */
		next->d = start_daemon(s, ss, fresh, fd);
		if (next->d && want->note[0])
			log_info("listen address", LOG_STR("address", want->spec),
				 LOG_STR("note", want->note));
	}
	if (!next->d) {
		snprintf(err, len, "cannot serve on '%s' (%s)", next->spec,
			 old < 0 ? "libmicrohttpd refused the socket"
				 : "the TLS successor did not start");
		return -EADDRINUSE;
	}
	return 0;
}

/* Undoes plan_one for next[0..n): a successor gives its socket back to a
 * daemon with the running site's settings, a new listener stops, a kept
 * one stays. */
static void unplan_listeners(struct http_server *s, const struct listener *next, const int *moved,
			     size_t n)
{
	while (n--) {
		if (find_listener(s->l, s->n, next[n].spec) >= 0 && moved[n] < 0)
			continue; /* kept */
		if (moved[n] >= 0) {
			int fd = (int)MHD_quiesce_daemon(next[n].d);
			struct MHD_Daemon *old = s->l[moved[n]].d;

			drain_and_stop(s, next[n].d);
			s->l[moved[n]].d =
			    fd < 0 ? NULL : start_daemon(s, &next[n].addr.ss, &s->site, fd);
			drain_and_stop(s, old);
			if (!s->l[moved[n]].d)
				log_error("lost a listener while undoing a reload",
					  LOG_STR("address", next[n].spec));
		} else {
			stop_daemon(s, next[n].d);
		}
	}
}

/*
 * The listeners o wants, in next (*nnext of them; a listen address may ask
 * for several sockets, listen_addr.h), each as plan_one makes it: moved[i]
 * says which old listener next[i] succeeds, or -1. On failure everything
 * started is undone and the old listeners accept again.
 */
static int plan_listeners(struct http_server *s, const struct http_opts *o,
			  const struct site *fresh, struct listener *next, size_t *nnext,
			  int *moved, char *err, size_t len)
{
	bool tls_changed = !same_tls(&s->site, fresh);
	struct listen_addr want[LISTEN_ADDR_MAX];
	size_t n;
	int rc;

	if (!o->nlisten) {
		snprintf(err, len, "give a listen address");
		return -EINVAL;
	}
	rc = listen_addr_expand(o->listen, o->nlisten, want, &n, err, len);
	if (rc)
		return rc;
	if (tls_changed && !tls_loads(fresh)) {
		snprintf(err, len,
			 "the TLS certificate and key do not load (do they match, and "
			 "are they PEM?)");
		return -EKEYREJECTED;
	}
	for (size_t i = 0; i < n; i++) {
		rc = plan_one(s, &want[i], fresh, tls_changed, &next[i], &moved[i], err, len);
		if (rc) {
			unplan_listeners(s, next, moved, i);
			return rc;
		}
	}
	*nnext = n;
	return 0;
}

int http_update(struct http_server *s, const struct http_opts *o, void (*commit)(void *),
		void *commit_ctx, char *err, size_t len)
{
	struct listener next[LISTEN_ADDR_MAX], old[LISTEN_ADDR_MAX];
	int moved[LISTEN_ADDR_MAX];
	size_t nold = s->n, nnext = 0;
	struct site fresh;
	int rc;

	if (http_site_of(o, &fresh)) {
		snprintf(err, len, "out of memory");
		return -ENOMEM;
	}
	rc = plan_listeners(s, o, &fresh, next, &nnext, moved, err, len);
	if (rc) {
		http_site_free(&fresh);
		return rc;
	}
	memcpy(old, s->l, sizeof(old));
	pthread_mutex_lock(&s->req_lock);
	pthread_mutex_lock(&s->conn_lock);
	s->lim = fresh.limits;
	pthread_mutex_unlock(&s->conn_lock);
	{
		struct site t = s->site;

		s->site = fresh;
		fresh = t;
	}
	memcpy(s->l, next, sizeof(next));
	s->n = nnext;
	s->tokens_ns = 0; /* after a reload the rate limit starts with a full bucket */
	if (commit)
		commit(commit_ctx);
	pthread_mutex_unlock(&s->req_lock);
	http_site_free(&fresh);
	/* The old listeners not kept: answer what is under way, then close. */
	for (size_t i = 0; i < nold; i++) {
		bool kept = false, handed_over = false;

		for (size_t j = 0; j < s->n; j++) {
			kept |= s->l[j].d == old[i].d;
			handed_over |= moved[j] == (int)i;
		}
		if (kept)
			continue;
		if (handed_over) {
			drain_and_stop(s, old[i].d);
		} else {
			int fd = (int)MHD_quiesce_daemon(old[i].d);

			drain_and_stop(s, old[i].d);
			if (fd >= 0)
				close(fd);
		}
	}
	return 0;
}

void http_listeners_stop(struct http_server *s)
{
	for (size_t i = 0; i < s->n; i++)
		stop_daemon(s, s->l[i].d);
}
