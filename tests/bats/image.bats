#!/usr/bin/env bats
# make image: the OCI archive read back (layout, digests, docker's manifest.json, the layer's
# files, the same bytes twice), `podman load` taking it, and the image run as a node agent the
# way README's Install says: it records a host process's exec with its host pid and identity,
# and leaves nothing loaded. podman runs on the host only (tests/vm/host-only). The containers
# load the suite: run this file under the pin lock, as the other loading tests
# (`flock /tmp/lowtrace-pin.lock bats tests/bats/image.bats`). Every container and image made
# here is removed, also on failure.

load helpers

# this host's quirks (README: the generic command has none of them): crun refuses hybrid
# cgroups here, and there is no network
PODMAN=(podman --runtime runc --cgroup-manager cgroupfs)
QUIRKS=(--ulimit nofile=1024:1024 --ulimit nproc=4096:4096 --network none)
# README's node agent, the image name appended
AGENT=(--privileged --pid=host --cgroupns=host -v /sys/fs/bpf:/sys/fs/bpf -v /sys/kernel:/sys/kernel
	-v /sys/fs/cgroup:/sys/fs/cgroup:ro)

setup_file() {
	cd "$BATS_TEST_DIRNAME/../.." || return 1
	make -s --no-print-directory image >"$BATS_FILE_TMPDIR/make.log" 2>&1 || {
		cat "$BATS_FILE_TMPDIR/make.log" >&3
		return 1
	}
	[ "$(tail -n 1 "$BATS_FILE_TMPDIR/make.log")" = "$PWD/build/lowtrace-image.tar" ]
	grep -E '^/.*\.deb$' "$BATS_FILE_TMPDIR/make.log" | tail -n 1 >"$BATS_FILE_TMPDIR/deb"
	# podman's parent cgroup of the containers, when it is not there before (removed after)
	HAD_LIBPOD=$(findmnt -n -o TARGET -t cgroup,cgroup2 | while read -r m; do
		[ -d "$m/libpod_parent" ] && echo yes; done | head -n1)
	export HAD_LIBPOD
}

teardown_file() {
	local m
	cd "$BATS_TEST_DIRNAME/../.." || return 1
	[ ! -s "$BATS_FILE_TMPDIR/image" ] || podman rmi -f "$(cat "$BATS_FILE_TMPDIR/image")" >/dev/null 2>&1 || true
	[ -n "$HAD_LIBPOD" ] || for m in $(findmnt -n -o TARGET -t cgroup,cgroup2); do
		[ -d "$m/libpod_parent" ] && find "$m/libpod_parent" -depth -type d -exec rmdir {} \; 2>/dev/null
	done
	return 0
}

setup() {
	lt_setup
	cd "$BATS_TEST_DIRNAME/../.."
	TAR=$PWD/build/lowtrace-image.tar
	X=$BATS_TEST_TMPDIR/x
	VERSION=$(build/lowtrace --version | awk '{ print $2 }')
	# the image's tag: the version with + and ~ as _
	IMG=localhost/lowtrace:$(printf %s "$VERSION" | tr '+~' __)
	NAMES=()
	CGS=()
}

teardown() {
	local n d i
	for n in "${NAMES[@]}"; do
		"${PODMAN[@]}" rm -f "$n" >/dev/null 2>&1 || true
	done
	for d in "${CGS[@]}"; do
		for ((i = 0; i < 20; i++)); do
			[ -d "$d" ] || break
			rmdir "$d" 2>/dev/null && break
			sleep 0.1
		done
	done
	lt_teardown
}

