//! Fairness under a flood, end to end against the real binary (file storage): one client floods
//! a queue with 64 KiB sends while its consumer, granted plenty of credit, has stopped reading
//! its socket (so the broker's deliveries to it back up); another client's sends to the same
//! queue, one at a time, must still be answered promptly. A send refused as server-busy is
//! retried, as the SDKs do; every probe ends accepted.

#![allow(clippy::unwrap_used)]

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::time::{Duration, Instant};

use support::raw::{Outcome, RawConnection};
use support::{Broker, scratch_dir, write_config_with};

/// The flooder's message size, and most messages it sends.
const FLOOD_SIZE: u32 = 64 * 1024;
const FLOOD_COUNT: u32 = 20_000;
/// Flood messages sent before the probes start, so the flood is under way.
const FLOOD_HEAD_START: u32 = 2_000;
/// The probe's sends, one at a time, and their size.
const PROBES: usize = 200;
const PROBE_SIZE: u32 = 1024;
/// The bound on the probes' 99th percentile latency: generous for a debug build on a loaded
/// two-core machine (a release build measures far less: BENCHMARKS.md "Fairness under a flood").
const P99_BOUND: Duration = Duration::from_secs(1);
/// How long the flood may take to get its head start (a failure guard, not a wait).
const HEAD_START_TIMEOUT: Duration = Duration::from_secs(60);

#[test]
fn a_flood_with_a_stalled_consumer_does_not_hold_up_another_clients_sends() {
    let dir = scratch_dir("flood-fairness");
    // Room for the whole flood (1.25 GiB), so that no send is refused for the quota.
    let queue = ("flooded", r#"{ "MaxSizeInMegabytes": 5120 }"#);
    let broker = Broker::on_disk(write_config_with(&dir, &[queue]), dir.join("data"));

    let mut consumer = RawConnection::open(broker.port);
    consumer.attach_receiver("stalled-consumer", "flooded", 100_000);
    consumer.stop_reading();

    let stop = Arc::new(AtomicBool::new(false));
    let flooded = Arc::new(AtomicU32::new(0));
    let flooder = {
        let (stop, flooded, port) = (Arc::clone(&stop), Arc::clone(&flooded), broker.port);
        std::thread::spawn(move || {
            let mut connection = RawConnection::open(port);
            let sender = connection.attach_sender("flooder", "flooded");
            while !stop.load(Ordering::Relaxed) && flooded.load(Ordering::Relaxed) < FLOOD_COUNT {
                connection.send_message(sender, FLOOD_SIZE, &mut || {});
                flooded.fetch_add(1, Ordering::Relaxed);
            }
        })
    };
    let started = Instant::now();
    while flooded.load(Ordering::Relaxed) < FLOOD_HEAD_START {
        assert!(
            started.elapsed() < HEAD_START_TIMEOUT,
            "the flood did not get under way"
        );
        std::thread::yield_now();
    }

    let mut probe = RawConnection::open(broker.port);
    let sender = probe.attach_sender("probe", "flooded");
    let mut latencies = Vec::with_capacity(PROBES);
    let mut busy = 0;
    for _ in 0..PROBES {
        let sent = Instant::now();
        loop {
            let id = probe.send_message(sender, PROBE_SIZE, &mut || {});
            match probe.outcome(id, &mut || {}) {
                Outcome::Accepted => break,
                Outcome::Rejected { condition, .. } if condition == "com.microsoft:server-busy" => {
                    busy += 1;
                }
                other => panic!("a probe send was refused: {other:?}"),
            }
        }
        latencies.push(sent.elapsed());
    }
    let during = flooded.load(Ordering::Relaxed);
    stop.store(true, Ordering::Relaxed);
    flooder.join().unwrap();

    latencies.sort();
    let percentile = |p: usize| latencies[(latencies.len() * p / 100).min(latencies.len() - 1)];
    let (p50, p99) = (percentile(50), percentile(99));
    eprintln!(
        "{PROBES} probe sends while {during} flood messages went in: p50 {p50:.2?}, p99 {p99:.2?}, \
         max {:.2?}, {busy} refused as server-busy and retried",
        latencies[latencies.len() - 1]
    );
    assert!(
        p99 <= P99_BOUND,
        "probe sends held up by the flood: p99 {p99:.2?}"
    );
}
