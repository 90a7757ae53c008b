//! Credentials that stop covering a connection's links.
//!
//! Tokens that lapse without a renewal: the SDKs renew their `$cbs` tokens before they expire;
//! a client that does not loses its links when its token expires, as the service
//! force-detaches them (`amqp:link:detach-forced`, "… Code: RenewToken. Details: Unauthorized
//! access. 'Listen' claim(s) are required …"). One timer per connection waits, on the wall
//! clock as token expiry is judged, for the earliest expiry among its grants.
//!
//! A SASL PLAIN credential has no renewal: the connection watches the namespace's rules and
//! the entities' for as long as it lives, checks its credential again at every change, and
//! detaches (`amqp:unauthorized-access`) the links a rotated, removed or narrowed rule no longer
//! covers.

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

    /// Wakes the connection at every change of the namespace's or the entities' rules.
    pub(super) fn watch_rules(&mut self) {
        let mut namespace_rules = self.shared.keys.changes();
        let mut entities = self.shared.registry.changes();
        let mailbox = self.mailbox.clone();
        let watcher = tokio::spawn(async move {
            loop {
                let changed = tokio::select! {
                    changed = namespace_rules.changed() => changed,
                    changed = entities.changed() => changed,
                };
                if changed.is_err() {
                    return;
                }
                mailbox.post(ConnectionCommand::RulesChanged);
            }
        });
        self.plain_watcher = Some(watcher.abort_handle());
    }

    /// Checks the SASL PLAIN credential against the rules as they are now, and detaches every
    /// link it no longer covers (unless a token covers it).
    pub(super) fn rules_changed(&mut self, connection: &mut Connection) {
        let Some(response) = self.plain_credential.take() else {
            return;
        };
        if !self.sign_in_plain(&response) {
            tracing::info!(
                connection = self.id,
                "SASL PLAIN credential no longer valid"
            );
        }
        self.plain_credential = Some(response);
        let namespace = self.shared.namespace.clone();
        self.detach_uncovered(connection, |_, claim, path| BrokerError::MissingClaim {
            claim: claim.name(),
            resource: format!("sb://{namespace}/{path}"),
        });
    }
}
