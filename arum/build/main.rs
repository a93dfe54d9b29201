//! arum's build script: the start-up order of its functions, and its entry point.

mod entry;
mod startup_order;

fn main() {
    startup_order::link();
    entry::link();
}
