//! The `$cbs` put-token decision: is this token good for that audience, and does the entity exist?

use std::sync::Arc;

use super::keys::{SasKeys, Unauthorized};
use super::rights::AccessRights;
use super::token::SasToken;
use crate::address::{Address, EntityPath, path_of};
use crate::errors::BrokerError;
use crate::names::EntityName;
use crate::percent;

/// What a put-token request comes to; the `$cbs` handler answers 202, 401 or 404.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PutTokenOutcome {
    /// The token is valid for the audience until `expires_at_unix_millis` (status 202).
    Accepted {
        /// When the token stops being valid.
        expires_at_unix_millis: i64,
        /// The rights of the rule that signed it.
        rights: AccessRights,
    },
    /// The token is malformed, wrongly signed, expired or for another audience (status 401).
    Unauthorized(Unauthorized),
    /// The audience names an entity that does not exist (status 404).
    EntityNotFound {
        /// The entity (no sub-queue or `$management`), or the raw path of a malformed audience.
        entity: String,
    },
}

impl PutTokenOutcome {
    /// The error to report, `None` when accepted. Its status and wording come from the error
    /// table ([`BrokerError::to_wire`]), so `$cbs` answers like every other node.
    pub fn to_broker_error(&self, namespace: &str) -> Option<BrokerError> {
        match self {
            Self::Accepted { .. } => None,
            Self::Unauthorized(reason) => Some(reason.clone().into()),
            Self::EntityNotFound { entity } => Some(BrokerError::EntityNotFound {
                namespace: namespace.to_owned(),
                entity: entity.clone(),
            }),
        }
    }
}

/// In the service's words where it has them: a wrong signature is `InvalidSignature`.
impl From<Unauthorized> for BrokerError {
    fn from(reason: Unauthorized) -> Self {
        match reason {
            Unauthorized::SignatureMismatch(_) => BrokerError::InvalidSignature,
            reason => BrokerError::Unauthorized(reason.to_string()),
        }
    }
}

impl From<super::TokenError> for BrokerError {
    fn from(error: super::TokenError) -> Self {
        Unauthorized::from(error).into()
    }
}

/// Decides a put-token request: `token` is the request body, `audience` its `name`
/// application property (`sb://localhost:5673/q-basic`, `amqp://host/q/$management`, …).
/// Authorisation is checked first, so an unauthorised client learns nothing about which
/// entities exist. A namespace-level audience (`sb://host/`) names no entity and needs none.
///
/// A token whose key name no namespace rule has may be signed by a rule of the queue or topic
/// the audience names (`entity_rules`; a topic's rules cover its subscriptions): it is then
/// good within that entity only, its own audience included.
pub fn put_token(
    keys: &SasKeys,
    token: &str,
    audience: &str,
    now_unix_millis: i64,
    entity_exists: impl Fn(&EntityPath) -> bool,
    entity_rules: impl Fn(&EntityName) -> Option<Arc<SasKeys>>,
) -> PutTokenOutcome {
    let token = match SasToken::parse(token) {
        Ok(token) => token,
        Err(error) => return PutTokenOutcome::Unauthorized(error.into()),
    };
    let entity = top_level_entity(audience);
    let verified = verify_within(
        keys,
        &token,
        entity.as_ref(),
        SignedFor::Entity,
        now_unix_millis,
        entity_rules,
    );
    let rights = match verified {
        Ok(rights) => rights,
        Err(reason) => return PutTokenOutcome::Unauthorized(reason),
    };
    if !token.covers(audience) {
        return PutTokenOutcome::Unauthorized(Unauthorized::AudienceMismatch {
            audience: token.audience().to_owned(),
            resource: audience.to_owned(),
        });
    }
    let accepted = PutTokenOutcome::Accepted {
        expires_at_unix_millis: token.expiry_unix_millis(),
        rights,
    };
    let path = path_of(audience).trim_end_matches('/');
    if path.is_empty() {
        return accepted;
    }
    match Address::parse(audience) {
        Ok(Address::Cbs) => accepted,
        Ok(Address::Entity(node) | Address::Management(node)) => {
            if entity_exists(&node.path) {
                accepted
            } else {
                // Name the entity, not the node: `q`, not `q/$DeadLetterQueue/$management`.
                PutTokenOutcome::EntityNotFound {
                    entity: node.path.to_string(),
                }
            }
        }
        Err(_) => PutTokenOutcome::EntityNotFound {
            entity: path.to_owned(),
        },
    }
}

/// What a token signed by an entity's rule must have been signed for (its `sr`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SignedFor {
    /// That entity or something within it (`$cbs`: the token names what it is for).
    Entity,
    /// That entity, something within it, or the namespace as a whole (HTTP: the request's
    /// URL names the entity, and the administration clients sign their endpoint).
    EntityOrNamespace,
}

