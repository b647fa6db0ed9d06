#!/usr/bin/env bats
# The shape of the code (docs/design.md): checks of the source tree, run on
# the host only (tests/vm/host-only). Functions are in kernel style: the
# opening brace of a body in column 0, its closing brace too.

setup() { cd "$BATS_TEST_DIRNAME/../.."; }

# "LINES FILE FUNCTION" for every function of the given files
func_lengths() {
	awk '/^\{/ { s = FNR; name = prev }
	     /^\}/ && s { print FNR - s + 1, FILENAME, name; s = 0 }
	     { prev = $0 }' "$@"
}

@test "no function in loader/ and progs/ is over 150 lines" {
	run func_lengths loader/*.c progs/*.c progs/*.h
	[ "$status" -eq 0 ]
	# the walk sees the tree's functions (a broken pattern would pass vacuously)
	[ "${#lines[@]}" -gt 300 ]
	run awk '$1 > 150' <<<"$output"
	[ "$status" -eq 0 ]
	[ -z "$output" ] || { echo "over 150 lines: $output"; false; }
}

@test "only loader/kernel* talks to libbpf" {
	run grep -l -E '#include <bpf/(libbpf|bpf|btf)\.h>' loader/*.c loader/*.h
	[ "$status" -eq 0 ]
	[ -n "$output" ]
	run grep -v -E '^loader/kernel[a-z_]*\.[ch]$' <<<"$output"
	[ -z "$output" ] || { echo "libbpf outside the kernel layer: $output"; false; }
}

@test "what all probes share stays small: progs/lt_common.bpf.h is at most 400 lines" {
	run wc -l <progs/lt_common.bpf.h
	[ "$status" -eq 0 ]
	[ "$output" -le 400 ]
}
