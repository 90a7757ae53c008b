//! Times a start-up recovery of a large backlog, for BENCHMARKS.md: fills a store with N
//! messages (200-byte message part, 16-byte state, synced in groups of 10 000) unless it
//! already holds them, then times opening it and `recover`.
//!
//! `cargo run --release -p busbar-store-postgres --example recovery -- TARGET [MESSAGES]`, where
//! TARGET is a `postgres://…` URL or a directory (the file store, for comparison).

use std::time::Instant;

use busbar_store::{EntityId, FileOptions, FileStorage, MessageKey, Record, Storage, StoreError};
use busbar_store_postgres::{DatabaseUrl, PostgresStorage};
use bytes::Bytes;

const GROUP: i64 = 10_000;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let target = args.next().ok_or("usage: recovery TARGET [MESSAGES]")?;
    let messages: i64 = args.next().map_or(Ok(1_000_000), |text| text.parse())?;
    if target.starts_with("postgres") {
        let url = DatabaseUrl::parse(&target)?;
        measure(messages, || PostgresStorage::open(&url, None))
    } else {
        measure(messages, || {
            FileStorage::open(&target, FileOptions::default())
        })
    }
}

fn measure<S: Storage>(
    messages: i64,
    open: impl Fn() -> Result<S, StoreError>,
) -> Result<(), Box<dyn std::error::Error>> {
    let mut store = open()?;
    let held = i64::try_from(store.recover()?.messages.len())?;
    let filling = Instant::now();
    let body = Bytes::from(vec![b'x'; 200]);
    let state = Bytes::from(vec![0u8; 16]);
    for first in (held..messages).step_by(usize::try_from(GROUP)?) {
        let records: Vec<Record> = (first..(first + GROUP).min(messages))
            .map(|sequence| Record::Insert {
                key: MessageKey {
                    entity: EntityId(1),
                    sequence,
                },
                message: body.clone(),
                state: state.clone(),
            })
            .collect();
        store.append(&records)?;
        store.sync()?;
    }
    if held < messages {
        println!(
            "filled {} messages in {:.1} s",
            messages - held,
            filling.elapsed().as_secs_f64()
        );
    }
    drop(store);
    let started = Instant::now();
    let mut store = open()?;
    let recovered = store.recover()?;
    println!(
        "recovered {} messages in {:.2} s (open and recover)",
        recovered.messages.len(),
        started.elapsed().as_secs_f64()
    );
    Ok(())
}
