//! Entity status in the registry: which queues, topics and subscriptions refuse sends or
//! receives now. Every send (AMQP link, HTTP, explorer) and every receive attach asks here, so
//! a change applies to the next one as soon as the registry is replaced. The entities' own
//! shared-access rules are kept beside, for `$cbs` to find the same way.

use std::sync::Arc;

use super::{Registry, Resolved};
use crate::address::EntityPath;
use crate::auth::{AccessRights, AuthorizationRule, SasKeys};
use crate::config::{EntityStatus, subscription_refuses_receives};
use crate::errors::BrokerError;
use crate::names::EntityName;

impl Registry {
    /// Records the shared-access rules of the queue or topic `name` (none: it has none).
    pub(crate) fn set_entity_keys(&mut self, name: &EntityName, rules: &[AuthorizationRule]) {
        if rules.is_empty() {
            self.entity_keys.remove(name);
        } else {
            let keys = SasKeys::from_rules(rules.iter().cloned());
            self.entity_keys.insert(name.clone(), Arc::new(keys));
        }
    }

    /// The shared-access rules of the queue or topic `name`, if it has its own.
    pub(crate) fn entity_keys(&self, name: &EntityName) -> Option<Arc<SasKeys>> {
        self.entity_keys.get(name).cloned()
    }

    /// The queues and topics one of whose own rules takes the SASL PLAIN `response` (a key
    /// name and one of its keys), each with that rule's rights.
    pub(crate) fn plain_entity_rights(&self, response: &[u8]) -> Vec<(EntityName, AccessRights)> {
        self.entity_keys
            .iter()
            .filter_map(|(entity, keys)| {
                let name = keys.authenticate_plain(response).ok()?;
                Some((entity.clone(), keys.rights_of(&name)))
            })
            .collect()
    }

    /// Records the status of the queue, topic or subscription at `path`.
    pub(crate) fn set_status(&mut self, path: EntityPath, status: EntityStatus) {
        if status == EntityStatus::Active {
            self.statuses.remove(&path);
        } else {
            self.statuses.insert(path, status);
        }
    }

    /// The status of the entity at `path` (a missing one counts as active).
    fn status(&self, path: &EntityPath) -> EntityStatus {
        self.statuses.get(path).copied().unwrap_or_default()
    }

    /// Why a send to the queue or topic at `path` is refused for its status, if it is.
    pub(crate) fn send_refusal(&self, namespace: &str, path: &EntityPath) -> Option<BrokerError> {
        let status = self.status(path);
        if !status.refuses_sends() {
            return None;
        }
        let entity = path.to_string();
        let namespace = namespace.to_owned();
        Some(match status {
            EntityStatus::SendDisabled => BrokerError::EntitySendDisabled {
                namespace,
                kind: match self.resolve(path) {
                    Some(Resolved::Topic(_)) => "Topic",
                    _ => "Queue",
                },
                entity,
            },
            _ => BrokerError::EntityDisabled { namespace, entity },
        })
    }

    /// Why receiving from the queue or subscription at `path` is refused for its status (or its
    /// topic's), if it is.
    pub(crate) fn receive_refusal(
        &self,
        namespace: &str,
        path: &EntityPath,
    ) -> Option<BrokerError> {
        let refused = match path {
            EntityPath::QueueOrTopic(_) => self.status(path).refuses_receives(),
            EntityPath::Subscription { topic, .. } => subscription_refuses_receives(
                self.status(path),
                self.status(&EntityPath::QueueOrTopic(topic.clone())),
            ),
        };
        refused.then(|| BrokerError::EntityDisabled {
            namespace: namespace.to_owned(),
            entity: path.to_string(),
        })
    }
}
