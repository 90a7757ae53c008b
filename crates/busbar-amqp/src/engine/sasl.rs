//! SASL server side (AMQP 1.0 §5.3): mechanisms offered, the client's choice, PLAIN parsing.

use bytes::Bytes;

/// Mechanisms the server offers, in order: `MSSBCBS` (.NET), `ANONYMOUS` (Python, JS, Rust), `PLAIN`.
pub const OFFERED_MECHANISMS: [&str; 3] = ["MSSBCBS", "ANONYMOUS", "PLAIN"];

/// What a client presented in its `sasl-init`, as the application sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SaslCredentials {
    /// `ANONYMOUS`, with the optional trace information (rhea sends `\0<key name>`).
    Anonymous {
        /// The initial response, unparsed.
        trace: Bytes,
    },
    /// `MSSBCBS`: authentication happens later through CBS put-token.
    Cbs,
    /// `PLAIN` (RFC 4616): `[authzid] \0 authcid \0 passwd`.
    Plain {
        /// Authorisation identity (often empty).
        authzid: String,
        /// User name.
        username: String,
        /// Password.
        password: String,
    },
    /// A mechanism we did not offer; the application may still decide.
    Other {
        /// The mechanism name the client chose.
        mechanism: String,
        /// The initial response, unparsed.
        response: Bytes,
    },
    /// A `PLAIN` response that does not have the RFC 4616 shape or is not UTF-8.
    MalformedPlain,
}

impl SaslCredentials {
    /// Interprets a `sasl-init`'s mechanism and initial response.
    pub fn parse(mechanism: &str, initial_response: Bytes) -> Self {
        match mechanism {
            "ANONYMOUS" => Self::Anonymous {
                trace: initial_response,
            },
            "MSSBCBS" => Self::Cbs,
            "PLAIN" => parse_plain(&initial_response).unwrap_or(Self::MalformedPlain),
            other => Self::Other {
                mechanism: other.to_owned(),
                response: initial_response,
            },
        }
    }
}

fn parse_plain(response: &[u8]) -> Option<SaslCredentials> {
    let mut parts = response.split(|byte| *byte == 0);
    let authzid = std::str::from_utf8(parts.next()?).ok()?;
    let username = std::str::from_utf8(parts.next()?).ok()?;
    let password = std::str::from_utf8(parts.next()?).ok()?;
    if parts.next().is_some() || username.is_empty() {
        return None;
    }
    Some(SaslCredentials::Plain {
        authzid: authzid.to_owned(),
        username: username.to_owned(),
        password: password.to_owned(),
    })
}

/// The application's verdict on a `sasl-init` (§5.3.3.6 codes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SaslVerdict {
    /// Code 0: authentication succeeded.
    Ok,
    /// Code 1: authentication failed (bad credentials).
    AuthFailed,
}

impl SaslVerdict {
    /// The `sasl-outcome` code for this verdict.
    pub fn code(self) -> u8 {
        match self {
            Self::Ok => 0,
            Self::AuthFailed => 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_splits_on_nul() {
        let parsed = SaslCredentials::parse("PLAIN", Bytes::from_static(b"\0user\0pa\xc3\xa9ss"));
        assert_eq!(
            parsed,
            SaslCredentials::Plain {
                authzid: String::new(),
                username: "user".into(),
                password: "pa\u{e9}ss".into()
            }
        );
    }

    #[test]
    fn malformed_plain_is_reported_not_guessed() {
        for bad in [&b"user-pass"[..], b"\0\0pass", b"a\0b\0c\0d", b"\0u\0\xff"] {
            assert_eq!(
                SaslCredentials::parse("PLAIN", Bytes::copy_from_slice(bad)),
                SaslCredentials::MalformedPlain,
                "{bad:?}"
            );
        }
    }

    #[test]
    fn anonymous_keeps_the_trace_and_cbs_is_recognised() {
        let trace = Bytes::from_static(b"\0RootManageSharedAccessKey");
        assert_eq!(
            SaslCredentials::parse("ANONYMOUS", trace.clone()),
            SaslCredentials::Anonymous { trace }
        );
        assert_eq!(
            SaslCredentials::parse("MSSBCBS", Bytes::new()),
            SaslCredentials::Cbs
        );
        assert!(matches!(
            SaslCredentials::parse("SCRAM-SHA-1", Bytes::new()),
            SaslCredentials::Other { .. }
        ));
    }
}
