//! The URLs a response echoes: `<id>` and `rel="self"` of entries and feeds, built from the
//! request as it arrived. JS reads subscription and rule names out of `<id>` with a
//! case-sensitive pattern (admin-api.md §0 item 5), so an entry's `<id>` keeps the request
//! path's spelling.

use hyper::header::HOST;
use hyper::http::request::Parts;

use super::config::Scheme;
use crate::atom::percent_decode;

/// What every SDK accepts when a request carries no `api-version`.
const DEFAULT_API_VERSION: &str = "2021-05";

/// A request's URL, taken apart for the responses' links.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RequestUrl {
    /// `scheme://host[:port]`, the host as the client sent it.
    origin: String,
    /// The path as sent (percent-encoded, trailing `/` kept).
    path: String,
    /// The query as sent, without `?`.
    query: String,
    /// The `api-version` the client asked for, or the default.
    api_version: String,
}

impl RequestUrl {
    /// The URL of the request `parts` received over `scheme`.
    pub(crate) fn new(scheme: Scheme, parts: &Parts) -> RequestUrl {
        let host = parts
            .headers
            .get(HOST)
            .and_then(|host| host.to_str().ok())
            .or_else(|| parts.uri.authority().map(|authority| authority.as_str()))
            .unwrap_or("localhost");
        let query = parts.uri.query().unwrap_or("");
        RequestUrl {
            origin: format!("{}://{host}", scheme.as_str()),
            path: parts.uri.path().to_owned(),
            query: query.to_owned(),
            api_version: query_value(query, "api-version")
                .unwrap_or_else(|| DEFAULT_API_VERSION.to_owned()),
        }
    }

    /// Whether the query names an `api-version` (every SDK's request does; a health probe
    /// does not).
    pub(crate) fn has_api_version(&self) -> bool {
        query_value(&self.query, "api-version").is_some()
    }

    /// The raw path.
    pub(crate) fn path(&self) -> &str {
        &self.path
    }

    /// `scheme://host[:port]` as the client reached the server (what a same-origin `Origin`
    /// says).
    pub(crate) fn origin(&self) -> &str {
        &self.origin
    }

    /// The raw query.
    pub(crate) fn query(&self) -> &str {
        &self.query
    }

    /// The decoded value of the query's first `key` parameter (`""` when it has no `=`).
    pub(crate) fn query_value(&self, key: &str) -> Option<String> {
        query_value(&self.query, key)
    }

    /// The `<id>` of the entry a single-entity request answers: the request's path, with only
    /// the `api-version` of its query (as the service writes it).
    pub(crate) fn entry_id(&self) -> String {
        self.url_of(self.trimmed_path())
    }

    /// The `<id>` of a feed: the request URL, query and all (the next link is built from it).
    pub(crate) fn feed_id(&self) -> String {
        if self.query.is_empty() {
            format!("{}{}", self.origin, self.path)
        } else {
            format!("{}{}?{}", self.origin, self.path, self.query)
        }
    }

    /// The `<id>` of a feed entry listed under this path (`…/Subscriptions` → `…/Subscriptions/s`).
    pub(crate) fn child_id(&self, name: &str) -> String {
        self.url_of(&format!("{}/{name}", self.trimmed_path()))
    }

    /// The `<id>` of a queue or topic listed under `/$Resources/…`: `/{name}`.
    pub(crate) fn top_level_id(&self, name: &str) -> String {
        self.url_of(&format!("/{name}"))
    }

    /// A short description of the request target for error details (`SystemTracker`).
    pub(crate) fn tracker(&self) -> String {
        format!("{}{}", self.origin, self.trimmed_path())
    }

    fn trimmed_path(&self) -> &str {
        match self.path.strip_suffix('/') {
            Some(trimmed) if !trimmed.is_empty() => trimmed,
            _ => &self.path,
        }
    }

    fn url_of(&self, path: &str) -> String {
        format!("{}{path}?api-version={}", self.origin, self.api_version)
    }
}

/// The decoded value of the first `key` parameter of a raw query.
fn query_value(query: &str, key: &str) -> Option<String> {
    query.split('&').find_map(|pair| {
        let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
        (percent_decode(name) == key).then(|| percent_decode(value))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use hyper::Request;

    fn url(target: &str, host: Option<&str>) -> RequestUrl {
        let mut request = Request::get(target);
        if let Some(host) = host {
            request = request.header(HOST, host);
        }
        let (parts, ()) = request.body(()).expect("request").into_parts();
        RequestUrl::new(Scheme::Http, &parts)
    }

    #[test]
    fn entries_echo_the_path_with_the_api_version() {
        let python = url(
            "/t-full/subscriptions/s-full?enrich=false&api-version=2024-05",
            Some("127.0.0.1:5300"),
        );
        assert_eq!(
            python.entry_id(),
            "http://127.0.0.1:5300/t-full/subscriptions/s-full?api-version=2024-05"
        );
        assert!(python.has_api_version());
        let bare = url("/q", Some("localhost:5300"));
        assert_eq!(
            bare.entry_id(),
            "http://localhost:5300/q?api-version=2021-05"
        );
        assert!(!bare.has_api_version());
    }

    #[test]
    fn feeds_echo_the_whole_url_and_children_extend_the_path() {
        let js = url(
            "/t-full/Subscriptions/s-full/Rules/?api-version=2021-05",
            Some("h:1"),
        );
        assert_eq!(
            js.feed_id(),
            "http://h:1/t-full/Subscriptions/s-full/Rules/?api-version=2021-05"
        );
        assert_eq!(
            js.child_id("$Default"),
            "http://h:1/t-full/Subscriptions/s-full/Rules/$Default?api-version=2021-05"
        );
        let python = url(
            "/$Resources/queues?%24skip=0&%24top=100&api-version=2024-05",
            Some("h"),
        );
        assert_eq!(
            python.feed_id(),
            "http://h/$Resources/queues?%24skip=0&%24top=100&api-version=2024-05"
        );
        assert_eq!(python.top_level_id("q"), "http://h/q?api-version=2024-05");
    }

    #[test]
    fn the_host_falls_back_to_the_request_target_then_localhost() {
        assert_eq!(
            url("http://example:80/q", None).entry_id(),
            "http://example:80/q?api-version=2021-05"
        );
        assert_eq!(
            url("/q", None).entry_id(),
            "http://localhost/q?api-version=2021-05"
        );
    }
}
