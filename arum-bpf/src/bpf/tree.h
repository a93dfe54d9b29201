/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Following the launched tree in the kernel: user space puts the held child in `tree` before it
 * is released; its exec makes it running; every process a running one forks joins it. A process
 * of a user who is not root that execs a program raising its privilege (set-user-ID, set-group-ID
 * or file capabilities) leaves the tree there, as the kernel detaches its perf counters at that
 * exec: arum measures no more than perf would let that user.
 */
#ifndef ARUM_TREE_H
#define ARUM_TREE_H

#include "arum.h"
#include <bpf/bpf_core_read.h>

struct sched_entity {
	__u64 sum_exec_runtime;
} __attribute__((preserve_access_index));

struct mm_struct;

struct task_struct {
	int pid;
	int tgid;
	struct sched_entity se;
	struct mm_struct *mm;
} __attribute__((preserve_access_index));

/* The word of mm_struct whose two low bits say who may dump (and trace) the process: a bitmap
 * struct from Linux 6.18 (mm_flags_t), an unsigned long before; the bits are the same. */
typedef struct {
	unsigned long __mm_flags[1];
} mm_flags_t;

struct mm_struct___bitmap {
	mm_flags_t flags;
} __attribute__((preserve_access_index));

struct mm_struct___word {
	unsigned long flags;
} __attribute__((preserve_access_index));

#define MMF_DUMPABLE_MASK 3
#define SUID_DUMP_USER 1

/* Whether the exec that just happened raised the task's privilege for a user who is not root:
 * the kernel's own rule (setup_new_exec, commit_creds), which lowers the process's dumpable
 * state from SUID_DUMP_USER when the effective IDs differ from the real ones or capabilities
 * were gained, and detaches its perf events for it. Root's processes stay followed. */
static __always_inline int exec_raised_privilege(void)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	void *mm = BPF_CORE_READ(task, mm);
	unsigned long flags = 0;

	if ((__u32)bpf_get_current_uid_gid() == 0 || !mm)
		return 0;
	if (bpf_core_field_exists(((struct mm_struct___bitmap *)0)->flags))
		bpf_core_read(&flags, sizeof(flags), &((struct mm_struct___bitmap *)mm)->flags);
	else
		bpf_core_read(&flags, sizeof(flags), &((struct mm_struct___word *)mm)->flags);
	return (flags & MMF_DUMPABLE_MASK) != SUID_DUMP_USER;
}

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
	__u8 state = tree_state(tgid);
	__u8 running = TREE_RUNNING, left = TREE_LEFT;

	if (state != TREE_HELD && state != TREE_RUNNING)
		return 0;
	if (exec_raised_privilege())
		bpf_map_update_elem(&tree, &tgid, &left, BPF_ANY);
	else if (state == TREE_HELD)
		bpf_map_update_elem(&tree, &tgid, &running, BPF_ANY);
	return 0;
}

#endif
