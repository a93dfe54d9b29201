//! Rust helper with a mangled function name: `rustfn::work::step`, called N times.

mod work {
    #[inline(never)]
    pub fn step(x: u64) -> u64 {
        std::hint::black_box(x)
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1)
    }
}

fn main() {
    let n: u64 = arum_tests::arg(1, 100);
    let mut x = 0;
    for _ in 0..n {
        x = work::step(x);
    }
    println!("calls {n}\nx {x}");
}
