//! Who may use the explorer: sign-in with a namespace key (or a connection string carrying
//! one), checked by signing a short-lived SAS token with it and handing that to the server's
//! own [`Authorization`] — the very check the administration API and `$cbs` make — and the
//! server-side sessions a sign-in opens: a random id in an `HttpOnly; SameSite=Strict` cookie,
//! an expiry, and the per-session token every form carries against cross-site forgery.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use hmac::{Hmac, Mac};
use hyper::HeaderMap;
use hyper::header::{AUTHORIZATION, COOKIE, HeaderValue};
use sha2::Sha256;
use uuid::Uuid;

use crate::auth::{Authorization, Need};

/// The session cookie's name.
pub(crate) const COOKIE_NAME: &str = "busbar_explorer";
/// How long a session lasts from its sign-in.
const SESSION_LIFETIME: Duration = Duration::from_secs(8 * 60 * 60);
/// The most sessions kept at once; past it, the oldest goes (sign-ins cannot exhaust memory).
const MAX_SESSIONS: usize = 1_024;
/// The audience the sign-in token is signed for (the verifier insists on none).
const AUDIENCE: &str = "busbar-explorer";

/// A signed-in browser's session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Session {
    /// The token every state-changing form must carry.
    pub(crate) csrf: String,
    /// The key name it signed in with.
    pub(crate) key_name: String,
    expires: Instant,
}

/// The explorer's sessions, kept in memory (a restart signs everyone out).
#[derive(Debug, Default)]
pub struct Sessions {
    sessions: Mutex<HashMap<String, Session>>,
}

impl Sessions {
    /// Opens a session for `key_name`; returns its id (for the cookie).
    pub(crate) fn open(&self, key_name: &str) -> String {
        let id = random_token();
        let session = Session {
            csrf: random_token(),
            key_name: key_name.to_owned(),
            expires: Instant::now() + SESSION_LIFETIME,
        };
        let mut sessions = self.lock();
        let now = Instant::now();
        sessions.retain(|_, session| session.expires > now);
        if sessions.len() >= MAX_SESSIONS
            && let Some(oldest) = sessions
                .iter()
                .min_by_key(|(_, session)| session.expires)
                .map(|(id, _)| id.clone())
        {
            sessions.remove(&oldest);
        }
        sessions.insert(id.clone(), session);
        id
    }

    /// The live session the request's cookie names.
    pub(crate) fn find(&self, headers: &HeaderMap) -> Option<(String, Session)> {
        let id = cookie(headers)?;
        let sessions = self.lock();
        let session = sessions.get(&id)?;
        (session.expires > Instant::now()).then(|| (id, session.clone()))
    }

