//! Who may use the administration API: the `Authorization: SharedAccessSignature sr=…&sig=…&
//! se=…&skn=…` every SDK sends (admin-api.md §2), and the `ServiceBusSupplementaryAuthorization`
//! / `ServiceBusDlqSupplementaryAuthorization` tokens they add to a PUT whose `ForwardTo` /
//! `ForwardDeadLetteredMessagesTo` is set.
//!
//! The signature check is not here: the broker already parses and verifies SAS tokens against
//! its keys (`busbar_broker::auth`), and this crate must not depend on the broker (the broker
//! is what implements [`crate::control::NamespaceControl`]). So the server configuration takes
//! a [`SasVerifier`], which the binary builds from the broker's keys; this module only finds
//! the tokens and asks it. No audience is insisted on: what each SDK signs as `sr` differs and
//! none of it matches the admin URL reliably (§2).

use std::sync::Arc;

use hyper::HeaderMap;
use hyper::header::AUTHORIZATION;

/// The scheme word every SDK puts before the token.
const SAS_SCHEME: &str = "SharedAccessSignature ";
/// Tokens for a `ForwardTo` target (Go sends the name canonicalised to
/// `Servicebussupplementaryauthorization`; header names are case-insensitive).
const SUPPLEMENTARY_HEADERS: [&str; 2] = [
    "ServiceBusSupplementaryAuthorization",
    "ServiceBusDlqSupplementaryAuthorization",
];

/// A right a request needs: Service Bus's `AccessRights` (Manage implies Send and Listen).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Right {
    /// The administration API, the explorer, Busbar's controls.
    Manage,
    /// Sending through the HTTP data plane.
    Send,
    /// Receiving and settling through the HTTP data plane.
    Listen,
}

/// What a request asks to be authorised for: a right, on one entity or on the namespace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Need<'a> {
    /// The right.
    pub right: Right,
    /// The entity's path (`q`, `t/Subscriptions/s`), or `None` for the namespace. A rule of
    /// that entity's own (or its topic's) may grant what a namespace rule would.
    pub entity: Option<&'a str>,
}

impl Need<'static> {
    /// Manage on the namespace: what the administration API, the explorer and the controls need.
    pub const MANAGE: Need<'static> = Need {
        right: Right::Manage,
        entity: None,
    };
}

/// Checks one shared-access-signature token: its signature against the namespace's keys, its
/// expiry against `now_unix_millis`, and that its rule grants what `need` asks. Returns why it
/// is refused in the service's words (`InvalidSignature: The token has an invalid signature.`,
/// `Manage,EntityRead claims required for this operation.`), which the 401 carries.
///
/// Closures of that shape are verifiers, so the binary can pass one built on the broker's keys.
pub trait SasVerifier: Send + Sync + 'static {
    /// Accepts or refuses `token`, the whole header value (`SharedAccessSignature sr=…`).
    fn verify(&self, token: &str, need: Need<'_>, now_unix_millis: i64) -> Result<(), String>;
}

impl<F> SasVerifier for F
where
    F: Fn(&str, Need<'_>, i64) -> Result<(), String> + Send + Sync + 'static,
{
    fn verify(&self, token: &str, need: Need<'_>, now_unix_millis: i64) -> Result<(), String> {
        self(token, need, now_unix_millis)
    }
}

/// Which requests the server serves.
#[derive(Clone)]
pub enum Authorization {
    /// Every request, token or not (the emulator checks no keys).
    Open,
    /// Requests whose `Authorization` header holds a `SharedAccessSignature` the verifier
    /// accepts, and whose supplementary tokens, when present, it accepts too.
    SharedAccessSignature(Arc<dyn SasVerifier>),
}

impl std::fmt::Debug for Authorization {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Authorization::Open => f.write_str("Open"),
            Authorization::SharedAccessSignature(_) => f.write_str("SharedAccessSignature(..)"),
        }
    }
}

/// Why a request gets 401. A request without a token gets an empty body, as the service
/// answers it; a refused one gets the service's `<Error>` body with [`Unauthorized::detail`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Unauthorized {
    /// No `Authorization` header.
    #[error("the request has no Authorization header")]
    Missing,
    /// A header that is not a shared access signature (`Bearer …`, not UTF-8).
    #[error("the {header} header is not a SharedAccessSignature")]
    NotSharedAccessSignature {
        /// Which header.
        header: &'static str,
    },
    /// The verifier refused a token; `reason` is in the service's words.
    #[error("the {header} token is refused: {reason}")]
    Refused {
        /// Which header.
        header: &'static str,
        /// The verifier's reason.
        reason: String,
    },
}

impl Unauthorized {
    /// The `<Detail>` of the 401 (before the tracking suffix), `None` for the empty body the
    /// service answers a request without a token.
    pub fn detail(&self) -> Option<&str> {
        match self {
            Unauthorized::Missing => None,
            Unauthorized::NotSharedAccessSignature { .. } => Some(MALFORMED_TOKEN),
            Unauthorized::Refused { reason, .. } => Some(reason),
        }
    }
}

/// The service's words for an `Authorization` header that is no shared access signature.
const MALFORMED_TOKEN: &str = "MalformedToken: The credentials contained in the authorization \
     header are not in the WRAP format.";

