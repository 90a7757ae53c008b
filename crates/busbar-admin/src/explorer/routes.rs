//! Which explorer page or action a request asks for, and who may have it: the assets and the
//! sign-in page are open; every other page needs a session (without one, a redirect to
//! sign-in); every POST needs the session's CSRF token and, when the browser sends one, an
//! `Origin` equal to the server's own.

use hyper::body::Incoming;
use hyper::header::{CACHE_CONTROL, CONTENT_TYPE, HeaderValue, ORIGIN, SET_COOKIE};
use hyper::http::request::Parts;
use hyper::{Method, Response, StatusCode};
use maud::Markup;
use tokio::time::{Instant, timeout_at};

use super::assets::{SCRIPT, STYLESHEET};
use super::form::Form;
use super::pages;
use super::sign_in::{Session, credentials, key_accepted, same_token, set_cookie};
use super::{actions, views};
use crate::control::{ControlError, NamespaceControl};
use crate::http::answer::read_body;
use crate::http::config::{Scheme, ServerConfig};
use crate::http::request_url::RequestUrl;
use crate::http::response::{Body, closing, see_other};

/// The largest form read (a message body of 256 KiB, percent-encoded).
const MAX_FORM_BYTES: usize = 1024 * 1024;

/// Whether `path` is the explorer's.
pub(crate) fn is_explorer_path(path: &str) -> bool {
    path == "/explorer" || path.starts_with("/explorer/")
}

/// A page or action's outcome before it becomes a response.
pub(super) enum Outcome {
    /// An HTML page.
    Page(StatusCode, Markup),
    /// 303 to this location.
    Redirect(String),
    /// JSON text.
    Json(String),
}

/// Answers a request for an explorer path.
pub(crate) async fn answer<C: NamespaceControl>(
    control: &C,
    config: &ServerConfig,
    scheme: Scheme,
    parts: &Parts,
    url: &RequestUrl,
    body: Incoming,
    deadline: Instant,
) -> Response<Body> {
    let rest = url.path().trim_start_matches("/explorer");
    let method = &parts.method;
    match (method, rest) {
        (&Method::GET, "/assets/explorer.css") => return asset("text/css", STYLESHEET),
        (&Method::GET, "/assets/explorer.js") => return asset("text/javascript", SCRIPT),
        (&Method::GET, "/sign-in") => return page(StatusCode::OK, pages::sign_in(None)),
        _ => {}
    }
    let session = config.explorer_sessions.find(&parts.headers);
    let form = if method == Method::POST {
        if !same_origin(parts, url) {
            return refused(StatusCode::FORBIDDEN, "The request came from another site.");
        }
        match read_body(body, MAX_FORM_BYTES, deadline).await {
            Ok(bytes) => Form::parse(&String::from_utf8_lossy(&bytes)),
            Err(error) => {
                let message = error.message(MAX_FORM_BYTES, config.request_timeout);
                return closing(refused(error.status(), &message));
            }
        }
    } else {
        Form::default()
    };
    if (method, rest) == (&Method::POST, "/sign-in") {
        return sign_in(config, scheme, &form);
    }
    let Some((id, session)) = session else {
        return see_other("/explorer/sign-in");
    };
    if method == Method::POST && !same_token(form.text("csrf"), &session.csrf) {
        return refused(
            StatusCode::FORBIDDEN,
            "The form is out of date (its anti-forgery token does not match): reload the page.",
        );
    }
    if (method, rest) == (&Method::POST, "/sign-out") {
        config.explorer_sessions.close(&id);
        let mut response = see_other("/explorer/sign-in");
        let cookie = set_cookie(None, scheme == Scheme::Https);
        response.headers_mut().insert(SET_COOKIE, cookie);
        return response;
    }
    let outcome = timeout_at(
        deadline,
        dispatch(control, method, rest, url, &form, &session),
    )
    .await
    .unwrap_or_else(|_| {
        Err(ControlError::Unavailable {
            detail: "the broker did not answer in time".into(),
        })
    });
    match outcome {
        Ok(Outcome::Page(status, markup)) => page(status, markup),
        Ok(Outcome::Redirect(location)) => see_other(&location),
        Ok(Outcome::Json(text)) => crate::http::response::json(StatusCode::OK, text),
        Err(error) => refused(status_of(&error), &error.to_string()),
    }
}

async fn dispatch<C: NamespaceControl>(
    control: &C,
    method: &Method,
    rest: &str,
    url: &RequestUrl,
    form: &Form,
    session: &Session,
) -> Result<Outcome, ControlError> {
    let query = Form::parse(url.query());
    let csrf = session.csrf.as_str();
    match (method, rest) {
        (&Method::GET, "" | "/") => views::overview(control, &query, csrf).await,
        (&Method::GET, "/counts") => views::counts(control, &query).await,
        (&Method::GET, "/entity") => views::entity(control, &query, csrf).await,
        (&Method::GET, "/message") => views::message(control, &query, csrf).await,
        (&Method::POST, "/send") => actions::send(control, form).await,
        (&Method::POST, "/purge") => actions::purge(control, form).await,
        (&Method::POST, "/redrive") => actions::redrive(control, form).await,
        (&Method::POST, "/session-state") => actions::session_state(control, form).await,
        _ => Err(ControlError::Invalid {
            detail: format!("the explorer has no page {method} {rest}"),
        }),
    }
}

fn sign_in(config: &ServerConfig, scheme: Scheme, form: &Form) -> Response<Body> {
    let given = credentials(
        form.text("connection_string"),
        form.text("key_name"),
        form.text("key"),
    );
    let now = config.clock.now().unix_millis();
    let accepted = given.filter(|(name, key)| key_accepted(&config.authorization, name, key, now));
    let Some((key_name, _)) = accepted else {
        let markup = pages::sign_in(Some("That key is not one of this namespace's keys."));
        return page(StatusCode::UNAUTHORIZED, markup);
    };
    let id = config.explorer_sessions.open(&key_name);
    let mut response = see_other("/explorer");
    let cookie = set_cookie(Some(&id), scheme == Scheme::Https);
    response.headers_mut().insert(SET_COOKIE, cookie);
    response
}

/// Whether a POST's `Origin`, when the browser sent one, is this server's.
fn same_origin(parts: &Parts, url: &RequestUrl) -> bool {
    parts
        .headers
        .get(ORIGIN)
        .is_none_or(|origin| origin.as_bytes() == url.origin().as_bytes())
}

fn status_of(error: &ControlError) -> StatusCode {
    match error {
        ControlError::NotFound => StatusCode::NOT_FOUND,
        ControlError::AlreadyExists => StatusCode::CONFLICT,
        ControlError::Invalid { .. } => StatusCode::BAD_REQUEST,
        ControlError::Unavailable { .. } => StatusCode::SERVICE_UNAVAILABLE,
    }
}

fn refused(status: StatusCode, message: &str) -> Response<Body> {
    let frame = pages::Frame {
        error: Some(message),
        ..pages::Frame::default()
    };
    page(status, pages::error_page(&frame))
}

fn page(status: StatusCode, markup: Markup) -> Response<Body> {
    let mut response = Response::new(Body::from(markup.into_string()));
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(
        CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    // Pages may not be framed by another site (clickjacking a purge button).
    headers.insert("x-frame-options", HeaderValue::from_static("DENY"));
    response
}

fn asset(content_type: &'static str, text: &'static str) -> Response<Body> {
    let mut response = Response::new(Body::from(text));
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("max-age=300"));
    response
}
