# lowtrace: one BPF object for the whole suite, one loader binary.
# `make help` lists the targets.

PREFIX ?= /usr/local
# the target architecture: this machine's unless ARCH is given (x86 or arm64; amd64, x86_64,
# aarch64 alike); ARCH=arm64 on x86 cross-builds with Debian's cross gcc and a sysroot of
# Debian's arm64 libbpf/libelf/zlib (dist/cross/sysroot). ARCH=... builds into build/ARCH/.
norm_arch = $(patsubst x86_64,x86,$(patsubst amd64,x86,$(patsubst aarch64,arm64,$(1))))
HOST_ARCH := $(call norm_arch,$(shell uname -m))
ifeq ($(origin ARCH),command line)
TARGET_ARCH := $(call norm_arch,$(ARCH))
BUILD := build/$(TARGET_ARCH)
else
TARGET_ARCH := $(HOST_ARCH)
BUILD := build
endif
ifeq ($(filter x86 arm64,$(TARGET_ARCH)),)
$(error ARCH=$(ARCH): lowtrace builds for x86 (amd64) and arm64)
endif
DEB_ARCH_x86 := amd64
DEB_ARCH_arm64 := arm64
TRIPLET_x86 := x86_64-linux-gnu
TRIPLET_arm64 := aarch64-linux-gnu
DEB_ARCH := $(DEB_ARCH_$(TARGET_ARCH))
# what runs the build's programs on this machine cannot take another architecture's (the kernel
# matrix, make vmtest ARCH=arm64, runs them in qemu)
NATIVE_ONLY := test test-asan fuzz load unload image man svctest fleettest
ifneq ($(TARGET_ARCH),$(HOST_ARCH))
ifneq ($(filter $(NATIVE_ONLY),$(MAKECMDGOALS)),)
$(error make $(filter $(NATIVE_ONLY),$(MAKECMDGOALS)) runs the build here: not with ARCH=$(ARCH) on $(HOST_ARCH))
endif
endif
TRIPLET := $(TRIPLET_$(TARGET_ARCH))
# the kernel's types per architecture: x86's at the top, others in arch/ARCH/ (make vmlinux)
VMLINUX_DIR_x86 := .
VMLINUX_DIR_arm64 := arch/arm64
# `lowtrace --version` and the package's: dist/version (git describe), or given
ifndef VERSION
VERSION := $(shell dist/version)
endif
# clang >= 15 for bpf_core_type_matches; prefer the newest Debian ships
CLANG = $(shell for c in clang-19 clang-18 clang-17 clang-16 clang-15 clang; do \
	command -v $$c >/dev/null 2>&1 && { echo $$c; break; }; done)
BPFTOOL = $(shell command -v bpftool 2>/dev/null || echo /usr/sbin/bpftool)
ifeq ($(TARGET_ARCH),$(HOST_ARCH))
CROSS :=
CC ?= gcc
PKG_CONFIG ?= pkg-config
LIBBPF_CFLAGS = $(shell $(PKG_CONFIG) --cflags libbpf)
LIBBPF_LIBS = $(shell $(PKG_CONFIG) --libs libbpf)
SYSROOT_LDFLAGS :=
SYSROOT_STAMP :=
else
# cross: the target's gcc, its libraries from the sysroot (headers, and -rpath-link for the
# libraries they need in turn); the target's own libc comes with the cross gcc
CROSS := $(TRIPLET)-
CC := $(CROSS)gcc
SYSROOT := $(BUILD)/sysroot
SYSROOT_STAMP := $(SYSROOT)/.packages
LIBBPF_CFLAGS = -I$(SYSROOT)/usr/include
SYSROOT_LDFLAGS = -L$(SYSROOT)/usr/lib/$(TRIPLET) -Wl,-rpath-link,$(SYSROOT)/usr/lib/$(TRIPLET) \
	-Wl,-rpath-link,$(SYSROOT)/lib/$(TRIPLET)
LIBBPF_LIBS = $(SYSROOT_LDFLAGS) -lbpf
endif

# Debian packages: build, then tests
DEPS_BUILD := llvm libbpf-dev bpftool libelf-dev zlib1g-dev pkg-config make gcc
# a cross build adds the target's gcc and libc (the libraries come from dist/cross/sysroot)
ifneq ($(CROSS),)
DEPS_BUILD += gcc-$(TRIPLET) libc6-dev-$(DEB_ARCH)-cross
endif
DEPS_TEST := bats bats-assert bats-support jq strace python3 util-linux procps iproute2 prometheus \
	protobuf-compiler curl podman runc containerd
