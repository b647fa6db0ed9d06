// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The probe table and the descriptor encoder: every field kind, -h, the aggregate key writers. */
#define _GNU_SOURCE /* open_memstream */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "histfmt.h"
#include "lt_syscall_nr.h"
#include "records.h"
#include "tap.h"

static char mem[LT_ENC_MAX * 2];
static struct lt_buf b = { mem, 0, sizeof(mem) };

/* a record with one member of each shape the kinds read */
struct t_rec {
	struct lt_hdr hdr;
	__s8 s8;
	__u8 u8;
	__s16 s16;
	__u32 u32;
	__s32 s32;
	__s64 s64;
	__u64 u64;
	__u16 str_len;
	__u8 fam;
	__u8 _pad0[5];
	char str[8];
	char argv[16];
	__u8 ip[16];
};

static void put_hex(struct lt_buf *bb, int64_t v, bool json)
{
	static const char hex[] = "0123456789abcdef";

	if (json)
		lt_put_c(bb, '"');
	lt_put_s(bb, "0x");
	lt_put_c(bb, hex[(v >> 4) & 15]);
	lt_put_c(bb, hex[v & 15]);
	if (json)
		lt_put_c(bb, '"');
}

static const char *const colours[] = { [1] = "red", [3] = "blue" };

#define T_(m, nm, k, tx, tk)                                                                \
	.name = nm, .jkey = ",\"" nm "\":", .jlen = sizeof(",\"" nm "\":") - 1, .tkey = tk, \
	.tlen = sizeof(tk) - 1, .kind = k, .text = tx, .off = offsetof(struct t_rec, m),    \
	.size = sizeof(((struct t_rec *)0)->m)

static const struct lt_field t_fields[] = {
	{ T_(s8, "s8", LT_F_INT, LT_T_KV, " s8="), .sgn = true },
	{ T_(u8, "u8", LT_F_INT, LT_T_KV, " u8=") },
	{ T_(s16, "s16", LT_F_INT, LT_T_KV, " s16="), .sgn = true },
	{ T_(u32, "u32", LT_F_INT, LT_T_OCTAL, " u32=0") },
	{ T_(s32, "s32", LT_F_INT, LT_T_NONE, ""), .sgn = true },
	{ T_(s64, "s64", LT_F_INT, LT_T_KV, " s64="), .sgn = true },
	{ T_(u64, "u64", LT_F_INT, LT_T_KV, " u64=") },
	{ T_(str, "str", LT_F_STR, LT_T_KV, " str="), .len_off = offsetof(struct t_rec, str_len),
	  .len_size = 2 },
	{ T_(str, "whole", LT_F_STR, LT_T_KV, " whole=") },
	{ T_(argv, "argv", LT_F_ARGV, LT_T_KV, " argv="),
	  .len_off = offsetof(struct t_rec, str_len), .len_size = 2 },
	{ T_(u8, "bit1", LT_F_FLAG, LT_T_WORD, " bit1"), .bit = 2 },
	{ T_(u8, "bit3", LT_F_FLAG, LT_T_WORD, "..."), .bit = 8 },
	{ T_(s8, "any", LT_F_FLAG, LT_T_NONE, "") },
	{ T_(u8, "colour", LT_F_ENUM, LT_T_KV, " colour="), .nnames = 4, .names = colours,
	  .unknown = "colour_", .unknown_num = true },
	{ T_(s16, "shade", LT_F_ENUM, LT_T_KV, " shade="), .sgn = true, .nnames = 4,
	  .names = colours, .unknown = "none" },
	{ T_(ip, "ip", LT_F_ADDR, LT_T_KV, " ip="), .len_off = offsetof(struct t_rec, fam),
	  .len_size = 1 },
	{ T_(u8, "hex", LT_F_FMT, LT_T_KV, " x="), .put = put_hex },
	{ .name = NULL },
};

static const struct lt_probe t_probe = { .name = "t", .fields = t_fields };

static const char *enc(const struct lt_rec *r, bool json)
{
	b.len = 0;
	if (json)
		lt_encode_json(&b, &t_probe, r);
	else
		lt_encode_text(&b, &t_probe, r);
	b.p[b.len] = 0;
	return b.p;
}

