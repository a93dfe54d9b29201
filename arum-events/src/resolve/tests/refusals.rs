//! Each way a name is refused, with the error that says why.

use proptest::prelude::*;

use super::*;

fn bad(model: &Model, name: &str) -> String {
    match model.err(name) {
        ResolveError::Bad { why, .. } => why,
        e => panic!("{name}: {e:?}"),
    }
}

proptest! {
    /// A field beyond the vendor's layout is refused, never cut to fit: Intel's event select
    /// has 8 bits and its unit mask 16 (UMASK2), AMD's event select 12 bits and its unit mask
    /// 8; the counter mask has 8 on both.
    #[test]
    fn a_field_beyond_the_vendors_layout_is_refused(
        which in 0usize..3,
        amd in any::<bool>(),
        over in prop_oneof![1u64..=0x1_0000, any::<u64>()],
        wraps in any::<bool>(),
    ) {
        let (model, max) = if amd {
            (Model::with_table(ZEN4, "amd-zen4"), [0xFFF, 0xFF, 0xFF])
        } else {
            (Model::with_table(SKYLAKE_SP, "intel-skylakex"), [0xFF, 0xFFFF, 0xFF])
        };
        let field = ["event", "umask", "cmask"][which];
        let max = max[which];
        let at_max = format!("cpu/{field}={max:#x}/");
        prop_assert!(model.resolver().resolve(&at_max).is_ok(), "{}", at_max);
        // Past the maximum, or a value whose low 32 bits are within it.
        let value = if wraps {
            (over << 32) | (over % (max + 1))
        } else {
            max.saturating_add(over)
        };
        prop_assume!(value > max);
        let beyond = format!("cpu/{field}={value:#x}/");
        let refused = matches!(
            model.resolver().resolve(&beyond),
            Err(ResolveError::Bad { ref why, .. }) if why.contains("out of range")
        );
        prop_assert!(refused, "{}", beyond);
    }
}

#[test]
fn out_of_range_says_the_vendors_limits() {
    let skx = Model::with_table(SKYLAKE_SP, "intel-skylakex");
    let why = bad(&skx, "cpu/event=0x100/");
    assert!(
        why.contains("event ≤ 0xff, umask ≤ 0xffff, cmask ≤ 0xff"),
        "{why}"
    );
    let zen = Model::with_table(ZEN4, "amd-zen4");
    let why = bad(&zen, "cpu/umask=0x100/");
    assert!(
        why.contains("event ≤ 0xfff, umask ≤ 0xff, cmask ≤ 0xff"),
        "{why}"
    );
}
