//! Engine tests at session scope with a scripted peer: disposition ranges and outcomes, window
//! violations, handle errors, the refusal pattern, termini pass-through, detach and end in
//! both directions, detach-after-end tolerance.

mod engine_peer;

use bytes::{Bytes, BytesMut};

use busbar_amqp::condition;
use busbar_amqp::engine::{
    ConnectionConfig, ConnectionState, DeliveryId, EngineError, Event, LinkId,
};
use busbar_amqp::frame::encode_amqp_frame;
use busbar_amqp::performatives::{
    Accepted, AmqpError, DeliveryNumber, DeliveryState, Detach, Disposition, End, Handle,
    Performative, Role,
};
use engine_peer::{
    Peer, attach_frame, delivery, expect_end_condition, expect_flow, receiving_client,
    sending_client, session_flow, transfer,
};

#[test]
fn dispositions_over_ranges_are_mapped_to_each_links_deliveries() {
    let mut peer = Peer::new(ConnectionConfig::default());
    peer.open(65536, None);
    peer.begin(1, 65536);
    let a = peer.attach(1, 1, Role::Receiver, "a");
    let b = peer.attach(1, 2, Role::Receiver, "b");
    peer.flow(1, 1, Some(0), 10, false);
    peer.flow(1, 2, Some(0), 10, false);
    peer.events();
    let ids: Vec<DeliveryId> = [a, a, b, a]
        .iter()
        .map(|link| {
            peer.conn
                .send_transfer(*link, delivery(b"t", Bytes::from_static(b"m")))
                .unwrap()
        })
        .collect();
    assert_eq!(
        ids,
        [DeliveryId(0), DeliveryId(1), DeliveryId(2), DeliveryId(3)]
    );
    peer.send(
        1,
        Disposition {
            role: Role::Receiver,
            first: DeliveryNumber(0),
            last: Some(DeliveryNumber(3)),
            settled: true,
            state: Some(DeliveryState::Accepted(Accepted {})),
            batchable: false,
        },
    );
    let ranges: Vec<(LinkId, u32, u32)> = peer
        .events()
        .into_iter()
        .map(|event| match event {
            Event::Disposition(update) => {
                assert!(update.settled && matches!(update.state, Some(DeliveryState::Accepted(_))));
                (update.link, update.first.0, update.last.0)
            }
            other => panic!("unexpected {other:?}"),
        })
        .collect();
    assert_eq!(ranges, [(a, 0, 1), (b, 2, 2), (a, 3, 3)]);
    // Settled deliveries are forgotten: the same disposition again reports nothing.
    peer.send(
        1,
        Disposition {
            role: Role::Receiver,
            first: DeliveryNumber(0),
            last: Some(DeliveryNumber(3)),
            settled: true,
            state: None,
            batchable: false,
        },
    );
    assert!(peer.events().is_empty());
}

#[test]
fn our_dispositions_carry_the_outcome_for_a_range() {
    let (mut peer, link) = sending_client(ConnectionConfig::default());
    peer.conn.set_credit(link, 5).unwrap();
    expect_flow(&mut peer);
    for id in 0..3 {
        peer.send_with_payload(1, transfer(1, Some(id), false), b"m");
    }
    peer.events();
    let rejected = DeliveryState::Rejected(busbar_amqp::performatives::Rejected {
        error: Some(AmqpError::new("amqp:link:message-size-exceeded", "too big")),
    });
    peer.conn
        .send_disposition(
            link,
            DeliveryId(0),
            DeliveryId(2),
            true,
            Some(rejected.clone()),
        )
        .unwrap();
    match peer.recv_performative() {
        Performative::Disposition(d) => {
            assert_eq!(
                (d.role, d.first.0, d.last.map(|l| l.0), d.settled),
                (Role::Receiver, 0, Some(2), true)
            );
            assert_eq!(d.state, Some(rejected));
        }
        other => panic!("unexpected {other:?}"),
    }
}

#[test]
fn a_transfer_beyond_the_incoming_window_ends_the_session_only() {
    let config = ConnectionConfig {
        incoming_window: 2,
        ..ConnectionConfig::default()
    };
    let (mut peer, link) = sending_client(config);
    peer.conn.set_credit(link, 10).unwrap();
    expect_flow(&mut peer);
    let mut burst = BytesMut::new();
    for id in 0..3 {
        encode_amqp_frame(1, &transfer(1, Some(id), false).into(), b"m", &mut burst);
    }
    peer.send_bytes(&burst);
    assert_eq!(expect_end_condition(&mut peer), condition::WINDOW_VIOLATION);
    assert_eq!(peer.conn.state(), ConnectionState::Opened);
    let events = peer.events();
    assert!(matches!(
        events.last(),
        Some(Event::SessionEnded { error: Some(_), .. })
    ));
    // The session's later frames are discarded until the peer's end; then the channel is reusable.
    peer.send_with_payload(1, transfer(1, Some(3), false), b"m");
    peer.send(1, End { error: None });
    peer.expect_silence();
    peer.begin(1, 100);
}

