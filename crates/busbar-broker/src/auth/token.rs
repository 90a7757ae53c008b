//! Parsing (and, for clients and tests, signing) of `SharedAccessSignature` tokens, and audience scope.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use hmac::{Hmac, Mac};
use sha2::Sha256;

use crate::address::path_of;
use crate::percent;

const PREFIX: &str = "SharedAccessSignature ";

/// A parsed shared-access-signature token. It is not yet verified: see [`crate::auth::SasKeys::verify`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SasToken {
    /// `sr` exactly as it appears in the token (still percent-encoded): the signed text.
    encoded_audience: String,
    /// `sr` decoded, e.g. `sb://localhost:5673/q-basic`.
    audience: String,
    /// `se` exactly as it appears in the token: the signed text.
    expiry_text: String,
    expiry_unix_secs: u64,
    /// `sig` decoded: base64 text of the HMAC.
    signature: String,
    key_name: String,
}

/// Why a token text is not a shared-access signature.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TokenError {
    /// The text does not start with `SharedAccessSignature `.
    #[error("the token does not start with \"SharedAccessSignature \"")]
    NotSharedAccessSignature,
    /// A `&`-separated part has no `=`.
    #[error("token field {0:?} has no '='")]
    MalformedField(String),
    /// One of `sr`, `sig`, `se`, `skn` is absent.
    #[error("the token has no {0:?} field")]
    MissingField(&'static str),
    /// A field appears twice.
    #[error("the token has more than one {0:?} field")]
    DuplicateField(String),
    /// A value's percent-encoding is broken.
    #[error("the token's {0:?} field is not valid percent-encoding")]
    InvalidEncoding(String),
    /// `se` is not a decimal number of seconds.
    #[error("the token's expiry {0:?} is not a number of seconds")]
    InvalidExpiry(String),
}

impl SasToken {
    /// Parses `SharedAccessSignature sr=…&sig=…&se=…&skn=…` (fields in any order,
    /// values percent-encoded; unknown fields are ignored as the service does).
    pub fn parse(text: &str) -> Result<Self, TokenError> {
        let fields = text
            .strip_prefix(PREFIX)
            .ok_or(TokenError::NotSharedAccessSignature)?;
        let (mut sr, mut sig, mut se, mut skn) = (None, None, None, None);
        for field in fields.trim().split('&') {
            let (key, value) = field
                .split_once('=')
                .ok_or_else(|| TokenError::MalformedField(field.to_owned()))?;
            let slot = match key {
                "sr" => &mut sr,
                "sig" => &mut sig,
                "se" => &mut se,
                "skn" => &mut skn,
                _ => continue,
            };
            if slot.replace(value).is_some() {
                return Err(TokenError::DuplicateField(key.to_owned()));
            }
        }
        let encoded_audience = sr.ok_or(TokenError::MissingField("sr"))?;
        let signature = sig.ok_or(TokenError::MissingField("sig"))?;
        let expiry_text = se.ok_or(TokenError::MissingField("se"))?;
        let key_name = skn.ok_or(TokenError::MissingField("skn"))?;
        let decode = |name: &str, value: &str| {
            percent::decode(value).ok_or_else(|| TokenError::InvalidEncoding(name.to_owned()))
        };
        let expiry_unix_secs = expiry_text
            .parse()
            .map_err(|_| TokenError::InvalidExpiry(expiry_text.to_owned()))?;
        Ok(Self {
            encoded_audience: encoded_audience.to_owned(),
            audience: decode("sr", encoded_audience)?,
            expiry_text: expiry_text.to_owned(),
            expiry_unix_secs,
            signature: decode("sig", signature)?,
            key_name: decode("skn", key_name)?,
        })
    }

    /// The decoded audience (`sr`), e.g. `sb://localhost:5673/q-basic`.
    pub fn audience(&self) -> &str {
        &self.audience
    }

    /// The name of the key that signed the token (`skn`).
    pub fn key_name(&self) -> &str {
        &self.key_name
    }

    /// The expiry (`se`) in seconds since the Unix epoch.
    pub fn expiry_unix_secs(&self) -> u64 {
        self.expiry_unix_secs
    }

    /// The expiry in milliseconds since the Unix epoch (saturating).
    pub fn expiry_unix_millis(&self) -> i64 {
        i64::try_from(self.expiry_unix_secs.saturating_mul(1000)).unwrap_or(i64::MAX)
    }

    /// Whether the audience covers `resource` (an address or audience such as
    /// `amqp://host/q/$management`, or a bare entity path): the audience's path equals the
    /// resource's path or is a prefix of it ending at a `/`. Hosts and schemes are ignored, case
    /// is ignored, and a namespace-level audience (`sb://localhost/`) covers everything.
    pub fn covers(&self, resource: &str) -> bool {
        let scope = path_of(&self.audience).trim_end_matches('/');
        let Some(resource) = percent::decode(path_of(resource)) else {
            return false;
        };
        let resource = resource.trim_end_matches('/');
        if scope.is_empty() || scope.eq_ignore_ascii_case(resource) {
            return true;
        }
        resource
            .get(..scope.len())
            .is_some_and(|head| head.eq_ignore_ascii_case(scope))
            && resource.as_bytes().get(scope.len()) == Some(&b'/')
    }

    /// The signature bytes, or `None` when `sig` is not base64.
    pub(crate) fn signature_bytes(&self) -> Option<Vec<u8>> {
        BASE64.decode(&self.signature).ok()
    }

