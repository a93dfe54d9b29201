//! The one place where ARUM reads and writes durations, sizes, rates, percentages and plain
//! quantities, so every option accepts the same spellings and every report shows the same
//! figure the same way.
//!
//! Reading (`duration::parse`, `size::parse`, `percent::parse`, `percent::parse_level`):
//!
//! - A value is a number, then its unit; spaces may stand around and between them (`1.5s`,
//!   ` 250 ms `). The number is decimal digits with an optional fraction (`10`, `1.5`, `.5`,
//!   `87.`): no minus sign (a leading `+` is allowed), no exponent, no `inf` or `NaN`.
//! - One rule for a bare number: it is refused with an error that asks for a unit (is `10` ten
//!   seconds or ten milliseconds?), except zero, which is the same in every unit, and
//!   percentages, whose option is in percent, so a bare number is a percentage.
//! - Durations take `ns`, `us` (or `µs`), `ms`, `s`, `m` (or `min`) and `h`, rounded to the
//!   nanosecond, at most `u64::MAX` nanoseconds (about 584 years).
//! - Sizes take `B`, `K`, `M`, `G`, `T`, each also as `KB`/`KiB` and so on, in any case; every
//!   multiple is binary (1024), as Linux tools write them. Rounded to the byte, at most
//!   `u64::MAX` bytes.
//! - The digits are read exactly, not through a float: `0.1s` is 100 000 000 ns and `1.5T` is
//!   1 649 267 441 664 bytes.
//! - Every error is a [`UnitError`]: one line that names the problem and the fix. No input
//!   makes a parser panic.
//!
//! Writing (`duration::format_ns`, `size::format`, `rate`, `percent::format_*`,
//! `quantity::format`):
//!
//! - Four significant digits ([`digits::significant`]), trailing zeros dropped, never an
//!   exponent; a figure keeps all the digits of its integer part (`12346`).
//! - The unit is the largest in which the value is at least 1 (`1.234 µs`, `32 MiB`); below the
//!   smallest unit the smallest is kept (`0.3125 ns`).
//! - A unit of measure follows the number after one space (`1.5 s`, `512 B`, `12.3 GB/s`). The
//!   suffixes of dimensionless figures attach to the number, as `%` does: `89.6%`, `12/s`,
//!   `1.234k/s`.
//! - A figure that is not finite (NaN, infinity) is written `-`: there is nothing to show.
//! - A row or column that must share one unit formats with a [`duration::Scale`].
//! - A figure known only by its [`Unit`] (a metric of a report) is written by that unit's
//!   formatter ([`Unit::format`]).

#![forbid(unsafe_code)]

pub mod digits;
pub mod duration;
mod error;
mod ladder;
mod number;
pub mod percent;
pub mod quantity;
pub mod rate;
pub mod size;
pub mod unit;

pub use error::UnitError;
pub use unit::Unit;
