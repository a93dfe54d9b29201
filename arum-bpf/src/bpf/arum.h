/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What every ARUM BPF program shares: the kernel's fixed-width types and the UAPI constants the
 * programs use (stable ABI, so no generated vmlinux.h is needed), the log-linear histogram's
 * bucketing, and the per-CPU counters of what could not be recorded.
 *
 * Kernel structures are read through CO-RE: each program declares the few fields it reads with
 * preserve_access_index, and libbpf relocates them against the running kernel's BTF.
 */
#ifndef ARUM_BPF_H
#define ARUM_BPF_H

typedef unsigned char __u8;
typedef unsigned short __u16;
typedef unsigned int __u32;
typedef unsigned long long __u64;
typedef signed char __s8;
typedef short __s16;
typedef int __s32;
typedef long long __s64;
typedef __u16 __be16;
typedef __u32 __be32;
typedef __u64 __be64;
typedef __u32 __wsum;

enum {
	BPF_MAP_TYPE_HASH = 1,
	BPF_MAP_TYPE_ARRAY = 2,
	BPF_MAP_TYPE_PERCPU_HASH = 5,
	BPF_MAP_TYPE_PERCPU_ARRAY = 6,
	BPF_MAP_TYPE_RINGBUF = 27,
	BPF_MAP_TYPE_TASK_STORAGE = 29,
};

enum {
	BPF_ANY = 0,
	BPF_NOEXIST = 1,
};

#include <bpf/bpf_helpers.h>

/* The log-linear histogram: values below 64 exactly, then 64 buckets per power of two, so a
 * bucket's midpoint is within 1/128 (0.8%) of any value in it. Mirrored by `hist.rs`. */
#define HIST_SUB_BITS 6
#define HIST_SUB (1u << HIST_SUB_BITS)

static __always_inline __u32 log2_u64(__u64 v)
{
	__u32 r = 0;

	if (v >> 32) { v >>= 32; r += 32; }
	if (v >> 16) { v >>= 16; r += 16; }
	if (v >> 8) { v >>= 8; r += 8; }
	if (v >> 4) { v >>= 4; r += 4; }
	if (v >> 2) { v >>= 2; r += 2; }
	if (v >> 1) { r += 1; }
	return r;
}

static __always_inline __u32 hist_bucket(__u64 v)
{
	__u32 e;

	if (v < HIST_SUB)
		return (__u32)v;
	e = log2_u64(v);
	return HIST_SUB + (e - HIST_SUB_BITS) * HIST_SUB +
	       (__u32)((v >> (e - HIST_SUB_BITS)) & (HIST_SUB - 1));
}

/* What a program could not record, per CPU, read by user space as `Dropped`. */
enum arum_drop {
	DROP_STATS_FULL,   /* a statistics map was full: the call is not counted */
	DROP_HIST_FULL,    /* the histogram map was full: the call is counted, its duration not binned */
	DROP_PENDING_FULL, /* the in-flight map was full: the call is counted without a duration */
	DROP_ORPHAN,       /* an exit without an entry (the entry came before tracing started) */
	DROP_KINDS,
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, DROP_KINDS);
	__type(key, __u32);
	__type(value, __u64);
} drops SEC(".maps");

static __always_inline void drop(enum arum_drop kind)
{
	__u32 k = kind;
	__u64 *n = bpf_map_lookup_elem(&drops, &k);

	if (n)
		__sync_fetch_and_add(n, 1);
}

/* The value of `key` in hash map `map`, created from `zero` when absent (another CPU may create
 * it first: the lookup after the update finds either). */
static __always_inline void *lookup_or_init(void *map, void *key, void *zero)
{
	void *v = bpf_map_lookup_elem(map, key);

	if (v)
		return v;
	bpf_map_update_elem(map, key, zero, BPF_NOEXIST);
	return bpf_map_lookup_elem(map, key);
}

static __always_inline void count_u64(void *map, void *key, enum arum_drop full)
{
	__u64 zero = 0;
	__u64 *n = lookup_or_init(map, key, &zero);

	if (n)
		__sync_fetch_and_add(n, 1);
	else
		drop(full);
}

/* The launched tree: tgid -> TREE_HELD until the program's exec, then TREE_RUNNING. A process
 * forked by a running one joins as running. Calls are counted only while running, so the held
 * child's own set-up (arum's code between fork and exec) is left out, as perf's enable_on_exec
 * leaves it out. TREE_LEFT: a process that left at an exec that raised its privilege (tree.h);
 * it is no longer counted, nor is anything it forks. */
#define TREE_HELD 1
#define TREE_RUNNING 2
#define TREE_LEFT 3

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, __u8);
} tree SEC(".maps");

static __always_inline __u8 tree_state(__u32 tgid)
{
	__u8 *s = bpf_map_lookup_elem(&tree, &tgid);

	return s ? *s : 0;
}

#endif
