//! A raw AMQP 1.0 client on a blocking socket, for what no client library does: streaming one
//! delivery far larger than memory frame by frame, each frame built as it is sent. SASL PLAIN
//! with the emulator key, one session, sender links; it keeps to the broker's session window
//! and link credit. Frames and performatives are encoded and decoded by busbar-amqp (the checks
//! against an independent implementation are the fe2o3-amqp and SDK suites). A reader thread
//! decodes the broker's frames onto a channel, so a test can write, read and look at the
//! broker's process between frames in one loop. A connection can stop reading its socket
//! (`stalled.rs`), as a client that no longer keeps up with the broker's deliveries.
//!
//! Frame buffers are `bytes::BytesMut`, which the root crate does not depend on: they are created
//! with `Default::default()` and typed by the busbar-amqp call they are first passed to.

mod stalled;

use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::{Shutdown, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use busbar_amqp::frame::{
    FRAME_HEADER_SIZE, Frame, FrameDecoder, ProtocolHeader, encode_amqp_frame, encode_sasl_frame,
};
use busbar_amqp::performatives::{
    Attach, Begin, DeliveryNumber, DeliveryState, Disposition, Handle, MessageFormat, Open,
    Performative, ReceiverSettleMode, Rejected, Role, SaslCode, SaslFrame, SaslInit,
    SenderSettleMode, SequenceNo, Source, Target, Transfer, TransferNumber,
};
use busbar_amqp::types::{Symbol, Value};

/// Bound on the broker's silence while an answer is awaited (a failure guard, not a wait).
const STEP: Duration = Duration::from_secs(20);
/// The largest frame we send, whatever the broker takes: one frame is built at a time.
const MAX_FRAME_SIZE: u32 = 1 << 20;
/// The socket's send buffer (the kernel doubles it).
const SEND_BUFFER: usize = 8 * 1024;
/// How often `poll` runs while the broker is silent.
const POLL: Duration = Duration::from_millis(10);

const PLAIN_RESPONSE: &[u8] = b"\0RootManageSharedAccessKey\0SAS_KEY_VALUE";
/// The descriptor code of a data section (§3.2.6).
const DATA: u64 = 0x75;

/// What the broker sends: protocol headers, SASL frames, and performatives (the payloads of its
/// frames, which it sends this client none of, are dropped).
#[derive(Debug)]
enum Incoming {
    Header(ProtocolHeader),
    Sasl(SaslFrame),
    Amqp(Performative),
}

/// The next thing the broker sends, which must match `pattern`; evaluates to `value`.
macro_rules! expect {
    ($incoming:expr, $pattern:pat => $value:expr) => {
        match $incoming.next() {
            Some($pattern) => $value,
            other => panic!("expected {}, got {other:?}", stringify!($pattern)),
        }
    };
}

/// A delivery's outcome, from the broker's disposition.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    Accepted,
    Rejected {
        condition: String,
        description: String,
    },
    Other(Option<DeliveryState>),
}

/// The delivery being sent, as the reader thread sees it when the broker's answers arrive.
#[derive(Default)]
struct StreamProgress {
    /// The delivery being sent and how many of its bytes were handed to the socket.
    streaming: Option<(u32, u64)>,
    /// For a delivery settled before its last frame was sent: its bytes sent by then.
    settled_while_streaming: HashMap<u32, u64>,
}

impl StreamProgress {
    fn settled(&mut self, disposition: &Disposition) {
        let first = disposition.first.0;
        let last = disposition.last.map_or(first, |last| last.0);
        if let Some((id, sent)) = self.streaming
            && (first..=last).contains(&id)
        {
            self.settled_while_streaming.insert(id, sent);
        }
    }
}

#[derive(Default)]
struct Link {
    delivery_count: u32,
    credit: u32,
}

/// One connection with one session (channel 0).
pub struct RawConnection {
    socket: TcpStream,
    performatives: mpsc::Receiver<Performative>,
    /// The size of the frames we send: the broker's max-frame-size, at most [`MAX_FRAME_SIZE`].
    max_frame_size: usize,
    next_outgoing_id: u32,
    remote_incoming_window: u32,
    next_delivery_id: u32,
    links: HashMap<u32, Link>,
    /// Shared with the reader thread, which notes a settlement of the delivery being sent.
    progress: Arc<Mutex<StreamProgress>>,
    /// Dispositions received: `(first, last, outcome)`.
    outcomes: Vec<(u32, u32, Outcome)>,
    /// Set to stop the reader thread reading the socket (before its next read).
    stop_reading: Arc<AtomicBool>,
    /// Dropped with the connection, which lets a stopped reader thread go on to its end.
    _resume: mpsc::Sender<()>,
}

