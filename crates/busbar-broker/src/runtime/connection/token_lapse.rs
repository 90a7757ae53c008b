//! Tokens that lapse without a renewal. The SDKs renew their `$cbs` tokens before they expire;
//! a client that does not loses its links when its token expires, as the service
//! force-detaches them (`amqp:link:detach-forced`, "… Code: RenewToken. Details: Unauthorized
//! access. 'Listen' claim(s) are required …"). One timer per connection waits, on the wall
//! clock as token expiry is judged, for the earliest expiry among its grants.

use busbar_amqp::engine::Connection;

use super::BrokerConnection;
use crate::errors::BrokerError;
use crate::runtime::mailbox::ConnectionCommand;

impl BrokerConnection {
    /// Arms the connection's timer for the earliest expiry among its grants, in place of the
    /// one armed before (none without grants).
    pub(super) fn arm_lapse_timer(&mut self) {
        if let Some(timer) = self.lapse_timer.take() {
            timer.abort();
        }
        let Some(first) = self.grants.iter().map(|grant| grant.expires_at).min() else {
            return;
        };
        let at = self.shared.clock.wall_instant_at(first);
        let mailbox = self.mailbox.clone();
        let timer = tokio::spawn(async move {
            tokio::time::sleep_until(at).await;
            mailbox.post(ConnectionCommand::TokensLapsed);
        });
        self.lapse_timer = Some(timer.abort_handle());
    }

    /// Drops the grants of expired tokens and detaches every link that held by them alone.
    pub(super) fn tokens_lapsed(&mut self, connection: &mut Connection) {
        let now = self.shared.clock.wall_now();
        self.grants.retain(|grant| grant.expires_at > now);
        let namespace = self.shared.namespace.clone();
        self.detach_uncovered(connection, |link, claim, path| BrokerError::TokenLapsed {
            link: link.to_owned(),
            claim: claim.name(),
            resource: format!("sb://{namespace}/{path}"),
        });
        self.arm_lapse_timer();
    }
}
