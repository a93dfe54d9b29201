// SPDX-License-Identifier: GPL-2.0-only
/*
 * -F in the kernel: one uprobe session program on every probed function (uprobe_multi links,
 * one per file: attached and detached in one operation each), the function's index as the
 * link's cookie. At entry the call gets a frame on its thread's stack and returns 0, so that its
 * return runs the program again; at the return the frame gives the inclusive time, and the
 * children's inclusive times summed in the frame give the exclusive one. Per function: calls,
 * timed calls, totals, maxima and log-linear histograms of both times; per function and thread:
 * calls and times. Nothing is paired in user space.
 *
 * A function counted only (the mode user space sets for it in `control`) returns 1 at entry: the
 * kernel then sets no return probe for that call, and only the entry's hit is paid.
 *
 * Probe time is taken out in the kernel: a call's own hits leave `inside_ns` inside its
 * interval, and the hits of probed calls it makes add their `outside_ns` (or a counted call's
 * `entry_ns`) to it; user space calibrates the three per function (by the class of its first
 * instruction) and sets them in `control`, with `first_ns`, what a process's first timed call
 * pays more (the kernel makes its return probes' page then). A frame sums its children's probe time, so a parent's
 * inclusive time loses its whole subtree's probes.
 *
 * The inside part grows when the caches are cold: a call made after the program has worked
 * through megabytes finds the kernel's trap, uprobe and BPF paths evicted, and its hits take
 * longer on both sides of its interval. How long this program itself ran at the entry shows how
 * cold the path was, and the part of the interval that this program cannot time grows in
 * proportion: user space calibrates the entry's usual run (`run_base_ns`) and the slope
 * (`run_slope`, in 1/1024ths) on arum's own function with the caches warm and evicted, and every
 * call's inside part moves by the slope times its entry run's distance from the usual one.
 *
 * A link's cookie holds the function's index and the link's generation; a call counts only
 * under the generation `control` names. User space re-links a file without a function by
 * attaching the new link, switching the generation, then detaching the old link: no call is
 * counted twice, none is missed.
 *
 * longjmp and exceptions leave frames whose returns never come: the session cookie holds the
 * depth of its own frame, so a return finds the frames above its own stale and counts them as
 * unwound.
 */
#include "arum.h"
#include "tree.h"

typedef _Bool bool;

extern bool bpf_session_is_return(void) __ksym;
extern __u64 *bpf_session_cookie(void) __ksym;

#define MAX_FUNCS 4096
#define MAX_DEPTH 32
#define BPF_F_NO_PREALLOC 1

/* What user space wants of a function (`control`, by index). */
#define MODE_TIMED 0
#define MODE_COUNTED 1

struct frame {
	__u64 start;
	/* The children's inclusive times, and the probe time inside this frame's interval. */
	__u64 children_ns;
	__u64 probe_ns;
	__u32 func;
	/* How long the entry's run of this program took (the path's coldness). */
	__u32 entry_run;
};

struct stack {
	__u32 depth;
	__u32 pad;
	struct frame frames[MAX_DEPTH];
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, struct stack);
} stacks SEC(".maps");

/* A zeroed stack to start a thread's from (a map value: too large for the BPF stack). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct stack);
} empty_stack SEC(".maps");

struct control {
	__u32 mode;
	/* The generation of the link that counts this function's calls; 0: none. */
	__u32 generation;
	__u32 inside_ns;
	__u32 outside_ns;
	__u32 entry_ns;
	/* More inside the interval of a process's first timed call (`first_return_probe`). */
	__u32 first_ns;
	/* The entry's usual run, the longest taken as it is, and the slope (1/1024ths). */
	__u32 run_base_ns;
	__u32 run_max_ns;
	__u32 run_slope;
	/* 1: bin each timed call's entry run (kind 3; arum's calibration functions only). */
	__u32 record_runs;
};

/* The page a process's return probes return through (the kernel's XOL area). */
struct uprobes_state {
	void *xol_area;
} __attribute__((preserve_access_index));

struct mm_struct___uprobes {
	struct uprobes_state uprobes_state;
} __attribute__((preserve_access_index));

/* Whether the process has no such page yet: the kernel makes it for this hit after this program
 * has run (to set the return probe, or to step the first instruction out of line), so the
 * making falls inside this call's interval, tens of microseconds that no later call pays. */
static __always_inline int first_return_probe(void)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	void *mm = BPF_CORE_READ(task, mm);
	void *xol = 0;

	if (!mm || !bpf_core_field_exists(((struct mm_struct___uprobes *)0)->uprobes_state))
		return 0;
	bpf_core_read(&xol, sizeof(xol), &((struct mm_struct___uprobes *)mm)->uprobes_state.xol_area);
	return !xol;
}

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, MAX_FUNCS);
	__type(key, __u32);
	__type(value, struct control);
} control SEC(".maps");