impl RawConnection {
    /// Connects to the broker on `port`: SASL PLAIN as the emulator's root key, open, begin.
    pub fn open(port: u16) -> RawConnection {
        let mut socket = TcpStream::connect(("127.0.0.1", port)).unwrap();
        socket.set_nodelay(true).unwrap();
        // Loopback's send buffer grows to megabytes: kept small, the bytes a test
        // counts as sent are about those the broker has read.
        socket2::SockRef::from(&socket)
            .set_send_buffer_size(SEND_BUFFER)
            .unwrap();
        socket.set_read_timeout(Some(STEP)).unwrap();
        let stop_reading = Arc::new(AtomicBool::new(false));
        let (resume, stopped) = mpsc::channel();
        let reading = Reading {
            stop: Arc::clone(&stop_reading),
            stopped,
        };
        let mut incoming = incoming(socket.try_clone().unwrap(), reading);
        socket.write_all(&ProtocolHeader::Sasl.to_bytes()).unwrap();
        expect!(incoming, Incoming::Header(ProtocolHeader::Sasl) => ());
        expect!(incoming, Incoming::Sasl(SaslFrame::SaslMechanisms(_)) => ());
        let init = SaslInit {
            mechanism: Symbol::from("PLAIN"),
            initial_response: Some(PLAIN_RESPONSE.into()),
            hostname: None,
        };
        let mut out = Default::default();
        encode_sasl_frame(&init.into(), &mut out);
        socket.write_all(&out).unwrap();
        let outcome = expect!(incoming, Incoming::Sasl(SaslFrame::SaslOutcome(o)) => o);
        assert_eq!(outcome.code, SaslCode::Ok, "SASL PLAIN refused");

        socket.write_all(&ProtocolHeader::Amqp.to_bytes()).unwrap();
        let open = Open {
            container_id: "busbar-raw-test".into(),
            hostname: None,
            max_frame_size: u32::MAX,
            channel_max: 0,
            idle_time_out: None,
            outgoing_locales: None,
            incoming_locales: None,
            offered_capabilities: None,
            desired_capabilities: None,
            properties: None,
        };
        // next-outgoing-id, incoming-window, outgoing-window: the broker sends us no transfers.
        let begin = Begin {
            remote_channel: None,
            next_outgoing_id: TransferNumber(0),
            incoming_window: 1000,
            outgoing_window: u32::MAX,
            handle_max: Handle(u32::MAX),
            offered_capabilities: None,
            desired_capabilities: None,
            properties: None,
        };
        write_frames(&mut socket, &[open.into(), begin.into()]);
        expect!(incoming, Incoming::Header(ProtocolHeader::Amqp) => ());
        let open = expect!(incoming, Incoming::Amqp(Performative::Open(o)) => o);
        let begin = expect!(incoming, Incoming::Amqp(Performative::Begin(b)) => b);
        socket.set_read_timeout(None).unwrap();

        let (performatives_in, performatives) = mpsc::channel();
        let progress = Arc::new(Mutex::new(StreamProgress::default()));
        let reader_progress = Arc::clone(&progress);
        std::thread::spawn(move || {
            for performative in incoming {
                let Incoming::Amqp(performative) = performative else {
                    panic!("not a performative from the broker: {performative:?}");
                };
                if let Performative::Disposition(disposition) = &performative {
                    reader_progress.lock().unwrap().settled(disposition);
                }
                if performatives_in.send(performative).is_err() {
                    break;
                }
            }
        });
        RawConnection {
            socket,
            performatives,
            max_frame_size: open.max_frame_size.min(MAX_FRAME_SIZE) as usize,
            next_outgoing_id: 0,
            remote_incoming_window: begin.incoming_window,
            next_delivery_id: 0,
            links: HashMap::new(),
            progress,
            outcomes: Vec::new(),
            stop_reading,
            _resume: resume,
        }
    }

    /// Attaches a sender link to `address` and waits for its first credit; returns its handle.
    pub fn attach_sender(&mut self, name: &str, address: &str) -> u32 {
        let handle = u32::try_from(self.links.len()).unwrap();
        self.links.insert(handle, Link::default());
        let attach = attach(name, handle, Role::Sender, name, address);
        write_frames(&mut self.socket, &[attach.into()]);
        self.wait(|c| c.links[&handle].credit > 0, &mut || {});
        handle
    }