# the kernel matrix in qemu (make vmtest); rsyslog: the fleet test's log shipper, in its guests
# (the host's root is theirs) and the central one on the host (make fleettest)
DEPS_VM := qemu-system-x86 busybox-static rsyslog
# the arm64 guests (make vmtest ARCH=arm64): qemu-system-aarch64; their userland is an arm64
# Debian root made by tests/vm/mkroot
DEPS_VM_arm64 := qemu-system-arm
# libFuzzer and the sanitizer runtimes of clang-19 (only recommended by it: a system that skips
# recommends lacks them)
DEPS_FUZZ := libclang-rt-19-dev
# the package (make deb): dpkg-shlibdeps, lintian
DEPS_PKG := dpkg-dev lintian
# the image (make image): its JSON (the rest is in DEPS_BUILD and DEPS_PKG)
DEPS_IMAGE := jq
DEPS_STAMP := $(BUILD)/.deps-stamp

# -fms-extensions: kernels since 6.19 embed structs by tag alone (`struct ns_tree;`), and the
# vmlinux.h dumped from their BTF says so
BPF_CFLAGS := -g -O2 -target bpf -D__TARGET_ARCH_$(TARGET_ARCH) -fms-extensions -Wno-microsoft-anon-tag \
	-Wall -Werror \
	-I$(VMLINUX_DIR_$(TARGET_ARCH)) -Iheaders -Iprogs -I$(BUILD) -MMD -MP
CFLAGS ?= -O2 -g
# Debian's hardening for a root agent (lintian checks the package for both)
USER_CFLAGS = $(CFLAGS) $(USER_WFLAGS) -D_FORTIFY_SOURCE=2
USER_LDFLAGS := -Wl,-z,relro,-z,now
USER_WFLAGS = -std=gnu11 -Wall -Wextra -Werror -fno-strict-aliasing \
	-Iheaders -Iloader -I$(BUILD) $(LIBBPF_CFLAGS) -MMD -MP

