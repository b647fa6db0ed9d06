#!/usr/bin/env bats
# JIT names from perf maps (/tmp/perf-PID.map), which the profiled process writes: a hostile map
# that must not stall the profiler, a process in its own pid namespace (perf-1.map in its own
# /tmp), a process whose /tmp is a link out of its root (the host file must not be read), and a
# process that exits during the profile (the names read while it lived are kept). The workload
# is build/tests/workloads/jit: a trampoline in anonymous executable memory named
# jit_trampoline in its perf map, calling back jit_spin.

load helpers

setup() {
	lt_setup
	need_workloads jit
	JIT=$WLDIR/jit
}

# wl_wait PID: until PID runs $JIT (10 s)
wl_wait() {
	local i want
	want=$(readlink -f "$JIT")
	for ((i = 0; i < 200; i++)); do
		[ "$(readlink "/proc/$1/exe" 2>/dev/null)" = "$want" ] && return 0
		sleep 0.05
	done
	echo "process $1 does not run $want" >&2
	return 1
}

# start_jit SECS: the workload in the background, its perf map written; sets WL
start_jit() {
	local i
	"$JIT" "$1" 3>&- &
	WL=$!
	bg_track "$WL"
	LT_TMPDIRS+=("/tmp/perf-$WL.map")
	wl_wait "$WL"
	map_wait "/tmp/perf-$WL.map"
}

# map_wait FILE: until FILE is not empty (5 s)
map_wait() {
	local i
	for ((i = 0; i < 100; i++)); do
		[ -s "$1" ] && return 0
		sleep 0.05
	done
	echo "no perf map $1" >&2
	return 1
}

# child_of PID: the one child of PID (unshare -f's), once it runs a copy of $JIT (comm jit);
# sets WL
child_of() {
	local i c=
	for ((i = 0; i < 200; i++)); do
		c=$(cat "/proc/$1/task/$1/children" 2>/dev/null) || c=
		c=${c%% *}
		[ -n "$c" ] && [ "$(cat "/proc/$c/comm" 2>/dev/null)" = jit ] && break
		c=
		sleep 0.05
	done
	[ -n "$c" ] || {
		echo "no child of $1 runs jit" >&2
		return 1
	}
	WL=$c
	bg_track "$WL"
}

# profile_jit OUT [SECS]: on-CPU samples of $WL (199 Hz) folded into OUT, exit 0; stderr in
# OUT.err
profile_jit() {
	run --separate-stderr -0 timeout 60 "$LT" profile -F 199 -p "$WL" --duration "${2:-2}"
	printf '%s\n' "$output" >"$1"
	printf '%s\n' "$stderr" >"$1.err"
	sed -n 's/^lowtrace: \(.*\)/# \1/p' "$1.err" >&3
	[[ "$stderr" == *" samples in "* ]]
}

# named OUT: "MATCHING TOTAL", the samples through main;jit_trampoline;jit_spin (kernel frames
# dropped), and all of them
named() {
	awk '{
		n = $NF; s = $0; sub(/ [0-9]+$/, "", s); gsub(/;[^;]*_\[k\]/, "", s)
		t += n; if (s ~ /^jit;.+;main;jit_trampoline;jit_spin$/) m += n
	} END { printf "%.0f %.0f\n", m, t }' "$1"
}

# mostly_named OUT: at least 90 % of a few dozen samples or more through the named trampoline
mostly_named() {
	local m t
	read -r m t < <(named "$1")
	echo "# main;jit_trampoline;jit_spin: $m of $t samples" >&3
	[ "$t" -ge 20 ] && [ $((m * 100)) -ge $((t * 90)) ]
}