# blob DIGEST [SIZE]: the blob's path; its bytes hash to DIGEST (and are SIZE long)
blob() {
	local f=$X/blobs/sha256/${1#sha256:}
	[ -f "$f" ] || {
		echo "no blob $1" >&2
		return 1
	}
	[ "sha256:$(sha256sum "$f" | cut -d' ' -f1)" = "$1" ] || {
		echo "blob $1: its bytes hash to another digest" >&2
		return 1
	}
	[ -z "${2:-}" ] || [ "$(stat -c %s "$f")" = "$2" ] || {
		echo "blob $1: $(stat -c %s "$f") bytes, the descriptor says $2" >&2
		return 1
	}
	echo "$f"
}

# the image loaded into podman (once per file; teardown_file removes it)
podman_load() {
	run -0 podman load -i "$TAR"
	assert_line "Loaded image: $IMG"
	echo "$IMG" >"$BATS_FILE_TMPDIR/image"
}

@test "make image: an OCI layout whose blobs hash to their digests, and docker's manifest.json" {
	local m cfg layer arch
	mkdir "$X"
	tar -C "$X" -xf "$TAR"
	[ "$(jq -c . "$X/oci-layout")" = '{"imageLayoutVersion":"1.0.0"}' ]
	run -0 jq -e -r '.schemaVersion == 2 and (.manifests | length) == 1 and
		.manifests[0].mediaType == "application/vnd.oci.image.manifest.v1+json"' "$X/index.json"
	run -0 jq -r '.manifests[0] | .digest, .size, .annotations["io.containerd.image.name"],
		.annotations["org.opencontainers.image.ref.name"]' "$X/index.json"
	assert_equal "${lines[2]}" "$IMG"
	assert_equal "${lines[3]}" "${IMG#*:}"
	m=$(blob "${lines[0]}" "${lines[1]}")
	run -0 jq -r '.schemaVersion, .config.mediaType, .config.digest, .config.size,
		(.layers | length), .layers[0].mediaType, .layers[0].digest, .layers[0].size' "$m"
	assert_equal "${lines[0]}" 2
	assert_equal "${lines[1]}" application/vnd.oci.image.config.v1+json
	assert_equal "${lines[4]}" 1
	assert_equal "${lines[5]}" application/vnd.oci.image.layer.v1.tar
	cfg=$(blob "${lines[2]}" "${lines[3]}")
	layer=$(blob "${lines[6]}" "${lines[7]}")
	# the config: this architecture under OCI's name, the entrypoint, the package's version,
	# the layer (uncompressed: its digest is its diff_id)
	arch=$(dpkg --print-architecture)
	[ "$arch" != ppc64el ] || arch=ppc64le
	[ "$arch" != i386 ] || arch=386
	run -0 jq -c '[.os, .architecture, .config.Entrypoint, .config.Labels["org.opencontainers.image.version"],
		.rootfs.diff_ids]' "$cfg"
	assert_output "[\"linux\",\"$arch\",[\"/usr/bin/lowtrace\"],\"$VERSION\",[\"sha256:${layer##*/}\"]]"
	[ "$VERSION" = "$(dpkg-deb -f "$(cat "$BATS_FILE_TMPDIR/deb")" Version)" ]
	# docker's manifest.json (docker save's since Docker 25): the same blobs, the same name
	run -0 jq -c '.' "$X/manifest.json"
	assert_output "[{\"Config\":\"blobs/sha256/${cfg##*/}\",\"RepoTags\":[\"$IMG\"],\"Layers\":[\"blobs/sha256/${layer##*/}\"]}]"
	# nothing else in the archive
	run -0 bash -c "cd '$X' && find . -type f | sort"
	assert_output "$(printf '%s\n' ./blobs/sha256/"${cfg##*/}" ./blobs/sha256/"${layer##*/}" \
		./blobs/sha256/"${m##*/}" ./index.json ./manifest.json ./oci-layout | sort)"
}

