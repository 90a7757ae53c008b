//! The configured shared-access keys: verifying SAS tokens and SASL PLAIN credentials against them.

use hmac::Mac;

use super::rights::AccessRights;
use super::token::{SasToken, hmac_sha256};

/// The key name of the emulator's connection string.
pub const DEFAULT_KEY_NAME: &str = "RootManageSharedAccessKey";
/// The emulator's literal key value.
pub const DEFAULT_KEY: &str = "SAS_KEY_VALUE";

/// Why a token or credential was refused (a `$cbs` 401).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Unauthorized {
    /// The token text is not a shared-access signature.
    #[error("the token is malformed: {0}")]
    MalformedToken(#[from] super::TokenError),
    /// No key of that name is configured.
    #[error("no shared access key is named {0:?}")]
    UnknownKeyName(String),
    /// `sig` is not base64.
    #[error("the token's signature is not base64")]
    MalformedSignature,
    /// The signature does not match the key.
    #[error("the token's signature does not match key {0:?}")]
    SignatureMismatch(String),
    /// The token expired at the given Unix time (seconds).
    #[error("the token expired at {expired_at_unix_secs} (Unix seconds)")]
    Expired {
        /// `se` of the token.
        expired_at_unix_secs: u64,
    },
    /// The token's audience does not cover the requested resource.
    #[error("the token's audience {audience:?} does not cover {resource:?}")]
    AudienceMismatch {
        /// `sr` of the token, decoded.
        audience: String,
        /// What the client asked to be authorised for.
        resource: String,
    },
    /// The SASL PLAIN response is not `[authzid] NUL authcid NUL passwd` in UTF-8.
    #[error("the SASL PLAIN response is malformed")]
    MalformedPlainResponse,
    /// The SASL PLAIN password is not the key of that name.
    #[error("wrong key for {0:?}")]
    WrongKey(String),
}

/// One shared-access authorization rule: a key name, a primary and an optional secondary key
/// (either signs), and the rights a token signed with them carries. Entity-level rules are
/// stored with their entity's definition (serialised, keys included, as the service keeps them).
#[derive(Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct AuthorizationRule {
    /// `skn` of the tokens it signs.
    pub key_name: String,
    /// The primary key.
    pub primary_key: String,
    /// The secondary key, accepted like the primary (so one can be rotated at a time).
    pub secondary_key: Option<String>,
    /// What its tokens may do.
    pub rights: AccessRights,
}

/// Never prints a key.
impl std::fmt::Debug for AuthorizationRule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuthorizationRule")
            .field("key_name", &self.key_name)
            .field("rights", &self.rights)
            .finish_non_exhaustive()
    }
}

impl AuthorizationRule {
    /// The rule's keys, primary first.
    fn keys(&self) -> impl Iterator<Item = &str> {
        std::iter::once(self.primary_key.as_str()).chain(self.secondary_key.as_deref())
    }
}

/// The shared-access authorization rules a broker accepts, by key name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SasKeys {
    rules: Vec<AuthorizationRule>,
}

impl SasKeys {
    /// The emulator's single key: `RootManageSharedAccessKey` = `SAS_KEY_VALUE`, with every right.
    pub fn emulator() -> Self {
        Self::new([(DEFAULT_KEY_NAME, DEFAULT_KEY)])
    }

