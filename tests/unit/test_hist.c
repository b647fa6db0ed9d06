// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Histogram math and formats: the slot rule at every power of two, the text
 * and JSON forms, the Prometheus exposition (cumulative buckets, +Inf ==
 * count), and the HTTP request checks of lowtrace metrics.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "histfmt.h"
#include "http.h"
#include "prom.h"
#include "tap.h"

static char mem[1 << 20];

static int count_lines(const char *s, const char *prefix)
{
	int n = 0;

	for (const char *p = s; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
		n += !strncmp(p, prefix, strlen(prefix));
	return n;
}

int main(void)
{
	struct lt_buf b = { mem, 0, sizeof(mem) };
	struct lt_hist h = {};
	bool head;
	int bad = 0;

	/* slot i holds [2^i, 2^(i+1)); 0 and 1 in slot 0; the last slot is open-ended */
	for (unsigned int i = 1; i < 63; i++) {
		unsigned long long v = 1ull << i;
		unsigned int want = i < LT_HIST_SLOTS ? i : LT_HIST_SLOTS - 1;
		unsigned int below = i - 1 < LT_HIST_SLOTS ? i - 1 : LT_HIST_SLOTS - 1;

		bad += lt_hist_slot(v) != want || lt_hist_slot(v - 1) != below ||
		       lt_hist_slot(v + 1) != want;
	}
	ok(!bad && lt_hist_slot(0) == 0 && lt_hist_slot(1) == 0 &&
		   lt_hist_slot(~0ull) == LT_HIST_SLOTS - 1,
	   "slot boundaries at every power of two (%d wrong)", bad);

	h.slot[3] = 4; /* 8..15 ns */
	h.slot[10] = 2; /* 1024..2047 ns */
	h.count = 6;
	h.sum_ns = 4 * 10 + 2 * 1500;
	lt_hist_json(&b, &h);
	mem[b.len] = 0;
	ok(!strcmp(mem,
		   ",\"count\":6,\"sum_ns\":3040,\"buckets\":[{\"lo\":8,\"hi\":16,\"count\":4},"
		   "{\"lo\":1024,\"hi\":2048,\"count\":2}]"),
	   "JSON: only non-empty buckets, hi exclusive");

	b.len = 0;
	lt_hist_text(&b, "t", &h);
	mem[b.len] = 0;
	ok(!strncmp(mem, "t: count 6, sum 3040 ns, mean 506 ns\n", 37) &&
		   count_lines(mem, "  ") == 9 &&
		   strstr(mem, "               8 -> 15              : 4          |****************"
			       "************************|\n") &&
		   strstr(mem,
			  "            1024 -> 2047            : 2          |********************"
			  "                    |\n"),
	   "text: title, header, bars scaled to the largest bucket, first to last used");

	{
		/* a count past the column's 10 digits widens it: the bars stay aligned */
		struct lt_hist w = h;
		const char *l8, *l1024;

		w.slot[10] = 12345678901234ull;
		b.len = 0;
		lt_hist_text(&b, "t", &w);
		mem[b.len] = 0;
		l8 = strstr(mem, " 8 -> ");
		l1024 = strstr(mem, " 1024 -> ");
		ok(strstr(mem, ": count          distribution\n") && l8 && l1024 &&
			   strchr(l8, '|') - strstr(l8, "->") ==
				   strchr(l1024, '|') - strstr(l1024, "->") &&
			   strstr(mem, ": 12345678901234 |****"),
		   "text: a 14-digit count widens the count column for every line");
	}

	b.len = 0;
	lt_prom_hist(&b, "x_seconds", "op=\"read\"", &h);
	mem[b.len] = 0;
	ok(count_lines(mem, "x_seconds_bucket{op=\"read\",le=") == LT_HIST_SLOTS,
	   "exposition: %d buckets with the labels first", LT_HIST_SLOTS);
	ok(strstr(mem, "x_seconds_bucket{op=\"read\",le=\"8e-09\"} 0\n") &&
		   strstr(mem, "x_seconds_bucket{op=\"read\",le=\"1.6e-08\"} 4\n") &&
		   strstr(mem, "x_seconds_bucket{op=\"read\",le=\"2.048e-06\"} 6\n") &&
		   strstr(mem, "x_seconds_bucket{op=\"read\",le=\"+Inf\"} 6\n") &&
		   strstr(mem, "x_seconds_sum{op=\"read\"} 0.000003040\n") &&
		   strstr(mem, "x_seconds_count{op=\"read\"} 6\n"),
	   "exposition: cumulative le in seconds, +Inf and _count equal count");

#define REQ(s) s, sizeof(s) - 1, 8192, &head
	ok(lt_http_status(REQ("GET /metrics HTTP/1.1\r\nHost: a\r\n\r\n")) == 200 && !head,
	   "GET /metrics: 200");
	ok(lt_http_status(REQ("HEAD /metrics?x=1 HTTP/1.0\r\n\r\n")) == 200 && head,
	   "HEAD /metrics?query: 200, no body");
	ok(lt_http_status(REQ("GET /metricsx HTTP/1.1\r\n\r\n")) == 404 &&
		   lt_http_status(REQ("GET / HTTP/1.1\r\n\r\n")) == 404,
	   "other paths: 404");
	ok(lt_http_status(REQ("POST /metrics HTTP/1.1\r\n\r\n")) == 405, "POST: 405");
	ok(lt_http_status(REQ("garbage\r\n\r\n")) == 400 &&
		   lt_http_status(REQ("GET /metrics\r\n\r\n")) == 400 &&
		   lt_http_status(REQ("GET /m\x01 HTTP/1.1\r\n\r\n")) == 400 &&
		   lt_http_status(REQ("GET /metrics SPDY/3\r\n\r\n")) == 400,
	   "malformed request lines: 400");
	ok(lt_http_status(REQ("GET /metrics HTTP/1.1\r\n")) == 0, "headers not complete: wait");
	{
		static char full[8192];

		memset(full, 'x', sizeof(full));
		/* no NUL after the colon: a control byte is 400 */
		memcpy(full, "GET /metrics HTTP/1.1\r\nX: ", 26);
		ok(lt_http_status(full, sizeof(full), sizeof(full), &head) == 431,
		   "a full buffer without the blank line: 431");
	}
	return tap_done();
}