@test "the layer: the package's binary, the loader and every library it needs, nothing of this host's else" {
	local m l f lib deb interp
	deb=$(cat "$BATS_FILE_TMPDIR/deb")
	mkdir -p "$X" "$BATS_TEST_TMPDIR/pkg" "$BATS_TEST_TMPDIR/root"
	tar -C "$X" -xf "$TAR"
	m=$X/blobs/sha256/$(jq -r '.manifests[0].digest | ltrimstr("sha256:")' "$X/index.json")
	l=$X/blobs/sha256/$(jq -r '.layers[0].digest | ltrimstr("sha256:")' "$m")
	[ -f "$l" ]
	# root-owned, one mtime, sorted
	run -0 tar --numeric-owner -tvf "$l"
	run -0 bash -c "tar --numeric-owner -tvf '$l' | awk '{ print \$2 }' | sort -u"
	assert_output 0/0
	run -0 bash -c "tar --full-time -tvf '$l' | awk '{ print \$4, \$5 }' | sort -u | wc -l"
	assert_output 1
	run -0 bash -c "tar -tf '$l' | LC_ALL=C sort -c"
	tar -C "$BATS_TEST_TMPDIR/root" -xf "$l"
	dpkg-deb -x "$deb" "$BATS_TEST_TMPDIR/pkg"
	cmp "$BATS_TEST_TMPDIR/root/usr/bin/lowtrace" "$BATS_TEST_TMPDIR/pkg/usr/bin/lowtrace"
	cmp "$BATS_TEST_TMPDIR/root/etc/lowtrace/lowtrace.conf" dist/lowtrace.conf
	# the interpreter and each NEEDED library, recursively, as the binary asks for them
	interp=$(readelf -l build/lowtrace | sed -n 's/.*interpreter: \(.*\)\]/\1/p')
	cmp "$BATS_TEST_TMPDIR/root/usr${interp#/usr}" "$(realpath "$interp")"
	for lib in libbpf.so.1 libelf.so.1 libz.so.1 libc.so.6 $(readelf -d build/lowtrace | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
		f=$(find "$BATS_TEST_TMPDIR/root/usr/lib" -name "$lib" | head -n 1)
		[ -n "$f" ] || {
			echo "no $lib in the layer" >&2
			return 1
		}
		cmp "$f" "$(ldconfig -p | awk -v l="$lib" '$1 == l { print $NF; exit }')"
	done
	# every file: the package's, a library's (with its copyright), or /etc's two lines of root
	run -0 bash -c "cd '$BATS_TEST_TMPDIR/root' && find . -type f | sort"
	run -1 grep -vE '^\./(usr/bin/lowtrace|etc/lowtrace/lowtrace\.conf|etc/(passwd|group)|usr/share/doc/[a-z0-9.+-]+/copyright|usr/lib(64)?/([a-z0-9_-]+/)?(ld-linux[a-z0-9_.-]*|lib[a-z0-9_+-]+\.so\.[0-9.]+))$' <<<"$output"
	assert_output ""
	# a few MiB
	[ "$(stat -c %s "$l")" -lt $((16 << 20)) ]
	# the binary runs in it, on its libraries alone
	run -0 chroot "$BATS_TEST_TMPDIR/root" /usr/bin/lowtrace --version
	assert_output "lowtrace $VERSION"
}

@test "make image again: the same bytes (fixed mtimes, sorted tars, sorted JSON)" {
	dist/image/mkimage "$(cat "$BATS_FILE_TMPDIR/deb")" "$BATS_TEST_TMPDIR/again.tar"
	cmp "$TAR" "$BATS_TEST_TMPDIR/again.tar"
}

@test "podman load takes it; the image runs lowtrace" {
	podman rmi -f "$IMG" >/dev/null 2>&1 || true
	podman_load
	run -0 podman image inspect -f '{{.Config.Entrypoint}} {{index .Config.Labels "org.opencontainers.image.version"}}' "$IMG"
	assert_output "[/usr/bin/lowtrace] $VERSION"
	NAMES+=(lt-img-v-$$)
	run -0 "${PODMAN[@]}" run --rm --name "lt-img-v-$$" "${QUIRKS[@]}" "$IMG" --version
	assert_output "lowtrace $VERSION"
}

@test "docker's manifest.json: docker load's format, read by podman's docker-archive reader, the same image" {
	local id
	podman rmi -f "$IMG" >/dev/null 2>&1 || true
	echo "$IMG" >"$BATS_FILE_TMPDIR/image"
	# (no dockerd on this host: containers/image reads what `docker save` writes)
	run -0 podman pull -q "docker-archive:$TAR"
	id=$output
	run -0 podman image inspect -f '{{.Id}} {{index .RepoTags 0}}' "$IMG"
	assert_output "$id $IMG"
	# the image's id is its config's digest, as with the OCI layout
	mkdir "$X"
	tar -C "$X" -xf "$TAR"
	[ "sha256:$id" = "$(jq -r '.config.digest' "$X/blobs/sha256/$(jq -r '.manifests[0].digest | ltrimstr("sha256:")' "$X/index.json")")" ]
	podman rmi -f "$IMG" >/dev/null
}

# agent NAME OUT [podman options]: the image's `run --type exec` as README's node agent,
# stdout to OUT, stderr to OUT.err; AGENT_PID (podman's), LT_PID (lowtrace's host pid) once it
# reads the ring
agent() {
	local name=$1 out=$2 i
	shift 2
	podman image exists "$IMG" || podman_load
	NAMES+=("$name")
	"${PODMAN[@]}" run --rm --name "$name" "${QUIRKS[@]}" "$@" "$IMG" \
		run --type exec --duration 300 >"$out" 2>"$out.err" 3>&- &
	AGENT_PID=$!
	LT_BG+=("$AGENT_PID")
	# the container's process is lowtrace itself (the entrypoint, no init), in the host's pids
	LT_PID=
	for ((i = 0; i < 600; i++)); do
		LT_PID=$("${PODMAN[@]}" inspect -f '{{.State.Pid}}' "$name" 2>/dev/null) || LT_PID=
		[ -n "$LT_PID" ] && [ "$LT_PID" != 0 ] &&
			[ "$(cat "/proc/$LT_PID/comm" 2>/dev/null)" = lowtrace ] && break
		LT_PID=
		proc_gone "$AGENT_PID" && break
		sleep 0.1
	done
	[ -n "$LT_PID" ] || {
		echo "container $name never ran lowtrace:" >&2
		cat "$out.err" >&2
		return 1
	}
	wait_consumer_ready "$LT_PID"
}

# mark_and_stop NAME OUT: a host process in a service's cgroup of the identity hierarchy
# execs /bin/true MARK; the agent's record of it has its host pid and identity; the agent
# stops on SIGTERM (podman stop) with exit 0, nothing of the suite left
mark_and_stop() {
	local name=$1 out=$2 rel="/system.slice/lt-img-$$-$BATS_TEST_NUMBER.service" pid
	[ -d "$ID_ROOT/system.slice" ] || {
		mkdir "$ID_ROOT/system.slice"
		CGS+=("$ID_ROOT/system.slice")
	}
	mkdir "$ID_ROOT$rel"
	CGS=("$ID_ROOT$rel" "${CGS[@]}")
	sh -c 'echo $$ >"$1/cgroup.procs" && echo $$ >"$2" && exec /bin/true "$3"' sh \
		"$ID_ROOT$rel" "$BATS_TEST_TMPDIR/pid" "$MARK"
	pid=$(cat "$BATS_TEST_TMPDIR/pid")
	wait_record "$out" ".type == \"exec\" and .args == [\"/bin/true\", \"$MARK\"]" 30
	"${PODMAN[@]}" stop -t 10 "$name" >/dev/null
	wait_rc "$AGENT_PID" 20
	assert_equal "$RC" 0
	run -0 jq -c -R --arg m "$MARK" 'fromjson? | select(.type == "exec" and .args[1] == $m)
		| [.pid, .tid, .comm, .filename, .cgroup, .unit, .container_id]' "$out"
	assert_output "[$pid,$pid,\"true\",\"/bin/true\",\"$rel\",\"lt-img-$$-$BATS_TEST_NUMBER.service\",null]"
	# every record decoded whole, the host's other execs too
	run -0 jq -e -s 'length > 0 and all(.[]; .type == "exec" and .pid > 0)' "$out"
	assert_nothing_loaded
}

@test "as README's node agent: a host process's exec, with its host pid and identity; nothing left loaded" {
	agent "lt-img-a-$$" "$BATS_TEST_TMPDIR/ev" "${AGENT[@]}"
	mark_and_stop "lt-img-a-$$" "$BATS_TEST_TMPDIR/ev"
}

@test "the agent without the host's /sys/fs/bpf (a host where bpffs is not mounted): run pins nothing, the same records" {
	agent "lt-img-b-$$" "$BATS_TEST_TMPDIR/ev" --privileged --pid=host -v /sys/kernel:/sys/kernel \
		-v /sys/fs/cgroup:/sys/fs/cgroup:ro
	mark_and_stop "lt-img-b-$$" "$BATS_TEST_TMPDIR/ev"
}
