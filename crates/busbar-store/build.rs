//! Declares the `loom` cfg that `cargo xtask loom` sets, so builds without it stay warning-free.

fn main() {
    println!("cargo::rustc-check-cfg=cfg(loom)");
}
