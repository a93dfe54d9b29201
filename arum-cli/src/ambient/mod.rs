//! The ambient environment: what the rest of the machine did while the program ran (sar,
//! vmstat, iostat style), and the launched tree at the same instants. The `arum-camp` crate holds
//! the stateless accessors; `sampler` captures raw bytes during the run; `analyse` turns them into
//! the report after the program has ended.

mod analyse;
mod sampler;

use std::time::Duration;

pub use analyse::analyse;
pub use sampler::Sampler;

/// `--ambient=INTERVAL`: `1s`, `250ms`, or plain seconds (`0.5`); `0` = start and end only.
pub fn parse_interval(s: &str) -> Result<Duration, String> {
    if let Ok(secs) = s.parse::<f64>() {
        if secs >= 0.0 && secs.is_finite() {
            return Ok(Duration::from_secs_f64(secs));
        }
    }
    humantime::parse_duration(s)
        .map_err(|e| format!("bad --ambient interval {s:?}: {e}; use e.g. 1s, 250ms or 0"))
}
