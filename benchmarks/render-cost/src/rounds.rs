//! Interleaved rounds: each round times every contender once, the order reversed every other
//! round, so that a change of load or frequency during the run reaches all of them alike.

use std::hint::black_box;
use std::time::Instant;

/// A contender: its name and one report's worth of work, returning what it produced.
pub struct Contender<'a> {
    pub name: &'static str,
    pub run: Box<dyn Fn() -> String + 'a>,
}

/// Per contender, the time of one report in each round (ns): `rounds` rounds of `reports`
/// reports each.
pub fn measure(contenders: &[Contender], reports: u32, rounds: u32) -> Vec<Vec<f64>> {
    let mut times = vec![Vec::with_capacity(rounds as usize); contenders.len()];
    for round in 0..rounds {
        let mut order: Vec<usize> = (0..contenders.len()).collect();
        if round % 2 == 1 {
            order.reverse();
        }
        for i in order {
            let started = Instant::now();
            for _ in 0..reports {
                black_box((contenders[i].run)());
            }
            times[i].push(started.elapsed().as_nanos() as f64 / f64::from(reports));
        }
    }
    times
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_contender_runs_every_round() {
        let calls = std::cell::Cell::new((0, 0));
        let contenders = [
            Contender {
                name: "a",
                run: Box::new(|| {
                    calls.set((calls.get().0 + 1, calls.get().1));
                    String::new()
                }),
            },
            Contender {
                name: "b",
                run: Box::new(|| {
                    calls.set((calls.get().0, calls.get().1 + 1));
                    String::new()
                }),
            },
        ];
        let times = measure(&contenders, 3, 4);
        assert_eq!(calls.get(), (12, 12));
        assert!(times
            .iter()
            .all(|t| t.len() == 4 && t.iter().all(|&x| x >= 0.0)));
    }
}
