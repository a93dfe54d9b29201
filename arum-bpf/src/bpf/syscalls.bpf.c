// SPDX-License-Identifier: GPL-2.0-only
/*
 * --syscalls in the kernel: per (process, call) the number of calls, errors, time and bytes, per
 * (call, errno) the errors, per (call, bucket) the log-linear histogram of durations. Nothing is
 * written to a buffer that could fill: every call of the tree is counted at any rate.
 *
 * A call's entry time waits in `pending` (per thread) for its exit; the exit does the counting.
 */
#include "arum.h"
#include "tree.h"

#define MAX_NR 1024

/* Set by user space before loading; the object's only read-only data, so at offset 0 of its
 * .rodata (the loader checks the size). Mirrored by `syscalls.rs`. */
struct syscalls_config {
	/* The calls that never return (exit, exit_group) or return into another context
	 * (rt_sigreturn): counted at entry with a zero duration. -1: unused. */
	__s64 no_return[4];
	/* arum's own uretprobe trampoline call, left out of the tree's calls (-1: none). */
	__s64 ignored_nr;
	/* Whether every call is wanted; else `wanted` says which. */
	__u8 all_calls;
};

const volatile struct syscalls_config cfg = {
	.no_return = { -1, -1, -1, -1 },
	.ignored_nr = -1,
	.all_calls = 1,
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, MAX_NR);
	__type(key, __u32);
	__type(value, __u8);
} wanted SEC(".maps");

struct pending {
	__u64 start;
	__u32 nr;
	__u32 tgid;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, struct pending);
} pending SEC(".maps");

struct call_key {
	__u32 tgid;
	__u32 nr;
};

struct call_stats {
	__u64 calls;
	__u64 errors;
	__u64 total_ns;
	__u64 max_ns;
	__u64 bytes;
	__u64 untimed;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, 16384);
	__type(key, struct call_key);
	__type(value, struct call_stats);
} calls SEC(".maps");

struct errno_key {
	__u32 nr;
	__u32 err;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, 8192);
	__type(key, struct errno_key);
	__type(value, __u64);
} errnos SEC(".maps");

struct hist_key {
	__u32 nr;
	__u32 bucket;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, 65536);
	__type(key, struct hist_key);
	__type(value, __u64);
} hist SEC(".maps");

struct bpf_raw_tracepoint_args {
	__u64 args[0];
};

static __always_inline int is_wanted(long nr)
{
	__u32 k = nr;
	__u8 *w;

	if (nr < 0 || nr == cfg.ignored_nr)
		return 0;
	if (cfg.all_calls)
		return 1;
	w = bpf_map_lookup_elem(&wanted, &k);
	return w && *w;
}

static __always_inline int returns(long nr)
{
	for (int i = 0; i < 4; i++)
		if (cfg.no_return[i] == nr)
			return 0;
	return 1;
}

/* timed: whether `ns` is a measured duration. */
static __always_inline void record(__u32 tgid, __u32 nr, __u64 ns, int timed, long ret)
{
	struct call_key key = { .tgid = tgid, .nr = nr };
	struct call_stats zero = {};
	struct call_stats *s = lookup_or_init(&calls, &key, &zero);

	if (!s) {
		drop(DROP_STATS_FULL);
		return;
	}
	__sync_fetch_and_add(&s->calls, 1);
	if (ret < 0 && ret >= -4095) {
		struct errno_key ek = { .nr = nr, .err = -ret };

		__sync_fetch_and_add(&s->errors, 1);
		count_u64(&errnos, &ek, DROP_STATS_FULL);
	} else if (ret > 0) {
		__sync_fetch_and_add(&s->bytes, ret);
	}
	if (!timed) {
		__sync_fetch_and_add(&s->untimed, 1);
		return;
	}
	__sync_fetch_and_add(&s->total_ns, ns);
	/* Per CPU: only this CPU's programs write this copy. */
	if (ns > s->max_ns)
		s->max_ns = ns;
	struct hist_key hk = { .nr = nr, .bucket = hist_bucket(ns) };
	count_u64(&hist, &hk, DROP_HIST_FULL);
}

SEC("raw_tracepoint/sys_enter")
int sys_enter(struct bpf_raw_tracepoint_args *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32, tid = (__u32)id;
	__u8 state = tree_state(tgid);
	long nr = ctx->args[1];

	if (!state || !is_wanted(nr))
		return 0;
	if (!returns(nr)) {
		if (state == TREE_RUNNING)
			record(tgid, nr, 0, 1, 0);
		return 0;
	}
	struct pending p = { .start = bpf_ktime_get_ns(), .nr = nr, .tgid = tgid };

	if (bpf_map_update_elem(&pending, &tid, &p, BPF_ANY) && state == TREE_RUNNING)
		record(tgid, nr, 0, 0, 0);
	return 0;
}

SEC("raw_tracepoint/sys_exit")
int sys_exit(struct bpf_raw_tracepoint_args *ctx)
{
	__u64 now = bpf_ktime_get_ns();
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32, tid = (__u32)id;
	struct pending *found = bpf_map_lookup_elem(&pending, &tid);
	struct pending p;

	if (!found) {
		/* A running process's exit without an entry: a call entered before tracing began. */
		if (tree_state(tgid) == TREE_RUNNING)
			drop(DROP_ORPHAN);
		return 0;
	}
	p = *found;
	bpf_map_delete_elem(&pending, &tid);
	/* The entry's process: an exec by another thread changes the tid, never the tgid. */
	if (tree_state(tgid) != TREE_RUNNING)
		return 0;
	record(tgid, p.nr, now - p.start, 1, (long)ctx->args[1]);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
