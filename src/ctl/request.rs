//! One request of `busbar ctl` to the administration API, with hyper-util's client over plain
//! HTTP (the admin port serves plain HTTP next to HTTPS), signed with a shared access signature
//! of the key given; the answer's body on success, the broker's reason otherwise.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use busbar_admin::test_controls::ErrorAnswer;
use busbar_broker::auth::sign_token;
use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper::header::{AUTHORIZATION, CONTENT_TYPE};
use hyper::{Method, Request, StatusCode, Uri};
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;

use crate::cli::CtlOptions;

/// How long a request may take, answer included (the server answers 503 after its own 30 s).
const TIMEOUT: Duration = Duration::from_secs(45);
/// How long the signature is valid.
const TOKEN_LIFETIME: Duration = Duration::from_secs(300);
/// The most of an answer read (the controls' answers are a few dozen bytes).
const MAX_ANSWER_BYTES: usize = 64 * 1024;

/// Why a command was not carried out.
#[derive(Debug, thiserror::Error)]
pub(crate) enum CtlError {
    /// The tokio runtime could not start.
    #[error("cannot start the async runtime: {0}")]
    Runtime(std::io::Error),
    /// `--admin` and the path make no URL.
    #[error("{url} is not a valid URL: {reason}")]
    InvalidUrl {
        /// The URL.
        url: String,
        /// Why.
        reason: String,
    },
    /// No connection, or it broke.
    #[error(
        "cannot reach the administration API at {admin}: {reason} (is busbar running, with its admin port at --admin?)"
    )]
    Unreachable {
        /// `--admin`.
        admin: String,
        /// The client's error and its causes.
        reason: String,
    },
    /// No answer in time.
    #[error("the administration API at {admin} did not answer within {} s", TIMEOUT.as_secs())]
    Timeout {
        /// `--admin`.
        admin: String,
    },
    /// 401.
    #[error("the administration API refused the signature (401): check --key")]
    Unauthorized,
    /// The broker refused the command, saying why.
    #[error("{message} ({status})")]
    Refused {
        /// The HTTP status.
        status: StatusCode,
        /// The broker's reason.
        message: String,
    },
    /// An answer that is not what the controls send (a server that is not Busbar, or an older
    /// one without them).
    #[error("unexpected answer: {0}")]
    Answer(String),
}

/// Sends `method` on `path` (below `--admin`) with `body` (JSON) and returns the answer's body
/// if the broker carried the request out.
pub(super) async fn send(
    options: &CtlOptions,
    method: Method,
    path: &str,
    body: Option<String>,
) -> Result<Bytes, CtlError> {
    let url = format!("{}{path}", options.admin);
    let uri: Uri =
        url.parse()
            .map_err(|error: hyper::http::uri::InvalidUri| CtlError::InvalidUrl {
                url: url.clone(),
                reason: error.to_string(),
            })?;
    let audience = url.split('?').next().unwrap_or(&url);
    let expiry = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or(Duration::ZERO)
        .saturating_add(TOKEN_LIFETIME)
        .as_secs();
    let token = sign_token(audience, &options.key_name, &options.key, expiry);
    let mut request = Request::builder()
        .method(method)
        .uri(uri)
        .header(AUTHORIZATION, token);
    if body.is_some() {
        request = request.header(CONTENT_TYPE, "application/json");
    }
    let request = request
        .body(Full::new(Bytes::from(body.unwrap_or_default())))
        .map_err(|error| CtlError::InvalidUrl {
            url: url.clone(),
            reason: error.to_string(),
        })?;
    let client = Client::builder(TokioExecutor::new()).build_http();
    let unreachable = |error: &dyn std::error::Error| CtlError::Unreachable {
        admin: options.admin.clone(),
        reason: causes(error),
    };
    let exchange = async {
        let response = client
            .request(request)
            .await
            .map_err(|error| unreachable(&error))?;
        let status = response.status();
        let body = Limited::new(response.into_body(), MAX_ANSWER_BYTES)
            .collect()
            .await
            .map_err(|error| unreachable(&*error))?
            .to_bytes();
        Ok((status, body))
    };
    let (status, body) = tokio::time::timeout(TIMEOUT, exchange)
        .await
        .map_err(|_| CtlError::Timeout {
            admin: options.admin.clone(),
        })??;
    if status.is_success() {
        return Ok(body);
    }
    if status == StatusCode::UNAUTHORIZED {
        return Err(CtlError::Unauthorized);
    }
    match serde_json::from_slice::<ErrorAnswer>(&body) {
        Ok(ErrorAnswer { error }) => Err(CtlError::Refused {
            status,
            message: error,
        }),
        Err(_) => {
            let excerpt = String::from_utf8_lossy(&body[..body.len().min(200)]).into_owned();
            Err(CtlError::Answer(format!("{status}: {excerpt}")))
        }
    }
}

/// An error and its causes, `outer: inner: …` (hyper-util's own message is only "client error
/// (Connect)").
fn causes(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}