/// Verifies `token` for a request within the queue or topic `entity` (`None`: the namespace)
/// and returns the rights of the rule that signed it. The namespace's rules come first; a key
/// name none of them has may be a rule of `entity` (`entity_rules`; a topic's rules cover its
/// subscriptions), whose token is then good within that entity only: its `sr` must be within
/// it too (or be the namespace, as `signed_for` allows). Every way in — `$cbs`, SASL PLAIN,
/// HTTP — judges tokens here.
pub fn verify_within(
    keys: &SasKeys,
    token: &SasToken,
    entity: Option<&EntityName>,
    signed_for: SignedFor,
    now_unix_millis: i64,
    entity_rules: impl Fn(&EntityName) -> Option<Arc<SasKeys>>,
) -> Result<AccessRights, Unauthorized> {
    match keys.verify_rights(token, now_unix_millis) {
        Err(Unauthorized::UnknownKeyName(name)) => match entity {
            Some(entity) if signed_within(token.audience(), entity, signed_for) => {
                match entity_rules(entity) {
                    Some(rules) => rules.verify_rights(token, now_unix_millis),
                    None => Err(Unauthorized::UnknownKeyName(name)),
                }
            }
            _ => Err(Unauthorized::UnknownKeyName(name)),
        },
        verified => verified,
    }
}

/// Whether a token's audience (`sr`, decoded) is `entity` or within it (`q/messages`,
/// `t/Subscriptions/s`), or the namespace when `signed_for` allows it. A query
/// (`?api-version=…`, which JavaScript and Go sign with the URL) is not part of it.
fn signed_within(audience: &str, entity: &EntityName, signed_for: SignedFor) -> bool {
    let audience = audience.split_once('?').map_or(audience, |(path, _)| path);
    let Some(path) = percent::decode(path_of(audience)) else {
        return false;
    };
    let path = path.trim_matches('/');
    if path.is_empty() {
        return signed_for == SignedFor::EntityOrNamespace;
    }
    let entity = entity.as_str();
    path.get(..entity.len())
        .is_some_and(|head| head.eq_ignore_ascii_case(entity))
        && matches!(path.as_bytes().get(entity.len()), None | Some(b'/'))
}

