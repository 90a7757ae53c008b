//! Criterion benches of the per-attach work: address normalisation, SAS verification, config parsing.
#![allow(clippy::unwrap_used)]

use std::hint::black_box;

use busbar_broker::Address;
use busbar_broker::auth::{SasKeys, SasToken};
use busbar_broker::config;
use criterion::{Criterion, criterion_group, criterion_main};

/// The put-token of `traces/send_one.txt`.
const TRACE_TOKEN: &str = "SharedAccessSignature sr=sb%3A%2F%2Flocalhost%3A5673%2Fq-basic&sig=mjym1mKPiaiMiBEH0hsJT3Vvh%2BlbXtEWtcQ1Aevft%2B4%3D&se=1795307569&skn=RootManageSharedAccessKey";
const EMULATOR_CONFIG: &str = include_str!("../tests/fixtures/emulator-config.json");

fn addresses(c: &mut Criterion) {
    let mut group = c.benchmark_group("address_parse");
    for (name, raw) in [
        ("python_uri", "amqps://localhost:5673/q-basic"),
        ("dotnet_escaped", "/t/Subscriptions/s/%24DeadLetterQueue"),
        ("js_management", "t/Subscriptions/s/$management"),
        ("cbs", "$cbs"),
    ] {
        group.bench_function(name, |b| b.iter(|| Address::parse(black_box(raw)).unwrap()));
    }
    group.finish();
}

fn sas(c: &mut Criterion) {
    let keys = SasKeys::emulator();
    c.bench_function("sas_parse_and_verify", |b| {
        b.iter(|| {
            let token = SasToken::parse(black_box(TRACE_TOKEN)).unwrap();
            keys.verify(&token, 1_795_000_000_000).unwrap();
        })
    });
}

fn config_file(c: &mut Criterion) {
    c.bench_function("config_parse_emulator_default", |b| {
        b.iter(|| config::parse(black_box(EMULATOR_CONFIG), "config.json").unwrap())
    });
}

criterion_group!(benches, addresses, sas, config_file);
criterion_main!(benches);