static void kinds(void)
{
	static struct lt_rec r;
	struct t_rec *t = (void *)&r;

	memset(&r, 0, sizeof(r));
	t->hdr = (struct lt_hdr){ 99, sizeof(*t), 1, LT_HDR_CGROUP, 2, 3, 4, 0 };
	t->s8 = -128;
	t->u8 = 0xfa; /* bit1 and bit3 set, colour 250 unknown */
	t->s16 = -3;
	t->u32 = 0755;
	t->s32 = -2147483647 - 1;
	t->s64 = -9;
	t->u64 = ~0ull;
	t->str_len = 3;
	memcpy(t->str, "ab\"cdefg", 8); /* no NUL: "whole" reads all 8 */
	memcpy(t->argv, "x y\0\0z", 6);
	t->fam = 6;
	t->ip[15] = 1;
	ok(!strcmp(enc(&r, true),
		   "{\"type\":\"t\",\"ts_ns\":2,\"cpu\":1,\"pid\":3,\"tid\":4,\"cgroup_id\":0,"
		   "\"s8\":-128,\"u8\":"
		   "250,"
		   "\"s16\":-3,\"u32\":493,\"s32\":-2147483648,\"s64\":-9,"
		   "\"u64\":18446744073709551615,\"str\":\"ab\\\"\",\"whole\":\"ab\\\"cdefg\","
		   "\"argv\":[\"x y\"],\"bit1\":true,\"bit3\":true,\"any\":true,"
		   "\"colour\":\"colour_250\",\"shade\":\"none\",\"ip\":\"::1\",\"hex\":\"0xfa\"}"
		   "\n"),
	   "JSON: integers by size and sign, strings cut at their length, flags, names, v6");
	ok(!strcmp(enc(&r, false),
		   "t ts_ns=2 cpu=1 pid=3 tid=4 cgroup_id=0 s8=-128 u8=250 s16=-3 u32=0755 s64=-9 "
		   "u64=18446744073709551615 str=ab\" whole=ab\"cdefg argv=x\\x20y bit1... "
		   "colour=colour_250 shade=none ip=::1 x=0xfa\n"),
	   "text: octal, JSON-only fields left out, flags as words, \"...\" right after");

	t->s8 = 0;
	t->u8 = 1;
	t->s16 = 3;
	t->u32 = 0;
	t->s32 = 0;
	t->s64 = 0;
	t->u64 = 0;
	t->str_len = 5;
	memset(t->str, 0, sizeof(t->str));
	memcpy(t->str, "ab", 2);
	memset(t->argv, 0, sizeof(t->argv));
	memcpy(t->argv, "a\0\0b", 4);
	t->fam = 4;
	memcpy(t->ip, "\x0a\x00\x00\x01", 4);
	ok(!strcmp(enc(&r, true),
		   "{\"type\":\"t\",\"ts_ns\":2,\"cpu\":1,\"pid\":3,\"tid\":4,\"cgroup_id\":0,"
		   "\"s8\":0,\"u8\":1,"
		   "\"s16\":3,\"u32\":0,\"s32\":0,\"s64\":0,\"u64\":0,\"str\":\"ab\",\"whole\":"
		   "\"ab\","
		   "\"argv\":[\"a\",\"\",\"b\"],\"bit1\":false,\"bit3\":false,\"any\":false,"
		   "\"colour\":\"red\",\"shade\":\"blue\",\"ip\":\"10.0.0.1\",\"hex\":\"0x01\"}\n"),
	   "JSON: flags clear, names found, empty argument kept, v4");
	ok(!strcmp(enc(&r, false),
		   "t ts_ns=2 cpu=1 pid=3 tid=4 cgroup_id=0 s8=0 u8=1 s16=3 u32=0 s64=0 u64=0 "
		   "str=ab whole=ab argv=a  b colour=red shade=blue ip=10.0.0.1 "
		   "x=0x01\n"),
	   "text: clear flags print nothing, octal 0 is \"0\"");
	t->str_len = 60000;
	memset(t->argv, 'q', sizeof(t->argv));
	enc(&r, true);
	ok(strstr(b.p, "\"argv\":[\"qqqqqqqqqqqqqqqq\"]") != NULL,
	   "a length past the array is clamped to it");
}

static void table(void)
{
	int bad_rec = 0, bad_agg = 0, bad_key = 0;

	/* the rows, then the lost record's description */
	for (size_t i = 0; i <= lt_nprobes; i++) {
		const struct lt_probe *p = i < lt_nprobes ? &lt_probes[i] : &lt_lost_record;

		if (p->type) {
			bad_rec += !p->fields;
			for (const struct lt_field *f = p->fields; f && f->name; f++) {
				size_t n = strlen(f->name);

				/* within the record, and the keys spell the name (a REC
				 * with no keys writes its own: priv's prog_type) */
				if (f->kind == LT_F_REC && !f->jlen && !f->tlen) {
					bad_key += f->off + f->size > p->rec_size;
					continue;
				}
				bad_key += f->off + f->size > p->rec_size || f->jlen != n + 4 ||
					   strncmp(f->jkey + 2, f->name, n) ||
					   (f->text == LT_T_KV && strchr(f->tkey, '=') == NULL);
			}
		}
		if (p->map)
			bad_agg += !p->key_json || !p->key_title || !p->prom ||
				   p->key_size > LT_AGG_KEY_MAX;
	}
	ok(!bad_rec, "every record probe has a field list");
	ok(!bad_key, "every field lies within its record and its keys spell its name");
	ok(!bad_agg, "every aggregate probe has key writers and metrics, keys fit LT_AGG_KEY_MAX");
}

