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

/// Checks one shared-access-signature token: its signature against the namespace's keys, and
/// its expiry against `now_unix_millis`. Returns why it is refused, for the log (clients get a
/// bare 401).
///
/// Closures of that shape are verifiers, so the binary can pass
/// `move |token, now| keys.verify(&SasToken::parse(token)?, now)` with the error mapped.
pub trait SasVerifier: Send + Sync + 'static {
    /// Accepts or refuses `token`, the whole header value (`SharedAccessSignature sr=…`).
    fn verify(&self, token: &str, now_unix_millis: i64) -> Result<(), String>;
}

impl<F> SasVerifier for F
where
    F: Fn(&str, i64) -> Result<(), String> + Send + Sync + 'static,
{
    fn verify(&self, token: &str, now_unix_millis: i64) -> Result<(), String> {
        self(token, now_unix_millis)
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

/// Why a request gets 401 (logged, never sent: the service answers 401 with an empty body).
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
    /// The verifier refused a token.
    #[error("the {header} token is refused: {reason}")]
    Refused {
        /// Which header.
        header: &'static str,
        /// The verifier's reason.
        reason: String,
    },
}

impl Authorization {
    /// Checks a request's headers at `now_unix_millis`.
    pub fn check(&self, headers: &HeaderMap, now_unix_millis: i64) -> Result<(), Unauthorized> {
        let Authorization::SharedAccessSignature(verifier) = self else {
            return Ok(());
        };
        let token = headers.get(AUTHORIZATION).ok_or(Unauthorized::Missing)?;
        verify(verifier.as_ref(), "Authorization", token, now_unix_millis)?;
        for header in SUPPLEMENTARY_HEADERS {
            if let Some(token) = headers.get(header) {
                verify(verifier.as_ref(), header, token, now_unix_millis)?;
            }
        }
        Ok(())
    }
}

fn verify(
    verifier: &dyn SasVerifier,
    header: &'static str,
    value: &hyper::header::HeaderValue,
    now_unix_millis: i64,
) -> Result<(), Unauthorized> {
    let token = value
        .to_str()
        .ok()
        .filter(|token| token.starts_with(SAS_SCHEME))
        .ok_or(Unauthorized::NotSharedAccessSignature { header })?;
    verifier
        .verify(token, now_unix_millis)
        .map_err(|reason| Unauthorized::Refused { header, reason })
}

#[cfg(test)]
mod tests {
    use super::*;
    use hyper::header::HeaderValue;

    /// Accepts `SharedAccessSignature …sig=good…` that has not expired by `se=` (seconds).
    fn verifier() -> Authorization {
        Authorization::SharedAccessSignature(Arc::new(|token: &str, now: i64| {
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
        assert_eq!(Authorization::Open.check(&HeaderMap::new(), 0), Ok(()));
    }

    #[test]
    fn a_verified_unexpired_token_passes_whatever_its_header_case() {
        assert_eq!(
            verifier().check(&headers(&[("authorization", GOOD)]), 99_999),
            Ok(())
        );
        assert_eq!(
            verifier().check(&headers(&[("Authorization", GOOD)]), 0),
            Ok(())
        );
    }

    #[test]
    fn missing_malformed_refused_and_expired_tokens_fail() {
        let policy = verifier();
        assert_eq!(
            policy.check(&HeaderMap::new(), 0),
            Err(Unauthorized::Missing)
        );
        assert_eq!(
            policy.check(&headers(&[("authorization", "Bearer eyJ0eXAi")]), 0),
            Err(Unauthorized::NotSharedAccessSignature {
                header: "Authorization"
            })
        );
        let forged = GOOD.replace("sig=good", "sig=forged");
        assert!(matches!(
            policy.check(&headers(&[("authorization", &forged)]), 0),
            Err(Unauthorized::Refused { .. })
        ));
        assert_eq!(
            policy.check(&headers(&[("authorization", GOOD)]), 100_000),
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
            assert_eq!(policy.check(&good, 0), Ok(()), "{header}");
            let bad = headers(&[("authorization", GOOD), (header, &forged)]);
            assert!(policy.check(&bad, 0).is_err(), "{header}");
        }
    }
}
