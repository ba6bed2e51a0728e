// SPDX-License-Identifier: GPL-2.0
/*
 * kselftests for kmemtrace allocation events: the known allocations of
 * debugfs kmemtrace/alloc_selftest, captured with kmemtraced and checked
 * event by event (call site, pointer, sizes, GFP flags, node, context,
 * alloc/free pairing), the capture checked by kmemtrace-check, loss
 * accounted exactly, the tools' exit statuses, and the control files.
 *
 * Needs root. Skips, saying why, on a kernel without CONFIG_KMEMTRACE;
 * fails without the files the kselftests' config asks for (kmt_util.h).
 * The tools are the ones built beside this test, never ones from PATH.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../kselftest_harness.h"
#include "alloc_report.h"
#include "ksyms.h"
#include "kmt_events.h"
#include "kmt_util.h"

/* ABI 2, pages: the header, then time (3 + 8), pid (3 + 4), context (3 + 1). */
#define KMT_FREE_EVENT_SIZE	(KMT_HDR_SIZE + 11 + 7 + 4)
/* ABI 2, pages: the header, the allocation fields, time, pid, node (3 + 4), context. */
#define KMT_ALLOC_EVENT_SIZE	(KMT_HDR_SIZE + KMT_ALLOC_SIZE + 11 + 7 + 7 + 4)
/* kmalloc and kmem_cache events end with the cache (3 + 8). */
#define KMT_CACHE_FEAT_SIZE	11
/* The trigger's kmem_cache, SLAB_NO_MERGE: its events carry it. */
#define KMT_ST_CACHE_NAME	"kmemtrace_selftest"
#define TRIGGER		KMT_DIR "/alloc_selftest"

static const struct cache_line *find_cache(const struct cache_line *c, size_t n,
					   unsigned long long id)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (c[i].id == id)
			return &c[i];
	return NULL;
}

/*
 * The cache an event of the trigger carries: none for pages and for a
 * kmalloc() too large for the caches; the trigger's own for kmem_cache
 * events; a kmalloc cache of the object's size for kmalloc(); and for a
 * free, the one its allocation carried.
 */
static void check_cache(struct __test_metadata *_metadata, const struct kmt_event *ev,
			const struct cache_line *caches, size_t ncaches,
			const struct kmt_event *alloc, const char *line)
{
	const struct cache_line *c;

	if (ev->type_id == KMEMTRACE_TYPE_PAGES) {
		EXPECT_FALSE(ev->has_cache) TH_LOG("\"%s\"", line);
		return;
	}
	ASSERT_TRUE(ev->has_cache) TH_LOG("\"%s\"", line);
	if (ev->event_id == KMEMTRACE_EVENT_FREE) {
		ASSERT_NE(NULL, alloc) TH_LOG("\"%s\": no allocation of it", line);
		EXPECT_EQ(alloc->cache, ev->cache) TH_LOG("\"%s\": not its allocation's", line);
		return;
	}
	if (ev->type_id == KMEMTRACE_TYPE_KMALLOC &&
	    ev->bytes_req > 2 * (unsigned long)sysconf(_SC_PAGESIZE)) {
		/* KMALLOC_MAX_CACHE_SIZE: pages, no cache. */
		EXPECT_EQ(0ULL, (unsigned long long)ev->cache) TH_LOG("\"%s\"", line);
		return;
	}
	c = find_cache(caches, ncaches, ev->cache);
	ASSERT_NE(NULL, c) TH_LOG("\"%s\": cache %llu not in the caches file", line,
				  (unsigned long long)ev->cache);
	EXPECT_EQ(ev->bytes_alloc, c->size) TH_LOG("\"%s\": cache %s", line, c->name);
	/* The trigger's own cache by its name, a kmalloc cache by its prefix. */
	EXPECT_TRUE(ev->type_id == KMEMTRACE_TYPE_CACHE ? !strcmp(c->name, KMT_ST_CACHE_NAME) :
							  !strncmp(c->name, "kmalloc-", 8))
		TH_LOG("\"%s\": cache %s", line, c->name);
}

/* All events of a capture, ordered by sequence number. */
static int cmp_event(const void *a, const void *b)
{
	const struct kmt_event *x = a, *y = b;

	return kmt_seq_after(y->seq, x->seq) ? -1 : x->seq != y->seq;
}

/*
 * Every event of every cpu<n> file of the capture @dir (whatever the CPU
 * numbers), ordered by sequence number; NULL, saying why, if a file
 * cannot be read or holds an event that does not decode.
 */
static struct kmt_event *load_events(const char *dir, size_t *n)
{
	struct kmt_event *ev = NULL, *nev;
	size_t cap = 0;
	struct dirent *de;
	DIR *d = opendir(dir);
	int files = 0;

	*n = 0;
	if (!d) {
		ksft_print_msg("%s: %s\n", dir, strerror(errno));
		return NULL;
	}
	while ((de = readdir(d))) {
		char path[PATH_MAX];
		size_t len, off = 0;
		unsigned char *buf;
		const char *why;
		unsigned int cpu;
		int end = 0;

		if (sscanf(de->d_name, "cpu%u%n", &cpu, &end) != 1 || de->d_name[end])
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		buf = (unsigned char *)kmt_read_file(path, &len);
		if (!buf) {
			ksft_print_msg("%s: %s\n", path, strerror(errno));
			goto fail;
		}
		files++;
		while (off < len) {
			if (*n == cap) {
				cap = cap ? cap * 2 : 65536;
				nev = realloc(ev, cap * sizeof(*ev));
				if (!nev) {
					free(buf);
					goto fail;
				}
				ev = nev;
			}
			why = kmt_decode(buf + off, len - off, false, &ev[*n]);
			if (why) {
				ksft_print_msg("%s: offset %zu: %s\n", path, off, why);
				free(buf);
				goto fail;
			}
			off += ev[*n].size;
			(*n)++;
		}
		free(buf);
	}
	closedir(d);
	if (!files) {
		ksft_print_msg("%s: no cpu<n> file\n", dir);
		free(ev);
		return NULL;
	}
	if (!ev)
		ev = calloc(1, sizeof(*ev));
	else
		qsort(ev, *n, sizeof(*ev), cmp_event);
	return ev;
fail:
	closedir(d);
	free(ev);
	return NULL;
}

/* A "key value" line of a file: a capture's meta, or kmemtrace/stats. */
static int key_value(const char *path, const char *key, unsigned long long *v)
{
	char *text = kmt_read_file(path, NULL), *line, *save;
	size_t kl = strlen(key);
	int ret = -1;

	if (!text)
		return -1;
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		if (!strncmp(line, key, kl) && line[kl] == ' ') {
			*v = strtoull(line + kl + 1, NULL, 10);
			ret = 0;
			break;
		}
	free(text);
	return ret;
}

/* A "key value" line of debugfs kmemtrace/stats, or ~0 if there is none. */
static unsigned long long stat_of(const char *key)
{
	unsigned long long v = ~0ULL;

	key_value(KMT_DIR "/stats", key, &v);
	return v;
}

