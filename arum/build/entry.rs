//! The entry point ahead of the C library's (src/entry.rs), for position-independent static
//! builds of x86-64 Linux only: there the start-up writes every page it prefaults. And for every
//! build linked statically with glibc, arum's own `_dl_get_origin` (src/origin.rs).

pub fn link() {
    println!("cargo::rustc-check-cfg=cfg(arum_entry)");
    println!("cargo::rustc-check-cfg=cfg(arum_static_glibc)");
    println!("cargo:rerun-if-env-changed=CARGO_ENCODED_RUSTFLAGS");
    let flags = std::env::var("CARGO_ENCODED_RUSTFLAGS").unwrap_or_default();
    let flags: Vec<&str> = flags.split('\x1f').collect();
    // The last relocation model given wins, as rustc takes it. None given is this target's
    // default, under which rustc links an executable as a PIE (static-pie with +crt-static),
    // as it does with `pic` and `pie`: a build with only `RUSTFLAGS=-C target-feature=+crt-static`
    // (the config's flags replaced) starts through the entry point all the same.
    let model = flags
        .iter()
        .rev()
        .find_map(|f| f.trim_start_matches("-C").strip_prefix("relocation-model="));
    let pie = matches!(model, None | Some("pie" | "pic"));
    let is_static = flags.iter().any(|f| f.contains("+crt-static"));
    let gnu = std::env::var("CARGO_CFG_TARGET_ENV").as_deref() == Ok("gnu");
    if is_static && gnu {
        println!("cargo:rustc-cfg=arum_static_glibc");
    }
    if pie && is_static && std::env::var("TARGET").as_deref() == Ok("x86_64-unknown-linux-gnu") {
        println!("cargo:rustc-cfg=arum_entry");
        println!("cargo:rustc-link-arg-bin=arum=-Wl,-e,arum_entry");
        // The entry point applies the packed relative relocations itself (src/entry.rs).
        println!("cargo:rustc-link-arg-bin=arum=-Wl,-z,pack-relative-relocs");
    }
}
