//! Client settlements held while the events of one read are handled, then handed to each
//! receive link's entity as one command: the entity settles them in one pass and answers with
//! each lock token's own result, echoed back as one connection command.

use busbar_amqp::engine::{DeliveryId, LinkId};
use busbar_amqp::performatives::DeliveryState;
use busbar_core::{LockToken, Outcome};
use tokio::sync::mpsc;

use crate::runtime::mailbox::{ConnectionCommand, EntityCommand, Mailbox, post_entity};

/// One delivery a client settled.
#[derive(Debug)]
pub(super) struct Settlement {
    pub(super) delivery_id: DeliveryId,
    pub(super) token: LockToken,
    pub(super) outcome: Outcome,
    /// The state to echo, when the client settled unsettled (it waits for our echo).
    pub(super) echo: Option<DeliveryState>,
}

/// The settlements of one receive link.
#[derive(Debug)]
struct LinkSettlements {
    link: LinkId,
    inbox: mpsc::Sender<EntityCommand>,
    settlements: Vec<Settlement>,
}

/// Settlements waiting for the end of the current read.
#[derive(Debug, Default)]
pub(super) struct HeldSettlements {
    links: Vec<LinkSettlements>,
}

impl HeldSettlements {
    /// Holds a settlement of `link` (whose entity's inbox is `inbox`) until
    /// [`HeldSettlements::flush`].
    pub(super) fn hold(
        &mut self,
        link: LinkId,
        inbox: &mpsc::Sender<EntityCommand>,
        settlement: Settlement,
    ) {
        // A connection has few receive links, so a scan beats a map.
        match self.links.iter_mut().find(|held| held.link == link) {
            Some(held) => held.settlements.push(settlement),
            None => self.links.push(LinkSettlements {
                link,
                inbox: inbox.clone(),
                settlements: vec![settlement],
            }),
        }
    }

    /// Sends each link's held settlements to its entity as one command; the echoes come back
    /// to `mailbox` as one [`ConnectionCommand::SettleEchoes`] per link.
    pub(super) fn flush(&mut self, mailbox: &Mailbox) {
        for held in self.links.drain(..) {
            let link = held.link;
            let (settlements, echoes): (Vec<_>, Vec<_>) = held
                .settlements
                .into_iter()
                .map(|s| ((s.token, s.outcome), (s.delivery_id, s.echo)))
                .unzip();
            let mailbox = mailbox.clone();
            post_entity(
                &held.inbox,
                EntityCommand::SettleDeliveries {
                    settlements,
                    reply: Box::new(move |results| {
                        let echoes: Vec<_> = echoes
                            .into_iter()
                            .zip(results)
                            .filter_map(|((delivery_id, echo), result)| {
                                Some((delivery_id, echo?, result))
                            })
                            .collect();
                        if !echoes.is_empty() {
                            mailbox.post(ConnectionCommand::SettleEchoes { link, echoes });
                        }
                    }),
                },
            );
        }
    }
}
