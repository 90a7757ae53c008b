//! Rule operations on a subscription's `$management` (servicebus-amqp.md §5.11): rules live in
//! the registry, not in the entity task, so they are answered here. A change is answered once
//! its `Meta` record is durable.

use busbar_amqp::engine::{Connection, LinkId};

use super::BrokerConnection;
use crate::errors::BrokerError;
use crate::runtime::mailbox::ConnectionCommand;
use crate::runtime::management::OperationResult;
use crate::runtime::request::Request;
use crate::runtime::rule_changes::{self, RuleChange};
use crate::runtime::rule_descriptions::{ENUMERATE_RULES, enumerate};

impl BrokerConnection {
    /// Answers `request` if it is a rule operation; otherwise hands it back.
    pub(super) fn rule_request(
        &mut self,
        link: LinkId,
        request: Request,
        path: &str,
        connection: &mut Connection,
    ) -> Option<Request> {
        let change = rule_changes::parse(&request);
        if change.is_none() && request.text_property("operation") != Some(ENUMERATE_RULES) {
            return Some(request);
        }
        let Some(subscription) = self.shared.registry.subscription(path) else {
            let refused = BrokerError::NotAllowed("rules exist only on a subscription".to_owned());
            self.respond_management(link, &request, path, Err(refused), connection);
            return None;
        };
        let change = match change {
            None => {
                let rules = subscription.rules.current();
                let result = Ok(OperationResult::Rules(enumerate(&rules, &request)));
                self.respond_management(link, &request, path, result, connection);
                return None;
            }
            Some(Err(error)) => {
                self.respond_management(link, &request, path, Err(error), connection);
                return None;
            }
            Some(Ok(change)) => change,
        };
        self.change_rules(link, request, path, &change, connection);
        None
    }

    /// Applies `change` to the subscription at `path`: persisted and swapped in under the rule
    /// set's lock, so changes reach the store in the order they take effect.
    fn change_rules(
        &mut self,
        link: LinkId,
        request: Request,
        path: &str,
        change: &RuleChange,
        connection: &mut Connection,
    ) {
        let Some(subscription) = self.shared.registry.subscription(path) else {
            return;
        };
        let mut rules = subscription.rules.lock();
        let changed = match change.applied_to(&rules) {
            Ok(changed) => changed,
            Err(error) => {
                drop(rules);
                self.respond_management(link, &request, path, Err(error), connection);
                return;
            }
        };
        let record = rule_changes::record(subscription.id, &changed);
        let mailbox = self.mailbox.clone();
        let entity = path.to_owned();
        let completion = Box::new(move |outcome: Result<_, busbar_store::StoreError>| {
            mailbox.post(ConnectionCommand::Respond {
                request_link: link,
                request: Box::new(request),
                entity,
                result: outcome.map(|_| OperationResult::Done).map_err(|error| {
                    BrokerError::StoreUnavailable {
                        reason: error.to_string(),
                    }
                }),
            });
        });
        // Waits only while the store writer's queue is full (back-pressure).
        tokio::task::block_in_place(|| self.shared.store.submit(vec![record], completion));
        *rules = std::sync::Arc::new(changed);
    }
}