/* debugfs kmemtrace/total_overruns, or ~0 if it cannot be read. */
static unsigned long long overrun_bytes(void)
{
	char *s = kmt_read_file(KMT_DIR "/total_overruns", NULL);
	unsigned long long v = s ? strtoull(s, NULL, 10) : ~0ULL;

	free(s);
	return v;
}

FIXTURE(alloc) {
	char dir[32];
	char enable[8];
	char mask[32];
	pid_t daemon;
};

FIXTURE_SETUP(alloc)
{
	char *s;

	self->dir[0] = '\0';
	self->daemon = 0;
	KMT_NEED_KMEMTRACE();
	KMT_REQUIRE(KMT_DIR "/enable", "CONFIG_KMEMTRACE_ALLOC");
	KMT_REQUIRE(TRIGGER, "CONFIG_KMEMTRACE_ALLOC_SELFTEST");
	s = kmt_read_file(KMT_DIR "/enable", NULL);
	ASSERT_NE(NULL, s);
	snprintf(self->enable, sizeof(self->enable), "%s", s);
	free(s);
	s = kmt_read_file(KMT_DIR "/mask", NULL);
	ASSERT_NE(NULL, s);
	snprintf(self->mask, sizeof(self->mask), "%s", s);
	free(s);
	/* Every allocator, whatever a test that stopped half-way left. */
	ASSERT_EQ(0, kmt_write_str(KMT_DIR "/mask", KMT_MASK_ALL));
	/* An enable allocates the buffers, if there are none, and the files. */
	ASSERT_EQ(0, kmt_write_str(KMT_DIR "/enable", "1"));
	ASSERT_EQ(0, kmt_write_str(KMT_DIR "/enable", "0"));
	/*
	 * Drain what earlier tests or the boot left, so as not to mix it in;
	 * the kernel then frees the buffers, until the next enable.
	 */
	ASSERT_LE(0, kmt_drain_relay());
	snprintf(self->dir, sizeof(self->dir), "/tmp/alloc_test.XXXXXX");
	ASSERT_NE(NULL, mkdtemp(self->dir));
}

/*
 * The online file of the CPU a hotplug test takes offline: the teardown
 * brings it back should the test stop half-way.
 */
static char hotplug_online[64];

FIXTURE_TEARDOWN(alloc)
{
	if (self->daemon > 0) {
		kill(self->daemon, SIGKILL);
		waitpid(self->daemon, NULL, 0);
	}
	/* A hotplug test that failed half-way leaves no CPU offline. */
	if (hotplug_online[0] && !access(hotplug_online, W_OK))
		kmt_write_str(hotplug_online, "1");
	kmt_write_str(KMT_DIR "/mask", self->mask);
	kmt_write_str(KMT_DIR "/enable", self->enable);
	if (self->dir[0])
		kmt_run("rm -rf %s", self->dir);
}

/*
 * Starts kmemtraced -e on DIR/cap, its pid in *@daemon (for the teardown
 * to stop), and waits until tracing is on: fails if it is not within 5 s.
 * With @seconds NULL it runs until stop_capture(): a capture timed with -t
 * would race the workload, which on a slow (emulated) machine may take longer.
 */
static void start_capture(struct __test_metadata *_metadata, const char *dir,
			  const char *seconds, pid_t *daemon)
{
	char bin[PATH_MAX], out[PATH_MAX], log[PATH_MAX];
	bool on = false;
	int tries;
	pid_t pid;

	snprintf(out, sizeof(out), "%s/cap", dir);
	snprintf(log, sizeof(log), "%s/kmemtraced.out", dir);
	KMT_TOOL(bin, "kmemtraced");
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		if (!freopen(log, "w", stdout) || dup2(1, 2) < 0)
			_exit(127);
		if (seconds)
			execl(bin, bin, "-e", "-q", "-t", seconds, "-o", out, (char *)NULL);
		else
			execl(bin, bin, "-e", "-q", "-o", out, (char *)NULL);
		_exit(127);
	}
	*daemon = pid;
	for (tries = 0; !on && tries < 100; tries++) {
		char *s = kmt_read_file(KMT_DIR "/enable", NULL);

		on = s && s[0] == '1';
		free(s);
		if (!on)
			usleep(50000);
	}
	ASSERT_TRUE(on) kmt_run("echo '# kmemtraced did not turn tracing on:'; cat %s >&2", log);
}

/*
 * Stops the capture started by start_capture() once the workload is done:
 * the first SIGINT turns tracing off and drains the buffers, as the end of
 * a timed capture would. Its wait status in *@status.
 */
static void stop_capture(struct __test_metadata *_metadata, pid_t *daemon, int *status)
{
	ASSERT_EQ(0, kill(*daemon, SIGINT));
	ASSERT_EQ(*daemon, waitpid(*daemon, status, 0));
	*daemon = 0;
}

/*
 * A kmalloc or kmem_cache event of this task's, numbered since @first,
 * from a function of the trigger (@func, named in its @report): not one
 * the kernel made on the task's behalf meanwhile, such as kmemleak's
 * record of each new object (__alloc_object()) on a debug kernel.
 */
static bool is_our_slab_event(const struct kmt_event *ev, unsigned long long first,
			      const char *report, const char *func)
{
	char needle[80];

	if ((int)((unsigned int)ev->seq - (unsigned int)first) < 0 ||
	    ev->type_id == KMEMTRACE_TYPE_PAGES || !ev->has_pid || ev->pid != getpid())
		return false;
	snprintf(needle, sizeof(needle), " %s ", func);
	return strstr(report, needle);
}

/* What a function of the trigger allocated and freed, of one type. */
struct fn_total {
	char func[64];
	unsigned int type;
	unsigned long long allocs, frees, req, alloc;
};

static struct fn_total *fn_total(struct fn_total *t, size_t *n, size_t cap, const char *func,
				 unsigned int type)
{
	size_t i;

	for (i = 0; i < *n; i++)
		if (t[i].type == type && !strcmp(t[i].func, func))
			return &t[i];
	if (*n == cap)
		return NULL;
	memset(&t[*n], 0, sizeof(t[0]));
	snprintf(t[*n].func, sizeof(t[0].func), "%s", func);
	t[*n].type = type;
	return &t[(*n)++];
}

/*
 * kmemtrace-report's exit status when it wrote its report: 0, or 1 when
 * the capture shows what it counts as allocation errors (a free of
 * something allocated before the capture began: kmt_cli.h). Both are a
 * report, which the tests then read; 2 (usage, I/O) and 3 (corrupt
 * input) are not.
 */
static bool report_written(int rc)
{
	return rc == KMT_EXIT_OK || rc == KMT_EXIT_DATA;
}

/*
 * The report's row for the trigger's kmem_cache, named from the
 * capture's caches file: its allocations and frees are the trigger's
 * kmem_cache ones, exactly (nothing else uses that cache).
 */