@test "jitmap: a hostile perf map (~160 MB, 14 M entries, none matching) does not stall profile; the cut is counted" {
	local map new=/tmp/lt-hostile-$$-$BATS_TEST_NUMBER.map out=$BATS_TEST_TMPDIR/folded
	# 14 M small entries far below its code, written before the process starts (a minute and
	# more under emulation: not out of its life)
	LT_TMPDIRS+=("$new")
	awk 'BEGIN { for (i = 1; i <= 14000000; i++) printf "%x 1 n\n", i * 16 }' >"$new"
	start_jit 60
	map=/tmp/perf-$WL.map
	# replaces its map (a real file at the process's path)
	mv "$new" "$map"
	echo "# perf map: $(stat -c %s "$map") bytes" >&3
	local t0=$SECONDS
	run --separate-stderr -0 /usr/bin/time -f 'maxrss_kb=%M' timeout 60 \
		"$LT" profile -F 199 -p "$WL" --duration 3 --format json
	local took=$((SECONDS - t0))
	echo "# took ${took} s; $(grep -o 'maxrss_kb=[0-9]*' <<<"$stderr")" >&3
	grep '^lowtrace: unwind:' <<<"$stderr" | sed 's/^/# /' >&3
	# its duration and a few seconds (the load, the symbolization); in an emulated guest, the
	# 60 s timeout above is the bound
	[ -n "${VM_RESULTS:-}" ] || [ "$took" -le 9 ]
	# the cut is counted, in the summary and in the JSON
	[[ "$stderr" =~ perf_maps_cut=[1-9] ]]
	[ "$(jq '.unwind.perf_maps_cut' <<<"$output")" -ge 1 ]
	# memory bounded (the map is 160 MB): under 150 MB
	local rss
	rss=$(grep -o 'maxrss_kb=[0-9]*' <<<"$stderr")
	[ "${rss#maxrss_kb=}" -lt 153600 ]
}

@test "jitmap: JIT names of a process in its own pid namespace (perf-1.map in its own /tmp)" {
	# its /tmp is a tmpfs of its mount namespace: the map is only there, as perf-1.map (the
	# program is copied to a tmpfs on its /mnt first: the build may be under /tmp)
	unshare -m -p -f --kill-child --mount-proc sh -c '
		set -e
		mount -t tmpfs lt-bin /mnt
		cp "$0" /mnt/jit
		mount -t tmpfs lt-jit /tmp
		exec /mnt/jit 30' "$JIT" 3>&- &
	local u=$!
	bg_track "$u"
	child_of "$u"
	map_wait "/proc/$WL/root/tmp/perf-1.map"
	[ ! -e "/tmp/perf-$WL.map" ]
	local out=$BATS_TEST_TMPDIR/folded
	profile_jit "$out" 2
	mostly_named "$out"
}

@test "jitmap: a process whose /tmp links out of its root: the host's file is not read" {
	# the host's root-only directory: not under /tmp, which inside is the link to it
	local secret root=$BATS_TEST_TMPDIR/newroot
	secret=$(mktemp -d /var/tmp/lt-jitmap.XXXXXX)
	LT_TMPDIRS+=("$secret")
	chmod 0700 "$secret"
	mkdir "$root"
	# its root: a tmpfs of its mount namespace with /usr, the program and a /tmp that is an
	# absolute link to the path of the host's root-only directory (which also exists inside,
	# where its perf map goes)
	unshare -m -f --kill-child sh -c '
		set -e
		R=$1 S=$2 J=$3
		mount -t tmpfs lt-root "$R"
		mkdir -p "$R/usr" "$R$S"
		mount --bind /usr "$R/usr"
		cp "$J" "$R/jit"
		ln -s usr/lib "$R/lib"
		ln -s usr/lib64 "$R/lib64"
		ln -s usr/bin "$R/bin"
		ln -s "$S" "$R/tmp"
		exec chroot "$R" /jit 30' sh "$root" "$secret" "$JIT" 3>&- &
	local u=$!
	bg_track "$u"
	child_of "$u"
	map_wait "/proc/$WL/root$secret/perf-$WL.map"
	# the host's file, at the path /proc/PID/root/tmp/perf-PID.map leads a naive reader to
	printf '0 7fffffffffff host_secret_marker\n' >"$secret/perf-$WL.map"
	chmod 0600 "$secret/perf-$WL.map"
	[ "$(readlink "/proc/$WL/root/tmp")" = "$secret" ]
	local out=$BATS_TEST_TMPDIR/folded
	profile_jit "$out" 2
	run -1 grep -r host_secret_marker "$out" "$out.err"
	# and the process's own map, inside its root, is what names its code
	mostly_named "$out"
}

@test "jitmap: JIT names kept when the process exits during the profile" {
	# it lives for the profile's start, then exits (an emulated arm64 guest takes over 10 s to
	# load the profile's programs)
	local life=4
	[ -z "${VM_RESULTS:-}" ] || life=30
	start_jit "$life"
	local out=$BATS_TEST_TMPDIR/folded
	profile_jit "$out" 30
	grep -q "process $WL exited" "$out.err"
	# the map was removed at its exit, and /proc/PID/root is gone: read while it lived
	[ ! -e "/tmp/perf-$WL.map" ]
	mostly_named "$out"
}