impl Authorization {
    /// Checks a request's headers at `now_unix_millis` for `need`. The supplementary tokens of
    /// a forwarding entity, when present, must grant Send on the namespace (they prove the
    /// right to send to the target).
    pub fn check(
        &self,
        headers: &HeaderMap,
        need: Need<'_>,
        now_unix_millis: i64,
    ) -> Result<(), Unauthorized> {
        let Authorization::SharedAccessSignature(verifier) = self else {
            return Ok(());
        };
        let token = headers.get(AUTHORIZATION).ok_or(Unauthorized::Missing)?;
        verify(
            verifier.as_ref(),
            "Authorization",
            token,
            need,
            now_unix_millis,
        )?;
        let forwarding = Need {
            right: Right::Send,
            entity: None,
        };
        for header in SUPPLEMENTARY_HEADERS {
            if let Some(token) = headers.get(header) {
                verify(
                    verifier.as_ref(),
                    header,
                    token,
                    forwarding,
                    now_unix_millis,
                )?;
            }
        }
        Ok(())
    }
}

fn verify(
    verifier: &dyn SasVerifier,
    header: &'static str,
    value: &hyper::header::HeaderValue,
    need: Need<'_>,
    now_unix_millis: i64,
) -> Result<(), Unauthorized> {
    let token = value
        .to_str()
        .ok()
        .filter(|token| token.starts_with(SAS_SCHEME))
        .ok_or(Unauthorized::NotSharedAccessSignature { header })?;
    verifier
        .verify(token, need, now_unix_millis)
        .map_err(|reason| Unauthorized::Refused { header, reason })
}

#[cfg(test)]
mod tests {
    use super::*;
    use hyper::header::HeaderValue;

    /// Accepts `SharedAccessSignature …sig=good…` that has not expired by `se=` (seconds).
    fn verifier() -> Authorization {
        Authorization::SharedAccessSignature(Arc::new(|token: &str, need: Need<'_>, now: i64| {
            let expiry: i64 = token
                .split(['&', ' '])
                .find_map(|field| field.strip_prefix("se="))
                .and_then(|se| se.parse().ok())
                .ok_or("no expiry")?;
            if !token.contains("sig=good") {
                return Err("bad signature".to_owned());
            }
            if now >= expiry * 1000 {
                return Err("expired".to_owned());
            }
            if need.right == Right::Manage && token.contains("skn=sender") {
                return Err("Manage,EntityRead claims required for this operation.".to_owned());
            }
            Ok(())
        }))
    }

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for (name, value) in pairs {
            headers.insert(*name, HeaderValue::from_str(value).expect("header value"));
        }
        headers
    }

    const GOOD: &str = "SharedAccessSignature sr=https%3A%2F%2Flocalhost&sig=good&se=100&skn=k";

    #[test]
    fn open_accepts_anything() {
        assert_eq!(
            Authorization::Open.check(&HeaderMap::new(), Need::MANAGE, 0),
            Ok(())
        );
    }

    #[test]
    fn a_verified_unexpired_token_passes_whatever_its_header_case() {
        assert_eq!(
            verifier().check(&headers(&[("authorization", GOOD)]), Need::MANAGE, 99_999),
            Ok(())
        );
        assert_eq!(
            verifier().check(&headers(&[("Authorization", GOOD)]), Need::MANAGE, 0),
            Ok(())
        );
    }

    #[test]
    fn missing_malformed_refused_and_expired_tokens_fail() {
        let policy = verifier();
        assert_eq!(
            policy.check(&HeaderMap::new(), Need::MANAGE, 0),
            Err(Unauthorized::Missing)
        );
        assert_eq!(
            policy.check(
                &headers(&[("authorization", "Bearer eyJ0eXAi")]),
                Need::MANAGE,
                0
            ),
            Err(Unauthorized::NotSharedAccessSignature {
                header: "Authorization"
            })
        );
        let forged = GOOD.replace("sig=good", "sig=forged");
        assert!(matches!(
            policy.check(&headers(&[("authorization", &forged)]), Need::MANAGE, 0),
            Err(Unauthorized::Refused { .. })
        ));
        assert_eq!(
            policy.check(&headers(&[("authorization", GOOD)]), Need::MANAGE, 100_000),
            Err(Unauthorized::Refused {
                header: "Authorization",
                reason: "expired".into()
            })
        );
    }

    #[test]
    fn supplementary_tokens_are_checked_when_present() {
        let policy = verifier();
        let forged = GOOD.replace("sig=good", "sig=forged");
        for header in [
            "ServiceBusSupplementaryAuthorization",
            "Servicebussupplementaryauthorization",
            "ServiceBusDlqSupplementaryAuthorization",
        ] {
            let good = headers(&[("authorization", GOOD), (header, GOOD)]);
            assert_eq!(policy.check(&good, Need::MANAGE, 0), Ok(()), "{header}");
            let bad = headers(&[("authorization", GOOD), (header, &forged)]);
            assert!(policy.check(&bad, Need::MANAGE, 0).is_err(), "{header}");
        }
    }

    #[test]
    fn a_refusal_carries_the_verifier_s_words_and_a_missing_token_none() {
        let policy = verifier();
        let sender = GOOD.replace("skn=k", "skn=sender");
        let refused = policy
            .check(&headers(&[("authorization", &sender)]), Need::MANAGE, 0)
            .unwrap_err();
        assert_eq!(
            refused.detail(),
            Some("Manage,EntityRead claims required for this operation.")
        );
        let send = Need {
            right: Right::Send,
            entity: Some("q"),
        };
        assert_eq!(
            policy.check(&headers(&[("authorization", &sender)]), send, 0),
            Ok(())
        );
        let missing = policy.check(&HeaderMap::new(), send, 0).unwrap_err();
        assert_eq!(missing.detail(), None);
        let bearer = headers(&[("authorization", "Bearer x")]);
        let malformed = policy.check(&bearer, send, 0).unwrap_err();
        assert!(malformed.detail().unwrap().starts_with("MalformedToken"));
    }
}