static void check_report_cache(struct __test_metadata *_metadata, const char *cap,
			       const char *dir, const struct fn_total *want, size_t nwant)
{
	unsigned long long allocs = 0, frees = 0, req = 0, got_allocs, got_frees, got_req;
	char path[PATH_MAX], line[1024];
	int found = 0, rc;
	size_t i;
	FILE *f;

	for (i = 0; i < nwant; i++) {
		if (want[i].type != KMEMTRACE_TYPE_CACHE)
			continue;
		allocs += want[i].allocs;
		frees += want[i].frees;
		req += want[i].req;
	}
	ASSERT_LT(0ULL, allocs);
	KMT_TOOL(path, "kmemtrace-report");
	rc = kmt_run("%s --format=json --top=-1 %s > %s/report.json 2>&1", path, cap, dir);
	ASSERT_TRUE(report_written(rc)) TH_LOG("kmemtrace-report --format=json: exit %d", rc);
	snprintf(path, sizeof(path), "%s/report.json", dir);
	f = fopen(path, "r");
	ASSERT_NE(NULL, f);
	while (fgets(line, sizeof(line), f)) {
		const char *p = strstr(line, "{ \"name\": \"" KMT_ST_CACHE_NAME "\"");
		int n;

		p = p ? strstr(p, "\"allocations\": ") : NULL;
		if (!p)
			continue;
		n = sscanf(p, "\"allocations\": %llu, \"frees\": %llu, \"bytes_req\": %llu",
			   &got_allocs, &got_frees, &got_req);
		ASSERT_EQ(3, n) TH_LOG("%s", line);
		found++;
	}
	fclose(f);
	ASSERT_EQ(1, found) TH_LOG("%s rows in %s", KMT_ST_CACHE_NAME, path);
	EXPECT_EQ(allocs, got_allocs);
	EXPECT_EQ(frees, got_frees);
	EXPECT_EQ(req, got_req);
}

/*
 * kmemtrace-report on the capture of the trigger: for each function of
 * the trigger and each type, the allocations, frees and bytes the
 * trigger says it made, exactly, summed over the function's call sites.
 */
static void check_report(struct __test_metadata *_metadata, const char *cap, const char *dir,
			 const struct fn_total *want, size_t nwant, struct fn_total *star)
{
	static const char * const types[] = { "kmalloc", "kmem_cache", "pages" };
	struct fn_total got[64];
	char path[PATH_MAX], line[512];
	size_t ngot = 0, i;
	FILE *f;
	int rc;

	KMT_TOOL(path, "kmemtrace-report");
	rc = kmt_run("%s --format=csv --top=-1 --site=kmt_st_ %s > %s/report.csv 2>&1", path, cap,
		     dir);
	ASSERT_TRUE(report_written(rc)) TH_LOG("kmemtrace-report --format=csv: exit %d", rc);
	snprintf(path, sizeof(path), "%s/report.csv", dir);
	f = fopen(path, "r");
	ASSERT_NE(NULL, f);
	while (fgets(line, sizeof(line), f)) {
		unsigned long long allocs, failed, frees, req, alloc;
		char sym[128], type[16], *plus;
		struct fn_total *t;
		unsigned int ty;

		if (sscanf(line, "%*[^,],%127[^,],%15[^,],%llu,%llu,%llu,%llu,%llu", sym, type,
			   &allocs, &failed, &frees, &req, &alloc) != 7)
			continue;
		/* The function, without offset or compiler suffix (.constprop.0). */
		plus = sym + strcspn(sym, "+.");
		*plus = '\0';
		for (ty = 0; ty < ARRAY_SIZE(types) && strcmp(type, types[ty]); ty++)
			;
		/* "cache": the kmem_cache type's name in earlier reports. */
		if (!strcmp(type, "cache"))
			ty = KMEMTRACE_TYPE_CACHE;
		t = fn_total(got, &ngot, ARRAY_SIZE(got), sym, ty);
		ASSERT_NE(NULL, t);
		t->allocs += allocs;
		t->frees += frees;
		t->req += req;
		t->alloc += alloc;
	}
	fclose(f);
	/*
	 * The pages under a large kmalloc() have no call site the trigger
	 * can name ("*"): slab's own function, or the trigger's when kfree()
	 * reaches the page allocator by a tail call. Those may be in the
	 * report under a trigger function, as many as there are.
	 */
	for (i = 0; i < ngot; i++) {
		size_t n = nwant;

		if (fn_total((struct fn_total *)want, &n, n, got[i].func, got[i].type))
			continue;
		if (got[i].type == KMEMTRACE_TYPE_PAGES && got[i].allocs <= star->allocs &&
		    got[i].frees <= star->frees) {
			star->allocs -= got[i].allocs;
			star->frees -= got[i].frees;
			continue;
		}
		EXPECT_FALSE(1) TH_LOG("%s %s: in the report, not made by the trigger (%llu %s)",
				       got[i].func, types[got[i].type % 3],
				       got[i].allocs + got[i].frees, "events");
	}
	for (i = 0; i < nwant; i++) {
		const struct fn_total *w = &want[i];
		struct fn_total *g = fn_total(got, &ngot, ngot, w->func, w->type);

		EXPECT_NE(NULL, g) TH_LOG("%s %s: not in the report", w->func, types[w->type]);
		if (!g)
			continue;
		EXPECT_EQ(w->allocs, g->allocs) TH_LOG("%s %s allocations", w->func,
						       types[w->type]);
		EXPECT_EQ(w->frees, g->frees) TH_LOG("%s %s frees", w->func, types[w->type]);
		EXPECT_EQ(w->req, g->req) TH_LOG("%s %s bytes requested", w->func,
						 types[w->type]);
		EXPECT_EQ(w->alloc, g->alloc) TH_LOG("%s %s bytes allocated", w->func,
						     types[w->type]);
	}
	check_report_cache(_metadata, cap, dir, want, nwant);
}

/*
 * For a line with no event after the last one matched: every event of
 * the same pointer and type, wherever it is, to tell a lost event from
 * one out of order or with other fields.
 */
static void dump_candidates(struct __test_metadata *_metadata, const struct kmt_event *ev,
			    size_t nev, size_t next, const struct alloc_line *l,
			    unsigned long long first, const struct sym *syms, size_t nsyms)
{
	char buf[128];
	size_t i;

	TH_LOG("searched from index %zu (seq %d); first seq %llu", next,
	       next < nev ? ev[next].seq : -1, first);
	for (i = 0; i < nev; i++)
		if (ev[i].ptr == l->ptr && ev[i].type_id == l->type)
			TH_LOG("index %zu seq %d id %u pid %d ctx %u size %llu site %s", i,
			       ev[i].seq, ev[i].event_id, ev[i].has_pid ? ev[i].pid : -1,
			       (unsigned int)ev[i].ctx, (unsigned long long)ev[i].bytes_alloc,
			       resolve(syms, nsyms, ev[i].call_site, buf, sizeof(buf)));
}

/* A PREEMPT_RT kernel says so in its version, as uname -v prints it. */
static bool kernel_is_rt(void)
{
	struct utsname u;

	return !uname(&u) && strstr(u.version, " PREEMPT_RT ");
}