    /// Sends a message of `size` bytes (one data section of zeros) on the sender `handle`, in
    /// frames of the broker's max-frame-size built as they are sent: only one frame is ever in
    /// memory here. Waits for link credit and session window as the broker grants them; `poll` runs
    /// after every frame and while waiting. Returns the delivery-id.
    pub fn send_message(&mut self, handle: u32, size: u32, poll: &mut impl FnMut()) -> u32 {
        let head = data_message_head(size);
        self.wait(|c| c.links[&handle].credit > 0, poll);
        let delivery_id = self.next_delivery_id;
        self.next_delivery_id = delivery_id.wrapping_add(1);
        let (size, mut sent) = (size as usize, 0usize);
        let mut payload = Vec::with_capacity(self.max_frame_size);
        // Copied rather than filled byte by byte, which is slow in a debug build.
        let zeros = vec![0; self.max_frame_size];
        let mut frame = Default::default();
        loop {
            self.wait(|c| c.remote_incoming_window > 0, poll);
            let first = (sent == 0).then_some(delivery_id);
            let room = self.max_frame_size
                - FRAME_HEADER_SIZE
                - transfer(handle, first, true).encoded_size();
            let more = size - sent > room;
            let chunk = room.min(size - sent);
            let from_head = &head[sent.min(head.len())..(sent + chunk).min(head.len())];
            payload.clear();
            payload.extend_from_slice(from_head);
            payload.extend_from_slice(&zeros[..chunk - from_head.len()]);
            encode_amqp_frame(0, &transfer(handle, first, more), &payload, &mut frame);
            // Counted before the write: an answer read meanwhile finds the frame sent.
            self.progress.lock().unwrap().streaming = Some((delivery_id, (sent + chunk) as u64));
            self.socket.write_all(&frame).unwrap();
            frame.clear();
            self.next_outgoing_id = self.next_outgoing_id.wrapping_add(1);
            self.remote_incoming_window -= 1;
            sent += chunk;
            poll();
            while let Ok(performative) = self.performatives.try_recv() {
                self.handle(performative);
            }
            if !more {
                break;
            }
        }
        self.progress.lock().unwrap().streaming = None;
        let link = self.links.get_mut(&handle).unwrap();
        link.delivery_count = link.delivery_count.wrapping_add(1);
        link.credit = link.credit.saturating_sub(1);
        delivery_id
    }

    /// Waits for the outcome of `delivery_id`; `poll` runs after every frame and while waiting.
    pub fn outcome(&mut self, delivery_id: u32, poll: &mut impl FnMut()) -> Outcome {
        self.wait(|c| c.settled(delivery_id).is_some(), poll);
        self.settled(delivery_id).unwrap().clone()
    }

    /// When `delivery_id` was settled before its last frame was sent: the bytes of it sent when
    /// the disposition arrived (a bound on what the broker had read when it answered).
    pub fn sent_when_settled(&self, delivery_id: u32) -> Option<u64> {
        let progress = self.progress.lock().unwrap();
        progress.settled_while_streaming.get(&delivery_id).copied()
    }

    /// The outcome of `delivery_id`, once a disposition covers it.
    fn settled(&self, delivery_id: u32) -> Option<&Outcome> {
        self.outcomes
            .iter()
            .find(|(first, last, _)| (*first..=*last).contains(&delivery_id))
            .map(|(_, _, outcome)| outcome)
    }

    /// Handles the broker's frames until `done`, running `poll` after each and every
    /// [`POLL`] of silence; fails the test after [`STEP`] of silence.
    fn wait(&mut self, done: impl Fn(&Self) -> bool, poll: &mut impl FnMut()) {
        let mut last_frame = Instant::now();
        while !done(self) {
            match self.performatives.recv_timeout(POLL) {
                Ok(performative) => {
                    self.handle(performative);
                    last_frame = Instant::now();
                }
                Err(RecvTimeoutError::Timeout) => {
                    assert!(last_frame.elapsed() < STEP, "the broker is silent");
                }
                Err(RecvTimeoutError::Disconnected) => panic!("the broker hung up"),
            }
            poll();
        }
    }

    fn handle(&mut self, performative: Performative) {
        match performative {
            Performative::Flow(flow) => {
                // The window the broker grants from its next-incoming-id, minus what we sent
                // since (§2.5.6).
                let next_incoming_id = flow.next_incoming_id.map_or(0, |id| id.0);
                self.remote_incoming_window = next_incoming_id
                    .wrapping_add(flow.incoming_window)
                    .wrapping_sub(self.next_outgoing_id);
                if let Some(link) = flow.handle.and_then(|h| self.links.get_mut(&h.0)) {
                    let delivery_count = flow.delivery_count.map_or(link.delivery_count, |c| c.0);
                    let credit = flow.link_credit.unwrap_or(0);
                    link.credit = delivery_count
                        .wrapping_add(credit)
                        .wrapping_sub(link.delivery_count);
                }
            }
            Performative::Disposition(disposition) => {
                let first = disposition.first.0;
                let last = disposition.last.map_or(first, |last| last.0);
                self.outcomes
                    .push((first, last, outcome_of(disposition.state)));
            }
            Performative::Detach(_) | Performative::End(_) | Performative::Close(_) => {
                panic!("the broker ended a scope: {performative:?}")
            }
            _ => {}
        }
    }
}

