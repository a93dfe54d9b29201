//! The launched child runs in arum's own address space on a stack of its own (arum-core's
//! `launch::child`): that stack must stay mapped while the child may use it, and once the child
//! is reaped (whether it ran or was abandoned before its release) it serves the next launch: a
//! process holds one such stack however many programs it launches one after another. One test
//! in a file of its own, so that no other test of the process maps or unmaps memory meanwhile.

use arum_core::launch::{self, Executable};

/// The child stacks mapped now: a 4 KiB inaccessible guard page directly below a read-write
/// anonymous mapping of 128 KiB, the shape `launch` gives them; or of more, should the kernel
/// have merged the stack with a like mapping above it.
fn child_stacks() -> usize {
    let maps = std::fs::read_to_string("/proc/self/maps").expect("/proc/self/maps");
    let regions: Vec<(u64, u64, String, bool)> = maps
        .lines()
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            let (start, end) = f.next()?.split_once('-')?;
            let perms = f.next()?.to_owned();
            let anonymous = f.nth(3).is_none();
            Some((
                u64::from_str_radix(start, 16).ok()?,
                u64::from_str_radix(end, 16).ok()?,
                perms,
                anonymous,
            ))
        })
        .collect();
    regions
        .windows(2)
        .filter(|w| {
            let (guard, stack) = (&w[0], &w[1]);
            guard.2 == "---p"
                && guard.1 - guard.0 == 4096
                && guard.1 == stack.0
                && stack.2 == "rw-p"
                && stack.3
                && stack.1 - stack.0 >= 128 * 1024
        })
        .count()
}

#[test]
fn a_childs_stack_is_kept_while_it_waits_and_serves_the_next_launch_once_reaped() {
    let exe = Executable::new(&["/bin/true".to_owned()]).unwrap();
    let before = child_stacks();
    let shares_memory = cfg!(target_arch = "x86_64");
    if !shares_memory {
        eprintln!("this architecture launches with fork (no raw execve here): checking that no stack is left behind only");
    }

    // One stack from the first launch on, held by the child or kept for the next: never more.
    let one = before + usize::from(shares_memory);
    for _ in 0..20 {
        let pending = launch::spawn(&exe, None).unwrap();
        assert_eq!(
            child_stacks(),
            one,
            "a held child runs on a stack of its own"
        );
        let reaped = pending.release().unwrap().wait().unwrap();
        assert_eq!(reaped.exit.status(), 0);
        assert_eq!(
            child_stacks(),
            one,
            "the reaped child's stack is kept for the next launch, and no other"
        );
    }
    // Abandoned before its release (a facility failed to arm): the child exits unrun.
    for _ in 0..5 {
        let pending = launch::spawn(&exe, None).unwrap();
        drop(pending);
        assert_eq!(
            child_stacks(),
            one,
            "an abandoned child's stack is kept for the next launch, and no other"
        );
    }
}