    /// The text the signature covers: `sr` as sent (still encoded), a newline, `se` as sent.
    ///
    /// The SDKs sign their own encoding of the audience (upper-case hex from Python's
    /// `quote_plus` and JavaScript's `encodeURIComponent`) and send that very text as `sr`, so
    /// verifying against the field as sent accepts every client's encoding choice, where
    /// re-encoding the decoded audience would reject any client whose hex case differs.
    pub(crate) fn signed_text(&self) -> String {
        format!("{}\n{}", self.encoded_audience, self.expiry_text)
    }
}

/// Signs a token for `audience` the way the SDKs do: `sig = base64(HMAC-SHA256(key,
/// urlencode(audience) + "\n" + expiry))`, all values percent-encoded.
pub fn sign_token(audience: &str, key_name: &str, key: &str, expiry_unix_secs: u64) -> String {
    let encoded_audience = percent::encode(audience);
    let mut mac = hmac_sha256(key);
    mac.update(format!("{encoded_audience}\n{expiry_unix_secs}").as_bytes());
    let signature = BASE64.encode(mac.finalize().into_bytes());
    format!(
        "{PREFIX}sr={encoded_audience}&sig={}&se={expiry_unix_secs}&skn={}",
        percent::encode(&signature),
        percent::encode(key_name)
    )
}

/// An HMAC-SHA256 keyed with the key text's UTF-8 bytes, as Service Bus uses SAS keys.
pub(crate) fn hmac_sha256(key: &str) -> Hmac<Sha256> {
    // HMAC accepts keys of any length; the error type exists only for fixed-size MACs.
    <Hmac<Sha256> as Mac>::new_from_slice(key.as_bytes())
        .unwrap_or_else(|_| unreachable!("HMAC takes any key length"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_fields_in_any_order_and_decodes_them() {
        let token = SasToken::parse(
            "SharedAccessSignature skn=Root%20Key&se=42&sig=YQ%3D%3D&sr=sb%3a%2f%2fhost%2fq",
        )
        .unwrap();
        assert_eq!(token.audience(), "sb://host/q");
        assert_eq!(token.key_name(), "Root Key");
        assert_eq!(token.expiry_unix_secs(), 42);
        assert_eq!(token.expiry_unix_millis(), 42_000);
        assert_eq!(token.signature_bytes(), Some(b"a".to_vec()));
        assert_eq!(token.signed_text(), "sb%3a%2f%2fhost%2fq\n42");
    }

    #[test]
    fn ignores_unknown_fields() {
        let token =
            SasToken::parse("SharedAccessSignature sr=q&sig=YQ%3D%3D&se=1&skn=k&extra=1").unwrap();
        assert_eq!(token.audience(), "q");
    }

    #[test]
    fn malformed_tokens_say_what_is_wrong() {
        let table = [
            ("Bearer abc", TokenError::NotSharedAccessSignature),
            (
                "SharedAccessSignature sr=q&sig=x&se=1",
                TokenError::MissingField("skn"),
            ),
            (
                "SharedAccessSignature sig=x&se=1&skn=k",
                TokenError::MissingField("sr"),
            ),
            (
                "SharedAccessSignature sr=q&sig=x&se=1&skn=k&sr=r",
                TokenError::DuplicateField("sr".into()),
            ),
            (
                "SharedAccessSignature sr=q&sig&se=1&skn=k",
                TokenError::MalformedField("sig".into()),
            ),
            (
                "SharedAccessSignature sr=q%zz&sig=x&se=1&skn=k",
                TokenError::InvalidEncoding("sr".into()),
            ),
            (
                "SharedAccessSignature sr=q&sig=x&se=soon&skn=k",
                TokenError::InvalidExpiry("soon".into()),
            ),
            (
                "SharedAccessSignature sr=q&sig=x&se=-1&skn=k",
                TokenError::InvalidExpiry("-1".into()),
            ),
        ];
        for (text, error) in table {
            assert_eq!(SasToken::parse(text), Err(error), "{text}");
        }
    }

    #[test]
    fn audience_covers_the_entity_and_everything_below_it_at_a_slash() {
        let token = |audience: &str| SasToken::parse(&sign_token(audience, "k", "key", 1)).unwrap();
        let entity = token("sb://localhost:5673/q-basic");
        for covered in [
            "q-basic",
            "Q-BASIC",
            "q-basic/$management",
            "amqp://other-host/q-basic",
            "/q-basic/",
        ] {
            assert!(entity.covers(covered), "{covered}");
        }
        for other in ["q-basic2", "q", "other/q-basic", "", "q-basic%zz"] {
            assert!(!entity.covers(other), "{other}");
        }
        let management = token("amqp://host/q/$management");
        assert!(management.covers("q/$management"));
        assert!(!management.covers("q"));
        let namespace = token("sb://localhost/");
        for anything in ["q", "t/Subscriptions/s", "$cbs", ""] {
            assert!(namespace.covers(anything), "{anything}");
        }
        let topic = token("sb://localhost/t");
        assert!(topic.covers("t/Subscriptions/s/$DeadLetterQueue"));
    }

    #[test]
    fn signing_round_trips_through_parsing() {
        let text = sign_token(
            "sb://localhost/q",
            "RootManageSharedAccessKey",
            "SAS_KEY_VALUE",
            1_795_307_569,
        );
        assert!(text.starts_with("SharedAccessSignature sr=sb%3A%2F%2Flocalhost%2Fq&sig="));
        let token = SasToken::parse(&text).unwrap();
        assert_eq!(token.audience(), "sb://localhost/q");
        assert_eq!(token.signature_bytes().map(|bytes| bytes.len()), Some(32));
    }
}
