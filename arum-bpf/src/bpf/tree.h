/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Following the launched tree in the kernel: user space puts the held child in `tree` before it
 * is released; its exec makes it running; every process a running one forks joins it.
 */
#ifndef ARUM_TREE_H
#define ARUM_TREE_H

#include "arum.h"
#include <bpf/bpf_core_read.h>

struct sched_entity {
	__u64 sum_exec_runtime;
} __attribute__((preserve_access_index));

struct task_struct {
	int pid;
	int tgid;
	struct sched_entity se;
} __attribute__((preserve_access_index));

/* Threads share their process's entry; only a new process (pid == tgid) gets one. */
SEC("tp_btf/sched_process_fork")
int tree_fork(__u64 *ctx)
{
	struct task_struct *child = (struct task_struct *)ctx[1];
	__u32 parent = bpf_get_current_pid_tgid() >> 32;
	__u32 pid = BPF_CORE_READ(child, pid);
	__u8 running = TREE_RUNNING;

	if (pid != (__u32)BPF_CORE_READ(child, tgid) || tree_state(parent) != TREE_RUNNING)
		return 0;
	bpf_map_update_elem(&tree, &pid, &running, BPF_ANY);
	return 0;
}

SEC("tp_btf/sched_process_exec")
int tree_exec(__u64 *ctx)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	__u8 running = TREE_RUNNING;

	if (tree_state(tgid) == TREE_HELD)
		bpf_map_update_elem(&tree, &tgid, &running, BPF_ANY);
	return 0;
}

#endif