    /// Rules with every right from `(name, key)` pairs; a later pair replaces an earlier one of
    /// the same name.
    pub fn new<'a>(pairs: impl IntoIterator<Item = (&'a str, &'a str)>) -> Self {
        Self::from_rules(pairs.into_iter().map(|(name, key)| AuthorizationRule {
            key_name: name.to_owned(),
            primary_key: key.to_owned(),
            secondary_key: None,
            rights: AccessRights::ALL,
        }))
    }

    /// These rules; a later rule replaces an earlier one of the same key name.
    pub fn from_rules(rules: impl IntoIterator<Item = AuthorizationRule>) -> Self {
        let mut kept: Vec<AuthorizationRule> = Vec::new();
        for rule in rules {
            kept.retain(|existing| existing.key_name != rule.key_name);
            kept.push(rule);
        }
        Self { rules: kept }
    }

    fn rule(&self, name: &str) -> Option<&AuthorizationRule> {
        self.rules.iter().find(|rule| rule.key_name == name)
    }

    /// Whether a rule accepts the emulator's published key, which anyone may know.
    pub fn accepts_published_key(&self) -> bool {
        self.rules
            .iter()
            .any(|rule| rule.keys().any(|key| key == DEFAULT_KEY))
    }

    /// Checks the token's signature against the keys of the rule named by `skn`, then its
    /// expiry against `now_unix_millis` (a token is valid strictly before its `se` second).
    pub fn verify(&self, token: &SasToken, now_unix_millis: i64) -> Result<(), Unauthorized> {
        self.verify_rights(token, now_unix_millis).map(drop)
    }

    /// [`verify`](Self::verify), returning the rights of the rule that signed the token.
    pub fn verify_rights(
        &self,
        token: &SasToken,
        now_unix_millis: i64,
    ) -> Result<AccessRights, Unauthorized> {
        let rule = self
            .rule(token.key_name())
            .ok_or_else(|| Unauthorized::UnknownKeyName(token.key_name().to_owned()))?;
        let signature = token
            .signature_bytes()
            .ok_or(Unauthorized::MalformedSignature)?;
        let signed_by_rule = rule.keys().any(|key| {
            let mut mac = hmac_sha256(key);
            mac.update(token.signed_text().as_bytes());
            // verify_slice compares in constant time.
            mac.verify_slice(&signature).is_ok()
        });
        if !signed_by_rule {
            return Err(Unauthorized::SignatureMismatch(token.key_name().to_owned()));
        }
        if now_unix_millis >= token.expiry_unix_millis() {
            return Err(Unauthorized::Expired {
                expired_at_unix_secs: token.expiry_unix_secs(),
            });
        }
        Ok(rule.rights)
    }

    /// Checks a SASL PLAIN initial response (`[authzid] NUL authcid NUL passwd`): the
    /// username is a key name and the password one of its keys. Returns the key name.
    pub fn authenticate_plain(&self, response: &[u8]) -> Result<String, Unauthorized> {
        let text =
            std::str::from_utf8(response).map_err(|_| Unauthorized::MalformedPlainResponse)?;
        let mut parts = text.split('\0');
        let (Some(_authzid), Some(username), Some(password), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err(Unauthorized::MalformedPlainResponse);
        };
        let rule = self
            .rule(username)
            .ok_or_else(|| Unauthorized::UnknownKeyName(username.to_owned()))?;
        if rule
            .keys()
            .any(|key| constant_time_eq(key.as_bytes(), password.as_bytes()))
        {
            Ok(username.to_owned())
        } else {
            Err(Unauthorized::WrongKey(username.to_owned()))
        }
    }

    /// The rights of the rule named `name` (none for an unknown name).
    pub fn rights_of(&self, name: &str) -> AccessRights {
        self.rule(name)
            .map_or(AccessRights::NONE, |rule| rule.rights)
    }
}

impl Default for SasKeys {
    fn default() -> Self {
        Self::emulator()
    }
}