/* Every event of the trigger, as the trigger says it must be. */
TEST_F_TIMEOUT(alloc, selftest_events_exact, 120)
{
	char cap[64], path[PATH_MAX], buf[256];
	char *report, *whole, *line, *save, fn[128];
	struct kmt_event *ev;
	size_t nev, nsyms, next = 0, nwant = 0;
	struct fn_total want[64], star = { .type = KMEMTRACE_TYPE_PAGES };
	const struct kmt_event *allocs[64];
	struct cache_line *caches;
	size_t ncaches, nallocs = 0;
	struct sym *syms;
	int status, checked = 0, nhard = 0;
	unsigned long long first;
	bool rt;

	start_capture(_metadata, self->dir, NULL, &self->daemon);
	/* Only what comes after: this task allocated before, too. */
	first = stat_of("events");
	ASSERT_NE(~0ULL, first) TH_LOG("no events line in %s/stats", KMT_DIR);
	ASSERT_EQ(0, kmt_write_str(TRIGGER, "run"));
	stop_capture(_metadata, &self->daemon, &status);
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(KMT_EXIT_OK, WEXITSTATUS(status)) TH_LOG("kmemtraced: events lost, or worse");

	snprintf(cap, sizeof(cap), "%s/cap", self->dir);
	snprintf(path, sizeof(path), "%s/kallsyms", cap);
	syms = load_syms(path, &nsyms);
	ASSERT_NE(NULL, syms);
	ASSERT_LT((size_t)1000, nsyms);
	snprintf(path, sizeof(path), "%s/caches", cap);
	caches = load_caches(path, &ncaches);
	ASSERT_NE(NULL, caches);
	ev = load_events(cap, &nev);
	ASSERT_NE(NULL, ev);
	report = kmt_read_file(TRIGGER, NULL);
	ASSERT_NE(NULL, report);
	whole = strdup(report);
	ASSERT_NE(NULL, whole);

	for (line = strtok_r(report, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		struct alloc_line l;
		bool in_irq;
		size_t i;
		int id;

		ASSERT_TRUE(parse_alloc_line(line, &l)) TH_LOG("line: %s", line);
		id = l.alloc ? KMEMTRACE_EVENT_ALLOC : KMEMTRACE_EVENT_FREE;
		/*
		 * The next event of this kind for this pointer made by this
		 * task since it wrote "run": the pointer may have been used
		 * before. An interrupt's event has pid 0: it is told from
		 * other interrupts' by its call site too.
		 */
		in_irq = l.ctx & (KMEMTRACE_CTX_HARDIRQ | KMEMTRACE_CTX_SOFTIRQ);
		nhard += !!(l.ctx & KMEMTRACE_CTX_HARDIRQ);
		for (i = next; i < nev; i++)
			if ((int)((unsigned int)ev[i].seq - (unsigned int)first) >= 0 &&
			    ev[i].event_id == id && ev[i].type_id == l.type && ev[i].ptr == l.ptr &&
			    ev[i].has_pid && ev[i].pid == (in_irq ? 0 : getpid()) &&
			    (!in_irq || !strcmp(l.func, resolve(syms, nsyms, ev[i].call_site,
								buf, sizeof(buf)))))
				break;
		if (i == nev)
			dump_candidates(_metadata, ev, nev, next, &l, first, syms, nsyms);
		ASSERT_LT(i, nev) TH_LOG("no event for \"%s\"", line);
		/*
		 * Nothing of this task's was passed over since the trigger's
		 * first event: a slab event it did not announce (a duplicate,
		 * one with a wrong pointer) is an error. Pages are not held
		 * to it: a slab may take new pages at any time.
		 */
		for (next = checked ? next : i; next < i; next++) {
			/* In braces: TH_LOG() follows EXPECT_*(), outside it. */
			bool ours = is_our_slab_event(&ev[next], first, whole,
						      resolve(syms, nsyms, ev[next].call_site,
							      fn, sizeof(fn)));

			EXPECT_FALSE(ours)
				TH_LOG("unannounced seq %d id %u type %u ptr %#llx %s %s, \"%s\"",
				       ev[next].seq, ev[next].event_id, ev[next].type_id,
				       (unsigned long long)ev[next].ptr, "from",
				       resolve(syms, nsyms, ev[next].call_site, buf, sizeof(buf)),
				       line);
		}
		next = i + 1;
		if (!strcmp(l.func, "*") && l.type == KMEMTRACE_TYPE_PAGES) {
			if (id == KMEMTRACE_EVENT_ALLOC)
				star.allocs++;
			else
				star.frees++;
		} else if (strcmp(l.func, "*")) {
			struct fn_total *t = fn_total(want, &nwant, ARRAY_SIZE(want), l.func,
						      l.type);

			ASSERT_NE(NULL, t);
			if (id == KMEMTRACE_EVENT_ALLOC) {
				t->allocs++;
				t->req += l.req;
				t->alloc += ev[i].bytes_alloc;
			} else {
				t->frees++;
			}
		}
		if (strcmp(l.func, "*"))
			EXPECT_STREQ(l.func,
				     resolve(syms, nsyms, ev[i].call_site, buf, sizeof(buf)))
				TH_LOG("call site of \"%s\"", line);
		EXPECT_TRUE(ev[i].has_ctx);
		EXPECT_EQ(l.ctx, (unsigned int)ev[i].ctx) TH_LOG("context of \"%s\"", line);
		EXPECT_TRUE(ev[i].has_time);
		EXPECT_TRUE(ev[i].has_pid);
		if (id == KMEMTRACE_EVENT_ALLOC) {
			EXPECT_EQ(l.req, ev[i].bytes_req) TH_LOG("\"%s\"", line);
			EXPECT_TRUE(slab_size_ok(caches, ncaches, l.size, ev[i].bytes_alloc))
				TH_LOG("\"%s\": %llu bytes allocated", line,
				       (unsigned long long)ev[i].bytes_alloc);
			EXPECT_EQ(l.gfp, ev[i].gfp_flags) TH_LOG("\"%s\"", line);
			EXPECT_EQ(-1, ev[i].target_cpu);
			EXPECT_TRUE(ev[i].has_node);
			EXPECT_EQ(l.node, ev[i].node) TH_LOG("\"%s\"", line);
			EXPECT_LE(l.req, l.size);
			EXPECT_EQ(KMT_ALLOC_EVENT_SIZE + (l.type == KMEMTRACE_TYPE_PAGES ? 0 :
							  KMT_CACHE_FEAT_SIZE),
				  (unsigned int)ev[i].size);
			ASSERT_LT(nallocs, ARRAY_SIZE(allocs));
			allocs[nallocs++] = &ev[i];
			check_cache(_metadata, &ev[i], caches, ncaches, NULL, line);
		} else {
			const struct kmt_event *a = NULL;
			size_t k;

			EXPECT_EQ(KMT_FREE_EVENT_SIZE + (l.type == KMEMTRACE_TYPE_PAGES ? 0 :
							 KMT_CACHE_FEAT_SIZE),
				  (unsigned int)ev[i].size);
			/* Its allocation: the last one of the pointer before it. */
			for (k = nallocs; k-- > 0 && !a;)
				if (allocs[k]->ptr == ev[i].ptr && allocs[k]->type_id == l.type)
					a = allocs[k];
			check_cache(_metadata, &ev[i], caches, ncaches, a, line);
		}
		checked++;
	}
	/*
	 * Every type, allocations and frees, kvmalloc(), kvrealloc() and
	 * kvfree(), the smaller wrappers, three page APIs, two bulk page
	 * calls (4 pages; a page, then 3 in bulk), hard IRQ and softirq: 32
	 * allocations, 32 frees. On PREEMPT_RT hard IRQ cannot allocate:
	 * 31 and 31.
	 */
	rt = kernel_is_rt();
	EXPECT_EQ(rt ? 62 : 64, checked);
	EXPECT_EQ(rt ? 0 : 2, nhard);
	free(report);
	free(whole);
	free(ev);
	free(syms);
	free(caches);

	KMT_TOOL(path, "kmemtrace-check");
	EXPECT_EQ(KMT_EXIT_OK, kmt_run("%s %s > %s/check.out 2>&1", path, cap, self->dir));
	EXPECT_EQ(0, kmt_run("grep -qx CLEAN %s/check.out", self->dir))
		kmt_run("cat %s/check.out >&2", self->dir);
	check_report(_metadata, cap, self->dir, want, nwant, &star);
}

/*
 * Full buffers and no reader: every event of a storm is either in a
 * buffer or counted lost, total_overruns grows by the bytes lost, and
 * kmemtrace-check finds the gaps, as many as the kernel counted.
 */
TEST_F_TIMEOUT(alloc, overruns_accounted_exactly, 120)
{
	unsigned long long l0, l1, ovr, lost_bytes, kept = 0;
	unsigned long long start, end, start_lost, end_lost, start_bytes, end_bytes;
	char cap[64], bin[PATH_MAX], path[PATH_MAX];
	struct kmt_event *ev;
	size_t nev, i;
	int status;

	/* kmalloc events only: each is an allocation or a free of known size. */
	ASSERT_EQ(0, kmt_write_str(KMT_DIR "/mask", "0x10000"));
	/*
	 * A complete capture (-e) whose readers are stopped while a storm
	 * fills the buffers: they overrun, and the capture must account
	 * for every event numbered in it.
	 */
	start_capture(_metadata, self->dir, NULL, &self->daemon);
	ASSERT_EQ(0, kill(self->daemon, SIGSTOP));
	l0 = stat_of("lost_events");
	ASSERT_NE(~0ULL, l0) TH_LOG("no lost_events line in %s/stats", KMT_DIR);
	ASSERT_EQ(0, kmt_write_str(TRIGGER, "storm 200000"));
	l1 = stat_of("lost_events");
	ASSERT_EQ(0, kill(self->daemon, SIGCONT));
	stop_capture(_metadata, &self->daemon, &status);
	ASSERT_LT(l0, l1) TH_LOG("a 400000-event storm did not overrun the buffers");
	/* kmemtraced says events were lost. */
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(KMT_EXIT_DATA, WEXITSTATUS(status));
	/* Tracing is off: total_overruns is the bytes lost, as stats says. */
	ovr = overrun_bytes();
	lost_bytes = stat_of("lost_bytes");
	EXPECT_NE(~0ULL, ovr) TH_LOG("%s/total_overruns cannot be read", KMT_DIR);
	EXPECT_NE(~0ULL, lost_bytes) TH_LOG("no lost_bytes line in %s/stats", KMT_DIR);
	EXPECT_EQ(ovr, lost_bytes);
	EXPECT_LT(0ULL, lost_bytes);

	snprintf(cap, sizeof(cap), "%s/cap", self->dir);
	snprintf(path, sizeof(path), "%s/meta", cap);
	ASSERT_EQ(0, key_value(path, "start_seq", &start));
	ASSERT_EQ(0, key_value(path, "end_seq", &end));
	ASSERT_EQ(0, key_value(path, "start_lost_events", &start_lost));
	ASSERT_EQ(0, key_value(path, "end_lost_events", &end_lost));
	ASSERT_EQ(0, key_value(path, "start_lost_bytes", &start_bytes));
	ASSERT_EQ(0, key_value(path, "end_lost_bytes", &end_bytes));
	/* The capture records at least what the kernel counted lost during the storm. */
	EXPECT_LE(l1 - l0, end_lost - start_lost);
	/* Each lost event counts its own size: a free's or an allocation's. */
	EXPECT_LE((end_lost - start_lost) * KMT_FREE_EVENT_SIZE, end_bytes - start_bytes);
	EXPECT_GE((end_lost - start_lost) * KMT_ALLOC_EVENT_SIZE, end_bytes - start_bytes);
	ev = load_events(cap, &nev);
	ASSERT_NE(NULL, ev);
	for (i = 0; i < nev; i++)
		if ((unsigned int)ev[i].seq - (unsigned int)start < end - start)
			kept++;
	free(ev);
	/* Nothing lost silently: kept + counted = numbered. */
	EXPECT_EQ(end - start, kept + (end_lost - start_lost))
		TH_LOG("kept %llu, lost %llu", kept, end_lost - start_lost);
	EXPECT_LT(0ULL, kept);

	/* The checker finds exactly those, and agrees with the kernel. */
	KMT_TOOL(bin, "kmemtrace-check");
	EXPECT_EQ(KMT_EXIT_DATA, kmt_run("%s %s > %s/check.out 2>&1", bin, cap, self->dir));
	EXPECT_EQ(0, kmt_run("grep -qx 'LOSSY: %llu events lost' %s/check.out",
			     end_lost - start_lost, self->dir))
		TH_LOG("the kernel lost %llu", end_lost - start_lost);
	EXPECT_EQ(0, kmt_run("grep -q '^capture complete: .*, %llu missing, %s %llu$' %s/check.out",
			     end_lost - start_lost, "kernel lost", end_lost - start_lost,
			     self->dir));
}

/* Events from a task pinned to one CPU, counted in its capture file. */
static unsigned long long count_pid(const char *path, pid_t pid)
{
	unsigned long long n = 0;
	size_t len, off = 0;
	unsigned char *buf = (unsigned char *)kmt_read_file(path, &len);
	struct kmt_event e;

	while (buf && off < len && !kmt_decode(buf + off, len - off, false, &e)) {
		n += e.has_pid && e.pid == pid;
		off += e.size;
	}
	free(buf);
	return n;
}

/*
 * The highest-numbered CPU goes offline and comes back during a capture:
 * its buffer and file stay, its reader follows it, and the capture is
 * complete and clean.
 */
TEST_F_TIMEOUT(alloc, cpu_hotplug_mid_capture, 120)
{
	char cap[64], bin[PATH_MAX], path[PATH_MAX], online[64];
	cpu_set_t *set;
	int status, cpu = kmt_hotplug_cpu(online, sizeof(online));
	pid_t child;

	ASSERT_LE(0, cpu) TH_LOG("/sys/devices/system/cpu/online: unreadable");
	if (!cpu)
		SKIP(return, "one CPU: none but CPU 0 to take offline");
	KMT_REQUIRE(online, "CONFIG_HOTPLUG_CPU");
	snprintf(hotplug_online, sizeof(hotplug_online), "%s", online);
	ASSERT_EQ(0, kmt_write_str(KMT_DIR "/mask", "0x10000"));
	start_capture(_metadata, self->dir, NULL, &self->daemon);
	ASSERT_EQ(0, kmt_write_str(online, "0"));
	usleep(300000);
	ASSERT_EQ(0, kmt_write_str(online, "1"));
	usleep(300000);
	/* 1000 kmalloc/kfree pairs on that CPU, after it came back. */
	child = fork();
	ASSERT_LE(0, child);
	if (!child) {
		set = CPU_ALLOC(cpu + 1);
		if (!set)
			_exit(1);
		CPU_ZERO_S(CPU_ALLOC_SIZE(cpu + 1), set);
		CPU_SET_S(cpu, CPU_ALLOC_SIZE(cpu + 1), set);
		if (sched_setaffinity(0, CPU_ALLOC_SIZE(cpu + 1), set))
			_exit(1);
		_exit(kmt_write_str(TRIGGER, "storm 1000") ? 2 : 0);
	}
	ASSERT_EQ(child, waitpid(child, &status, 0));
	/* 1: not on that CPU, 2: the storm failed */
	ASSERT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status)) TH_LOG("child: status %#x", status);
	stop_capture(_metadata, &self->daemon, &status);
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(KMT_EXIT_OK, WEXITSTATUS(status));

	snprintf(cap, sizeof(cap), "%s/cap", self->dir);
	snprintf(path, sizeof(path), "%s/cpu%d", cap, cpu);
	/* The storm's 2000, and whatever else the child allocated. */
	EXPECT_LE(2000ULL, count_pid(path, child));
	KMT_TOOL(bin, "kmemtrace-check");
	EXPECT_EQ(KMT_EXIT_OK, kmt_run("%s %s > %s/check.out 2>&1", bin, cap, self->dir));
	EXPECT_EQ(0, kmt_run("grep -qx CLEAN %s/check.out", self->dir))
		kmt_run("cat %s/check.out >&2", self->dir);
}

