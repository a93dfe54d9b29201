//! Entries and returns paired per thread on a stack.
//!
//! A return matches the innermost open entry of its key in its thread. Where samples carry the
//! stack pointer, frames are told apart by it: a return whose stack pointer is above a frame's
//! (less deep) means that frame was left without returning — longjmp, an exception, a thread
//! ending inside it — and the kernel will never report its return, so it is closed as unwound,
//! not guessed. Recursion pairs each return with its own frame.
//!
//! Probes cost time inside the intervals they measure: [`Costs`] subtracts the part of a probe
//! hit that falls inside a call's own interval (`inside`), and the whole cost of every probed call
//! nested in it (`pair`), so inclusive and exclusive times are of the program, not of the probes.

use std::collections::HashMap;

/// What the probes add to measured intervals, in nanoseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Costs {
    /// Of one probed call's own measured interval (the measured duration of an empty function).
    pub inside: u64,
    /// Of a probed call, as the caller sees it (entry and return hits in full).
    pub pair: u64,
}

#[derive(Debug, Clone, Copy)]
struct Frame<K> {
    key: K,
    start: u64,
    sp: u64,
    /// Program time of completed calls nested in this one (their inclusive times).
    children: u64,
    /// Probe costs of everything nested in this one.
    nested_cost: u64,
    /// The probes' costs of this call.
    costs: Costs,
}

/// What pairing found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Paired<K> {
    /// A completed call. Times in ns, probe costs removed.
    Call {
        key: K,
        tid: u32,
        start: u64,
        inclusive: u64,
        exclusive: u64,
        /// Open frames of probed functions below it in its thread.
        depth: usize,
    },
    /// An entry whose frame was left without a return (see the module docs).
    Unwound { key: K, tid: u32, start: u64 },
    /// A return without an entry (its entry was lost, or came before the probes).
    Orphan { key: K, tid: u32 },
}

pub struct Pairing<K> {
    threads: HashMap<u32, Vec<Frame<K>>>,
    costs: Costs,
    /// How far a return moves the stack pointer from the entry's (see `parse::SP_REGISTER`).
    sp_delta: u64,
}

impl<K: Copy + Eq> Pairing<K> {
    pub fn new(costs: Costs, sp_delta: u64) -> Self {
        Pairing {
            threads: HashMap::new(),
            costs,
            sp_delta,
        }
    }

    pub fn enter(&mut self, tid: u32, key: K, time: u64, sp: u64) {
        self.enter_costing(tid, key, time, sp, self.costs);
    }

    /// An entry whose probes cost `costs` (a function's own, where they differ by function).
    pub fn enter_costing(&mut self, tid: u32, key: K, time: u64, sp: u64, costs: Costs) {
        self.threads.entry(tid).or_default().push(Frame {
            key,
            start: time,
            sp,
            children: 0,
            nested_cost: 0,
            costs,
        });
    }

    /// A return of `key` in `tid`.
    pub fn leave(&mut self, tid: u32, key: K, time: u64, sp: u64, out: &mut impl FnMut(Paired<K>)) {
        let Some(stack) = self.threads.get_mut(&tid) else {
            out(Paired::Orphan { key, tid });
            return;
        };
        // The frame that returns: by stack pointer where known, else the innermost of the key.
        let found = stack
            .iter()
            .rposition(|f| f.key == key && (sp == 0 || f.sp == 0 || f.sp + self.sp_delta >= sp));
        let Some(at) = found else {
            out(Paired::Orphan { key, tid });
            return;
        };
        // Frames above it were left without returning.
        let mut unwound_cost = 0;
        while stack.len() > at + 1 {
            let f = stack.pop().expect("len > at + 1");
            unwound_cost += f.costs.pair + f.nested_cost;
            out(Paired::Unwound {
                key: f.key,
                tid,
                start: f.start,
            });
        }
        let f = stack.pop().expect("found at `at`");
        let measured = time.saturating_sub(f.start);
        let nested = f.nested_cost + unwound_cost;
        let inclusive = measured.saturating_sub(f.costs.inside + nested);
        let exclusive = inclusive.saturating_sub(f.children);
        if let Some(parent) = stack.last_mut() {
            parent.children += inclusive;
            parent.nested_cost += f.costs.pair + nested;
        }
        out(Paired::Call {
            key,
            tid,
            start: f.start,
            inclusive,
            exclusive,
            depth: stack.len(),
        });
    }

    /// Stops expecting returns of `key` (its probes were removed): its open frames are dropped
    /// without a report, their time staying with their callers.
    pub fn forget(&mut self, key: K) {
        for stack in self.threads.values_mut() {
            stack.retain(|f| f.key != key);
        }
    }