    /// Ends the session `id`.
    pub(crate) fn close(&self, id: &str) {
        self.lock().remove(id);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Session>> {
        // A panic while holding it cannot leave the map half-changed: recover it.
        self.sessions
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// 244 random bits as 64 hex digits (two v4 UUIDs, from the OS's generator).
fn random_token() -> String {
    format!("{}{}", Uuid::new_v4().simple(), Uuid::new_v4().simple())
}

/// The session id of the request's cookie, if it has one.
fn cookie(headers: &HeaderMap) -> Option<String> {
    headers
        .get_all(COOKIE)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(name, _)| *name == COOKIE_NAME)
        .map(|(_, value)| value.to_owned())
        .filter(|value| value.len() == 64 && value.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// The `Set-Cookie` value that stores `id` (`Secure` over HTTPS), or clears it (`None`).
pub(crate) fn set_cookie(id: Option<&str>, secure: bool) -> HeaderValue {
    let secure = if secure { "; Secure" } else { "" };
    let text = match id {
        Some(id) => format!("{COOKIE_NAME}={id}; HttpOnly; SameSite=Strict; Path=/{secure}"),
        None => format!("{COOKIE_NAME}=; HttpOnly; SameSite=Strict; Path=/; Max-Age=0{secure}"),
    };
    HeaderValue::from_str(&text).unwrap_or_else(|_| HeaderValue::from_static(""))
}

/// Whether two tokens are equal, in time independent of where they differ.
pub(crate) fn same_token(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.bytes()
            .zip(b.bytes())
            .fold(0, |acc, (x, y)| acc | (x ^ y))
            == 0
}

/// The key name and key a sign-in form gave: a connection string's `SharedAccessKeyName` and
/// `SharedAccessKey`, or the two fields.
pub(crate) fn credentials(
    connection_string: &str,
    key_name: &str,
    key: &str,
) -> Option<(String, String)> {
    if connection_string.trim().is_empty() {
        let key_name = key_name.trim();
        return (!key_name.is_empty() && !key.is_empty())
            .then(|| (key_name.to_owned(), key.to_owned()));
    }
    let field = |wanted: &str| {
        connection_string
            .split(';')
            .filter_map(|pair| pair.split_once('='))
            .find(|(name, _)| name.trim().eq_ignore_ascii_case(wanted))
            .map(|(_, value)| value.trim().to_owned())
    };
    Some((field("SharedAccessKeyName")?, field("SharedAccessKey")?))
}

/// Whether `key_name` / `key` is one of the namespace's keys, as `authorization` judges a token
/// signed with it at `now_unix_millis`.
pub(crate) fn key_accepted(
    authorization: &Authorization,
    key_name: &str,
    key: &str,
    now_unix_millis: i64,
) -> bool {
    let expiry = now_unix_millis.div_euclid(1000) + 60;
    let Ok(mut mac) = Hmac::<Sha256>::new_from_slice(key.as_bytes()) else {
        return false;
    };
    mac.update(format!("{AUDIENCE}\n{expiry}").as_bytes());
    let signature = BASE64.encode(mac.finalize().into_bytes());
    let token = format!(
        "SharedAccessSignature sr={AUDIENCE}&sig={}&se={expiry}&skn={}",
        url_encode(&signature),
        url_encode(key_name)
    );
    let Ok(value) = HeaderValue::from_str(&token) else {
        return false;
    };
    let mut headers = HeaderMap::new();
    headers.insert(AUTHORIZATION, value);
    authorization
        .check(&headers, Need::MANAGE, now_unix_millis)
        .is_ok()
}

/// Percent-encodes everything but unreserved characters (RFC 3986 §2.3).
pub(crate) fn url_encode(text: &str) -> String {
    text.bytes()
        .map(|byte| match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                char::from(byte).to_string()
            }
            other => format!("%{other:02X}"),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_from_a_connection_string_or_the_fields() {
        let connection = "Endpoint=sb://localhost;SharedAccessKeyName=Root;SharedAccessKey=abc=;";
        assert_eq!(
            credentials(connection, "", ""),
            Some(("Root".into(), "abc=".into()))
        );
        assert_eq!(
            credentials("", " Root ", "k"),
            Some(("Root".into(), "k".into()))
        );
        assert_eq!(credentials("", "Root", ""), None);
        assert_eq!(credentials("Endpoint=sb://x", "", ""), None);
    }

    #[test]
    fn cookies_are_found_only_in_their_exact_form() {
        let id = random_token();
        let mut headers = HeaderMap::new();
        let value = format!("a=b; {COOKIE_NAME}={id}");
        headers.insert(COOKIE, HeaderValue::from_str(&value).unwrap());
        assert_eq!(cookie(&headers), Some(id));
        headers.insert(COOKIE, HeaderValue::from_static("busbar_explorer=../../x"));
        assert_eq!(cookie(&headers), None);
    }

    #[test]
    fn sessions_open_find_and_close() {
        let sessions = Sessions::default();
        let id = sessions.open("Root");
        let mut headers = HeaderMap::new();
        let value = format!("{COOKIE_NAME}={id}");
        headers.insert(COOKIE, HeaderValue::from_str(&value).unwrap());
        let (found, session) = sessions.find(&headers).unwrap();
        assert_eq!(
            (found.as_str(), session.key_name.as_str()),
            (id.as_str(), "Root")
        );
        sessions.close(&id);
        assert!(sessions.find(&headers).is_none());
    }

    #[test]
    fn tokens_compare_whole() {
        assert!(same_token("abc", "abc"));
        assert!(!same_token("abc", "abd"));
        assert!(!same_token("abc", "ab"));
    }
}