/* One (kind, call site, pointer, gfp) and what its events add up to. */
#define XC_PAGE_ALLOC	4
#define XC_PAGE_FREE	5
#define XC_NO_PFN	(~0ULL)	/* mm_page_alloc's pfn of a failed allocation */

struct agg {
	int kind;		/* index in xc_events[] */
	unsigned long long site, ptr, gfp;	/* pages: order, pfn, 0 */
	unsigned long long hits, req, alloc;
};

struct aggs {
	struct agg *a;
	size_t n, cap;
};

static struct agg *agg_get(struct aggs *t, int kind, unsigned long long site,
			   unsigned long long ptr, unsigned long long gfp)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		if (t->a[i].kind == kind && t->a[i].site == site && t->a[i].ptr == ptr &&
		    t->a[i].gfp == gfp)
			return &t->a[i];
	if (t->n == t->cap) {
		t->cap = t->cap ? 2 * t->cap : 1024;
		t->a = realloc(t->a, t->cap * sizeof(*t->a));
		if (!t->a)
			return NULL;
	}
	memset(&t->a[t->n], 0, sizeof(t->a[0]));
	t->a[t->n].kind = kind;
	t->a[t->n].site = site;
	t->a[t->n].ptr = ptr;
	t->a[t->n].gfp = gfp;
	return &t->a[t->n++];
}