#[test]
fn windows_re_open_between_bursts() {
    let config = ConnectionConfig {
        incoming_window: 2,
        ..ConnectionConfig::default()
    };
    let (mut peer, link) = sending_client(config);
    peer.conn.set_credit(link, 10).unwrap();
    expect_flow(&mut peer);
    for id in 0..6 {
        peer.send_with_payload(1, transfer(1, Some(id), false), b"m");
    }
    assert_eq!(peer.events().len(), 6);
    let flow = expect_flow(&mut peer);
    assert_eq!((flow.handle, flow.incoming_window), (None, 2));
}

#[test]
fn handle_errors_end_the_session_with_the_named_condition() {
    let (mut peer, _) = receiving_client();
    peer.send(1, attach_frame(1, Role::Receiver, "again"));
    assert_eq!(expect_end_condition(&mut peer), condition::HANDLE_IN_USE);

    let (mut peer, _) = receiving_client();
    peer.begin(2, 100);
    peer.flow(1, 9, Some(0), 1, false);
    assert_eq!(
        expect_end_condition(&mut peer),
        condition::UNATTACHED_HANDLE
    );
    // The other session is untouched.
    peer.send(2, attach_frame(1, Role::Sender, "q"));
    assert!(matches!(
        peer.events().last(),
        Some(Event::AttachRequested(_))
    ));
}

#[test]
fn refusal_is_a_null_terminus_attach_and_a_detach_in_one_write() {
    let mut peer = Peer::new(ConnectionConfig::default());
    peer.open(65536, None);
    peer.begin(1, 100);
    peer.send(1, attach_frame(4, Role::Receiver, "missing"));
    let Some(Event::AttachRequested(request)) = peer.events().pop() else {
        panic!("expected AttachRequested");
    };
    peer.conn
        .refuse_attach(
            request.link,
            AmqpError::new(condition::NOT_FOUND, "no such entity"),
        )
        .unwrap();
    let Performative::Attach(attach) = peer.recv_performative() else {
        panic!("expected attach");
    };
    assert!(attach.source.is_none() && attach.target.is_none());
    assert_eq!(attach.role, Role::Sender);
    match peer.recv_performative() {
        Performative::Detach(Detach {
            closed: true,
            error: Some(error),
            handle,
        }) => {
            assert_eq!(error.condition.as_str(), condition::NOT_FOUND);
            assert_eq!(handle, attach.handle);
        }
        other => panic!("unexpected {other:?}"),
    }
    peer.send(
        1,
        Detach {
            handle: Handle(4),
            closed: true,
            error: None,
        },
    );
    peer.expect_silence();
    assert_eq!(peer.conn.link_count(request.link.session), Ok(0));
    // The stale id no longer reaches anything, even after the slot is reused.
    let fresh = peer.attach(1, 4, Role::Receiver, "q");
    assert_eq!(fresh.handle(), request.link.handle());
    assert_eq!(
        peer.conn.link_credit(request.link),
        Err(EngineError::UnknownLink)
    );
}

#[test]
fn peer_detach_is_answered_and_detach_after_end_is_ignored() {
    let (mut peer, link) = receiving_client();
    peer.send(
        1,
        Detach {
            handle: Handle(1),
            closed: true,
            error: None,
        },
    );
    assert!(matches!(
        peer.recv_performative(),
        Performative::Detach(Detach { closed: true, .. })
    ));
    assert!(matches!(
        peer.events()[..],
        [Event::Detached { closed: true, .. }]
    ));
    assert_eq!(peer.conn.link_credit(link), Err(EngineError::UnknownLink));

    // Python: detach links, end, then a late detach on the ended channel, then close.
    let (mut peer, _) = receiving_client();
    peer.attach(1, 4, Role::Sender, "$management");
    peer.send(1, End { error: None });
    assert!(matches!(
        peer.recv_performative(),
        Performative::End(End { error: None })
    ));
    peer.send(
        1,
        Detach {
            handle: Handle(4),
            closed: true,
            error: None,
        },
    );
    peer.expect_silence();
    assert_eq!(peer.conn.state(), ConnectionState::Opened);
    let events = peer.events();
    assert_eq!(
        events
            .iter()
            .filter(|e| matches!(e, Event::Detached { .. }))
            .count(),
        2
    );
    assert!(matches!(
        events.last(),
        Some(Event::SessionEnded { error: None, .. })
    ));
}