    /// Entries still open at the end, as (key, tid, start): their returns never came.
    pub fn open_frames(&self) -> Vec<(K, u32, u64)> {
        let mut v: Vec<(K, u32, u64)> = self
            .threads
            .iter()
            .flat_map(|(tid, s)| s.iter().map(|f| (f.key, *tid, f.start)))
            .collect();
        v.sort_by_key(|x| (x.1, x.2));
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What pairing reported, and the frames left open.
    type Outcome = (Vec<Paired<u8>>, Vec<(u8, u32, u64)>);

    fn run(events: &[(char, u32, u8, u64, u64)], costs: Costs) -> Outcome {
        let mut p = Pairing::new(costs, 8);
        let mut out = Vec::new();
        for &(what, tid, key, time, sp) in events {
            match what {
                'e' => p.enter(tid, key, time, sp),
                _ => p.leave(tid, key, time, sp, &mut |x| out.push(x)),
            }
        }
        (out, p.open_frames())
    }

    fn call(
        key: u8,
        tid: u32,
        start: u64,
        inclusive: u64,
        exclusive: u64,
        depth: usize,
    ) -> Paired<u8> {
        Paired::Call {
            key,
            tid,
            start,
            inclusive,
            exclusive,
            depth,
        }
    }

    #[test]
    fn nested_calls_have_inclusive_and_exclusive_time() {
        // a(0..100) calls b(10..40) and b(50..70).
        let (out, open) = run(
            &[
                ('e', 1, 0, 0, 1000),
                ('e', 1, 1, 10, 900),
                ('r', 1, 1, 40, 908),
                ('e', 1, 1, 50, 900),
                ('r', 1, 1, 70, 908),
                ('r', 1, 0, 100, 1008),
            ],
            Costs::default(),
        );
        assert_eq!(
            out,
            [
                call(1, 1, 10, 30, 30, 1),
                call(1, 1, 50, 20, 20, 1),
                call(0, 1, 0, 100, 50, 0)
            ]
        );
        assert!(open.is_empty());
    }

    #[test]
    fn recursion_pairs_each_return_with_its_own_frame() {
        // f calls f calls f; each return belongs to the innermost.
        let (out, _) = run(
            &[
                ('e', 1, 0, 0, 1000),
                ('e', 1, 0, 10, 900),
                ('e', 1, 0, 20, 800),
                ('r', 1, 0, 25, 808),
                ('r', 1, 0, 40, 908),
                ('r', 1, 0, 100, 1008),
            ],
            Costs::default(),
        );
        assert_eq!(
            out,
            [
                call(0, 1, 20, 5, 5, 2),
                call(0, 1, 10, 30, 25, 1),
                call(0, 1, 0, 100, 70, 0)
            ]
        );
    }

    #[test]
    fn a_longjmp_out_of_recursion_unwinds_the_skipped_frames() {
        // f(sp 1000) -> f(900) -> f(800); longjmp back into the outer f, which then returns:
        // only the outer frame's return is reported by the kernel.
        let (out, open) = run(
            &[
                ('e', 1, 0, 0, 1000),
                ('e', 1, 0, 10, 900),
                ('e', 1, 0, 20, 800),
                ('r', 1, 0, 100, 1008),
            ],
            Costs::default(),
        );
        assert_eq!(
            out,
            [
                Paired::Unwound {
                    key: 0,
                    tid: 1,
                    start: 20
                },
                Paired::Unwound {
                    key: 0,
                    tid: 1,
                    start: 10
                },
                call(0, 1, 0, 100, 100, 0)
            ]
        );
        assert!(open.is_empty());
    }

    #[test]
    fn threads_pair_separately_and_open_entries_are_reported() {
        let (out, open) = run(
            &[
                ('e', 1, 0, 0, 1000),
                ('e', 2, 0, 5, 1000),
                ('r', 2, 0, 15, 1008),
                ('e', 2, 1, 20, 1000),
                ('r', 3, 1, 30, 1008),
            ],
            Costs::default(),
        );
        assert_eq!(
            out,
            [call(0, 2, 5, 10, 10, 0), Paired::Orphan { key: 1, tid: 3 }]
        );
        assert_eq!(open, [(0, 1, 0), (1, 2, 20)]);
    }

    #[test]
    fn probe_costs_are_taken_out_of_the_intervals() {
        // Each probed call measures 3 ns more than it takes, and costs its caller 10 ns in all.
        let costs = Costs {
            inside: 3,
            pair: 10,
        };
        let (out, _) = run(
            &[
                ('e', 1, 0, 0, 1000),
                ('e', 1, 1, 10, 900),
                ('r', 1, 1, 33, 908),
                ('r', 1, 0, 100, 1008),
            ],
            costs,
        );
        // b: 23 measured - 3 = 20. a: 100 - 3 - 10 (b's probes) = 87 inclusive, 67 exclusive.
        assert_eq!(out, [call(1, 1, 10, 20, 20, 1), call(0, 1, 0, 87, 67, 0)]);
    }

    #[test]
    fn without_stack_pointers_the_innermost_entry_of_the_key_returns() {
        let (out, _) = run(
            &[('e', 1, 0, 0, 0), ('e', 1, 1, 10, 0), ('r', 1, 0, 50, 0)],
            Costs::default(),
        );
        assert_eq!(
            out,
            [
                Paired::Unwound {
                    key: 1,
                    tid: 1,
                    start: 10
                },
                call(0, 1, 0, 50, 50, 0)
            ]
        );
    }
}