static const struct agg *agg_find(const struct aggs *t, const struct agg *k)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		if (t->a[i].kind == k->kind && t->a[i].site == k->site &&
		    t->a[i].ptr == k->ptr && t->a[i].gfp == k->gfp)
			return &t->a[i];
	return NULL;
}

static unsigned long long hist_field(const char *line, const char *name)
{
	char key[40];
	const char *p;

	snprintf(key, sizeof(key), "%s:", name);
	p = strstr(line, key);
	return p ? strtoull(p + strlen(key), NULL, 0) : 0;
}

/* Adds an event's hist file to @t; returns the "Dropped:" count, or -1. */
static long read_hist(const char *event, int kind, struct aggs *t)
{
	char path[PATH_MAX], *text, *line, *save;
	long dropped = -1;

	snprintf(path, sizeof(path), "/sys/kernel/tracing/events/kmem/%s/hist", event);
	text = kmt_read_file(path, NULL);
	if (!text)
		return -1;
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		struct agg *a;

		if (sscanf(line, " Dropped: %ld", &dropped) == 1)
			continue;
		if (line[0] != '{' || !strstr(line, "hitcount:"))
			continue;
		if (kind >= XC_PAGE_ALLOC)
			a = agg_get(t, kind, hist_field(line, "order"), hist_field(line, "pfn"), 0);
		else
			a = agg_get(t, kind, hist_field(line, "call_site"),
				    hist_field(line, "ptr"), hist_field(line, "gfp_flags"));
		if (!a)
			break;
		a->hits += hist_field(line, "hitcount");
		a->req += hist_field(line, "bytes_req");
		a->alloc += hist_field(line, "bytes_alloc");
	}
	free(text);
	return dropped;
}

static const char * const xc_events[] = {
	"kmalloc", "kmem_cache_alloc", "kfree", "kmem_cache_free", "mm_page_alloc", "mm_page_free"
};

static const char *kind_name(int kind)
{
	return kind >= 0 && kind < (int)ARRAY_SIZE(xc_events) ? xc_events[kind] : "?";
}

static int xc_trace(int enable)
{
	static const char * const triggers[] = {
		"hist:keys=call_site,ptr,gfp_flags:vals=bytes_req,bytes_alloc:size=8192",
		"hist:keys=call_site,ptr,gfp_flags:vals=bytes_req,bytes_alloc:size=8192",
		"hist:keys=call_site,ptr:size=8192",
		"hist:keys=call_site,ptr:size=8192",
		"hist:keys=pfn,order:size=8192",
		"hist:keys=pfn:size=8192",
	};
	/* Task context only: kmemtrace has no pid for an interrupt's events. */
	static const char filter[] = " if !(common_flags & 0x18)";
	char path[PATH_MAX], buf[256];
	size_t i;
	int ret = 0;

	for (i = 0; i < ARRAY_SIZE(xc_events); i++) {
		snprintf(path, sizeof(path), "/sys/kernel/tracing/events/kmem/%s/trigger",
			 xc_events[i]);
		snprintf(buf, sizeof(buf), "%s%s%s", enable ? "" : "!", triggers[i], filter);
		if (kmt_write_str(path, buf) && enable)
			ret = -1;
	}
	return ret;
}

/*
 * The kernel's own kmem trace events and kmemtrace, on the same
 * workload in one boot: a child that allocates only while both watch it.
 * Every (call site, pointer, gfp) ftrace saw, kmemtrace saw as often,
 * with the same bytes, and the other way round. Pages are compared by
 * (pfn, order) for allocations and pfn for frees, as often: mm_page_alloc
 * has no call site, and its gfp is the one the allocator used after its
 * own adjustments, where kmemtrace reports the caller's (which the trigger
 * test checks). Bulk calls, which have no trace event, are left out of
 * kmemtrace's side.
 */