/// Compares secrets without an early exit, so timing does not tell how much of a guess was right.
fn constant_time_eq(left: &[u8], right: &[u8]) -> bool {
    left.len() == right.len()
        && left
            .iter()
            .zip(right)
            .fold(0u8, |diff, (a, b)| diff | (a ^ b))
            == 0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::sign_token;

    /// The put-token of `traces/send_one.txt`, verbatim: Python azure-servicebus 7.15 with
    /// the emulator connection string (key `SAS_KEY_VALUE`).
    const TRACE_TOKEN: &str = "SharedAccessSignature sr=sb%3A%2F%2Flocalhost%3A5673%2Fq-basic&sig=mjym1mKPiaiMiBEH0hsJT3Vvh%2BlbXtEWtcQ1Aevft%2B4%3D&se=1795307569&skn=RootManageSharedAccessKey";
    const TRACE_EXPIRY_MILLIS: i64 = 1_795_307_569_000;

    #[test]
    fn the_trace_token_verifies_with_the_emulator_key() {
        let token = SasToken::parse(TRACE_TOKEN).unwrap();
        assert_eq!(token.audience(), "sb://localhost:5673/q-basic");
        assert_eq!(
            SasKeys::emulator().verify(&token, TRACE_EXPIRY_MILLIS - 3_600_000),
            Ok(())
        );
        assert_eq!(
            SasKeys::emulator().verify(&token, TRACE_EXPIRY_MILLIS - 1),
            Ok(())
        );
    }

    #[test]
    fn the_trace_token_expires_at_its_se_second() {
        let token = SasToken::parse(TRACE_TOKEN).unwrap();
        let expired = Err(Unauthorized::Expired {
            expired_at_unix_secs: 1_795_307_569,
        });
        assert_eq!(
            SasKeys::emulator().verify(&token, TRACE_EXPIRY_MILLIS),
            expired
        );
    }

    #[test]
    fn a_different_key_or_tampered_field_breaks_the_signature() {
        let token = SasToken::parse(TRACE_TOKEN).unwrap();
        let other_key = SasKeys::new([(DEFAULT_KEY_NAME, "another key")]);
        assert_eq!(
            other_key.verify(&token, 0),
            Err(Unauthorized::SignatureMismatch(DEFAULT_KEY_NAME.into()))
        );
        let later =
            SasToken::parse(&TRACE_TOKEN.replace("se=1795307569", "se=1895307569")).unwrap();
        assert_eq!(
            SasKeys::emulator().verify(&later, 0),
            Err(Unauthorized::SignatureMismatch(DEFAULT_KEY_NAME.into()))
        );
        // Lower-case hex in sr is a different signed text: the trace was signed with upper case.
        let lowered = SasToken::parse(&TRACE_TOKEN.replace(
            "sb%3A%2F%2Flocalhost%3A5673%2F",
            "sb%3a%2f%2flocalhost%3a5673%2f",
        ))
        .unwrap();
        assert_eq!(lowered.audience(), token.audience());
        assert!(SasKeys::emulator().verify(&lowered, 0).is_err());
    }

    #[test]
    fn unknown_key_names_and_bad_signatures_are_refused() {
        let token =
            SasToken::parse(&TRACE_TOKEN.replace("skn=RootManageSharedAccessKey", "skn=Other"))
                .unwrap();
        assert_eq!(
            SasKeys::emulator().verify(&token, 0),
            Err(Unauthorized::UnknownKeyName("Other".into()))
        );
        let token = SasToken::parse(
            "SharedAccessSignature sr=q&sig=%%%%&se=9&skn=RootManageSharedAccessKey",
        );
        assert!(token.is_err(), "broken escapes are refused at parse time");
        let token = SasToken::parse(
            "SharedAccessSignature sr=q&sig=not*base64&se=9&skn=RootManageSharedAccessKey",
        )
        .unwrap();
        assert_eq!(
            SasKeys::emulator().verify(&token, 0),
            Err(Unauthorized::MalformedSignature)
        );
    }

    #[test]
    fn tokens_signed_here_verify_with_the_same_key() {
        let keys = SasKeys::new([("reader", "secret"), ("writer", "other")]);
        let token = SasToken::parse(&sign_token(
            "sb://h/t/Subscriptions/s",
            "reader",
            "secret",
            100,
        ))
        .unwrap();
        assert_eq!(keys.verify(&token, 99_999), Ok(()));
        let wrong = SasToken::parse(&sign_token("sb://h/t", "writer", "secret", 100)).unwrap();
        assert_eq!(
            keys.verify(&wrong, 0),
            Err(Unauthorized::SignatureMismatch("writer".into()))
        );
    }

    #[test]
    fn sasl_plain_checks_key_name_and_key() {
        let keys = SasKeys::emulator();
        assert_eq!(
            keys.authenticate_plain(b"\0RootManageSharedAccessKey\0SAS_KEY_VALUE"),
            Ok(DEFAULT_KEY_NAME.into())
        );
        assert_eq!(
            keys.authenticate_plain(b"authz\0RootManageSharedAccessKey\0SAS_KEY_VALUE"),
            Ok(DEFAULT_KEY_NAME.into())
        );
        assert_eq!(
            keys.authenticate_plain(b"\0RootManageSharedAccessKey\0SAS_KEY_VALUe"),
            Err(Unauthorized::WrongKey(DEFAULT_KEY_NAME.into()))
        );
        assert_eq!(
            keys.authenticate_plain(b"\0nobody\0SAS_KEY_VALUE"),
            Err(Unauthorized::UnknownKeyName("nobody".into()))
        );
        for malformed in [
            &b"RootManageSharedAccessKey"[..],
            b"\0a",
            b"\0a\0b\0c",
            b"\0\xff\0x",
        ] {
            assert_eq!(
                keys.authenticate_plain(malformed),
                Err(Unauthorized::MalformedPlainResponse)
            );
        }
    }

    #[test]
    fn either_key_of_a_rule_signs_with_the_rule_s_rights() {
        let rights = AccessRights::of([crate::auth::Claim::Send]);
        let keys = SasKeys::from_rules([AuthorizationRule {
            key_name: "sender".into(),
            primary_key: "first".into(),
            secondary_key: Some("second".into()),
            rights,
        }]);
        for key in ["first", "second"] {
            let token = SasToken::parse(&sign_token("sb://h/q", "sender", key, 100)).unwrap();
            assert_eq!(keys.verify_rights(&token, 0), Ok(rights));
            let plain = format!("\0sender\0{key}");
            assert_eq!(
                keys.authenticate_plain(plain.as_bytes()),
                Ok("sender".into())
            );
        }
        let forged = SasToken::parse(&sign_token("sb://h/q", "sender", "third", 100)).unwrap();
        assert!(keys.verify_rights(&forged, 0).is_err());
        assert_eq!(keys.rights_of("sender"), rights);
        assert_eq!(keys.rights_of("nobody"), AccessRights::NONE);
        assert!(!keys.accepts_published_key());
        assert!(SasKeys::emulator().accepts_published_key());
        assert!(!format!("{keys:?}").contains("first"));
    }

    #[test]
    fn later_keys_replace_earlier_ones_of_the_same_name() {
        let keys = SasKeys::new([("k", "one"), ("k", "two")]);
        assert_eq!(keys.authenticate_plain(b"\0k\0two"), Ok("k".into()));
        assert!(keys.authenticate_plain(b"\0k\0one").is_err());
    }
}
