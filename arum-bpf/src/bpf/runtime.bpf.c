// SPDX-License-Identifier: GPL-2.0-only
/*
 * Each thread's time on a CPU, the scheduler's own figure (se.sum_exec_runtime) as it stands at
 * each of the thread's switches away from a CPU: the scheduler brings it up to date before it
 * switches (put_prev_task), so the value at a thread's last switch, after its exit, is its
 * whole time, the figure getrusage adds up. (A task's exit record is taken as it begins to exit,
 * with the figure as of its last update: a process that ran its whole life without a tick or a
 * switch shows 0 there.)
 */
#include "arum.h"
#include "tree.h"

struct runtime {
	__u32 tgid;
	__u32 pad;
	__u64 ns;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, struct runtime);
} runtimes SEC(".maps");

SEC("tp_btf/sched_switch")
int runtime_switch(__u64 *ctx)
{
	struct task_struct *prev = (struct task_struct *)ctx[1];
	__u32 tgid = BPF_CORE_READ(prev, tgid);
	__u32 tid;
	struct runtime *r;

	if (!tree_state(tgid))
		return 0;
	tid = BPF_CORE_READ(prev, pid);
	r = bpf_map_lookup_elem(&runtimes, &tid);
	if (r) {
		r->ns = BPF_CORE_READ(prev, se.sum_exec_runtime);
		return 0;
	}
	struct runtime fresh = {
		.tgid = tgid,
		.ns = BPF_CORE_READ(prev, se.sum_exec_runtime),
	};

	if (bpf_map_update_elem(&runtimes, &tid, &fresh, BPF_NOEXIST))
		drop(DROP_STATS_FULL);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