TEST_F_TIMEOUT(alloc, crosscheck_ftrace, 120)
{
	int go[2], done[2], status, i;
	unsigned long long end, hits, pages = 0, ft_pfn = XC_NO_PFN, kt_pfn = XC_NO_PFN;
	unsigned long page_size = sysconf(_SC_PAGESIZE);
	struct aggs ft = { 0 }, kt = { 0 };
	char cap[64], buf[64], c = 0;
	struct kmt_event *ev;
	size_t nev, k;
	pid_t w;

	if (access("/sys/kernel/tracing/events", F_OK))
		mount("nodev", "/sys/kernel/tracing", "tracefs", 0, NULL);
	KMT_REQUIRE("/sys/kernel/tracing/events/kmem/kmalloc", "CONFIG_FTRACE");
	KMT_REQUIRE("/sys/kernel/tracing/events/kmem/kmalloc/hist", "CONFIG_HIST_TRIGGERS");
	ASSERT_EQ(0, pipe(go));
	ASSERT_EQ(0, pipe(done));
	w = fork();
	ASSERT_LE(0, w);
	if (!w) {
		int bad = 0;

		/*
		 * The workload: allocations of every kind, from this task.
		 * Exits 0, or with the bits of what failed: 1 the pipes,
		 * 2 "run", 4 the storm.
		 */
		if (read(go[0], &c, 1) != 1)
			_exit(1);
		bad |= kmt_write_str(TRIGGER, "run") ? 2 : 0;
		bad |= kmt_write_str(TRIGGER, "storm 2000") ? 4 : 0;
		free(kmt_read_file("/proc/self/status", NULL));
		free(kmt_read_file(KMT_DIR "/stats", NULL));
		if (write(done[1], &c, 1) != 1)
			_exit(1);
		(void)!read(go[0], &c, 1);
		_exit(bad);
	}
	/* The hist maps allocate thousands of entries: before kmemtrace runs. */
	snprintf(buf, sizeof(buf), "%d", w);
	ASSERT_EQ(0, kmt_write_str("/sys/kernel/tracing/set_event_pid", buf));
	ASSERT_EQ(0, xc_trace(1)) TH_LOG("cannot set the hist triggers");
	start_capture(_metadata, self->dir, "60", &self->daemon);
	ASSERT_EQ(1, write(go[1], &c, 1));
	ASSERT_EQ(1, read(done[0], &c, 1));
	/* The child is blocked: read what ftrace saw, then let it go. */
	for (i = 0; i < (int)ARRAY_SIZE(xc_events); i++) {
		long dropped = read_hist(xc_events[i], i, &ft);

		EXPECT_EQ(0, dropped) TH_LOG("%s dropped", kind_name(i));
	}
	/* What the child does from here on (exiting) only kmemtrace sees. */
	end = stat_of("events");
	ASSERT_NE(~0ULL, end) TH_LOG("no events line in %s/stats", KMT_DIR);
	/* kmemtraced stops tracing and drains, then the maps are freed. */
	ASSERT_EQ(0, kill(self->daemon, SIGINT));
	ASSERT_EQ(self->daemon, waitpid(self->daemon, &status, 0));
	self->daemon = 0;
	/* The first SIGINT ends it as the end of the capture would: whole. */
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == KMT_EXIT_OK)
		kmt_run("echo '# kmemtraced: status %#x'; cat %s/kmemtraced.out " KMT_DIR "/stats >&2",
			status, self->dir);
	xc_trace(0);
	/* Only an open with O_TRUNC empties the list: leave ftrace as found. */
	close(open("/sys/kernel/tracing/set_event_pid", O_WRONLY | O_TRUNC));
	ASSERT_EQ(1, write(go[1], &c, 1));
	ASSERT_EQ(w, waitpid(w, &status, 0));
	EXPECT_EQ(0, status) TH_LOG("the workload: status %#x", status);

	snprintf(cap, sizeof(cap), "%s/cap", self->dir);
	ev = load_events(cap, &nev);
	ASSERT_NE(NULL, ev);
	for (k = 0; k < nev; k++) {
		struct kmt_event *e = &ev[k];
		int kind = e->type_id + (e->event_id == KMEMTRACE_EVENT_FREE ? 2 : 0);
		struct agg *a;

		if (e->pid != w || (e->ctx & (KMEMTRACE_CTX_HARDIRQ | KMEMTRACE_CTX_SOFTIRQ |
					     KMEMTRACE_CTX_BULK)) ||
		    (int)((unsigned int)e->seq - (unsigned int)end) >= 0)
			continue;
		if (e->type_id == KMEMTRACE_TYPE_PAGES) {
			/* ftrace names a page by its pfn, and has no call site. */
			kind = e->event_id == KMEMTRACE_EVENT_FREE ? XC_PAGE_FREE : XC_PAGE_ALLOC;
			a = agg_get(&kt, kind, kind == XC_PAGE_ALLOC ?
				    __builtin_ctzll(e->bytes_alloc / page_size) : 0,
				    e->ptr ? e->ptr / page_size : XC_NO_PFN, 0);
			ASSERT_NE(NULL, a);
			a->hits++;
			continue;
		}
		a = agg_get(&kt, kind, e->call_site, e->ptr,
			    e->event_id == KMEMTRACE_EVENT_ALLOC ? e->gfp_flags : 0);
		ASSERT_NE(NULL, a);
		a->hits++;
		a->req += e->bytes_req;
		a->alloc += e->bytes_alloc;
	}
	free(ev);
	/*
	 * kmemtrace's page pointers are in the direct map: the same pages as
	 * ftrace's pfns, shifted by PAGE_OFFSET's pfn, which the lowest page
	 * on each side gives. Every other page must then line up.
	 */
	for (k = 0; k < ft.n; k++)
		if (ft.a[k].kind >= XC_PAGE_ALLOC && ft.a[k].ptr != XC_NO_PFN)
			ft_pfn = ft_pfn < ft.a[k].ptr ? ft_pfn : ft.a[k].ptr;
	for (k = 0; k < kt.n; k++)
		if (kt.a[k].kind >= XC_PAGE_ALLOC && kt.a[k].ptr != XC_NO_PFN)
			kt_pfn = kt_pfn < kt.a[k].ptr ? kt_pfn : kt.a[k].ptr;
	for (k = 0; k < kt.n; k++) {
		if (kt.a[k].kind >= XC_PAGE_ALLOC && kt.a[k].ptr != XC_NO_PFN) {
			kt.a[k].ptr -= kt_pfn - ft_pfn;
			pages += kt.a[k].hits;
		}
	}

	/* The storm alone is 4000 events: the comparison is not empty. */
	EXPECT_LT((size_t)10, ft.n);
	for (k = 0, hits = 0; k < ft.n; k++)
		hits += ft.a[k].hits;
	ksft_print_msg("crosscheck: %zu keys, %llu ftrace events, %llu of them page events\n",
		       ft.n, hits, pages);
	/* The child's page faults and the trigger's pages: there are some. */
	EXPECT_LT(0ULL, pages);
	for (k = 0; k < ft.n; k++) {
		const struct agg *f = &ft.a[k], *m = agg_find(&kt, f);

		EXPECT_NE(NULL, m) TH_LOG("%s at %#llx ptr %#llx gfp %#llx: ftrace only",
					  kind_name(f->kind), f->site, f->ptr, f->gfp);
		if (!m)
			continue;
		EXPECT_EQ(f->hits, m->hits) TH_LOG("%s at %#llx ptr %#llx", kind_name(f->kind),
						   f->site, f->ptr);
		EXPECT_EQ(f->req, m->req);
		EXPECT_EQ(f->alloc, m->alloc);
	}
	for (k = 0; k < kt.n; k++) {
		const struct agg *m = &kt.a[k];

		EXPECT_NE(NULL, agg_find(&ft, m))
			TH_LOG("%s at %#llx ptr %#llx gfp %#llx: kmemtrace only",
			       kind_name(m->kind), m->site, m->ptr, m->gfp);
	}
	free(ft.a);
	free(kt.a);
}

