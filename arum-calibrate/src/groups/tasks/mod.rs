//! Tasks: creating processes and threads, and switching between them.

mod create;
mod switch;

use crate::context::{Context, Group, Sink};

pub const GROUP: Group = Group {
    name: "tasks",
    title: "Tasks: creation and context switches",
    entries: &[
        create::FORK,
        create::FORK_EXEC,
        create::VFORK_EXEC,
        create::POSIX_SPAWN,
        create::PTHREAD,
        create::CLONE,
        switch::PIPE,
        switch::PROCESS_SAME,
        switch::PROCESS_CROSS,
        switch::THREAD_SAME,
        switch::THREAD_CROSS,
    ],
    run,
};

fn run(ctx: &mut Context, sink: &mut Sink) {
    create::run(ctx, sink);
    switch::run(ctx, sink);
}
