# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# iolat build. Everything lands in $(OUT); quiet unless V=1.
#   make            build iolat
#   make run        install missing Debian packages, build, run `iolat hist`
#   make test       every test: unit, sanitized unit + smoke, fuzz, integration (root)
#   make unit       unit tests only
#   make sanitize   ASan/UBSan build in build-san/: unit tests and a live smoke test
#   make tsan       ThreadSanitizer build in build-tsan/: the daemon's tests
#   make fuzz       every libFuzzer target (fuzz/), FUZZ_SECONDS each; fuzz-NAME one
#   make soak       bench/soak.sh: `iolat serve` through 100 000 scrapes, 5 000
#                   cgroups, 100 disk cycles and 200 SIGHUPs (root, ~25 min on
#                   2 vCPUs; not in `make test`); SCRAPES=, CGROUPS=, DISKS=,
#                   HUPS= scale it
#   make bench-fleet bench/fleet.sh: iolat's series replayed as N hosts into
#                   Prometheus and VictoriaMetrics (root, ~20 min; not in
#                   `make test`); FLEET_ARGS='--hosts 50,100 --workloads 50'
#   make compare-outputs OLD=REV  REV's iolat and this tree's, same output
#                   over the same workload? (root, ~1 min + REV's build)
#   make mixin      render the monitoring mixin (mixin/: rules, alerts, dashboards)
#   make mixin-check the rendered mixin is current; promtool check/test; dashboard lint
#   make STATIC=1   link libbpf, libelf, zlib and zstd statically
OUT ?= build
CC ?= cc
CLANG ?= clang
BPFTOOL ?= bpftool
PROTOC_C ?= protoc-c
ARCH := $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/')
# In a clone, one that sorts by commit (0.1.0+git20261127.42.gabc1234; a
# tag's own on a tag), else the tarball's or VERSION (scripts/version.sh).
VERSION := $(shell sh scripts/version.sh)

CFLAGS ?= -O2 -g
CFLAGS += -std=gnu11 -Wall -Wextra -Werror -Wmissing-prototypes -Wno-missing-field-initializers \
	  -Wno-format-truncation \
	  -I$(OUT) -Ibpf -Isrc -MMD -MP -DIOLAT_VERSION='"$(VERSION)"'
# libbpf and its dependencies only: Debian ships no static libsystemd, and
# libmicrohttpd's static link needs GnuTLS dependencies without archives.
STATIC_BPF_LIBS := -Wl,-Bstatic -lbpf -lelf -lz -lzstd -Wl,-Bdynamic
ifeq ($(STATIC),1)
LDLIBS := $(STATIC_BPF_LIBS)
else
LDLIBS := -lbpf -lelf -lz
endif
OTHER_LIBS := -lm -lmicrohttpd -lpthread
OTHER_LIBS += -lprotobuf-c
OTHER_LIBS += -lyaml -lcap -lsystemd
# bcrypt (crypt_rn) and HMAC-SHA-256 (nettle) for basic auth in src/serve/webconfig_auth.c
OTHER_LIBS += -lcrypt -lnettle
# GnuTLS itself (under libmicrohttpd) for exporter-toolkit's TLS settings:
# client-certificate policies, SAN checks and cipher suites (src/serve/tls*.c)
OTHER_LIBS += -lgnutls
LDLIBS += $(OTHER_LIBS)
ifeq ($(TSAN),1)
CFLAGS += -fsanitize=thread -fno-omit-frame-pointer
LDFLAGS += -fsanitize=thread
endif
ifeq ($(SAN),1)
CFLAGS += -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
LDFLAGS += -fsanitize=address,undefined
endif

BPF_CFLAGS := -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -I$(OUT) -Ibpf -Wall -Werror
# Benchmarks only (bench/breakdown.sh): IOLAT_BENCH_WITHOUT_* defines that
# leave one part out of the programs, to measure what it costs. Such a build
# counts wrongly by design; nothing else sets this.
BPF_CFLAGS += $(BENCH_BPF_DEFS)
# Testing only (tests/integration/test_upgrade.sh): LAYOUT_NEXT=1 builds the
# "next release", whose kernel values have a field more and whose map layout
# is one version on (bpf/iolat.h), to hand over to and roll back from.
ifeq ($(LAYOUT_NEXT),1)
CFLAGS += -DIOLAT_TEST_LAYOUT_NEXT
BPF_CFLAGS += -DIOLAT_TEST_LAYOUT_NEXT
endif
# System headers after ours, so vmlinux.h wins over asm/ types.
BPF_SYS_INC := $(shell $(CLANG) -v -E - </dev/null 2>&1 | \
	sed -n '/<...> search starts here:/,/End of search list./{ s| \(/.*\)|-idirafter \1|p }')