#[test]
fn all_four_outcomes_reach_the_application_and_unsettled_ones_can_be_echoed() {
    use busbar_amqp::performatives::{Modified, Rejected, Released};
    let (mut peer, link) = receiving_client();
    peer.flow(1, 1, Some(0), 10, false);
    peer.events();
    for _ in 0..4 {
        peer.conn
            .send_transfer(link, delivery(b"t", Bytes::from_static(b"m")))
            .unwrap();
    }
    let outcomes = [
        DeliveryState::Accepted(Accepted {}),
        DeliveryState::Rejected(Rejected {
            error: Some(AmqpError::new("com.microsoft:dead-letter", "dlq")),
        }),
        DeliveryState::Released(Released {}),
        DeliveryState::Modified(Modified {
            delivery_failed: Some(true),
            undeliverable_here: None,
            message_annotations: None,
        }),
    ];
    for (id, outcome) in outcomes.iter().enumerate() {
        // Peek-lock clients settle with `settled = false` and wait for our settled echo.
        peer.send(
            1,
            Disposition {
                role: Role::Receiver,
                first: DeliveryNumber(id as u32),
                last: None,
                settled: false,
                state: Some(outcome.clone()),
                batchable: false,
            },
        );
    }
    let updates: Vec<_> = peer
        .events()
        .into_iter()
        .map(|event| match event {
            Event::Disposition(update) => update,
            other => panic!("unexpected {other:?}"),
        })
        .collect();
    assert_eq!(updates.len(), 4);
    for (update, outcome) in updates.iter().zip(&outcomes) {
        assert_eq!(update.state.as_ref(), Some(outcome));
        assert!(!update.settled);
        peer.conn
            .send_disposition(
                update.link,
                update.first,
                update.last,
                true,
                update.state.clone(),
            )
            .unwrap();
    }
    for _ in &outcomes {
        assert!(matches!(
            peer.recv_performative(),
            Performative::Transfer(_)
        ));
    }
    for (id, outcome) in outcomes.iter().enumerate() {
        match peer.recv_performative() {
            Performative::Disposition(d) => {
                assert_eq!(
                    (d.role, d.first.0, d.settled),
                    (Role::Sender, id as u32, true)
                );
                assert_eq!(d.state.as_ref(), Some(outcome));
            }
            other => panic!("unexpected {other:?}"),
        }
    }
}

#[test]
fn empty_termini_filters_and_properties_are_passed_through_and_echoed() {
    use busbar_amqp::engine::AttachReply;
    use busbar_amqp::performatives::{Source, Target};
    use busbar_amqp::types::{Fields, Symbol, Value};
    let mut peer = Peer::new(ConnectionConfig::default());
    peer.open(65536, None);
    peer.begin(1, 100);
    let mut attach = attach_frame(2, Role::Receiver, "q");
    let mut source = Source::with_address("q");
    source.filter = Some(Fields(vec![(
        Symbol::from("com.microsoft:session-filter"),
        Value::Null,
    )]));
    attach.source = Some(Box::new(source));
    attach.target = Some(Box::new(
        Target {
            address: None,
            ..Target::with_address("")
        }
        .into(),
    ));
    attach.properties = Some(Fields(vec![(
        Symbol::from("com.microsoft:timeout"),
        Value::Uint(65_000),
    )]));
    peer.send(1, attach);
    let Some(Event::AttachRequested(request)) = peer.events().pop() else {
        panic!("expected AttachRequested");
    };
    assert_eq!(request.target.as_ref().unwrap().address, None);
    assert!(
        request
            .properties
            .as_ref()
            .unwrap()
            .get("com.microsoft:timeout")
            .is_some()
    );
    // The application locks a session and reports it in the echoed filter.
    let mut reply = AttachReply::echo(&request);
    reply.source.as_mut().unwrap().filter = Some(Fields(vec![(
        Symbol::from("com.microsoft:session-filter"),
        Value::from("s-1"),
    )]));
    reply.max_message_size = Some(262_144);
    reply.properties = Some(Fields(vec![(
        Symbol::from("com.microsoft:locked-until-utc"),
        Value::Long(1),
    )]));
    peer.conn.accept_attach(request.link, reply).unwrap();
    let Performative::Attach(ours) = peer.recv_performative() else {
        panic!("expected attach");
    };
    assert_eq!(ours.role, Role::Sender);
    assert_eq!(ours.initial_delivery_count.map(|c| c.0), Some(0));
    assert_eq!(ours.max_message_size, Some(262_144));
    let filter = ours.source.unwrap().filter.unwrap();
    assert_eq!(
        filter.get("com.microsoft:session-filter"),
        Some(&Value::from("s-1"))
    );
    assert!(ours.target.is_some());
    assert!(
        ours.properties
            .unwrap()
            .get("com.microsoft:locked-until-utc")
            .is_some()
    );
    assert_eq!(
        peer.conn
            .accept_attach(request.link, AttachReply::default()),
        Err(EngineError::InvalidState("the attach was already answered"))
    );
}

