//! A client that stops keeping up: a receive link granted credit, then no more reading of the
//! socket, so the broker's deliveries back up in it (and in the broker's writes to it).

use std::time::Instant;

use busbar_amqp::performatives::{Flow, Handle, Performative, Role, TransferNumber};

use super::{RawConnection, STEP, write_frames};

impl RawConnection {
    /// Attaches a peek-lock receive link to `address`, waits for the broker's attach, and
    /// grants it `credit`; returns its handle.
    pub fn attach_receiver(&mut self, name: &str, address: &str, credit: u32) -> u32 {
        let handle = u32::try_from(self.links.len()).unwrap();
        self.links.insert(handle, super::Link::default());
        let attach = super::attach(name, handle, Role::Receiver, address, name);
        write_frames(&mut self.socket, &[attach.into()]);
        let started = Instant::now();
        loop {
            let left = STEP.saturating_sub(started.elapsed());
            match self.performatives.recv_timeout(left) {
                Ok(Performative::Attach(attach)) if attach.handle == Handle(handle) => break,
                Ok(other) => self.handle(other),
                Err(error) => panic!("no attach from the broker: {error}"),
            }
        }
        let flow = Flow {
            next_incoming_id: Some(TransferNumber(0)),
            incoming_window: u32::MAX,
            next_outgoing_id: TransferNumber(self.next_outgoing_id),
            outgoing_window: u32::MAX,
            handle: Some(Handle(handle)),
            delivery_count: Some(super::SequenceNo(0)),
            link_credit: Some(credit),
            available: None,
            drain: false,
            echo: false,
            properties: None,
        };
        write_frames(&mut self.socket, &[flow.into()]);
        handle
    }

    /// Stops reading the socket (after the read under way, if any): whatever the broker sends
    /// from now on stays in the socket's buffers, and once they are full, in the broker.
    pub fn stop_reading(&self) {
        self.stop_reading
            .store(true, std::sync::atomic::Ordering::Relaxed);
    }
}
