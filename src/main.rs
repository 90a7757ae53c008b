//! The `busbar` binary: command line, configuration, runtime and wiring of the crates.
//!
//! The broker crate is not wired in yet; until it is, the binary only reports its version.

fn main() {
    let version = env!("CARGO_PKG_VERSION");
    if std::env::args().any(|arg| arg == "--version" || arg == "-V") {
        println!("busbar {version}");
        return;
    }
    eprintln!("busbar {version}: the broker is not wired into the binary yet (see README.md).");
    std::process::exit(2);
}
