//! arum's build script: the start-up order of its functions.

mod startup_order;

fn main() {
    startup_order::link();
}