/* How many functions are timed now (user space keeps it): with none, no thread has a frame,
 * and a counted call need not look for its caller's. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} timed_functions SEC(".maps");

struct func_stats {
	__u64 calls;
	__u64 timed;
	__u64 inclusive_ns;
	__u64 exclusive_ns;
	__u64 inclusive_max;
	__u64 exclusive_max;
	__u64 unwound;
	/* Calls deeper than MAX_DEPTH on their thread: counted, not timed. */
	__u64 too_deep;
	/* Calls whose thread ended before they returned. */
	__u64 unfinished;
};

/* Per CPU, but updated atomically: a program preempted on its CPU by another run of itself
 * (it runs with migration, not preemption, disabled) must not lose a count. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, MAX_FUNCS);
	__type(key, __u32);
	__type(value, struct func_stats);
} funcs SEC(".maps");

struct thread_key {
	__u32 func;
	__u32 tid;
};

struct thread_stats {
	__u32 pid;
	__u32 pad;
	__u64 calls;
	__u64 timed;
	__u64 inclusive_ns;
	__u64 exclusive_ns;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 65536);
	__type(key, struct thread_key);
	__type(value, struct thread_stats);
} threads SEC(".maps");

struct hist_key {
	__u32 func;
	/* 0: inclusive, of every timed call; 1: exclusive, and 2: inclusive, of the calls that had
	 * probed children. A leaf call's exclusive time is its inclusive one: it is binned once,
	 * and user space takes the exclusive histogram as 0 - 2 + 1. 3: the entry's run of this
	 * program, where `record_runs` asks for it. */
	__u16 kind;
	__u16 pad;
	__u32 bucket;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 131072);
	__type(key, struct hist_key);
	__type(value, __u64);
} hist SEC(".maps");

static __always_inline void bin(__u32 func, __u16 kind, __u64 ns)
{
	struct hist_key k = { .func = func, .kind = kind, .bucket = hist_bucket(ns) };

	count_u64(&hist, &k, DROP_HIST_FULL);
}

static __always_inline struct thread_stats *thread_of(__u32 func, __u32 tid, __u32 pid)
{
	struct thread_key k = { .func = func, .tid = tid };
	struct thread_stats fresh = { .pid = pid };
	struct thread_stats *t = lookup_or_init(&threads, &k, &fresh);

	if (!t)
		drop(DROP_STATS_FULL);
	return t;
}

static __always_inline struct stack *stack_of(__u32 tid)
{
	struct stack *s = bpf_map_lookup_elem(&stacks, &tid);
	__u32 zero = 0;

	if (s)
		return s;
	s = bpf_map_lookup_elem(&empty_stack, &zero);
	if (!s)
		return 0;
	s->depth = 0;
	bpf_map_update_elem(&stacks, &tid, s, BPF_NOEXIST);
	s = bpf_map_lookup_elem(&stacks, &tid);
	if (!s)
		drop(DROP_PENDING_FULL);
	return s;
}

/* The innermost open frame of a thread's stack, or 0. */
static __always_inline struct frame *top_of(struct stack *s)
{
	__u32 d;

	if (!s)
		return 0;
	d = s->depth;
	if (d == 0 || d > MAX_DEPTH)
		return 0;
	d -= 1;
	barrier_var(d);
	return &s->frames[d & (MAX_DEPTH - 1)];
}

/* Entry: 0 to have the return run the program too, 1 for none. */
static __always_inline int on_entry(__u32 func, struct control *c, __u32 tid, __u32 pid,
				    __u64 *cookie, __u64 began)
{
	struct func_stats *f = bpf_map_lookup_elem(&funcs, &func);
	struct thread_stats *t = thread_of(func, tid, pid);
	struct frame *top;
	struct stack *s;
	__u32 d;

	if (!f)
		return 1;
	__sync_fetch_and_add(&f->calls, 1);
	if (t)
		__sync_fetch_and_add(&t->calls, 1);
	if (c->mode == MODE_COUNTED) {
		__u32 zero = 0, *timed = bpf_map_lookup_elem(&timed_functions, &zero);

		if (timed && *timed == 0)
			return 1;
		top = top_of(bpf_map_lookup_elem(&stacks, &tid));
		if (top)
			top->probe_ns += c->entry_ns;
		return 1;
	}
	s = stack_of(tid);
	if (!s)
		return 1;
	d = s->depth;
	if (d >= MAX_DEPTH) {
		__sync_fetch_and_add(&f->too_deep, 1);
		return 1;
	}
	s->frames[d].children_ns = 0;
	s->frames[d].probe_ns = first_return_probe() ? c->first_ns : 0;
	s->frames[d].func = func;
	s->depth = d + 1;
	/* The frame's depth + 1 (0 would be no cookie). */
	*cookie = d + 1;
	/* Last: the probe's own work above is outside the interval. */
	s->frames[d].start = bpf_ktime_get_ns();
	s->frames[d].entry_run = (__u32)(s->frames[d].start - began);
	return 0;
}

/* A timed call's probe time inside its own interval, by how long its entry's run took: the
 * usual inside part, moved by the slope times the run's distance from the usual run (the run
 * capped, so that an interrupt during it moves nothing further). */
