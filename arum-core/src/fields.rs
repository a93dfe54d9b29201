//! What each field of a report is: the vocabulary of the tables that every model declares beside
//! its types (`FIELDS` in each facility's `model.rs`, the header's in `header.rs`, the whole
//! report's in `report::model`). A measured number carries its unit and which way is better; a
//! number that identifies, configures or dates something says so and is not a metric. The
//! report's flattener (`report::metrics`) reads these tables; nothing guesses a unit or a
//! direction from a field's name.
//!
//! Only numbers and the fields that name an array's elements need a row: text, flags and empty
//! values are rendered as they are. A table lists the fields of one JSON object, by their JSON
//! keys; an object nested in it has its own table (`group`), an array of objects the table of an
//! element (`each`, `series`).

pub use arum_units::Unit;

/// Which way a measured figure is better for the program.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Better {
    /// A cost: time, memory, faults, misses, lost records.
    Lower,
    /// Useful work per unit of cost: instructions per cycle, hit rates.
    Higher,
    /// Neither way: how much of the machine was used, how the run was sampled, what the rest
    /// of the machine did beside the program.
    Neither,
}

impl Better {
    /// Its name in files and listings.
    pub fn name(self) -> &'static str {
        match self {
            Better::Lower => "lower",
            Better::Higher => "higher",
            Better::Neither => "neither",
        }
    }
}

/// One field of a JSON object of the report.
#[derive(Debug, Clone, Copy)]
pub struct Field {
    /// Its JSON key.
    pub key: &'static str,
    pub is: Is,
}

/// What a field holds. A leaf kind given to an array of numbers (or of arrays of numbers) holds
/// for each of its elements, which are named by position (`per_cpu[3]`).
#[derive(Debug, Clone, Copy)]
pub enum Is {
    /// A measured quantity: a metric, which statistics, comparisons and gates read.
    Measured(Unit, Better),
    /// Names its element of an array (`events[cycles]`); when an element table has several,
    /// the first one present names the element.
    Label,
    /// Identifies something: a process or thread id, a CPU number, an exit status, an encoding.
    Identity,
    /// How the run was measured, or a fact of the machine the measurement used: a sampling
    /// interval, a clock's rate, a policy's threshold.
    Setting(Unit),
    /// A moment on the run's clock (since the program was released, or since the first record).
    Instant(Unit),
    /// Figures repeated from elsewhere in the report, for reference (a derived metric's inputs).
    Detail,
    /// Figures over time, one per interval: the samples of a time series, whose summaries are
    /// the metrics.
    Samples(Unit),
    /// An object, with the table of its fields.
    Group(&'static [Field]),
    /// Fields of another table that serde writes inline (`#[serde(flatten)]`). Rows of the
    /// table that holds it come first, so a table can restate one of them.
    Inline(&'static [Field]),
    /// An array of objects, each named by its label (or its position), with the table of an
    /// element.
    Each(&'static [Field]),
    /// An array of objects sampled over time, named by position: their measured fields are
    /// samples, not metrics.
    Series(&'static [Field]),
    /// In an element table: for the element whose label is this, the rows of the table come
    /// first (an event counted in nanoseconds, a ratio where higher is better).
    When(&'static str, &'static [Field]),
}

pub const fn measured(key: &'static str, unit: Unit, better: Better) -> Field {
    Field {
        key,
        is: Is::Measured(unit, better),
    }
}

pub const fn label(key: &'static str) -> Field {
    Field { key, is: Is::Label }
}

pub const fn identity(key: &'static str) -> Field {
    Field {
        key,
        is: Is::Identity,
    }
}

pub const fn setting(key: &'static str, unit: Unit) -> Field {
    Field {
        key,
        is: Is::Setting(unit),
    }
}

pub const fn instant(key: &'static str, unit: Unit) -> Field {
    Field {
        key,
        is: Is::Instant(unit),
    }
}

pub const fn detail(key: &'static str) -> Field {
    Field {
        key,
        is: Is::Detail,
    }
}

pub const fn samples(key: &'static str, unit: Unit) -> Field {
    Field {
        key,
        is: Is::Samples(unit),
    }
}

pub const fn group(key: &'static str, fields: &'static [Field]) -> Field {
    Field {
        key,
        is: Is::Group(fields),
    }
}

pub const fn inline(fields: &'static [Field]) -> Field {
    Field {
        key: "",
        is: Is::Inline(fields),
    }
}

pub const fn each(key: &'static str, fields: &'static [Field]) -> Field {
    Field {
        key,
        is: Is::Each(fields),
    }
}

pub const fn series(key: &'static str, fields: &'static [Field]) -> Field {
    Field {
        key,
        is: Is::Series(fields),
    }
}

pub const fn when(label: &'static str, fields: &'static [Field]) -> Field {
    Field {
        key: "",
        is: Is::When(label, fields),
    }
}

/// The row of `table` for `key`, in an element labelled `label` (if any): rows of a matching
/// `When` first, then the table's own rows in order, with the rows of `Inline` tables where
/// they stand.
pub fn find(table: &'static [Field], key: &str, label: Option<&str>) -> Option<&'static Is> {
    let when = table.iter().find_map(|f| match f.is {
        Is::When(l, rows) if Some(l) == label => find(rows, key, None),
        _ => None,
    });
    when.or_else(|| {
        table.iter().find_map(|f| match &f.is {
            Is::Inline(rows) => find(rows, key, None),
            Is::When(..) => None,
            is if f.key == key => Some(is),
            _ => None,
        })
    })
}

/// The label fields of an element table, in order of preference.
pub fn labels(table: &'static [Field]) -> impl Iterator<Item = &'static str> {
    table
        .iter()
        .flat_map(|f| match f.is {
            Is::Inline(rows) => rows,
            _ => std::slice::from_ref(f),
        })
        .filter(|f| matches!(f.is, Is::Label))
        .map(|f| f.key)
}

#[cfg(test)]
mod tests {
    use super::*;

    const INNER: &[Field] = &[measured("b", Unit::Bytes, Better::Lower)];
    const CLOCK: &[Field] = &[measured("n", Unit::Nanoseconds, Better::Lower)];
    const TABLE: &[Field] = &[
        label("name"),
        when("clock", CLOCK),
        measured("n", Unit::Count, Better::Lower),
        inline(INNER),
        identity("cpu"),
        label("pid"),
    ];

    #[test]
    fn rows_are_found_through_inline_tables_and_label_cases() {
        let unit = |key: &str, label: Option<&str>| match find(TABLE, key, label) {
            Some(Is::Measured(u, _)) => Some(*u),
            _ => None,
        };
        assert_eq!(unit("n", None), Some(Unit::Count));
        assert_eq!(unit("n", Some("other")), Some(Unit::Count));
        assert_eq!(unit("n", Some("clock")), Some(Unit::Nanoseconds));
        assert_eq!(unit("b", None), Some(Unit::Bytes));
        assert!(matches!(find(TABLE, "cpu", None), Some(Is::Identity)));
        assert!(matches!(find(TABLE, "pid", None), Some(Is::Label)));
        assert!(find(TABLE, "nothing", None).is_none());
        assert_eq!(labels(TABLE).collect::<Vec<_>>(), ["name", "pid"]);
    }
}
