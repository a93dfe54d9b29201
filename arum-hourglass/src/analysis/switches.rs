//! Context-switch gaps (the paper's §4 and §5.1): when one Hourglass thread's interval on a CPU
//! is followed by another's, a context switch happened in the gap (a non-statistical
//! inference). Statistically: the shortest gap is the fastest path through the switch code; the
//! median of the main cluster of similar gaps is the typical cost; long outliers were
//! contaminated by other activity (interrupts, other tasks).

use serde::{Deserialize, Serialize};

use super::timeline::Timeline;
use crate::clock::Timebase;
use crate::trace::End;

/// What ended the interval before the switch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SwitchKind {
    /// The thread lost the CPU while it wanted to run: a preemption (with a clock or other
    /// interrupt in the gap when the threads never block).
    Involuntary,
    /// The thread yielded.
    Yield,
    /// The thread blocked on its timer.
    Block,
}

/// A set of gaps, split into the main cluster and outliers.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct GapCluster {
    pub count: usize,
    pub shortest_ns: f64,
    /// The main cluster: the densest run of similar gaps.
    pub cluster_count: usize,
    pub cluster_median_ns: f64,
    pub cluster_low_ns: f64,
    pub cluster_high_ns: f64,
    /// Gaps above the cluster.
    pub outliers: usize,
    pub longest_ns: f64,
    pub median_ns: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Switches {
    pub kind: SwitchKind,
    pub gaps: GapCluster,
    pub per_second: f64,
}

/// Context-switch gaps by kind.
pub fn analyse(t: &Timeline, tb: &Timebase, seconds: f64) -> Vec<Switches> {
    let mut by_kind: Vec<(SwitchKind, Vec<f64>)> = vec![
        (SwitchKind::Involuntary, Vec::new()),
        (SwitchKind::Yield, Vec::new()),
        (SwitchKind::Block, Vec::new()),
    ];
    for g in t.cpu_gaps().filter(|g| !g.is_own()) {
        let kind = match g.before.ended {
            End::Gap { .. } => SwitchKind::Involuntary,
            End::Yield => SwitchKind::Yield,
            End::Block => SwitchKind::Block,
            End::Finish => continue,
        };
        if let Some((_, v)) = by_kind.iter_mut().find(|(k, _)| *k == kind) {
            v.push(tb.ns(g.ticks()));
        }
    }
    by_kind
        .into_iter()
        .filter_map(|(kind, v)| {
            Some(Switches {
                kind,
                per_second: v.len() as f64 / seconds.max(1e-9),
                gaps: cluster(&v)?,
            })
        })
        .collect()
}

/// Number of switches between Hourglass threads (all kinds): N in the paper's Figure 5 formula.
pub fn count(t: &Timeline) -> usize {
    t.cpu_gaps()
        .filter(|g| !g.is_own() && g.before.ended != End::Finish)
        .count()
}

/// Bins of 10% width (log scale) from the shortest gap; the cluster is the mode bin widened
/// over neighbours holding at least 5% of the mode's count.
pub fn cluster(gaps: &[f64]) -> Option<GapCluster> {
    if gaps.is_empty() {
        return None;
    }
    let mut v = gaps.to_vec();
    v.sort_by(f64::total_cmp);
    let shortest = v[0].max(1.0);
    let ratio: f64 = 1.1;
    let bin = |x: f64| ((x.max(shortest) / shortest).ln() / ratio.ln()) as usize;
    let nbins = bin(v[v.len() - 1]) + 1;
    let mut counts = vec![0usize; nbins];
    for &x in &v {
        counts[bin(x)] += 1;
    }
    let mode = (0..nbins).max_by_key(|&i| (counts[i], usize::MAX - i))?;
    let floor = (counts[mode] as f64 * 0.05).ceil() as usize;
    let mut lo = mode;
    while lo > 0 && counts[lo - 1] >= floor.max(1) {
        lo -= 1;
    }
    let mut hi = mode;
    while hi + 1 < nbins && counts[hi + 1] >= floor.max(1) {
        hi += 1;
    }
    let members: Vec<f64> = v
        .iter()
        .copied()
        .filter(|&x| (lo..=hi).contains(&bin(x)))
        .collect();
    let high = members.last().copied().unwrap_or(shortest);
    Some(GapCluster {
        count: v.len(),
        shortest_ns: v[0],
        cluster_count: members.len(),
        cluster_median_ns: arum_stats::median(&members)?,
        cluster_low_ns: members.first().copied().unwrap_or(shortest),
        cluster_high_ns: high,
        outliers: v.iter().filter(|&&x| x > high).count(),
        longest_ns: v[v.len() - 1],
        median_ns: arum_stats::quantile_sorted(&v, 0.5)?,
    })
}

#[cfg(test)]
mod tests {
    use super::super::timeline::tests::iv;
    use super::*;

    #[test]
    fn the_cluster_ignores_contaminated_outliers() {
        let mut gaps: Vec<f64> = (0..200).map(|i| 3000.0 + (i % 10) as f64 * 40.0).collect();
        gaps.extend([2500.0, 40_000.0, 90_000.0, 1.2e6]);
        let c = cluster(&gaps).unwrap();
        assert_eq!(c.shortest_ns, 2500.0);
        assert!((3000.0..=3400.0).contains(&c.cluster_median_ns), "{c:?}");
        assert_eq!(c.outliers, 3);
        assert_eq!(c.longest_ns, 1.2e6);
        assert_eq!(c.count, 204);
    }

    #[test]
    fn switches_are_classified_by_what_ended_the_interval() {
        let tb = super::super::timeline::tests::ns_timebase();
        let recs = [
            iv(0, 0, 0, 100, End::Gap { switched: true }),
            iv(1, 0, 103, 200, End::Yield),
            iv(0, 0, 202, 300, End::Block),
            iv(1, 0, 310, 400, End::Gap { switched: false }),
            iv(1, 0, 450, 500, End::Finish),
        ];
        let t = Timeline::new(&recs, 2);
        let s = analyse(&t, &tb, 1.0);
        let of = |k: SwitchKind| s.iter().find(|x| x.kind == k).unwrap().gaps;
        assert_eq!(of(SwitchKind::Involuntary).shortest_ns, 3.0);
        assert_eq!(of(SwitchKind::Yield).shortest_ns, 2.0);
        assert_eq!(of(SwitchKind::Block).shortest_ns, 10.0);
        // The last gap is thread 1 resuming itself: not a switch.
        assert_eq!(count(&t), 3);
    }
}
