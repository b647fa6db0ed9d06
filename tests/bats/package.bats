#!/usr/bin/env bats
# make deb: the package's metadata and contents, read from the .deb (tests/vm/host-only: the same
# for every kernel). Installing, upgrading, removing and purging it are tested in a guest booted
# into systemd (tests/vm/systemd.bats, make svctest), never on this host.

setup_file() {
	cd "$BATS_TEST_DIRNAME/../.." || return 1
	make -s --no-print-directory deb >"$BATS_FILE_TMPDIR/make.log" 2>&1 || {
		cat "$BATS_FILE_TMPDIR/make.log" >&3
		return 1
	}
	grep -E '^/.*\.deb$' "$BATS_FILE_TMPDIR/make.log" | tail -n 1 >"$BATS_FILE_TMPDIR/deb"
}

setup() {
	cd "$BATS_TEST_DIRNAME/../.."
	DEB=$(cat "$BATS_FILE_TMPDIR/deb")
	[ -s "$DEB" ]
}

@test "make deb: name, version of the binary (git describe), this architecture; lintian clean" {
	local v arch
	v=$(build/lowtrace --version | awk '{ print $2 }')
	arch=$(dpkg --print-architecture)
	[ "$DEB" = "$PWD/build/lowtrace_${v}_$arch.deb" ]
	[ "$(dpkg-deb -f "$DEB" Package)" = lowtrace ]
	[ "$(dpkg-deb -f "$DEB" Version)" = "$v" ]
	[ "$(dpkg-deb -f "$DEB" Architecture)" = "$arch" ]
	[ "$v" = "$(dist/version)" ]
	# make deb ran lintian --fail-on error,warning; again here, its tags shown
	run lintian --fail-on error,warning "$DEB"
	echo "$output"
	[ "$status" = 0 ]
	run grep -E '^[EW]: ' <<<"$output"
	[ "$status" = 1 ]
}

# the package that owns a library file, under any of its names (merged /usr: /lib or /usr/lib)
owner() {
	local real c
	real=$(realpath "$1")
	for c in "$1" "$real" "${1#/usr}" "${real#/usr}" "/usr$1" "/usr$real"; do
		dpkg -S "$c" 2>/dev/null | head -n 1 | cut -d: -f1 | grep . && return 0
	done
	return 1
}

@test "Depends: the package of every library the binary needs (libbpf, libelf, zlib, libc)" {
	local deps lib path pkg n=0
	deps=$(dpkg-deb -f "$DEB" Depends)
	echo "# Depends: $deps" >&3
	for lib in $(readelf -d build/lowtrace | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
		path=$(ldconfig -p | awk -v l="$lib" '$1 == l { print $NF; exit }')
		[ -n "$path" ]
		pkg=$(owner "$path")
		echo "# $lib: $pkg" >&3
		[[ ", $deps," == *", $pkg "* ]]
		n=$((n + 1))
	done
	[ "$n" -ge 4 ]
	for pkg in libbpf1 libelf1 zlib1g libc6; do
		[[ "$deps" == *"$pkg ("* ]]
	done
}

@test "contents: the binary, the units on it and the config, the man page, the user, the config a conffile" {
	local t=$BATS_TEST_TMPDIR/x u
	dpkg-deb -x "$DEB" "$t"
	[ -x "$t/usr/bin/lowtrace" ]
	for u in lowtrace.service lowtrace-metrics.service lowtrace-events.service; do
		grep -q '^ExecStart=/usr/bin/lowtrace .*--config /etc/lowtrace/lowtrace.conf' \
			"$t/usr/lib/systemd/system/$u"
	done
	gzip -t "$t/usr/share/man/man8/lowtrace.8.gz"
	cmp <(gzip -dc "$t/usr/share/man/man8/lowtrace.8.gz") docs/lowtrace.8
	cmp "$t/usr/lib/sysusers.d/lowtrace.conf" dist/sysusers.d/lowtrace.conf
	cmp "$t/etc/lowtrace/lowtrace.conf" dist/lowtrace.conf
	[ -s "$t/usr/share/doc/lowtrace/copyright" ]
	dpkg-deb -e "$DEB" "$t/DEBIAN"
	[ "$(cat "$t/DEBIAN/conffiles")" = /etc/lowtrace/lowtrace.conf ]
	# every file root's, nothing writable by group or others, no setuid
	run bash -c "dpkg-deb -c '$DEB' | awk '\$2 != \"root/root\" || \$1 ~ /^.....w|^........w|s/'"
	echo "$output"
	[ -z "$output" ]
	# the maintainer scripts are POSIX sh that parses
	for s in postinst prerm postrm; do
		head -n 1 "$t/DEBIAN/$s" | grep -qx '#!/bin/sh'
		sh -n "$t/DEBIAN/$s"
	done
}

@test "mkdeb: a version dpkg would refuse or a stage without the binary is one error line" {
	run dist/deb/mkdeb build/deb-stage "v1.0" "$BATS_TEST_TMPDIR"
	echo "$output"
	[ "$status" = 1 ]
	[ "${#lines[@]}" = 1 ]
	[[ "$output" == "mkdeb: version 'v1.0' does not start with a digit" ]]
	run dist/deb/mkdeb build/deb-stage "1.0-1" "$BATS_TEST_TMPDIR"
	[ "$status" = 1 ]
	[[ "$output" == *"only A-Za-z0-9.+~"* ]]
	mkdir "$BATS_TEST_TMPDIR/empty"
	run dist/deb/mkdeb "$BATS_TEST_TMPDIR/empty" 1.0 "$BATS_TEST_TMPDIR"
	[ "$status" = 1 ]
	[ "${#lines[@]}" = 1 ]
	[[ "$output" == *"has no usr/bin/lowtrace"* ]]
	# nothing half-made left in the output directory
	run find "$BATS_TEST_TMPDIR" -name '*.deb*' -o -name 'deb.*'
	[ -z "$output" ]
}