# The sources by subsystem (src/README.md): each folder's modules call only
# their own folder and the layers below (make lint checks the includes).
LAYERS := util sys core metrics uprog serve cli
ALL_SRCS := $(foreach d,$(LAYERS),$(wildcard src/$(d)/*.c))
# The commands (main.c, the command table commands.c and each cmd_*.c) are
# the program; everything else is the library the unit tests link too.
CMD_SRCS := src/main.c src/commands.c $(filter src/%/cmd_serve.c src/cli/cmd_%.c,$(ALL_SRCS))
LIB_SRCS := $(filter-out $(CMD_SRCS),$(ALL_SRCS))
vpath %.c $(LAYERS:%=src/%) src
# Modules that need a BPF skeleton to build (bpftool, and a kernel with
# BTF for vmlinux.h), their own or one they call. The rest is the pure
# library, $(OUT)/libiolat.a, which is all most unit tests link: they build
# and run without bpftool or BTF (make unit-nobpf checks it).
BPF_SRCS := $(wildcard src/core/collector*.c) src/core/tracer.c src/core/systimes.c src/uprog/mapiter.c src/uprog/uprog.c \
	    src/uprog/uprog_read.c src/uprog/uprog_source.c src/uprog/userprogs.c
PURE_SRCS := $(filter-out $(BPF_SRCS),$(LIB_SRCS))
LIB_OBJS := $(patsubst %.c,$(OUT)/%.o,$(notdir $(LIB_SRCS)))
PURE_OBJS := $(patsubst %.c,$(OUT)/%.o,$(notdir $(PURE_SRCS)))
BPF_OBJS := $(patsubst %.c,$(OUT)/%.o,$(notdir $(BPF_SRCS)))
# protoc-c output: its object joins the library like any other module.
LIB_OBJS += $(OUT)/prometheus.pb-c.o
PURE_OBJS += $(OUT)/prometheus.pb-c.o
# iolat's own metric configs, carried as strings (scripts/embed_configs.sh).
BUILTIN_CONFIGS := $(wildcard builtin/*.yaml)
LIB_OBJS += $(OUT)/builtin_configs.o
PURE_OBJS += $(OUT)/builtin_configs.o
CMD_OBJS := $(patsubst %.c,$(OUT)/%.o,$(notdir $(CMD_SRCS)))
UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(UNIT_SRCS:tests/unit/%.c=$(OUT)/%)
HELPER_BINS := $(OUT)/dio $(OUT)/slowfs
# Users' programs (docs/userprogs.md): objects with their configs beside them.
EXAMPLE_NAMES := $(patsubst examples/%.bpf.c,%,$(wildcard examples/*.bpf.c))
EXAMPLES := $(EXAMPLE_NAMES:%=$(OUT)/examples/%.bpf.o) $(EXAMPLE_NAMES:%=$(OUT)/examples/%.yaml)
# Deliberately broken BPF objects the loader's tests feed it.
TEST_BPF_OBJS := $(patsubst tests/data/%.bpf.c,$(OUT)/test-data/%.bpf.o,$(wildcard tests/data/*.bpf.c))
HELPER_BINS += $(OUT)/uprog_dump $(TEST_BPF_OBJS)
# bench/cost.sh's lower bounds: programs that do the least a latency
# histogram can, each loaded alone by bpfload.
HELPER_BINS += $(OUT)/bpfload $(OUT)/bench/bound.bpf.o
# bench/userprogs.sh's floor: a bare batch walk of the map iolat reads.
HELPER_BINS += $(OUT)/mapwalk
# libFuzzer targets (fuzz/), each run for FUZZ_SECONDS by `make fuzz` and for
# TEST_FUZZ_SECONDS by `make test`; they need clang.
FUZZ_TARGETS := uconfig http webconfig
FUZZ_BINS := $(FUZZ_TARGETS:%=$(OUT)/fuzz_%)
FUZZ_SECONDS ?= 60
TEST_FUZZ_SECONDS ?= 25
# libFuzzer runs on one CPU: `make fuzz` runs this many targets at once (the
# host's CPUs), each with a CPU of its own for its FUZZ_SECONDS.
FUZZ_JOBS ?= $(shell nproc 2>/dev/null || echo 1)
# `make test` builds with this many jobs (the host's CPUs); its stages and
# their tests still run one after another.
TEST_JOBS ?= $(shell nproc 2>/dev/null || echo 1)
FUZZ_LDLIBS := -lyaml -lcrypt -lnettle -lgnutls -lpthread
FUZZ_CFLAGS := -g -O1 -std=gnu11 -Wall -Wextra -Werror -Wno-missing-field-initializers -Isrc \
	       -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all

ifeq ($(V),1)
Q :=
msg :=
else
Q := @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

.DELETE_ON_ERROR:
.PHONY: bench-fleet bench-join compare-outputs mixin mixin-check all deps run unit unit-nobpf lint format format-check test integration \
	sanitize tsan fuzz soak clean helpers examples systemd-guest \
	$(FUZZ_TARGETS:%=fuzz-%)

all: $(OUT)/iolat examples

$(OUT):
	$(Q)mkdir -p $@

$(OUT)/vmlinux.h: | $(OUT)
	$(call msg,BTF,$@)
	$(Q)$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > $@

$(OUT)/iolat.bpf.o: bpf/iolat.bpf.c bpf/iolat.h bpf/slots.h bpf/block.h bpf/tp_pair.h \
		$(OUT)/vmlinux.h | $(OUT)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) $(BPF_SYS_INC) -c $< -o $@

$(OUT)/iolat.skel.h: $(OUT)/iolat.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name iolat_bpf > $@

$(patsubst src/core/%.c,$(OUT)/%.o,$(wildcard src/core/collector*.c)): $(OUT)/iolat.skel.h

$(OUT)/trace.bpf.o: bpf/trace.bpf.c bpf/trace_syscalls.bpf.h bpf/trace_pagecache.bpf.h \
		bpf/trace_stages.bpf.h bpf/trace.h bpf/iolat.h bpf/block.h bpf/tp_pair.h \
		$(OUT)/vmlinux.h | $(OUT)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) $(BPF_SYS_INC) -c $< -o $@

$(OUT)/trace.skel.h: $(OUT)/trace.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name trace_bpf > $@

$(OUT)/tracer.o: $(OUT)/trace.skel.h

$(OUT)/sysio.bpf.o: bpf/sysio.bpf.c bpf/sysio.h bpf/iolat.h bpf/slots.h bpf/block.h \
		$(OUT)/vmlinux.h | $(OUT)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) $(BPF_SYS_INC) -c $< -o $@

$(OUT)/sysio.skel.h: $(OUT)/sysio.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name sysio_bpf > $@

$(OUT)/systimes.o: $(OUT)/sysio.skel.h

$(OUT)/mapiter.bpf.o: bpf/mapiter.bpf.c $(OUT)/vmlinux.h | $(OUT)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) $(BPF_SYS_INC) -c $< -o $@

$(OUT)/mapiter.skel.h: $(OUT)/mapiter.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name mapiter_bpf > $@

$(OUT)/mapiter.o: $(OUT)/mapiter.skel.h

$(OUT)/builtin_configs.c: scripts/embed_configs.sh $(BUILTIN_CONFIGS) | $(OUT)
	$(call msg,EMBED,$@)
	$(Q)sh scripts/embed_configs.sh $(BUILTIN_CONFIGS) > $@

$(OUT)/builtin_configs.o: $(OUT)/builtin_configs.c
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) -c $< -o $@

examples: $(EXAMPLES)

$(OUT)/examples $(OUT)/test-data:
	$(Q)mkdir -p $@

$(OUT)/examples/%.bpf.o: examples/%.bpf.c examples/iolat_user.h $(OUT)/vmlinux.h | $(OUT)/examples
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) $(BPF_SYS_INC) -Iexamples -c $< -o $@

$(OUT)/examples/%.yaml: examples/%.yaml | $(OUT)/examples
	$(Q)cp $< $@

$(OUT)/test-data/%.bpf.o: tests/data/%.bpf.c examples/iolat_user.h $(OUT)/vmlinux.h | $(OUT)/test-data
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) $(BPF_SYS_INC) -Iexamples -c $< -o $@

# One protoc-c run writes both files (a pattern rule with two targets is
# one grouped recipe). Sources that include the header wait for it here,
# since -MMD only records it after their first compile.
$(OUT)/%.pb-c.c $(OUT)/%.pb-c.h: proto/%.proto | $(OUT)
	$(call msg,PROTOC,$@)
	$(Q)$(PROTOC_C) --proto_path=proto --c_out=$(OUT) $<

$(OUT)/prometheus.pb-c.o: $(OUT)/prometheus.pb-c.c $(OUT)/prometheus.pb-c.h
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) -c $< -o $@

$(OUT)/expo_proto.o $(OUT)/test_expo_proto: $(OUT)/prometheus.pb-c.h

# The syscall decoder's table, from this architecture's <asm/unistd.h>.
$(OUT)/syscall_names.h: scripts/gen_syscalls.sh | $(OUT)
	$(call msg,GEN,$@)
	$(Q)sh $< "$(CC)" > $@

$(OUT)/decoders.o: $(OUT)/syscall_names.h

$(OUT)/%.o: %.c | $(OUT)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) -c $< -o $@

$(OUT)/iolat: $(LIB_OBJS) $(CMD_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(LDFLAGS) $^ $(LDLIBS) -o $@

# What `make STATIC=1` links, from this build's objects (STATIC changes the
# libraries only): the guest tests' binary (tests/vm/), so that they do not
# compile the whole tree a second time into an OUT of their own.
$(OUT)/iolat-static: $(LIB_OBJS) $(CMD_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(LDFLAGS) $^ $(STATIC_BPF_LIBS) $(OTHER_LIBS) -o $@

$(OUT)/libiolat.a: $(PURE_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && $(AR) rcs $@ $^

# A unit test links the pure library. Code that reads the collector
# (core/collector.h) is tested against tests/unit/fake_collector.c, an
# in-memory collector behind the same interface.
$(OUT)/test_%: tests/unit/test_%.c $(OUT)/libiolat.a
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) $(filter %.c,$^) $(OUT)/libiolat.a \
		$(LDLIBS) -lcmocka -o $@
$(OUT)/test_exporter: tests/unit/fake_collector.c tests/unit/fake_collector.h

$(OUT)/dio: tests/helpers/dio.c | $(OUT)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) $< -o $@

$(OUT)/slowfs: tests/helpers/slowfs.c | $(OUT)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) $(shell pkg-config --cflags fuse3) $< $(shell pkg-config --libs fuse3) -o $@

$(OUT)/uprog_dump: tests/helpers/uprog_dump.c $(OUT)/uprog.o $(OUT)/uprog_read.o $(OUT)/uprog_perf.o \
		   $(OUT)/mapiter.o $(OUT)/mapbatch.o \
		   $(OUT)/buf.o $(OUT)/verifier_log.o $(OUT)/libbpf_log.o $(OUT)/log.o | $(OUT)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) $^ $(LDLIBS) -o $@

# The command table as check_docs.sh reads it: iolat without its main.
$(OUT)/cmdtable_dump: tests/helpers/cmdtable_dump.c $(LIB_OBJS) $(filter-out $(OUT)/main.o,$(CMD_OBJS))
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) $^ $(LDLIBS) -o $@

$(OUT)/bpfload: tests/helpers/bpfload.c | $(OUT)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) $< $(LDLIBS) -o $@

$(OUT)/mapwalk: tests/helpers/mapwalk.c $(OUT)/mapbatch.o | $(OUT)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) $^ $(LDLIBS) -o $@

$(OUT)/bench:
	$(Q)mkdir -p $@

$(OUT)/bench/bound.bpf.o: bench/bound.bpf.c bpf/block.h bpf/slots.h bpf/iolat.h \
			  $(OUT)/vmlinux.h | $(OUT)/bench
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) $(BPF_SYS_INC) -c $< -o $@

helpers: $(HELPER_BINS)

# Each target is fuzz/fuzz_NAME.c with the sources it reaches; it runs from
# fuzz/corpus/NAME/ with fuzz/NAME.dict.
# yamldoc reads every config file, with parse (durations) and readfile.
YAMLDOC_SRCS := src/util/yamldoc.c src/util/yamldoc.h src/util/parse.c src/util/parse.h
WEBCONFIG_SRCS := src/serve/webconfig.c src/serve/webconfig.h src/serve/webconfig_auth.c \
		  src/serve/webconfig_internal.h src/serve/tlsconf.c \
		  src/serve/tlsconf.h $(YAMLDOC_SRCS) \
		  src/util/readfile.c src/util/readfile.h src/util/strv.c src/util/strv.h
$(OUT)/fuzz_uconfig: src/uprog/uconfig.c src/uprog/uconfig.h src/uprog/uconfig_labels.c \
		      src/uprog/uconfig_perf.c $(YAMLDOC_SRCS) \
		      src/util/regex_guard.c src/util/regex_guard.h
$(OUT)/fuzz_http: src/serve/http_request.c src/serve/http_request.h $(WEBCONFIG_SRCS)
$(OUT)/fuzz_webconfig: $(WEBCONFIG_SRCS)

$(FUZZ_BINS): $(OUT)/fuzz_%: fuzz/fuzz_%.c | $(OUT)
	$(call msg,FUZZ-CC,$@)
	$(Q)$(CLANG) $(FUZZ_CFLAGS) $(filter %.c,$^) $(FUZZ_LDLIBS) -o $@

# FUZZ_JOBS targets at once, no more, so each has the CPU it is given for its
# time; each target's lines together (--output-sync).
fuzz: $(FUZZ_BINS)
	$(Q)$(MAKE) --no-print-directory -j$(FUZZ_JOBS) --output-sync=target $(FUZZ_TARGETS:%=fuzz-%)

# Runs over a copy of the seed corpus, so the tree's stays small and chosen.
# libFuzzer exits non-zero on a crash, leak, timeout or memory blow-up; its
# log is shown then, and the input is left in $(OUT)/fuzz-NAME-*.
$(FUZZ_TARGETS:%=fuzz-%): fuzz-%: $(OUT)/fuzz_%
	$(Q)rm -rf $(OUT)/fuzz-corpus/$* && mkdir -p $(OUT)/fuzz-corpus/$*
	$(Q)cp fuzz/corpus/$*/* $(OUT)/fuzz-corpus/$*/
	$(call msg,FUZZ,$< for $(FUZZ_SECONDS)s)
	$(Q)if $< -max_total_time=$(FUZZ_SECONDS) -timeout=10 -rss_limit_mb=2048 \
		-max_len=8192 -dict=fuzz/$*.dict -print_final_stats=1 -artifact_prefix=$(OUT)/fuzz-$*- \
		$(OUT)/fuzz-corpus/$* >$(OUT)/fuzz_$*.log 2>&1; then \
		grep -E '^(Done|stat::number_of_executed_units)|(DONE|INITED) +cov' $(OUT)/fuzz_$*.log; \
	else \
		tail -n 60 $(OUT)/fuzz_$*.log; exit 1; \
	fi

unit: $(UNIT_BINS)
	$(Q)set -e; for t in $(UNIT_BINS); do ./$$t; done

# The pure library's unit tests built and run with no bpftool and no clang
# for BPF: what a contributor without a BTF kernel can run.
unit-nobpf:
	$(Q)$(MAKE) --no-print-directory OUT=build-nobpf BPFTOOL=/bin/false CLANG=/bin/false \
		UNIT_BINS="$(UNIT_BINS:$(OUT)/%=build-nobpf/%)" unit

# One static analyser (cppcheck), shellcheck on every script, and the
# layers' include rule (src/README.md). Findings fail the target.
SHELL_SCRIPTS = $(shell git ls-files '*.sh' 2>/dev/null) contrib/completion/iolat.bash .ci/run debian/iolat.prerm
lint:
	$(call msg,LAYERS,src/)
	$(Q)bash tests/lint/check_layers.sh >/dev/null || bash tests/lint/check_layers.sh
	$(call msg,DECODERS,docs and man page)
	$(Q)bash tests/lint/check_decoders.sh
	$(call msg,FUNCLEN,src/)
	$(Q)bash tests/lint/check_function_length.sh
	$(call msg,CPPCHECK,src/)
	$(Q)cppcheck --quiet --enable=warning,performance,portability --std=c11 --max-configs=1 \
		--inline-suppr -I src -I bpf --suppress=missingInclude \
		--suppress=missingIncludeSystem --error-exitcode=1 \
		'-DLIBBPF_OPTS(TYPE,NAME,...)=struct TYPE NAME = {__VA_ARGS__}' \
		src tests/unit tests/helpers fuzz
	$(call msg,SHELLCHECK,scripts and tests)
	$(Q)shellcheck -x $(SHELL_SCRIPTS)

# .clang-format enforced on the C sources (make format rewrites them).
FORMAT_SRCS = $(shell git ls-files 'src/*.[ch]' 'bpf/*.[ch]' 'tests/unit/*.c' 'tests/helpers/*.c' \
	'fuzz/*.c' 'examples/*.[ch]' 'tests/data/*.c' 2>/dev/null)
format-check:
	$(call msg,FORMAT,check)
	$(Q)clang-format --dry-run --Werror $(FORMAT_SRCS)

format:
	$(Q)clang-format -i $(FORMAT_SRCS)

integration: $(OUT)/iolat $(HELPER_BINS) examples
	$(Q)OUT=$(OUT) bash tests/integration/run.sh

# The unit and the package under a real systemd: a Debian 12 guest (qemu,
# TCG) whose image mmdebstrap builds once into $(OUT)/vm/systemd-guest
# (tests/vm/systemd_guest.sh). Part of make integration, this runs it alone.
systemd-guest:
	$(Q)OUT=$(OUT) ONLY='test_systemd_guest\.sh' bash tests/integration/run.sh

# Too long for CI: run by hand (bench/soak.sh --help; BENCHMARKS.md has runs).
# Its knobs come in as environment variables (make soak SCRAPES=3000 HUPS=0).
soak: $(OUT)/iolat $(OUT)/dio
	$(Q)OUT=$(OUT) bash bench/soak.sh

# What `iolat trace --join` costs as traces grow (bench/join.sh, up to a
# million requests; BENCHMARKS.md).
bench-join: $(OUT)/iolat $(OUT)/libiolat.a
	$(Q)OUT=$(OUT) bash bench/join.sh $(JOIN_ARGS)

# The simulated fleet's cost to the stores (bench/fleet.sh; BENCHMARKS.md).
bench-fleet: $(OUT)/iolat $(OUT)/dio
	$(Q)IOLAT=$(OUT)/iolat DIO=$(OUT)/dio bash bench/fleet.sh $(FLEET_ARGS)

# The old revision's iolat, built in a temporary git worktree under /tmp in
# an OUT of its own (removed after, whatever happens), against this tree's:
# the same output over the same workload (tests/compat/compare_outputs.sh).
# Extra arguments for the new binary's serve: COMPARE_NEW_SERVE_ARGS=.
compare-outputs: $(OUT)/iolat $(OUT)/dio
	$(Q)test -n "$(OLD)" || { echo "usage: make compare-outputs OLD=<git rev>" >&2; exit 2; }
	$(Q)rev=$$(git rev-parse --verify -q "$(OLD)^{commit}") || \
		{ echo "compare-outputs: '$(OLD)' is not a commit" >&2; exit 2; }; \
	old=$$(mktemp -d /tmp/iolat-old-XXXXXX) && rmdir "$$old" && \
	git worktree add -q --detach "$$old" "$$rev" || exit 2; \
	trap 'git worktree remove --force "$$old"' EXIT; \
	echo "  BUILD    $(OLD) ($$rev) in $$old"; \
	$(MAKE) --no-print-directory -C "$$old" OUT="$$old/build" "$$old/build/iolat" \
		>"$$old.build.log" 2>&1 || { tail -n 30 "$$old.build.log"; rm -f "$$old.build.log"; exit 2; }; \
	rm -f "$$old.build.log"; \
	OUT=$(OUT) bash tests/compat/compare_outputs.sh "$$old/build/iolat" "$(OUT)/iolat"

deps:
	$(Q)bash scripts/deps.sh

# The monitoring mixin's rendered files are committed (usable without
# jsonnet); mixin-check fails when they are not what mixin/*.libsonnet gives.
mixin:
	$(Q)bash scripts/render_mixin.sh mixin

mixin-check:
	$(Q)bash tests/mixin/check.sh $(OUT)/mixin

# Man pages and shell completion (issue 13)
#   make man         man/*.N.scd -> $(OUT)/man/*.N (scdoc; @VERSION@ filled in)
#   make check-docs  the command table (commands.c, read by cmdtable_dump) in
#                    each --help, every --help flag in its man page and back, the pages
#                    render without warnings, the bash completion completes
#                    (tests/install/check_docs.sh; no root, a few seconds);
#                    each page's EXIT STATUS checked on the cases it names
#                    (check_exit_status.sh; its BPF cases need root, ~30 s).
#                    docs/serve.md's metric tables against what serve exports
#                    are an integration test (test_serve_docs.sh: root, BPF)
# MAN_PAGES and BASH_COMPLETION are what an install copies: pages to
# $(mandir)/man1 and man5, the completion to bash-completion's
# completionsdir as `iolat`.
SCDOC ?= scdoc
MAN_SRCS := $(wildcard man/*.scd)
MAN_PAGES := $(MAN_SRCS:man/%.scd=$(OUT)/man/%)
BASH_COMPLETION := contrib/completion/iolat.bash

.PHONY: man check-docs

man: $(MAN_PAGES)

$(OUT)/man:
	$(Q)mkdir -p $@

$(MAN_PAGES): $(OUT)/man/%: man/%.scd VERSION | $(OUT)/man
	$(call msg,SCDOC,$@)
	$(Q)sed 's/@VERSION@/$(VERSION)/g' $< | $(SCDOC) > $@

check-docs: $(OUT)/iolat $(OUT)/cmdtable_dump man
	$(Q)bash tests/install/check_docs.sh $(OUT)
	$(Q)bash tests/install/check_exit_status.sh $(OUT)

run: deps
	$(Q)$(MAKE) --no-print-directory all
	$(OUT)/iolat hist

# The stages one after another. Their builds take TEST_JOBS jobs; their
# tests run one at a time (the unit loop, run.sh), each in a make of its
# own, so that no make inside a test meets a jobserver it cannot reach.
test: deps
	$(Q)$(MAKE) --no-print-directory lint
	$(Q)$(MAKE) --no-print-directory format-check
	$(Q)$(MAKE) --no-print-directory -j$(TEST_JOBS) unit
	$(Q)$(MAKE) --no-print-directory -j$(TEST_JOBS) unit-nobpf
	$(Q)$(MAKE) --no-print-directory mixin-check
	$(Q)$(MAKE) --no-print-directory -j$(TEST_JOBS) check-docs
	$(Q)$(MAKE) --no-print-directory check-deploy
	$(Q)$(MAKE) --no-print-directory check-version
	$(Q)$(MAKE) --no-print-directory -j$(TEST_JOBS) OUT=build-san SAN=1 build-san/iolat helpers \
		examples $(UNIT_BINS:$(OUT)/%=build-san/%)
	$(Q)$(MAKE) --no-print-directory sanitize
	$(Q)$(MAKE) --no-print-directory -j$(TEST_JOBS) OUT=build-tsan TSAN=1 build-tsan/iolat helpers examples
	$(Q)$(MAKE) --no-print-directory tsan
	$(Q)$(MAKE) --no-print-directory fuzz FUZZ_SECONDS=$(TEST_FUZZ_SECONDS)
	$(Q)$(MAKE) --no-print-directory -j$(TEST_JOBS) $(OUT)/iolat $(OUT)/iolat-static $(HELPER_BINS) examples
	$(Q)$(MAKE) --no-print-directory integration

# Sanitized build: unit tests, then live runs of `hist` (signals) and `serve`.
sanitize:
	$(Q)$(MAKE) --no-print-directory OUT=build-san SAN=1 build-san/iolat helpers examples unit
	$(Q)# A small quarantine, so test_workloads' flat-memory check still means something.
	$(Q)# test_handover's 20 restarts are the plain run's; 6 find the same code here.
	$(Q)ASAN_OPTIONS=quarantine_size_mb=1 OUT=build-san IOLAT_SANITIZED=1 RESTARTS=6 \
		ONLY='test_(signals|serve|serve_reload|serve_flood|serve_tls|webconfig_compat|workloads|kube_names|process|userprogs|trace_pagecache|handover|upgrade|vm_syscalls)\.sh' \
		bash tests/integration/run.sh

# ThreadSanitizer build of the daemon, where libmicrohttpd's thread answers
# requests while the main one reloads: the serve tests under it (not
# test_workloads: its time goes to 5 000 short-lived helper processes, not
# to the daemon's threads; it runs under ASan in make sanitize). A report
# aborts iolat (halt_on_error) and is kept in build-tsan/tsan-report.PID;
# either fails the target. setarch -R: gcc 12's TSan cannot map its shadow
# memory when vm.mmap_rnd_bits is above 28, as some kernels set it.
tsan:
	$(Q)$(MAKE) --no-print-directory OUT=build-tsan TSAN=1 build-tsan/iolat helpers examples
	$(Q)rm -f build-tsan/tsan-report.*
	$(Q)TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 log_path=$(CURDIR)/build-tsan/tsan-report" \
		OUT=build-tsan IOLAT_SANITIZED=1 RESTARTS=6 \
		ONLY='test_(serve|serve_scrape|serve_reload|serve_flood|serve_notify|serve_tls|webconfig_compat|handover|handover_workloads|upgrade)\.sh' \
		setarch -R bash tests/integration/run.sh; rc=$$?; \
		if ls build-tsan/tsan-report.* >/dev/null 2>&1; then head -n 60 build-tsan/tsan-report.*; rc=1; fi; \
		exit $$rc

# Install, dist and Debian package (issue 13)
#   make install    PREFIX (/usr/local) and DESTDIR: the binary, users' example
#                   programs, docs, man pages (when scdoc can make them), the
#                   bash completion, the systemd unit, the default config,
#                   etc/default/iolat (the unit's ARGS=; existing ones are
#                   kept) and an empty etc/iolat/programs/ for users' programs
#   make uninstall  removes what install put there, except the config
#   make dist       $(OUT)/iolat-VERSION.tar.gz of HEAD (git archive), with
#                   .tarball-version, so its build knows its version
#   make deb        $(OUT)/deb/iolat_VERSION_ARCH.deb with debhelper, built
#                   from a copy of the tree (scripts/mkdeb.sh); lintian after
#   make check-unit contrib/iolat.service: systemd-analyze verify and security;
#                   as root, a traced serve run inside its SystemCallFilter=
#   make check-deploy deploy/kubernetes's kustomizations rendered by kubectl,
#                   every object validated against the Kubernetes schemas
#                   (npm: kubernetes-models), and agreeing with each other,
#                   the unit, the Containerfile and the mixin (no root)
#   make check-version scripts/version.sh's versions sort as their commits do
#                   (dpkg --compare-versions; no root)
#   make image      the container image (Containerfile), IMAGE:VERSION and
#                   IMAGE:latest, with buildah, podman or docker (IMAGE_TOOL=)
PREFIX ?= /usr/local
bindir ?= $(PREFIX)/bin
datadir ?= $(PREFIX)/share
mandir ?= $(datadir)/man
docdir ?= $(datadir)/doc/iolat
bashcompdir ?= $(datadir)/bash-completion/completions
# PREFIX=/usr is the system's: config in /etc, the unit where Debian 12's
# packages put theirs.
sysconfdir ?= $(if $(filter /usr,$(PREFIX)),/etc,$(PREFIX)/etc)
unitdir ?= $(if $(filter /usr,$(PREFIX)),/lib/systemd/system,$(PREFIX)/lib/systemd/system)
# The unit's user (contrib/iolat.sysusers): /usr/lib/sysusers.d for
# PREFIX=/usr (dh_installsysusers finds it there), else PREFIX's.
sysusersdir ?= $(PREFIX)/lib/sysusers.d
INSTALL ?= install
# The man pages' and completion's rules may not be there (yet): then install
# takes whatever $(OUT)/man holds, and no completion.
INSTALL_MAN := $(if $(MAN_PAGES),$(if $(shell command -v $(SCDOC) 2>/dev/null),$(MAN_PAGES)))
INSTALL_COMPLETION := $(wildcard $(or $(BASH_COMPLETION),contrib/completion/iolat.bash))

.PHONY: install uninstall dist deb check-unit FORCE

# The version is compiled in: rebuild what prints it when it changes.
$(OUT)/version: FORCE | $(OUT)
	$(Q)[ "$$(cat $@ 2>/dev/null)" = "$(VERSION)" ] || echo "$(VERSION)" > $@
$(OUT)/main.o $(OUT)/cmd_serve.o $(OUT)/exporter.o: $(OUT)/version
$(if $(MAN_PAGES),$(eval $(MAN_PAGES): $(OUT)/version))

install: $(OUT)/iolat examples $(INSTALL_MAN)
	$(call msg,INSTALL,$(DESTDIR)$(PREFIX))
	$(Q)$(INSTALL) -d $(DESTDIR)$(bindir) $(DESTDIR)$(datadir)/iolat/builtin \
		$(DESTDIR)$(datadir)/iolat/examples $(DESTDIR)$(docdir) $(DESTDIR)$(unitdir) \
		$(DESTDIR)$(sysconfdir)/iolat $(DESTDIR)$(sysconfdir)/iolat/programs $(DESTDIR)$(sysconfdir)/default
	$(Q)$(INSTALL) -m 755 $(OUT)/iolat $(DESTDIR)$(bindir)/iolat
	$(Q)$(INSTALL) -m 644 $(BUILTIN_CONFIGS) $(DESTDIR)$(datadir)/iolat/builtin/
	$(Q)$(INSTALL) -m 644 $(EXAMPLES) examples/iolat_user.h $(DESTDIR)$(datadir)/iolat/examples/
	$(Q)$(INSTALL) -m 644 README.md docs/*.md LICENSE $(DESTDIR)$(docdir)/
	$(Q)$(INSTALL) -d $(DESTDIR)$(docdir)/LICENSES $(DESTDIR)$(docdir)/examples
	$(Q)$(INSTALL) -m 644 contrib/iolat.socket $(DESTDIR)$(docdir)/examples/
	$(Q)$(INSTALL) -m 644 LICENSES/*.txt $(DESTDIR)$(docdir)/LICENSES/
	$(Q)set -e; for p in $(wildcard $(OUT)/man/*.[1-8]); do \
		d=$(DESTDIR)$(mandir)/man$${p##*.}; $(INSTALL) -d $$d; $(INSTALL) -m 644 $$p $$d/; done
	$(Q)$(if $(INSTALL_COMPLETION),$(INSTALL) -D -m 644 $(INSTALL_COMPLETION) $(DESTDIR)$(bashcompdir)/iolat)
	$(Q)sed -e 's|/usr/local/bin/|$(bindir)/|g' -e 's|/usr/local/etc/|$(sysconfdir)/|g' \
		-e 's|/usr/local/share/doc/iolat/|$(docdir)/|g' contrib/iolat.service \
		> $(DESTDIR)$(unitdir)/iolat.service.tmp
	$(Q)chmod 644 $(DESTDIR)$(unitdir)/iolat.service.tmp
	$(Q)mv $(DESTDIR)$(unitdir)/iolat.service.tmp $(DESTDIR)$(unitdir)/iolat.service
	$(Q)$(INSTALL) -D -m 644 contrib/iolat.sysusers $(DESTDIR)$(sysusersdir)/iolat.conf
	$(Q)if [ -e $(DESTDIR)$(sysconfdir)/iolat/iolat.yml ]; then \
		echo "  kept     $(DESTDIR)$(sysconfdir)/iolat/iolat.yml (contrib/iolat.yml is the default)"; \
	else $(INSTALL) -m 644 contrib/iolat.yml $(DESTDIR)$(sysconfdir)/iolat/iolat.yml; fi
	$(Q)if [ -e $(DESTDIR)$(sysconfdir)/default/iolat ]; then \
		echo "  kept     $(DESTDIR)$(sysconfdir)/default/iolat (contrib/iolat.default is the default)"; \
	else sed 's|/etc/|$(sysconfdir)/|g' contrib/iolat.default > $(DESTDIR)$(sysconfdir)/default/iolat.tmp && \
		chmod 644 $(DESTDIR)$(sysconfdir)/default/iolat.tmp && \
		mv $(DESTDIR)$(sysconfdir)/default/iolat.tmp $(DESTDIR)$(sysconfdir)/default/iolat; fi

uninstall:
	$(Q)rm -f $(DESTDIR)$(bindir)/iolat $(DESTDIR)$(unitdir)/iolat.service $(DESTDIR)$(sysusersdir)/iolat.conf \
		$(DESTDIR)$(bashcompdir)/iolat $(DESTDIR)$(mandir)/man[1-8]/iolat[.-]*
	$(Q)rm -rf $(DESTDIR)$(datadir)/iolat $(DESTDIR)$(docdir)
	$(Q)echo "  kept     $(DESTDIR)$(sysconfdir)/iolat/ and $(DESTDIR)$(sysconfdir)/default/iolat (your configuration)"
	$(Q)if [ -z "$(DESTDIR)" ] && [ -d /sys/fs/bpf/iolat ]; then \
		echo "  kept     /sys/fs/bpf/iolat, /run/iolat: iolat serve --unpin (before uninstall) removes them"; fi

# HEAD, not the work tree: say so when they differ. .tarball-version is
# appended with tar (git archive's --add-virtual-file takes --prefix only in
# newer gits than Debian 12's 2.39).
dist: | $(OUT)
	$(Q)set -e; v=$$(sh scripts/version.sh --no-dirty); d=$(OUT)/dist-tmp; \
	git diff --quiet HEAD -- || echo "dist: uncommitted changes are not in the tarball: it is HEAD" >&2; \
	rm -rf $$d; mkdir -p $$d/iolat-$$v; printf '%s\n' "$$v" > $$d/iolat-$$v/.tarball-version; \
	git archive --format=tar --prefix=iolat-$$v/ -o $$d/iolat-$$v.tar HEAD; \
	tar -rf $$d/iolat-$$v.tar -C $$d --owner=0 --group=0 iolat-$$v/.tarball-version; \
	gzip -9n < $$d/iolat-$$v.tar > $(OUT)/iolat-$$v.tar.gz; rm -rf $$d; \
	echo "$(OUT)/iolat-$$v.tar.gz"

deb:
	$(Q)OUT=$(OUT) bash scripts/mkdeb.sh

# The unit against the binary: systemd-analyze verify and security, and (as
# root, with strace) every system call of a serve run inside its filter.
check-unit: $(OUT)/iolat examples
	$(Q)bash tests/install/check_unit.sh $(OUT)

# Kubernetes manifests (deploy/kubernetes) and the container image. The
# image's build stage runs `make STATIC=1` in Debian 12 and needs its base
# images (docker.io/library/debian:12 and 12-slim) from a registry or the
# tool's local store. IMAGE_TOOL is the first of buildah, podman, docker found;
# IMAGE_FLAGS go to its build command (e.g. --build-arg DEBIAN_IMAGE=... for
# other base images, --network=host).
IMAGE ?= iolat
IMAGE_FLAGS ?=
# An image tag takes no + or ~: they become -.
IMAGE_TAG := $(subst ~,-,$(subst +,-,$(VERSION)))
IMAGE_TOOL ?= $(firstword $(foreach t,buildah podman docker,$(if $(shell command -v $(t) 2>/dev/null),$(t))))

.PHONY: check-deploy check-version image

check-deploy:
	$(Q)bash tests/install/check_deploy.sh

check-version:
	$(Q)bash tests/install/check_version.sh

image:
	$(Q)if [ -z "$(IMAGE_TOOL)" ]; then \
		echo "make image: none of buildah, podman or docker is installed (apt-get install buildah)" >&2; exit 1; fi
	$(call msg,IMAGE,$(IMAGE):$(IMAGE_TAG) ($(IMAGE_TOOL)))
	$(Q)$(if $(filter buildah,$(IMAGE_TOOL)),buildah bud,$(IMAGE_TOOL) build) -f Containerfile \
		--build-arg IOLAT_VERSION=$(VERSION) $(IMAGE_FLAGS) -t $(IMAGE):$(IMAGE_TAG) -t $(IMAGE):latest .

clean:
	$(Q)rm -rf build build-san build-tsan build-next

-include $(wildcard $(OUT)/*.d)
