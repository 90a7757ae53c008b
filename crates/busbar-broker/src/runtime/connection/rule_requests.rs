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
        let registry = self.shared.registry.current();
        let Some(subscription) = registry.subscription(path) else {
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
        self.change_rules(link, request, path, &change);
        None
    }

    /// Applies `change` to the subscription at `path`: answered, and in force for sends, once
    /// its record is durable ([`LiveRules::change`](crate::runtime::rule_changes::LiveRules::change)).
    fn change_rules(&mut self, link: LinkId, request: Request, path: &str, change: &RuleChange) {
        let registry = self.shared.registry.current();
        let Some(subscription) = registry.subscription(path) else {
            return;
        };
        let mailbox = self.mailbox.clone();
        let entity = path.to_owned();
        let reply = Box::new(move |result: Result<(), BrokerError>| {
            mailbox.post(ConnectionCommand::Respond {
                request_link: link,
                request: Box::new(request),
                entity,
                result: result.map(|()| OperationResult::Done),
            });
        });
        let store = &self.shared.store;
        // Waits only while the store writer's queue is full (back-pressure).
        tokio::task::block_in_place(|| {
            subscription.rules.change(
                change,
                subscription.id,
                |records, completion| store.submit(records, completion),
                reply,
            );
        });
    }
}
