//! A ladder of units (ns, µs, ms, s; B, KiB, MiB…): which step a figure is shown in, and its
//! digits there.

use crate::digits::{significant, significant_shifted, HUMAN};

/// How far apart the steps of a ladder are.
pub(crate) enum Ratio {
    /// Powers of 1000: the point moves in the decimal digits, so a figure in µs has the same
    /// digits as in ns (1234.5 ns is `1.235 µs`, as `1235 ns` would round).
    Thousand,
    /// Powers of 1024.
    Binary,
}

/// Units from the smallest up, each `ratio` times the one before.
pub(crate) struct Ladder {
    pub ratio: Ratio,
    pub units: &'static [&'static str],
}

impl Ladder {
    fn ratio(&self) -> f64 {
        match self.ratio {
            Ratio::Thousand => 1e3,
            Ratio::Binary => 1024.0,
        }
    }

    /// How many of the smallest unit step `i` holds (exact: at most 1024^4).
    fn size(&self, i: usize) -> f64 {
        self.ratio().powi(i as i32)
    }

    /// The step for a finite `v`: the largest in which `|v|` is at least 1 (the first below
    /// that). When rounding to [`HUMAN`] digits would reach the next step (999.96 ns is
    /// `1000 ns`), the next step is taken, as long as it still shows at least 1 (`1 µs`;
    /// 1023.6 KiB stays `1024 KiB` rather than `0.9996 MiB`).
    pub(crate) fn pick(&self, v: f64) -> usize {
        let a = v.abs();
        let i = self.step_of(a);
        // Below `ratio - 1` in its step, a figure cannot round up to the next: both ratios are
        // under 10^HUMAN, so the last of HUMAN significant digits counts at most ones and the
        // rounding moves the figure by at most 0.5. Most figures stop here, without writing out
        // their digits twice to find out (a text report shows a few dozen).
        const { assert!(HUMAN >= 4) };
        if a / self.size(i) < self.ratio() - 1.0 {
            return i;
        }
        self.rounded_step(a, i)
    }

    /// The largest step in which `a` (not negative) is at least 1 (the first below that).
    fn step_of(&self, a: f64) -> usize {
        (0..self.units.len())
            .rev()
            .find(|&i| a >= self.size(i))
            .unwrap_or(0)
    }

    /// The step for `a` (not negative) in step `i` by its digits written out: the next one
    /// where rounding reaches it and it still shows at least 1 there.
    fn rounded_step(&self, a: f64, i: usize) -> usize {
        let shown = |i: usize| -> f64 { self.number(i, a).parse().unwrap_or(a) };
        if i + 1 < self.units.len() && shown(i) >= self.ratio() && shown(i + 1) >= 1.0 {
            i + 1
        } else {
            i
        }
    }

    /// `v` in step `i`, with the significant digits of every figure.
    pub(crate) fn number(&self, i: usize, v: f64) -> String {
        match self.ratio {
            Ratio::Thousand => significant_shifted(v, -3 * i as i32, HUMAN),
            Ratio::Binary => significant(v / self.size(i), HUMAN),
        }
    }

    pub(crate) fn unit(&self, i: usize) -> &'static str {
        self.units[i]
    }

    /// `v` in the step chosen for it, the unit after `separator`; `-` when `v` is not finite.
    pub(crate) fn format(&self, v: f64, separator: &str) -> String {
        if !v.is_finite() {
            return "-".into();
        }
        let i = self.pick(v);
        format!("{}{separator}{}", self.number(i, v), self.unit(i))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const THOUSAND: Ladder = Ladder {
        ratio: Ratio::Thousand,
        units: &["ns", "µs", "ms", "s"],
    };
    const BINARY: Ladder = Ladder {
        ratio: Ratio::Binary,
        units: &["B", "KiB", "MiB", "GiB", "TiB"],
    };

    /// The step by the definition alone: the figure's digits written out in its step.
    fn pick_by_digits(l: &Ladder, v: f64) -> usize {
        l.rounded_step(v.abs(), l.step_of(v.abs()))
    }

    /// Figures near each step's top, where the rounding decides: `ratio - 1` and above, and a
    /// little below, in every step and both signs.
    fn near_a_top() -> impl Strategy<Value = (bool, usize, f64, bool)> {
        (any::<bool>(), 0usize..5, -2.0f64..1.0, any::<bool>())
    }

    proptest! {
        #[test]
        fn the_shortcut_picks_the_step_the_digits_pick(
            binary in any::<bool>(),
            mantissa in 1.0f64..10.0,
            exponent in -3i32..16,
            negative in any::<bool>(),
        ) {
            let l = if binary { &BINARY } else { &THOUSAND };
            let v = mantissa * 10f64.powi(exponent) * if negative { -1.0 } else { 1.0 };
            prop_assert_eq!(l.pick(v), pick_by_digits(l, v), "{}", v);
        }

        #[test]
        fn at_the_top_of_a_step_too((binary, step, below, negative) in near_a_top()) {
            let l = if binary { &BINARY } else { &THOUSAND };
            let step = step.min(l.units.len() - 1);
            let v = (l.ratio() + below) * l.size(step) * if negative { -1.0 } else { 1.0 };
            prop_assert_eq!(l.pick(v), pick_by_digits(l, v), "{}", v);
        }
    }

    #[test]
    fn a_figure_that_rounds_up_takes_the_next_step() {
        assert_eq!(THOUSAND.format(999.96, " "), "1 µs");
        assert_eq!(THOUSAND.format(999.94, " "), "999.9 ns");
        assert_eq!(BINARY.format(1023.6 * 1024.0, " "), "1024 KiB");
    }
}
