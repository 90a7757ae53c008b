//! Authorisation: shared-access-signature tokens for `$cbs` put-token and SASL PLAIN credentials.
//!
//! All SDKs authenticate every link with a CBS put-token even against the emulator
//! (servicebus-amqp.md §1.5); the token is `SharedAccessSignature sr=…&sig=…&se=…&skn=…`.

mod keys;
mod put_token;
mod rights;
mod ring;
mod token;

pub use keys::{AuthorizationRule, DEFAULT_KEY, DEFAULT_KEY_NAME, SasKeys, Unauthorized};
pub use put_token::{PutTokenOutcome, SignedFor, put_token, top_level_entity, verify_within};
pub use rights::{AccessRights, Claim};
pub use ring::KeyRing;
pub use token::{SasToken, TokenError, sign_token};