BPF_SRCS := $(wildcard progs/*.bpf.c)
# in any order: the shared maps and settings are weak definitions in every object
BPF_OBJS := $(patsubst progs/%.bpf.c,$(BUILD)/progs/%.bpf.o,$(BPF_SRCS))
# pure layers: no libbpf (the unit tests link these)
CORE_SRCS := loader/encode.c loader/decode.c loader/records.c loader/probes.c loader/histfmt.c \
	loader/prom.c loader/sym.c loader/symtab.c loader/elf.c loader/procmaps.c loader/kallsyms.c loader/ufind.c \
	loader/pprof.c loader/grow.c loader/lowtrace.c loader/opts.c loader/out.c loader/sysnames.c \
	loader/ident.c loader/cfi.c loader/unwind.c loader/rootfile.c loader/runtime.c \
	loader/http.c loader/table.c loader/subproto.c
# symbols from ELF files (libelf), gzip for pprof (zlib)
CORE_LIBS = $(SYSROOT_LDFLAGS) -lelf -lz -lm
CORE_OBJS := $(patsubst loader/%.c,$(BUILD)/loader/%.o,$(CORE_SRCS))
# the kernel layer: libbpf
KERNEL_SRCS := $(wildcard loader/kernel_*.c)
KERNEL_OBJS := $(patsubst loader/%.c,$(BUILD)/loader/%.o,$(KERNEL_SRCS))
# the commands (cmds.h; metrics in four files, metrics_*.c), what profile and alloc share, and
# main.c, above everything else
CMD_SRCS := loader/main.c loader/suite.c loader/stream.c loader/hist.c loader/top.c \
	loader/metrics.c loader/metrics_suite.c loader/metrics_scrape.c loader/metrics_by.c \
	loader/sub.c loader/subcli.c \
	loader/profile.c loader/alloc.c loader/profsess.c loader/proffmt.c \
	loader/proftext.c loader/profstack.c loader/profuw.c loader/profout.c
LOADER_OBJS := $(CORE_OBJS) $(KERNEL_OBJS) $(patsubst loader/%.c,$(BUILD)/loader/%.o,$(CMD_SRCS))
UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(UNIT_SRCS))
# programs the profile/alloc tests observe: frame pointers everywhere (-O0), except nofp and
# its libraries (unwind.bats); tests/workloads/lib*.c are libraries, not programs
WORKLOAD_BINS := $(patsubst tests/workloads/%.c,$(BUILD)/tests/workloads/%,\
	$(filter-out tests/workloads/lib%.c,$(wildcard tests/workloads/*.c))) \
	$(BUILD)/tests/workloads/allocs-static $(BUILD)/tests/workloads/libnofpdl.so
# sanitizers (make test-asan, make fuzz): clang, own build directories
SAN_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all
SAN_CFLAGS := -O1 -g -fno-omit-frame-pointer $(SAN_FLAGS)
# a report stops the run (the flags above make UBSan's fatal too); leaks are failures
SAN_ENV := ASAN_OPTIONS=halt_on_error=1:detect_leaks=1 \
	UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
ASAN_BUILD := $(BUILD)/asan
FUZZ_SECONDS ?= 60
FUZZ_BUILD := $(BUILD)/fuzz
FUZZ_SRCS := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_BINS := $(patsubst tests/fuzz/%.c,$(FUZZ_BUILD)/%,$(FUZZ_SRCS))
FUZZ_OBJS := $(patsubst loader/%.c,$(FUZZ_BUILD)/loader/%.o,$(CORE_SRCS))

.PHONY: all deps load unload test unit bats install man clean vmlinux format help fuzz test-asan bench \
	deb image FORCE
.DELETE_ON_ERROR:
.SECONDARY:

all: $(BUILD)/lowtrace

help:
	@echo "make            build build/lowtrace (and build/lowtrace.bpf.o)"
	@echo "make ARCH=arm64 the same for arm64 into build/arm64/ (on x86: Debian's cross gcc; make deps"
	@echo "                ARCH=arm64 installs it, the arm64 libraries are fetched into a sysroot)"
	@echo "make deps       install missing Debian packages (apt-get)"
	@echo "make load       deps + build + lowtrace load"
	@echo "make unload     lowtrace unload"
	@echo "make test       deps + build + unit and bats tests (as root)"
	@echo "make test-build the build, unit tests and workloads the tests run (no test run)"
	@echo "make bench      build/lowtrace and the benchmarks' programs (bench/*.c) into build/bench/"
	@echo "make test-asan  the unit tests built with AddressSanitizer and UBSan (as root)"
	@echo "make fuzz       build the libFuzzer targets (tests/fuzz/), run each FUZZ_SECONDS=$(FUZZ_SECONDS) s"
	@echo "make vmtest     the tests in qemu on Debian kernels (KERNELS=\"$(KERNELS)\")"
	@echo "                CGROUPS=v1: guests with only cgroup v1 hierarchies (an Amazon Linux 2"
	@echo "                node), the identity tests, results in build/vm/SERIES-v1"
	@echo "                ARCH=arm64: Debian's arm64 kernels (TCG), build/arm64 inside, build/vm/arm64-SERIES"
	@echo "make svctest    the systemd units in a guest booted into systemd (SVC_KERNEL=$(SVC_KERNEL))"
	@echo "make fleettest  three guests on three kernels scraped by Prometheus (FLEET_KERNELS)"
	@echo "make install    the binary, systemd units and man page under PREFIX ($(PREFIX)),"
	@echo "                the config as $(CONFIG) unless it exists (DESTDIR respected),"
	@echo "                the lowtrace user (systemd-sysusers; not with DESTDIR or SYSUSERS=)"
	@echo "make deb        build/lowtrace_VERSION_ARCH.deb (VERSION=$(VERSION)), checked by lintian"
	@echo "make image      build/lowtrace-image.tar: an OCI image archive of the .deb (podman load,"
	@echo "                docker load), made offline from this host's libraries"
	@echo "make man        regenerate docs/lowtrace.8 from the -h texts"
	@echo "make vmlinux    regenerate vmlinux.h from /sys/kernel/btf/vmlinux; with ARCH=arm64 on x86:"
	@echo "                arch/arm64/vmlinux.h from Debian's arm64 kernel VMLINUX_KERNEL=$(VMLINUX_KERNEL)"
	@echo "make clean      remove build/"

# ---- dependencies: stamps, so a second run costs nothing ----
# `make deps` (and test, vmtest) installs everything; `make load` only what building needs
DEPS_BUILD_STAMP := $(BUILD)/.deps-build-stamp
deps: $(DEPS_STAMP)

$(DEPS_STAMP): Makefile
	@$(call install_pkgs,$(DEPS_BUILD) $(DEPS_TEST) $(DEPS_VM) $(DEPS_VM_arm64) $(DEPS_PKG) $(DEPS_IMAGE),$(DEPS_FUZZ))
	@touch $@ $(DEPS_BUILD_STAMP)

$(DEPS_BUILD_STAMP): Makefile
	@$(call install_pkgs,$(DEPS_BUILD))
	@touch $@

# install_pkgs(list[,with_clang19]): apt-get update + install of the missing ones (and clang-19,
# else clang); with_clang19: packages wanted with clang-19, where Debian has it
define install_pkgs
	mkdir -p $(BUILD); \
	pkgs="$(1)"; \
	if ! command -v dpkg-query >/dev/null 2>&1 || ! command -v apt-get >/dev/null 2>&1; then \
		echo "not a Debian system: install these packages (or equivalents): clang-19 $$pkgs"; \
		exit 0; \
	fi; \
	missing=; for p in $$pkgs; do \
		dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "ok installed" || missing="$$missing $$p"; \
	done; \
	want_clang=; command -v clang-19 >/dev/null 2>&1 || want_clang=1; \
	with19=; for p in $(2); do \
		dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "ok installed" || with19="$$with19 $$p"; \
	done; \
	if [ -n "$$missing$$want_clang$$with19" ]; then \
		apt-get update -qq || { echo "make deps: apt-get update failed (are you root?)"; exit 1; }; \
		if [ -n "$$want_clang" ]; then \
			if apt-cache show clang-19 >/dev/null 2>&1; then missing="$$missing clang-19$$with19"; \
			else missing="$$missing clang"; fi; \
		elif [ -n "$$with19" ]; then \
			missing="$$missing$$with19"; \
		fi; \
		echo "make deps: installing$$missing"; \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null \
			|| { echo "make deps: apt-get install$$missing failed"; exit 1; }; \
	fi
endef

# ---- BPF: each program separately, then linked into ONE object ----
# syscall numbers from the target's own unistd header (linux-libc-dev; its cross package for
# another ARCH: $(CC) is the target's), not typed by hand. asm-generic's (arm64) defines some
# names by another (__NR_fcntl __NR3264_fcntl): every name goes through the preprocessor again
# as LT_NR_name __NR_name, so aliases resolve; __NR_syscalls and __NR_arch_specific_syscall
# name no syscall. A name left without a number fails the build.
$(BUILD)/lt_syscall_nr.h: Makefile $(SYSROOT_STAMP)
	@mkdir -p $(@D)
	echo '#include <asm/unistd.h>' | $(CC) -dM -E - | \
		sed -n 's/^#define __NR_\([a-z0-9_]*\) .*/\1/p' | \
		grep -vx 'syscalls\|arch_specific_syscall' | sort -u >$@.names
	test -s $@.names
	{ echo '#include <asm/unistd.h>'; sed 's/.*/LT_NR_& __NR_&/' $@.names; } | $(CC) -E -P - | \
		sed -n 's/^LT_NR_\([a-z0-9_]*\) \([0-9]*\)$$/#define LT_NR_\1 \2/p' | sort >$@.tmp
	test $$(wc -l <$@.tmp) = $$(wc -l <$@.names) || \
		{ echo "$@: a syscall without a number"; rm -f $@.tmp $@.names; exit 1; }
	rm -f $@.names
	# numbers below this may have a name
	awk '$$3 >= n { n = $$3 + 1 } END { print "#define LT_NSYSCALLS " n }' $@.tmp >>$@.tmp
	# the syscalls probe's slot for every number outside the table ("other")
	printf '#define LT_SYS_OTHER LT_NSYSCALLS\n#define LT_SYS_SLOTS (LT_NSYSCALLS + 1)\n' >>$@.tmp
	mv $@.tmp $@

# and the names for the loader (lt_syscall_names[nr])
$(BUILD)/lt_syscall_names.h: $(BUILD)/lt_syscall_nr.h
	{ echo '/* generated from <asm/unistd.h> by the Makefile */'; \
	  echo 'static const char *const lt_syscall_names[] = {'; \
	  sed -n 's/^#define LT_NR_\([a-z0-9_]*\) \([0-9]*\)$$/\t[\2] = "\1",/p' $<; \
	  echo '};'; } >$@

# headers come from the generated .d files; a generated header must exist before the first build
$(BUILD)/progs/%.bpf.o: progs/%.bpf.c $(BUILD)/lt_syscall_nr.h
	@mkdir -p $(@D)
	$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(BUILD)/lowtrace.bpf.o: $(BPF_OBJS)
	$(BPFTOOL) gen object $@ $^

$(BUILD)/lowtrace.skel.h: $(BUILD)/lowtrace.bpf.o
	$(BPFTOOL) gen skeleton $< name lowtrace > $@

# a cross build's libraries (dist/cross/sysroot); its stamp lists the packages unpacked
ifneq ($(CROSS),)
$(SYSROOT_STAMP): dist/cross/sysroot | $(DEPS_BUILD_STAMP)
	dist/cross/sysroot $(DEB_ARCH) $(SYSROOT)
	@test -s $@ && touch $@
endif

# ---- userspace ----
$(KERNEL_OBJS): $(BUILD)/lowtrace.skel.h
$(BUILD)/loader/sysnames.o: $(BUILD)/lt_syscall_names.h

# generated headers first (a clean tree has no .d files to say who includes them)
# rewritten only when VERSION changes, so main.o is rebuilt only then
$(BUILD)/version.h: FORCE
	@mkdir -p $(@D)
	@echo '#define LT_VERSION "$(VERSION)"' >$@.tmp
	@if cmp -s $@.tmp $@; then rm $@.tmp; else mv $@.tmp $@; fi
$(BUILD)/loader/main.o: $(BUILD)/version.h

$(BUILD)/loader/%.o: loader/%.c | $(BUILD)/lt_syscall_nr.h
	@mkdir -p $(@D)
	$(CC) $(USER_CFLAGS) -c $< -o $@

$(BUILD)/lowtrace: $(LOADER_OBJS)
	$(CC) $(CFLAGS) $(USER_LDFLAGS) -o $@ $^ $(LIBBPF_LIBS) $(CORE_LIBS)

$(BUILD)/tests/workloads/%: tests/workloads/%.c
	@mkdir -p $(@D)
	$(CC) -O0 -g -fno-omit-frame-pointer -Wall -Wextra -Werror -o $@ $<

# no frame pointers, optimized: only .eh_frame (gcc's default) unwinds these; -g for gdb
NOFP_CFLAGS := -O2 -fomit-frame-pointer -g -Wall -Wextra -Werror

# the library found next to the program wherever it runs ($ORIGIN)
$(BUILD)/tests/workloads/nofp: tests/workloads/nofp.c $(BUILD)/tests/workloads/libnofp.so
	@mkdir -p $(@D)
	$(CC) $(NOFP_CFLAGS) -o $@ $< -L$(@D) -lnofp -Wl,-rpath,'$$ORIGIN'

# the same library twice: libnofp.so linked in, libnofpdl.so for dlopen alone (nofp dlopen)
$(BUILD)/tests/workloads/libnofp.so $(BUILD)/tests/workloads/libnofpdl.so: \
		tests/workloads/libnofp.c
	@mkdir -p $(@D)
	$(CC) $(NOFP_CFLAGS) -fPIC -shared -Wl,-soname,$(@F) -o $@ $<

# static and stripped: no malloc symbol to find (alloc's error test)
$(BUILD)/tests/workloads/allocs-static: tests/workloads/allocs.c
	@mkdir -p $(@D)
	$(CC) -O0 -static -s -Wall -Wextra -Werror -o $@ $<

$(BUILD)/tests/%.o: tests/unit/%.c | $(BUILD)/lt_syscall_nr.h
	@mkdir -p $(@D)
	$(CC) $(USER_CFLAGS) -Itests/unit -c $< -o $@

# zero-allocation test: every malloc-family call goes through a counter
$(BUILD)/tests/test_alloc: $(BUILD)/tests/test_alloc.o $(CORE_OBJS)
	$(CC) $(CFLAGS) -o $@ $^ $(CORE_LIBS) -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=free

# the runtimes' names: a lookup, hit or miss, allocates nothing (malloc counted the same way)
$(BUILD)/tests/test_runtime: $(BUILD)/tests/test_runtime.o $(CORE_OBJS)
	$(CC) $(CFLAGS) -o $@ $^ $(CORE_LIBS) -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=free

# the aggregate reader on a real map: the kernel layer (libbpf) with malloc counted
$(BUILD)/tests/test_agg: $(BUILD)/tests/test_agg.o $(CORE_OBJS) $(KERNEL_OBJS)
	$(CC) $(CFLAGS) -o $@ $^ $(LIBBPF_LIBS) $(CORE_LIBS) -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=free

$(BUILD)/tests/test_agg.o: $(BUILD)/lowtrace.skel.h

# the output formats on fixed samples: the format table and what it links, stacks served by the
# test (lt_map_lookup), the symbolizer's lookups wrapped
PROF_FMT_OBJS := $(patsubst %,$(BUILD)/loader/%.o,proffmt proftext profstack profuw profout)
$(BUILD)/tests/test_proffmt: $(BUILD)/tests/test_proffmt.o $(CORE_OBJS) $(PROF_FMT_OBJS)
	$(CC) $(CFLAGS) -o $@ $^ $(CORE_LIBS) -Wl,--wrap=lt_syms_user,--wrap=lt_syms_kernel

# the map audit's reader, the same way
$(BUILD)/tests/test_maps: $(BUILD)/tests/test_maps.o $(CORE_OBJS) $(KERNEL_OBJS)
	$(CC) $(CFLAGS) -o $@ $^ $(LIBBPF_LIBS) $(CORE_LIBS) -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=free

$(BUILD)/tests/test_maps.o: $(BUILD)/lowtrace.skel.h

$(BUILD)/tests/%: $(BUILD)/tests/%.o $(CORE_OBJS)
	$(CC) $(CFLAGS) -o $@ $(filter-out $(BUILD)/lowtrace.bpf.o,$^) $(LIBBPF_LIBS) $(CORE_LIBS)

$(BUILD)/tests/test_abi: $(BUILD)/lowtrace.bpf.o

# ---- benchmarks (bench/): every program the scripts run, built here, never by a script ----
BENCH_BINS := $(patsubst bench/%.c,$(BUILD)/bench/%,$(filter-out %.bpf.c,$(wildcard bench/*.c)))
BENCH_BPF := $(patsubst bench/%.bpf.c,$(BUILD)/bench/%.bpf.o,$(wildcard bench/*.bpf.c))
# the workloads bench/unwindcost and bench/sweepcost borrow from the tests
BENCH_WORKLOADS := $(BUILD)/tests/workloads/spin $(BUILD)/tests/workloads/connstorm

bench: $(BUILD)/lowtrace $(BENCH_BINS) $(BENCH_BPF) $(BENCH_WORKLOADS)

$(BUILD)/bench/%: bench/%.c | $(BUILD)/lt_syscall_nr.h
	@mkdir -p $(@D)
	$(CC) $(USER_CFLAGS) $(BENCH_CFLAGS) -o $@ $< $(filter %.o,$^) $(BENCH_LIBS)

$(BUILD)/bench/%.bpf.o: bench/%.bpf.c
	@mkdir -p $(@D)
	$(CLANG) $(BPF_CFLAGS) -c $< -o $@

# profiled by the benches: the peers walk their stacks by frame pointer
# (peerwork: the profile row's spin, "with frame pointers" as the profilers are compared)
$(BUILD)/bench/cpuwork $(BUILD)/bench/mallocloop $(BUILD)/bench/peerwork: BENCH_CFLAGS := -fno-omit-frame-pointer
$(BUILD)/bench/peerwork: BENCH_LIBS := -lpthread
$(BUILD)/bench/floor: BENCH_LIBS = $(LIBBPF_LIBS)
$(BUILD)/bench/ringfill: BENCH_LIBS = $(LIBBPF_LIBS)
# the consumer's decode and encode, the loader's own objects
$(BUILD)/bench/encodecost: $(patsubst %,$(BUILD)/loader/%.o,encode decode records probes histfmt sysnames)
$(BUILD)/bench/cfitime: $(BUILD)/loader/cfi.o $(BUILD)/loader/grow.o
$(BUILD)/bench/cfitime: BENCH_LIBS = $(SYSROOT_LDFLAGS) -lelf

# ---- user targets ----
load: $(DEPS_BUILD_STAMP)
	@$(MAKE) --no-print-directory all
	$(BUILD)/lowtrace load

unload:
	@test -x $(BUILD)/lowtrace || $(MAKE) --no-print-directory all
	$(BUILD)/lowtrace unload

test: test-build
	tests/run

# what the tests run: the build, the unit tests, the workloads (CI makes it before its guests)
.PHONY: test-build
test-build: $(DEPS_STAMP)
	@$(MAKE) --no-print-directory all $(UNIT_BINS) $(WORKLOAD_BINS)

# the units name the installed binary and config: generated here from dist/systemd/*.in
BINDIR ?= $(PREFIX)/bin
SYSCONFDIR ?= /etc
UNITDIR ?= $(PREFIX)/lib/systemd/system
MANDIR ?= $(PREFIX)/share/man
SYSUSERSDIR ?= $(PREFIX)/lib/sysusers.d
# the units' lowtrace user and group, made at install (not with DESTDIR: a package's postinst);
# SYSUSERS= installs without making them
SYSUSERS ?= systemd-sysusers
CONFIG := $(SYSCONFDIR)/lowtrace/lowtrace.conf
UNITS := lowtrace.service lowtrace-metrics.service lowtrace-events.service

install: $(BUILD)/lowtrace
	install -D -m 0755 $< $(DESTDIR)$(BINDIR)/lowtrace
	install -d -m 0755 $(DESTDIR)$(UNITDIR)
	for u in $(UNITS); do \
		sed -e 's|@BINDIR@|$(BINDIR)|g' -e 's|@CONFIG@|$(CONFIG)|g' dist/systemd/$$u.in \
			>$(DESTDIR)$(UNITDIR)/$$u.tmp && \
		chmod 0644 $(DESTDIR)$(UNITDIR)/$$u.tmp && \
		mv $(DESTDIR)$(UNITDIR)/$$u.tmp $(DESTDIR)$(UNITDIR)/$$u || exit 1; \
	done
	install -D -m 0644 docs/lowtrace.8 $(DESTDIR)$(MANDIR)/man8/lowtrace.8
	install -D -m 0644 dist/sysusers.d/lowtrace.conf $(DESTDIR)$(SYSUSERSDIR)/lowtrace.conf
	if [ -z "$(DESTDIR)" ] && [ -n "$(SYSUSERS)" ]; then \
		$(SYSUSERS) $(SYSUSERSDIR)/lowtrace.conf || exit 1; \
	fi
	# an existing config is the admin's: never overwritten
	test -e $(DESTDIR)$(CONFIG) || install -D -m 0644 dist/lowtrace.conf $(DESTDIR)$(CONFIG)

# the package: dpkg-deb from generated metadata (dist/deb/mkdeb says why), Depends from the
# binary, lintian with no error or warning (dist/deb/lintian-overrides explains the overrides)
DEPS_PKG_STAMP := $(BUILD)/.deps-pkg-stamp
$(DEPS_PKG_STAMP): Makefile
	@$(call install_pkgs,$(DEPS_BUILD) $(DEPS_PKG))
	@touch $@
deb: $(DEPS_PKG_STAMP) $(BUILD)/lowtrace
	@rm -rf $(BUILD)/deb-stage
	@$(MAKE) -s --no-print-directory install DESTDIR=$(abspath $(BUILD))/deb-stage PREFIX=/usr SYSUSERS=
	@DEB_ARCH=$(DEB_ARCH) STRIP=$(CROSS)strip SYSROOT=$(if $(SYSROOT),$(abspath $(SYSROOT))) \
		dist/deb/mkdeb $(BUILD)/deb-stage '$(VERSION)' $(BUILD)
	@lintian --fail-on error,warning $(BUILD)/lowtrace_$(VERSION)_$(DEB_ARCH).deb \
		>$(BUILD)/lintian.log 2>&1; rc=$$?; grep -v '^running with root privileges' $(BUILD)/lintian.log; \
		[ $$rc = 0 ] || echo "make deb: lintian found errors or warnings"; exit $$rc

# the image: an OCI layout (and docker's manifest.json) of the package and the libraries its
# binary needs, from this host; no base image, no registry (dist/image/mkimage)
DEPS_IMAGE_STAMP := $(BUILD)/.deps-image-stamp
$(DEPS_IMAGE_STAMP): Makefile
	@$(call install_pkgs,$(DEPS_BUILD) $(DEPS_PKG) $(DEPS_IMAGE))
	@touch $@
image: $(DEPS_IMAGE_STAMP)
	@$(MAKE) --no-print-directory deb
	@dist/image/mkimage $(BUILD)/lowtrace_$(VERSION)_$(DEB_ARCH).deb \
		$(BUILD)/lowtrace-image.tar

# the man page from the -h texts (committed; tests/bats/service.bats fails when they differ)
man: $(BUILD)/lowtrace
	docs/mkman $< >docs/lowtrace.8.tmp
	mv docs/lowtrace.8.tmp docs/lowtrace.8

# the running kernel's BTF for this machine's architecture; another's from a Debian kernel of
# VMLINUX_KERNEL (fetched as the kernel matrix's are), its BTF cut out of the Image
VMLINUX_KERNEL ?= 7.2
VMLINUX_H := $(VMLINUX_DIR_$(TARGET_ARCH))/vmlinux.h
vmlinux:
ifeq ($(TARGET_ARCH),$(HOST_ARCH))
	$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > $(VMLINUX_H).tmp
else
	@mkdir -p $(BUILD)
	kdir=$$(VMTEST_ARCH=$(DEB_ARCH) tests/vm/fetch-kernel $(VMLINUX_KERNEL)) && \
		dist/cross/image-btf $$kdir/Image $(BUILD)/vmlinux.btf
	$(BPFTOOL) btf dump file $(BUILD)/vmlinux.btf format c > $(VMLINUX_H).tmp
endif
	mv $(VMLINUX_H).tmp $(VMLINUX_H)

format:
	clang-format -i loader/*.c loader/*.h headers/*.h progs/*.c progs/*.h tests/unit/*.c

clean:
	rm -rf $(BUILD)

-include $(wildcard $(BUILD)/loader/*.d $(BUILD)/tests/*.d $(BUILD)/progs/*.d $(BUILD)/bench/*.d \
	$(FUZZ_BUILD)/*.d $(FUZZ_BUILD)/loader/*.d)

# ---- sanitizers and fuzzing (clang): build/asan/, build/fuzz/, never mixed with the above ----
# every unit test, the malloc counters included (--wrap reaches the sanitizer's malloc); the
# BPF object is built again under build/asan for test_agg's skeleton, test_abi reads build/'s
test-asan: $(DEPS_STAMP)
	@$(MAKE) --no-print-directory all
	@$(MAKE) --no-print-directory BUILD=$(ASAN_BUILD) CC=$(CLANG) CFLAGS="$(SAN_CFLAGS)" \
		$(patsubst $(BUILD)/%,$(ASAN_BUILD)/%,$(UNIT_BINS))
	$(SAN_ENV) tests/run --unit $(ASAN_BUILD)/tests

# libFuzzer: tests/fuzz/fuzz_NAME.c against the pure layers, seeds in tests/fuzz/corpus/NAME/
$(FUZZ_BUILD)/loader/%.o: loader/%.c | $(BUILD)/lt_syscall_nr.h
	@mkdir -p $(@D)
	$(CLANG) $(SAN_CFLAGS) -fsanitize=fuzzer-no-link $(USER_WFLAGS) -c $< -o $@

$(FUZZ_BUILD)/loader/sysnames.o: $(BUILD)/lt_syscall_names.h

$(FUZZ_BUILD)/fuzz_%: tests/fuzz/fuzz_%.c $(FUZZ_OBJS)
	@mkdir -p $(@D)
	$(CLANG) $(SAN_CFLAGS) -fsanitize=fuzzer $(USER_WFLAGS) -Itests/fuzz -o $@ $< $(FUZZ_OBJS) \
		$(CORE_LIBS)

# each target FUZZ_SECONDS on a copy of its corpus under build/fuzz/ (the repo's is only read)
fuzz: $(DEPS_STAMP)
	@$(MAKE) --no-print-directory $(FUZZ_BINS)
	$(SAN_ENV) tests/fuzz/run $(FUZZ_SECONDS)

# ---- kernel matrix: the same tests in qemu on Debian kernels (tests/vm/vmtest) ----
# make vmtest [KERNELS="5.10 6.1 6.12 7.2"] [CGROUPS=v1] [ARCH=arm64]; results in build/vm/
# (CGROUPS=v1: a cgroup-v1 node, results in build/vm/SERIES-v1; ARCH=arm64: Debian's arm64
# kernels under TCG running the cross build, results in build/vm/arm64-SERIES)
KERNELS ?= 5.10 6.1 6.12 7.2
CGROUPS ?= v2
.PHONY: vmtest
vmtest: $(DEPS_STAMP)
	@$(MAKE) --no-print-directory all $(UNIT_BINS) $(WORKLOAD_BINS)
	VMTEST_CGROUPS=$(CGROUPS) VMTEST_ARCH=$(DEB_ARCH) VMTEST_BUILD=$(BUILD) tests/vm/vmtest $(KERNELS)

# the units of `make install` in a guest booted into systemd (tests/vm/systemd.bats), one kernel
SVC_KERNEL ?= 6.12
.PHONY: svctest fleettest
svctest: $(DEPS_STAMP)
	@$(MAKE) --no-print-directory all
	VMTEST_SYSTEMD=1 VMTEST_TIMEOUT=600 VMTEST_OUT=$(CURDIR)/$(BUILD)/vm-svc tests/vm/vmtest $(SVC_KERNEL)

# three systemd guests on three kernels scraped by a real Prometheus (tests/vm/fleettest)
FLEET_KERNELS ?= 5.10 6.1 6.12
fleettest: $(DEPS_STAMP)
	@$(MAKE) --no-print-directory all
	tests/vm/fleettest $(FLEET_KERNELS)
