//! Declares the `loom` cfg so `cfg(loom)` (set by `cargo xtask loom`) is a known configuration.

fn main() {
    println!("cargo::rustc-check-cfg=cfg(loom)");
}
