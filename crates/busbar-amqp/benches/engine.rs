//! Engine benches: one delivery through the server engine in each direction, including the
//! frame encoding and decoding on the client side (a scripted client, no sockets).
#![allow(clippy::unwrap_used)]

use std::hint::black_box;

use bytes::{Bytes, BytesMut};
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};

use busbar_amqp::engine::{
    AttachReply, Connection, ConnectionConfig, Event, LinkId, Millis, OutgoingDelivery,
};
use busbar_amqp::frame::{Frame, FrameDecoder, ProtocolHeader, encode_amqp_frame};
use busbar_amqp::performatives::{
    Accepted, Attach, Begin, DeliveryNumber, DeliveryState, Flow, Handle, MessageFormat, Open,
    Performative, ReceiverSettleMode, Role, SenderSettleMode, SequenceNo, Source, Target, Transfer,
    TransferNumber,
};

const NOW: Millis = Millis(1_700_000_000_000);
const SIZES: [usize; 3] = [128, 1024, 64 * 1024];

fn feed(conn: &mut Connection, performative: Performative, payload: &[u8]) {
    let mut buf = BytesMut::new();
    encode_amqp_frame(0, &performative, payload, &mut buf);
    conn.handle_input(&mut buf, NOW);
}

fn attach(handle: u32, role: Role) -> Performative {
    Performative::Attach(Attach {
        name: format!("bench-{handle}"),
        handle: Handle(handle),
        role,
        snd_settle_mode: SenderSettleMode::Unsettled,
        rcv_settle_mode: ReceiverSettleMode::First,
        source: Some(Box::new(Source::with_address("q"))),
        target: Some(Box::new(Target::with_address("q").into())),
        unsettled: None,
        incomplete_unsettled: false,
        initial_delivery_count: Some(SequenceNo(0)),
        max_message_size: None,
        offered_capabilities: None,
        desired_capabilities: None,
        properties: None,
    })
}

/// An open connection with a link the client sends on (handle 0) and one it receives on (1).
fn setup() -> (Connection, LinkId, LinkId) {
    let mut conn = Connection::new(ConnectionConfig::default(), NOW);
    let mut buf = BytesMut::from(&ProtocolHeader::Amqp.to_bytes()[..]);
    conn.handle_input(&mut buf, NOW);
    let open = Open {
        container_id: "bench".into(),
        hostname: None,
        max_frame_size: 1 << 20,
        channel_max: 1,
        idle_time_out: None,
        outgoing_locales: None,
        incoming_locales: None,
        offered_capabilities: None,
        desired_capabilities: None,
        properties: None,
    };
    feed(&mut conn, Performative::Open(open), &[]);
    let begin = Begin {
        remote_channel: None,
        next_outgoing_id: TransferNumber(0),
        incoming_window: u32::MAX,
        outgoing_window: u32::MAX,
        handle_max: Handle(8),
        offered_capabilities: None,
        desired_capabilities: None,
        properties: None,
    };
    feed(&mut conn, Performative::Begin(begin), &[]);
    feed(&mut conn, attach(0, Role::Sender), &[]);
    feed(&mut conn, attach(1, Role::Receiver), &[]);
    let mut links = Vec::new();
    while let Some(event) = conn.poll_event() {
        if let Event::AttachRequested(request) = event {
            conn.accept_attach(request.link, AttachReply::echo(&request))
                .unwrap();
            links.push(request.link);
        }
    }
    let flow = Flow {
        next_incoming_id: Some(TransferNumber(0)),
        incoming_window: u32::MAX,
        next_outgoing_id: TransferNumber(0),
        outgoing_window: u32::MAX,
        handle: Some(Handle(1)),
        delivery_count: Some(SequenceNo(0)),
        link_credit: Some(u32::MAX),
        available: None,
        drain: false,
        echo: false,
        properties: None,
    };
    feed(&mut conn, Performative::Flow(flow), &[]);
    conn.set_credit(links[0], u32::MAX).unwrap();
    while conn.poll_event().is_some() {}
    conn.poll_transmit(&mut BytesMut::new());
    (conn, links[0], links[1])
}

fn bench_engine(c: &mut Criterion) {
    let mut group = c.benchmark_group("engine");
    for size in SIZES {
        let message = Bytes::from(vec![0x5a; size]);
        group.throughput(Throughput::Bytes(size as u64));

        // Client → server: a transfer frame in, the Transfer event out, a settled accept back.
        let (mut conn, incoming, _) = setup();
        let mut delivery_id = 0u32;
        let mut wire = BytesMut::new();
        let mut out = BytesMut::new();
        group.bench_with_input(
            BenchmarkId::new("inbound_transfer", size),
            &message,
            |b, message| {
                b.iter(|| {
                    let mut transfer = Transfer::new(Handle(0));
                    transfer.delivery_id = Some(DeliveryNumber(delivery_id));
                    transfer.delivery_tag =
                        Some(Bytes::copy_from_slice(&delivery_id.to_be_bytes()));
                    transfer.message_format = Some(MessageFormat::AMQP);
                    encode_amqp_frame(0, &Performative::Transfer(transfer), message, &mut wire);
                    conn.handle_input(&mut wire, NOW);
                    let Some(Event::Transfer(t)) = conn.poll_event() else {
                        panic!("expected a transfer event");
                    };
                    let accepted = Some(DeliveryState::Accepted(Accepted {}));
                    conn.send_disposition(incoming, t.delivery_id, t.delivery_id, true, accepted)
                        .unwrap();
                    conn.poll_transmit(&mut out);
                    black_box(&out);
                    out.clear();
                    delivery_id = delivery_id.wrapping_add(1);
                });
            },
        );

        // Server → client: send_transfer, the bytes out, decoded by the client.
        let (mut conn, _, outgoing) = setup();
        let mut decoder = FrameDecoder::new(u32::MAX);
        let mut tag = 0u64;
        group.bench_with_input(
            BenchmarkId::new("outbound_transfer", size),
            &message,
            |b, message| {
                b.iter(|| {
                    tag += 1;
                    let delivery = OutgoingDelivery {
                        tag: Bytes::copy_from_slice(&tag.to_be_bytes()),
                        message: message.clone(),
                        tail: Bytes::new(),
                        message_format: MessageFormat::AMQP,
                        settled: true,
                    };
                    conn.send_transfer(outgoing, delivery).unwrap();
                    conn.poll_transmit(&mut out);
                    while let Some(frame) = decoder.decode(&mut out).unwrap() {
                        black_box(matches!(frame, Frame::Amqp(_)));
                    }
                });
            },
        );
    }
    group.finish();
}

criterion_group!(benches, bench_engine);
criterion_main!(benches);
