//! The noise section of the report is arum hourglass's `NoiseReport`; its fields are declared
//! here, beside the facility that puts it in the report.

use crate::fields::Better::{Lower, Neither};
use crate::fields::{each, group, identity, label, measured, setting, Field, Unit};

/// The fields of `arum_hourglass::NoiseReport` (see `crate::fields`). Gaps taken by interrupts
/// and kernel work are noise: fewer and shorter is better. Gaps taken by tasks include the
/// measured program's own running on the probed CPU, so they go neither way.
pub const FIELDS: &[Field] = &[
    setting("gap_ns", Unit::Nanoseconds),
    setting("tsc_hz", Unit::PerSecond),
    setting("kernel_hz", Unit::PerSecond),
    each("cpus", CPU_NOISE),
];

const CPU_NOISE: &[Field] = &[
    label("cpu"),
    measured("seconds", Unit::Seconds, Neither),
    measured("ran_seconds", Unit::Seconds, Neither),
    measured("probe_cpu_seconds", Unit::Seconds, Neither),
    group("interrupts", NOISE_GAPS),
    group("tasks", TASK_GAPS),
    group(
        "tick",
        &[
            identity("thread"),
            identity("cpu"),
            measured("inferred_hz", Unit::PerSecond, Neither),
            measured("sources_hz", Unit::PerSecond, Neither),
            setting("kernel_hz", Unit::PerSecond),
        ],
    ),
];

const NOISE_GAPS: &[Field] = &[
    measured("count", Unit::Count, Lower),
    measured("per_second", Unit::PerSecond, Lower),
    measured("total_ns", Unit::Nanoseconds, Lower),
    measured("median_ns", Unit::Nanoseconds, Lower),
    measured("p99_ns", Unit::Nanoseconds, Lower),
    measured("max_ns", Unit::Nanoseconds, Lower),
];

const TASK_GAPS: &[Field] = &[
    measured("count", Unit::Count, Neither),
    measured("per_second", Unit::PerSecond, Neither),
    measured("total_ns", Unit::Nanoseconds, Neither),
    measured("median_ns", Unit::Nanoseconds, Neither),
    measured("p99_ns", Unit::Nanoseconds, Neither),
    measured("max_ns", Unit::Nanoseconds, Neither),
];
