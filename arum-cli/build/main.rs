//! arum's build script: the commit it is built from, and the start-up order of its functions.

mod commit;
mod startup_order;

fn main() {
    commit::record();
    startup_order::link();
}
