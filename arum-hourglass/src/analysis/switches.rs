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

/// Thin bins (under 5% of the mode's count) the main cluster reaches across: about a 21% step.
const DIP_BINS: usize = 2;

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
/// over neighbours holding at least 5% of the mode's count, across a dip of at most
/// `DIP_BINS` thinner bins. Switch gaps can be bimodal (on our AMD VM, yields after 100 µs of
/// work: a sharp peak at 1.45 µs and a broad hump at 2-4 µs, with a thin bin between in some
/// runs): without the bridge the "main cluster" was the peak alone in one run of nine, under a
/// fifth of the gaps, and its median half the typical gap. Gaps lengthened by other activity lie
/// far above, beyond any such dip.
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
    let floor = ((counts[mode] as f64 * 0.05).ceil() as usize).max(1);
    let full = |i: &usize| counts[*i] >= floor;
    // Where a lone gap makes a bin full (a mode of 20 gaps or fewer), a bridge would chain
    // scattered gaps into the cluster: none.
    let reach = if floor >= 2 { DIP_BINS + 1 } else { 1 };
    let mut lo = mode;
    while let Some(next) = (lo.saturating_sub(reach)..lo).rev().find(full) {
        lo = next;
    }
    let mut hi = mode;
    while let Some(next) = (hi + 1..(hi + reach + 1).min(nbins)).find(full) {
        hi = next;
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
    fn the_cluster_spans_a_peak_and_a_hump_across_a_thin_dip() {
        // A sharp peak at 1.45 µs (30%), one bin nearly empty above it, a broad hump from
        // 1.8 to 4 µs (70%), then contaminated gaps three orders of magnitude up.
        for thin in [0, 3, 40] {
            let mut gaps: Vec<f64> = (0..3000).map(|i| 1450.0 + (i % 7) as f64 * 10.0).collect();
            gaps.extend((0..thin).map(|_| 1650.0));
            gaps.extend((0..7000).map(|i| 1800.0 + (i % 100) as f64 * 22.0));
            gaps.extend([45e6, 48e6]);
            let c = cluster(&gaps).unwrap();
            assert_eq!(c.outliers, 2, "{c:?}");
            assert_eq!(c.cluster_low_ns, 1450.0);
            assert!(c.cluster_median_ns > 2000.0, "{c:?}");
        }
    }

    #[test]
    fn a_few_scattered_gaps_are_not_bridged_into_the_cluster() {
        // A mode of ten gaps: a single gap fills a bin, and gaps 25% apart stay outliers.
        let mut gaps = vec![1000.0; 10];
        gaps.extend([1250.0, 1560.0, 1950.0, 2440.0]);
        let c = cluster(&gaps).unwrap();
        assert_eq!(c.cluster_count, 10, "{c:?}");
        assert_eq!(c.outliers, 4);
    }

    #[test]
    fn the_cluster_stops_at_a_wide_dip() {
        // Three empty bins between the mode and a smaller group 50% above it: two clusters.
        let mut gaps: Vec<f64> = (0..1000).map(|i| 1000.0 + (i % 5) as f64 * 10.0).collect();
        gaps.extend((0..200).map(|i| 1500.0 + (i % 5) as f64 * 10.0));
        let c = cluster(&gaps).unwrap();
        assert_eq!(c.cluster_count, 1000, "{c:?}");
        assert_eq!(c.outliers, 200);
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