impl Drop for RawConnection {
    fn drop(&mut self) {
        // Ends the reader thread.
        let _ = self.socket.shutdown(Shutdown::Both);
    }
}

/// Whether the reader may read the socket: once `stop` is set it waits on `stopped`, which
/// returns when the connection is dropped.
struct Reading {
    stop: Arc<AtomicBool>,
    stopped: mpsc::Receiver<()>,
}

/// What the broker sends on `socket`, decoded by busbar-amqp; heartbeats are skipped. Ends when
/// the socket is closed or fails.
fn incoming(mut socket: TcpStream, reading: Reading) -> impl Iterator<Item = Incoming> + Send {
    let mut decoder = FrameDecoder::new(u32::MAX);
    let mut buf = Default::default();
    let mut chunk = vec![0; 64 * 1024];
    std::iter::from_fn(move || {
        loop {
            let incoming = match ProtocolHeader::decode(&mut buf) {
                Ok(header) => header.map(Incoming::Header),
                // Not a protocol header: a frame, whose first bytes are its size.
                Err(_) => match decoder.decode(&mut buf).expect("a malformed frame") {
                    Some(Frame::Empty { .. }) => continue,
                    Some(Frame::Sasl(frame)) => Some(Incoming::Sasl(frame)),
                    Some(Frame::Amqp(frame)) => Some(Incoming::Amqp(frame.performative)),
                    None => None,
                },
            };
            if incoming.is_some() {
                return incoming;
            }
            if reading.stop.load(Ordering::Relaxed) {
                let _ = reading.stopped.recv();
            }
            match socket.read(&mut chunk) {
                Ok(0) | Err(_) => return None,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
        }
    })
}

/// Writes these performatives, each an AMQP frame on channel 0 without payload, in one write.
fn write_frames(socket: &mut TcpStream, performatives: &[Performative]) {
    let mut out = Default::default();
    for performative in performatives {
        encode_amqp_frame(0, performative, &[], &mut out);
    }
    socket.write_all(&out).unwrap();
}

/// The first bytes of a message of `size` bytes in all that is one data section: the section's
/// descriptor (0x00, ulong 0x75) and its binary's constructor (vbin32) and length; the body
/// follows.
fn data_message_head(size: u32) -> Vec<u8> {
    let mut head = vec![0x00];
    Value::Ulong(DATA).encode(&mut head);
    head.push(0xb0);
    let head_len = u32::try_from(head.len() + 4).unwrap();
    let body = size
        .checked_sub(head_len)
        .expect("a message smaller than its header");
    head.extend_from_slice(&body.to_be_bytes());
    head
}

/// An attach of link `handle` in `role` from `source` to `target`.
fn attach(name: &str, handle: u32, role: Role, source: &str, target: &str) -> Attach {
    Attach {
        name: name.into(),
        handle: Handle(handle),
        role,
        snd_settle_mode: SenderSettleMode::Mixed,
        rcv_settle_mode: ReceiverSettleMode::First,
        source: Some(Box::new(Source::with_address(source))),
        target: Some(Box::new(Target::with_address(target).into())),
        unsettled: None,
        incomplete_unsettled: false,
        // Only a sender's counts (§2.7.3).
        initial_delivery_count: (role == Role::Sender).then_some(SequenceNo(0)),
        max_message_size: None,
        offered_capabilities: None,
        desired_capabilities: None,
        properties: None,
    }
}

/// A transfer performative: the first of a delivery carries its id, tag and format.
fn transfer(handle: u32, first: Option<u32>, more: bool) -> Performative {
    let mut transfer = Transfer::new(Handle(handle));
    if let Some(id) = first {
        transfer.delivery_id = Some(DeliveryNumber(id));
        transfer.delivery_tag = Some(id.to_be_bytes().to_vec().into());
        transfer.message_format = Some(MessageFormat::AMQP);
    }
    transfer.settled = Some(false);
    transfer.more = more;
    transfer.into()
}

fn outcome_of(state: Option<DeliveryState>) -> Outcome {
    match state {
        Some(DeliveryState::Accepted(_)) => Outcome::Accepted,
        Some(DeliveryState::Rejected(Rejected { error })) => Outcome::Rejected {
            condition: error
                .as_ref()
                .map(|error| error.condition.as_str().to_owned())
                .unwrap_or_default(),
            description: error
                .and_then(|error| error.description)
                .unwrap_or_default(),
        },
        state => Outcome::Other(state),
    }
}