/// The queue or topic an audience is within (a subscription's topic), `None` for the namespace.
pub fn top_level_entity(audience: &str) -> Option<EntityName> {
    let address = Address::parse(audience).ok()?;
    Some(address.entity_node()?.path.top_level().clone())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::sign_token;
    use crate::errors::{ErrorScope, StatusCode, TrackingId};
    use crate::names::EntityName;

    const NOW: i64 = 1_700_000_000_000;
    const EXPIRY_SECS: u64 = 1_700_003_600;

    fn emulator_token(audience: &str) -> String {
        sign_token(
            audience,
            "RootManageSharedAccessKey",
            "SAS_KEY_VALUE",
            EXPIRY_SECS,
        )
    }

    fn exists(path: &EntityPath) -> bool {
        let queue = EntityPath::QueueOrTopic(EntityName::from("q-basic"));
        let subscription = EntityPath::Subscription {
            topic: EntityName::from("t"),
            subscription: EntityName::from("s"),
        };
        *path == queue || *path == subscription
    }

    fn decide(token: &str, audience: &str) -> PutTokenOutcome {
        put_token(&SasKeys::emulator(), token, audience, NOW, exists, |_| None)
    }

    #[test]
    fn valid_tokens_for_existing_entities_are_accepted() {
        let accepted = PutTokenOutcome::Accepted {
            expires_at_unix_millis: 1_700_003_600_000,
            rights: crate::auth::AccessRights::ALL,
        };
        for audience in [
            "sb://localhost:5673/q-basic",
            "sb://localhost/Q-BASIC/$management",
            "amqp://localhost/q-basic/$DeadLetterQueue/$management",
            "sb://localhost/t/Subscriptions/s",
            "sb://localhost/",
        ] {
            assert_eq!(
                decide(&emulator_token(audience), audience),
                accepted,
                "{audience}"
            );
        }
        // A namespace-wide token covers any entity's audience.
        assert_eq!(
            decide(
                &emulator_token("sb://localhost/"),
                "sb://localhost/t/Subscriptions/s/$management"
            ),
            accepted
        );
    }

    #[test]
    fn missing_entities_are_not_found_with_the_service_bus_wording() {
        let audience = "sb://localhost:5673/nope";
        let outcome = decide(&emulator_token(audience), audience);
        assert_eq!(
            outcome,
            PutTokenOutcome::EntityNotFound {
                entity: "nope".into()
            }
        );
        let management = "sb://localhost/Nope/$DeadLetterQueue/$management";
        assert_eq!(
            decide(&emulator_token(management), management),
            PutTokenOutcome::EntityNotFound {
                entity: "Nope".into()
            }
        );
        let error = outcome.to_broker_error("sbemulatorns").unwrap();
        let scope = ErrorScope {
            namespace: "sbemulatorns",
            entity: "nope",
            tracking_id: TrackingId::random(),
            now_unix_millis: NOW,
        };
        let wire = error.to_wire(&scope);
        assert_eq!(wire.status, StatusCode::NOT_FOUND);
        assert!(
            wire.description
                .starts_with("The messaging entity 'sb://sbemulatorns/nope' could not be found.")
        );
        let malformed = "sb://localhost/t/Subscriptions";
        assert_eq!(
            decide(&emulator_token(malformed), malformed),
            PutTokenOutcome::EntityNotFound {
                entity: "t/Subscriptions".into()
            }
        );
    }

    #[test]
    fn bad_tokens_are_unauthorized_before_existence_is_checked() {
        let audience = "sb://localhost/nope";
        let expired = sign_token(audience, "RootManageSharedAccessKey", "SAS_KEY_VALUE", 1);
        assert!(matches!(
            decide(&expired, audience),
            PutTokenOutcome::Unauthorized(Unauthorized::Expired { .. })
        ));
        let forged = sign_token(audience, "RootManageSharedAccessKey", "guess", EXPIRY_SECS);
        let refused = decide(&forged, audience);
        assert!(matches!(
            refused,
            PutTokenOutcome::Unauthorized(Unauthorized::SignatureMismatch(_))
        ));
        // In the service's words.
        assert_eq!(
            refused.to_broker_error("ns"),
            Some(BrokerError::InvalidSignature)
        );
        assert!(matches!(
            decide("jwt-bearer", audience),
            PutTokenOutcome::Unauthorized(Unauthorized::MalformedToken(_))
        ));
        let other = emulator_token("sb://localhost/q-basic");
        let outcome = decide(&other, "sb://localhost/t/Subscriptions/s");
        assert!(matches!(
            outcome,
            PutTokenOutcome::Unauthorized(Unauthorized::AudienceMismatch { .. })
        ));
        let error = outcome.to_broker_error("sbemulatorns").unwrap();
        let scope = ErrorScope {
            namespace: "ns",
            entity: "t",
            tracking_id: TrackingId::random(),
            now_unix_millis: NOW,
        };
        assert_eq!(error.to_wire(&scope).status, StatusCode::UNAUTHORIZED);
    }

    #[test]
    fn accepted_has_no_error() {
        let audience = "sb://localhost/q-basic";
        assert_eq!(
            decide(&emulator_token(audience), audience).to_broker_error("ns"),
            None
        );
    }

    #[test]
    fn an_entity_token_must_be_signed_within_its_entity() {
        let q = EntityName::from("orders");
        for within in [
            "sb://h/orders",
            "http://h:5300/Orders/messages?api-version=2021-05",
            "sb://h/orders/$DeadLetterQueue",
        ] {
            assert!(signed_within(within, &q, SignedFor::Entity), "{within}");
        }
        for outside in [
            "sb://h/orders-2",
            "sb://h/other/orders",
            "sb://h/",
            "sb://h/%zz",
        ] {
            assert!(!signed_within(outside, &q, SignedFor::Entity), "{outside}");
        }
        assert!(signed_within(
            "https://h:5300",
            &q,
            SignedFor::EntityOrNamespace
        ));
        assert!(!signed_within(
            "sb://h/other",
            &q,
            SignedFor::EntityOrNamespace
        ));
    }

    #[test]
    fn an_entity_rule_signs_for_its_entity_and_its_subscriptions_only() {
        let rights = crate::auth::AccessRights::of([crate::auth::Claim::Listen]);
        let rules = Arc::new(SasKeys::from_rules([crate::auth::AuthorizationRule {
            key_name: "app".into(),
            primary_key: "entity key".into(),
            secondary_key: None,
            rights,
        }]));
        let entity_rules =
            |name: &EntityName| (*name == EntityName::from("t")).then(|| rules.clone());
        let decide = |signed_for: &str, audience: &str| {
            let token = sign_token(signed_for, "app", "entity key", EXPIRY_SECS);
            put_token(
                &SasKeys::emulator(),
                &token,
                audience,
                NOW,
                exists,
                entity_rules,
            )
        };
        for audience in [
            "sb://localhost/t/Subscriptions/s",
            "sb://localhost/T/subscriptions/S",
        ] {
            assert!(
                matches!(decide(audience, audience), PutTokenOutcome::Accepted { rights: r, .. } if r == rights),
                "{audience}"
            );
        }
        // Another entity, or a token signed for the whole namespace, is not the rule's.
        for (signed_for, audience) in [
            ("sb://localhost/q-basic", "sb://localhost/q-basic"),
            ("sb://localhost/", "sb://localhost/t/Subscriptions/s"),
        ] {
            assert!(
                matches!(
                    decide(signed_for, audience),
                    PutTokenOutcome::Unauthorized(Unauthorized::UnknownKeyName(_))
                ),
                "{signed_for} for {audience}"
            );
        }
    }
}