/*
 * The tools' exit statuses (kmt_cli.h: 0 done and whole, 1 the data has
 * a problem, 2 bad usage or I/O, 3 corrupt input) on a real capture:
 * whole, cut short by a partial event at the end of cpu0, and absent;
 * and for a bad option. Each checked on its own.
 */
TEST_F_TIMEOUT(alloc, tools_exit_statuses, 120)
{
	char check[PATH_MAX], report[PATH_MAX], daemon[PATH_MAX];
	const char *d = self->dir;
	unsigned long long mine = 0;
	char cap[PATH_MAX];
	struct kmt_event *ev;
	size_t nev, i;
	int status;

	KMT_TOOL(check, "kmemtrace-check");
	KMT_TOOL(report, "kmemtrace-report");
	KMT_TOOL(daemon, "kmemtraced");
	ASSERT_EQ(0, kmt_write_str(KMT_DIR "/mask", "0x10000"));
	start_capture(_metadata, d, NULL, &self->daemon);
	ASSERT_EQ(0, kmt_write_str(TRIGGER, "storm 100"));
	stop_capture(_metadata, &self->daemon, &status);
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(KMT_EXIT_OK, WEXITSTATUS(status));
	/* The storm's 100 kmalloc/kfree pairs are in it: not an empty capture. */
	snprintf(cap, sizeof(cap), "%s/cap", d);
	ev = load_events(cap, &nev);
	ASSERT_NE(NULL, ev);
	for (i = 0; i < nev; i++)
		mine += ev[i].has_pid && ev[i].pid == getpid();
	free(ev);
	EXPECT_LE(200ULL, mine) TH_LOG("%zu events, %llu of this task's", nev, mine);
	EXPECT_EQ(KMT_EXIT_OK, kmt_run("%s %s/cap > %s/check.out 2>&1", check, d, d))
		kmt_run("cat %s/check.out >&2", d);
	EXPECT_TRUE(report_written(kmt_run("%s %s/cap > /dev/null 2>&1", report, d)));

	/* 7 bytes after the last event: less than an event header. */
	ASSERT_EQ(0, kmt_run("cp -r %s/cap %s/bad", d, d));
	ASSERT_EQ(0, kmt_run("printf garbage >> %s/bad/cpu0", d));
	EXPECT_EQ(KMT_EXIT_CORRUPT, kmt_run("%s %s/bad > %s/bad.out 2>&1", check, d, d))
		kmt_run("cat %s/bad.out >&2", d);
	EXPECT_EQ(0, kmt_run("grep -q '^CORRUPT: ' %s/bad.out", d));
	EXPECT_EQ(0, kmt_run("grep -q 'bad/cpu0: offset [0-9]*: truncated' %s/bad.out", d));
	EXPECT_EQ(KMT_EXIT_CORRUPT, kmt_run("%s %s/bad > /dev/null 2>&1", report, d));

	/* No capture there: an I/O error, not a corrupt one. */
	EXPECT_EQ(KMT_EXIT_USAGE, kmt_run("%s %s/none > /dev/null 2>&1", check, d));
	EXPECT_EQ(KMT_EXIT_USAGE, kmt_run("%s %s/none > /dev/null 2>&1", report, d));

	/* Bad usage: the help on standard error, nothing done. */
	EXPECT_EQ(KMT_EXIT_USAGE, kmt_run("%s --no-such-option %s/cap > /dev/null 2>&1", check, d));
	EXPECT_EQ(KMT_EXIT_USAGE, kmt_run("%s --no-such-option %s/cap > /dev/null 2>&1", report,
					  d));
	EXPECT_EQ(KMT_EXIT_USAGE, kmt_run("%s --no-such-option > /dev/null 2>&1", daemon));
}

/* The control files: modes, bad writes refused, state unchanged. */
TEST_F(alloc, control_files)
{
	static const char * const ro[] = { "abi_version", "total_overruns", "stats", "cpu0" };
	char path[PATH_MAX], *s;
	struct stat st;
	size_t i;

	/*
	 * The setup drained the buffers, which freed them with their files:
	 * cpu<n> exist again from an enable on, until the next drain.
	 */
	ASSERT_EQ(0, kmt_write_str(KMT_DIR "/enable", "1"));
	ASSERT_EQ(0, kmt_write_str(KMT_DIR "/enable", "0"));
	for (i = 0; i < ARRAY_SIZE(ro); i++) {
		snprintf(path, sizeof(path), KMT_DIR "/%s", ro[i]);
		ASSERT_EQ(0, stat(path, &st)) TH_LOG("%s", path);
		EXPECT_EQ((mode_t)0400, st.st_mode & 07777) TH_LOG("%s", path);
		EXPECT_EQ((uid_t)0, st.st_uid);
	}
	ASSERT_EQ(0, stat(KMT_DIR "/enable", &st));
	EXPECT_EQ((mode_t)0600, st.st_mode & 07777);
	s = kmt_read_file(KMT_DIR "/abi_version", NULL);
	ASSERT_NE(NULL, s);
	EXPECT_EQ(KMEMTRACE_ABI_VERSION, atoi(s));
	free(s);

	EXPECT_EQ(-EINVAL, kmt_write_str(KMT_DIR "/enable", "2"));
	EXPECT_EQ(-EINVAL, kmt_write_str(KMT_DIR "/enable", "yes please"));
	s = kmt_read_file(KMT_DIR "/enable", NULL);
	ASSERT_NE(NULL, s);
	EXPECT_STREQ("0\n", s);
	free(s);

	EXPECT_EQ(-EINVAL, kmt_write_str(KMT_DIR "/mask", "0x1"));
	EXPECT_EQ(-EINVAL, kmt_write_str(KMT_DIR "/mask", "kmalloc"));
	EXPECT_EQ(0, kmt_write_str(KMT_DIR "/mask", "0x10000"));
	s = kmt_read_file(KMT_DIR "/mask", NULL);
	ASSERT_NE(NULL, s);
	EXPECT_STREQ("0x10000\n", s);
	free(s);
	EXPECT_EQ(-EINVAL, kmt_write_str(KMT_DIR "/mask", "0x100000"));
	s = kmt_read_file(KMT_DIR "/mask", NULL);
	ASSERT_NE(NULL, s);
	EXPECT_STREQ("0x10000\n", s);
	free(s);
}

TEST_HARNESS_MAIN
