# Sourced by generate.sh and check.sh (from the repository's root): builds arum's release as the
# start-up order names it (the same profile, with the symbol table kept, the order itself not
# applied) and sets `arum` to it; `defined_names` prints the functions it defines, sorted.
# shellcheck shell=bash
target_dir=target/startup-order
ARUM_KEEP_SYMBOLS=1 ARUM_STARTUP_ORDER=0 cargo build --release -q -p arum --target-dir "$target_dir"
arum=$target_dir/x86_64-unknown-linux-gnu/release/arum
defined_names() {
  nm --defined-only "$arum" | awk '$2 ~ /^[tTwWi]$/ { print $3 }' | sort -u
}
