//! `--memory-budget`: the sizes it accepts, and its default, a quarter of the memory the
//! machine (or the cgroup the broker runs in) gives the process.

use std::path::Path;

/// The budget when the machine's memory cannot be read (not Linux): 1 GiB.
const FALLBACK_BYTES: u64 = 1 << 30;

/// Parses a size: a whole number of bytes, optionally followed by a unit, decimal (`KB`, `MB`,
/// `GB`, `TB`) or binary (`KiB`, `MiB`, `GiB`, `TiB`), case-insensitive, e.g. `2GiB`, `512MB`,
/// `1073741824`. `None` for anything else, zero included.
pub(crate) fn parse_size(text: &str) -> Option<u64> {
    let text = text.trim();
    let digits = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(digits);
    let number: u64 = number.parse().ok()?;
    let multiplier: u64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "kb" => 1_000,
        "mb" => 1_000_000,
        "gb" => 1_000_000_000,
        "tb" => 1_000_000_000_000,
        "kib" => 1 << 10,
        "mib" => 1 << 20,
        "gib" => 1 << 30,
        "tib" => 1 << 40,
        _ => return None,
    };
    number.checked_mul(multiplier).filter(|&bytes| bytes > 0)
}

/// The default budget: a quarter of the smaller of the machine's memory (`MemTotal` in
/// `/proc/meminfo`) and the cgroup's limit (`/sys/fs/cgroup/memory.max`, cgroup v2), so that
/// the messages held leave room for their copies in flight, the allocator's slack and the rest
/// of the machine.
pub(crate) fn default_bytes() -> u64 {
    let machine = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|text| mem_total(&text));
    let cgroup = read_cgroup_limit(Path::new("/sys/fs/cgroup/memory.max"));
    match (machine, cgroup) {
        (Some(machine), Some(cgroup)) => machine.min(cgroup) / 4,
        (Some(memory), None) | (None, Some(memory)) => memory / 4,
        (None, None) => FALLBACK_BYTES,
    }
}

/// `MemTotal` of `/proc/meminfo`, in bytes.
fn mem_total(meminfo: &str) -> Option<u64> {
    let line = meminfo.lines().find(|line| line.starts_with("MemTotal:"))?;
    let kib: u64 = line
        .trim_start_matches("MemTotal:")
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    kib.checked_mul(1024)
}

/// A cgroup v2 `memory.max`: bytes, or `None` for `max` (no limit) or no such file.
fn read_cgroup_limit(path: &Path) -> Option<u64> {
    std::fs::read_to_string(path).ok()?.trim().parse().ok()
}

/// A size for people: `2.0 GiB (2147483648 bytes)`.
#[allow(clippy::cast_precision_loss)] // One decimal of GiB.
pub(crate) fn describe(bytes: u64) -> String {
    format!(
        "{:.1} GiB ({bytes} bytes)",
        bytes as f64 / f64::from(1u32 << 30)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_with_and_without_units() {
        for (text, bytes) in [
            ("1073741824", Some(1 << 30)),
            ("2GiB", Some(2 << 30)),
            ("2 gib", Some(2 << 30)),
            ("512MB", Some(512_000_000)),
            ("64KiB", Some(64 << 10)),
            ("10b", Some(10)),
            ("1TB", Some(1_000_000_000_000)),
            ("0", None),
            ("GiB", None),
            ("1.5GiB", None),
            ("2 furlongs", None),
            ("99999999999TiB", None),
        ] {
            assert_eq!(parse_size(text), bytes, "{text}");
        }
    }

    #[test]
    fn the_machine_memory_is_read_from_meminfo() {
        let meminfo = "MemTotal:       24731708 kB\nMemFree:        17591572 kB\n";
        assert_eq!(mem_total(meminfo), Some(24_731_708 * 1024));
        assert_eq!(mem_total("MemFree: 1 kB\n"), None);
        // On this (Linux) machine the default is a quarter of something real.
        assert!(default_bytes() > 0);
    }

    #[test]
    fn sizes_read_well() {
        assert_eq!(describe(3 << 29), "1.5 GiB (1610612736 bytes)");
    }
}