static void help(void)
{
	char *s = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&s, &n);

	lt_probe_fields_help(f);
	fclose(f);
	ok(s && !strcmp(s,
			"    JSON fields: type ts_ns cpu pid tid cgroup_id; exec: ppid uid gid pid_ns\n"
			"    mnt_ns net_ns comm filename filename_truncated argc args args_truncated\n"
			"    args_shed euid egid fileless exec_id parent_exec_id ancestors\n"
			"    ancestors_truncated; exit: ppid comm exit_code signal core_dumped\n"
			"    lifetime_ns; fork: comm child_pid; signal: comm target_pid target_tid\n"
			"    target_comm sig sig_name group result; oom: comm victim_pid victim_comm\n"
			"    victim_uid pages total_vm_pages; open: comm syscall dfd path\n"
			"    path_truncated path_shed flags mode ret; tcp: comm family saddr daddr\n"
			"    sport dport direction tx_bytes rx_bytes duration_ns; tcp_retrans: comm\n"
			"    family saddr daddr sport dport state; lost: probe count first_ts_ns\n"
			"    last_ts_ns throttled unseen; file: comm op syscall path path_truncated\n"
			"    path_unreadable path_from_fd dfd new_path new_path_truncated\n"
			"    new_path_unreadable new_dfd mode owner_uid owner_gid flags length ret;\n"
			"    cred: comm op syscall old_uid new_uid old_euid new_euid old_suid\n"
			"    new_suid old_fsuid new_fsuid old_gid new_gid old_egid new_egid old_sgid\n"
			"    new_sgid old_fsgid new_fsgid old_caps new_caps ret; priv: comm op\n"
			"    syscall request target_pid source target source_truncated\n"
			"    target_truncated fstype bpf_cmd prog_type filename name name_from_fd\n"
			"    memfd flags fd ret.\n"),
	   "events -h field list, wrapped at 76 columns");
	free(s);
}

static const char *key_json(const struct lt_probe *p, const void *key)
{
	b.len = 0;
	p->key_json(&b, key);
	b.p[b.len] = 0;
	return b.p;
}

static void keys(void)
{
	const struct lt_probe *sys = lt_probe_by_name("syscalls", 8);
	const struct lt_probe *bio = lt_probe_by_name("bio", 3);
	const struct lt_probe *runq = lt_probe_by_name("runq", 4);
	/* the build's numbers: read is 0 on x86-64, 63 on arm64 */
	struct lt_sys_key sk = { LT_NR_read, 0 };
	struct lt_bio_key bk = { 8u << 20 | 16, LT_BIO_WRITE, {} };
	char t[96];

	ok(!strcmp(key_json(sys, &sk), "\"syscall\":\"read\",\"pid\":0"), "syscalls key JSON");
	sys->key_title(t, sizeof(t), sys, &sk);
	ok(!strcmp(t, "syscall read"), "syscalls title without a pid");
	sk = (struct lt_sys_key){ LT_NR_write, 42 };
	sys->key_title(t, sizeof(t), sys, &sk);
	ok(!strcmp(t, "syscall write pid 42"), "syscalls title with a pid");
	sk = (struct lt_sys_key){ 99999, 7 };
	ok(!strcmp(key_json(sys, &sk), "\"syscall\":\"syscall_99999\",\"pid\":7"),
	   "an unknown syscall by number");
	ok(sys->prom->nnames > 300 && sys->prom->key_name(&sk) == 99999 &&
		   !strcmp(sys->prom->name(LT_NR_read), "read") && !sys->prom->name(99999),
	   "syscalls metrics: summed per syscall name");

	ok(!strcmp(key_json(bio, &bk), "\"device\":\"8:16\",\"op\":\"write\""), "bio key JSON");
	bio->key_title(t, sizeof(t), bio, &bk);
	ok(!strcmp(t, "bio 8:16 write"), "bio title");
	bio->prom->labels(t, sizeof(t), &bk);
	ok(!strcmp(t, "device=\"8:16\",op=\"write\""), "bio metrics labels");

	ok(!strcmp(key_json(runq, NULL), "\"probe\":\"runq\""), "runq key JSON");
	runq->key_title(t, sizeof(t), runq, NULL);
	ok(!strcmp(t, "runq latency") && !runq->prom->labels && !runq->key_size,
	   "runq: one histogram, no key");
}

int main(void)
{
	kinds();
	table();
	help();
	keys();
	return tap_done();
}
