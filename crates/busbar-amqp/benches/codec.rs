//! Criterion benches of the codec: encode and decode of a transfer frame (performative plus a
//! message with header, properties, application-properties and a data body) at 128 B, 1 KiB and
//! 64 KiB bodies.
#![allow(clippy::unwrap_used)]

use busbar_amqp::frame::{Frame, FrameDecoder, encode_transfer};
use busbar_amqp::message::{
    ApplicationProperties, Header, Message, MessageBuilder, MessageId, Properties,
};
use busbar_amqp::performatives::{DeliveryNumber, Handle, MessageFormat, Transfer};
use busbar_amqp::types::{Annotations, Timestamp, Value};
use bytes::{Bytes, BytesMut};
use criterion::{BatchSize, BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};

const BODY_SIZES: [usize; 3] = [128, 1024, 64 * 1024];
/// Large enough that every body travels in one frame.
const MAX_FRAME_SIZE: u32 = 256 * 1024;

fn message(body_size: usize) -> Message {
    let mut annotations = Annotations::default();
    annotations.set("x-opt-sequence-number", Value::Long(42));
    annotations.set(
        "x-opt-enqueued-time",
        Value::Timestamp(Timestamp(1_795_307_569_000)),
    );
    let mut app = ApplicationProperties::default();
    app.push("color", "red");
    app.push("count", Value::Int(7));
    MessageBuilder::new()
        .header(Header::default())
        .message_annotations(annotations)
        .properties(Properties {
            message_id: Some(MessageId::String(
                "8f677444-27d6-4f74-8b1c-3ac49a504ab1".into(),
            )),
            to: Some("q-basic".into()),
            ..Properties::default()
        })
        .application_properties(app)
        .data(Bytes::from(vec![0x5a; body_size]))
        .build()
}

fn transfer() -> Transfer {
    let mut transfer = Transfer::new(Handle(1));
    transfer.delivery_id = Some(DeliveryNumber(7));
    transfer.delivery_tag = Some(Bytes::from_static(&[0xab; 16]));
    transfer.message_format = Some(MessageFormat::AMQP);
    transfer.settled = Some(false);
    transfer
}

fn encode(c: &mut Criterion) {
    let mut group = c.benchmark_group("encode_transfer");
    let transfer = transfer();
    for size in BODY_SIZES {
        let message = message(size);
        group.throughput(Throughput::Bytes(message.as_bytes().len() as u64));
        group.bench_with_input(BenchmarkId::from_parameter(size), &message, |b, message| {
            let mut out = BytesMut::with_capacity(size + 512);
            b.iter(|| {
                out.clear();
                encode_transfer(0, &transfer, message.as_bytes(), MAX_FRAME_SIZE, &mut out)
                    .unwrap();
            });
        });
    }
    group.finish();
}

fn decode(c: &mut Criterion) {
    let mut group = c.benchmark_group("decode_transfer");
    for size in BODY_SIZES {
        let message = message(size);
        let mut wire = BytesMut::new();
        encode_transfer(
            0,
            &transfer(),
            message.as_bytes(),
            MAX_FRAME_SIZE,
            &mut wire,
        )
        .unwrap();
        group.throughput(Throughput::Bytes(wire.len() as u64));
        group.bench_with_input(BenchmarkId::from_parameter(size), &wire, |b, wire| {
            let mut decoder = FrameDecoder::new(MAX_FRAME_SIZE);
            // Decoding = frame + performative, then locating the sections and reading the
            // properties, application-properties and body as a broker would.
            b.iter_batched(
                || wire.clone(),
                |mut buf| {
                    let Some(Frame::Amqp(frame)) = decoder.decode(&mut buf).unwrap() else {
                        unreachable!("a transfer frame");
                    };
                    let message = Message::from_bytes(frame.payload);
                    let id = message.properties().unwrap().unwrap().message_id;
                    let app = message.application_properties().unwrap();
                    let body = message.data_sections().unwrap();
                    (id, app, body)
                },
                BatchSize::SmallInput,
            );
        });
    }
    group.finish();
}

criterion_group!(benches, encode, decode);
criterion_main!(benches);