static __always_inline __u64 inside_of(struct control *c, __u32 entry_run)
{
	__s64 run = entry_run < c->run_max_ns ? entry_run : c->run_max_ns;
	__s64 inside = (__s64)c->inside_ns + (((run - (__s64)c->run_base_ns) * c->run_slope) >> 10);

	return inside > 0 ? (__u64)inside : 0;
}

static __always_inline void on_return(__u32 func, struct control *c, __u32 tid, __u64 *cookie)
{
	__u64 now = bpf_ktime_get_ns();
	struct func_stats *f = bpf_map_lookup_elem(&funcs, &func);
	struct stack *s = bpf_map_lookup_elem(&stacks, &tid);
	struct thread_key k = { .func = func, .tid = tid };
	struct thread_stats *t;
	__u64 raw, incl, excl, probes;
	__u32 d = (__u32)*cookie;

	if (!f || !s || d == 0 || d > MAX_DEPTH || d > s->depth)
		return;
	d -= 1;
	/* Frames above this call's own were left by a longjmp: their returns never come. Each
	 * counts against its own function. */
	for (__u32 j = 0; j < MAX_DEPTH; j++) {
		struct func_stats *g;
		__u32 left;

		if (j <= d)
			continue;
		if (j >= s->depth)
			break;
		left = s->frames[j & (MAX_DEPTH - 1)].func;
		g = bpf_map_lookup_elem(&funcs, &left);
		if (g)
			__sync_fetch_and_add(&g->unwound, 1);
	}
	s->depth = d;
	/* The masks keep the indices provably inside the stack for the verifier; the compiler,
	 * knowing d < MAX_DEPTH, would drop them without the barrier. */
	__u32 idx = d, parent = d - 1;

	barrier_var(idx);
	barrier_var(parent);
	idx &= MAX_DEPTH - 1;
	parent &= MAX_DEPTH - 1;
	raw = now - s->frames[idx].start;
	probes = s->frames[idx].probe_ns + inside_of(c, s->frames[idx].entry_run);
	incl = raw > probes ? raw - probes : 0;
	excl = incl - s->frames[idx].children_ns;
	if (excl > incl)
		excl = 0;
	if (d > 0) {
		s->frames[parent].children_ns += incl;
		/* All of this call's probe time fell inside its caller's interval. */
		s->frames[parent].probe_ns += probes + c->outside_ns;
	}
	__sync_fetch_and_add(&f->timed, 1);
	__sync_fetch_and_add(&f->inclusive_ns, incl);
	__sync_fetch_and_add(&f->exclusive_ns, excl);
	if (incl > f->inclusive_max)
		f->inclusive_max = incl;
	if (excl > f->exclusive_max)
		f->exclusive_max = excl;
	t = bpf_map_lookup_elem(&threads, &k);
	if (t) {
		__sync_fetch_and_add(&t->timed, 1);
		__sync_fetch_and_add(&t->inclusive_ns, incl);
		__sync_fetch_and_add(&t->exclusive_ns, excl);
	}
	bin(func, 0, incl);
	if (c->record_runs)
		bin(func, 3, s->frames[idx].entry_run);
	if (s->frames[idx].probe_ns != 0 || excl != incl) {
		bin(func, 1, excl);
		bin(func, 2, incl);
	}
}

/* A thread that ends takes its stack with it: the calls still on it never return (counted as
 * unfinished), and the entry is freed for the threads to come. */
SEC("tp_btf/sched_process_exit")
int thread_exit(__u64 *ctx)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct stack *s = bpf_map_lookup_elem(&stacks, &tid);

	if (!s)
		return 0;
	for (__u32 j = 0; j < MAX_DEPTH; j++) {
		struct func_stats *f;
		__u32 func;

		if (j >= s->depth)
			break;
		func = s->frames[j].func;
		f = bpf_map_lookup_elem(&funcs, &func);
		if (f)
			__sync_fetch_and_add(&f->unfinished, 1);
	}
	bpf_map_delete_elem(&stacks, &tid);
	return 0;
}

SEC("uprobe.session")
int function_session(void *ctx)
{
	/* First: the entry's run is timed from here. */
	__u64 began = bpf_ktime_get_ns();
	__u64 id = bpf_get_current_pid_tgid();
	__u32 pid = id >> 32, tid = (__u32)id;
	__u64 link_cookie = bpf_get_attach_cookie(ctx);
	__u32 func = (__u32)link_cookie;
	__u64 *cookie = bpf_session_cookie();
	struct control *c = bpf_map_lookup_elem(&control, &func);

	if (!cookie || !c)
		return 1;
	/* A return belongs to the link whose entry asked for it, whatever the generation now; its
	 * entry was the tree's. */
	if (bpf_session_is_return()) {
		on_return(func, c, tid, cookie);
		return 0;
	}
	if (tree_state(pid) != TREE_RUNNING)
		return 1;
	if ((__u32)(link_cookie >> 32) != c->generation)
		return 1;
	return on_entry(func, c, tid, pid, cookie, began);
}

char LICENSE[] SEC("license") = "GPL";