#[test]
fn application_end_reports_links_and_stale_session_ids_reach_nothing() {
    let (mut peer, link) = receiving_client();
    peer.conn.end_session(link.session, None).unwrap();
    assert!(matches!(
        peer.recv_performative(),
        Performative::End(End { error: None })
    ));
    let events = peer.events();
    assert!(matches!(
        events[..],
        [Event::Detached { .. }, Event::SessionEnded { .. }]
    ));
    // Until the peer's end, its frames on the channel are dropped; then the channel is reused.
    peer.flow(1, 1, Some(0), 5, false);
    peer.send(1, End { error: None });
    peer.expect_silence();
    let fresh = peer.begin(1, 100);
    assert_eq!(fresh.channel(), link.session.channel());
    assert_eq!(
        peer.conn.end_session(link.session, None),
        Err(EngineError::UnknownSession)
    );
    assert_eq!(
        peer.conn.link_credit(link),
        Err(EngineError::UnknownSession)
    );
    assert_eq!(peer.conn.session_count(), 1);
}

#[test]
fn application_detach_waits_for_the_peers_detach() {
    let (mut peer, link) = sending_client(ConnectionConfig::default());
    peer.conn
        .detach(
            link,
            Some(AmqpError::new(condition::DETACH_FORCED, "entity deleted")),
        )
        .unwrap();
    match peer.recv_performative() {
        Performative::Detach(Detach {
            closed: true,
            error: Some(error),
            ..
        }) => {
            assert_eq!(error.condition.as_str(), condition::DETACH_FORCED);
        }
        other => panic!("unexpected {other:?}"),
    }
    assert_eq!(
        peer.conn.detach(link, None),
        Err(EngineError::InvalidState("already detached"))
    );
    // A transfer the peer sent before seeing our detach is dropped, not an error.
    peer.send_with_payload(1, transfer(1, Some(0), false), b"late");
    assert!(peer.events().is_empty());
    peer.send(
        1,
        Detach {
            handle: Handle(1),
            closed: true,
            error: None,
        },
    );
    peer.expect_silence();
    assert_eq!(peer.conn.link_count(link.session), Ok(0));
}

#[test]
fn a_transfer_before_our_attach_is_refused_with_attach_then_detach() {
    let mut peer = Peer::new(ConnectionConfig::default());
    peer.open(65536, None);
    peer.begin(1, 100);
    peer.send(1, attach_frame(3, Role::Sender, "q"));
    peer.send_with_payload(1, transfer(3, Some(0), false), b"eager");
    assert!(matches!(peer.recv_performative(), Performative::Attach(_)));
    match peer.recv_performative() {
        Performative::Detach(Detach {
            closed: true,
            error: Some(error),
            ..
        }) => {
            assert_eq!(error.condition.as_str(), condition::ILLEGAL_STATE);
        }
        other => panic!("unexpected {other:?}"),
    }
    let events = peer.events();
    assert!(matches!(
        events[..],
        [
            Event::AttachRequested(_),
            Event::Detached { closed: true, .. }
        ]
    ));
}

#[test]
fn a_session_echo_is_answered_with_our_windows() {
    let (mut peer, _) = receiving_client();
    let mut flow = session_flow(0, 100);
    flow.echo = true;
    peer.send(1, flow);
    let ours = expect_flow(&mut peer);
    assert_eq!(ours.handle, None);
    assert_eq!(
        ours.incoming_window,
        ConnectionConfig::default().incoming_window
    );
}

#[test]
fn null_termini_are_echoed_as_empty_ones_so_the_attach_is_not_read_as_a_refusal() {
    use busbar_amqp::engine::AttachReply;
    let mut peer = Peer::new(ConnectionConfig::default());
    peer.open(65536, None);
    peer.begin(1, 100);
    // .NET's CBS sender attaches with a null source.
    let mut attach = attach_frame(0, Role::Sender, "$cbs");
    attach.source = None;
    peer.send(1, attach);
    let Some(Event::AttachRequested(request)) = peer.events().pop() else {
        panic!("expected AttachRequested");
    };
    assert!(request.source.is_none());
    peer.conn
        .accept_attach(request.link, AttachReply::echo(&request))
        .unwrap();
    let Performative::Attach(ours) = peer.recv_performative() else {
        panic!("expected attach");
    };
    assert_eq!(ours.source.map(|source| source.address), Some(None));
    assert_eq!(
        ours.target
            .and_then(|target| target.address_str().map(str::to_owned)),
        Some("$cbs".to_owned())
    );
}
