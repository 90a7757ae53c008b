//! Which operation a request line asks for (admin-api.md §4, §9 item 2), as a pure function of
//! the method, the path and whether the query has an `api-version`. Paths under `/$busbar/` are
//! Busbar's own controls, routed further by [`super::controls`].
//!
//! The SDKs spell `$Resources`, `Queues`, `Subscriptions` and `Rules` in different cases, so
//! those match case-insensitively; JS and Go list with a trailing `/`, so one is dropped; path
//! segments are percent-decoded (`%24Default`). Queue and topic names may hold `/`, so the
//! subscription and rule forms are recognised from the end of the path.

use hyper::Method;

use crate::atom::percent_decode;

/// A recognised request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Routed {
    /// An operation of the administration API.
    Api(Operation),
    /// `/$busbar/…`: one of Busbar's controls; the segments after `$busbar`, decoded.
    Controls(Vec<String>),
}

/// An operation of the administration API.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Operation {
    /// `GET /$namespaceinfo`.
    NamespaceInfo,
    /// `GET` of a list.
    List(Listing),
    /// `GET` of one entity.
    Get(Target),
    /// `PUT` of one entity: create, or update with `If-Match`.
    Put(Target),
    /// `DELETE` of one entity.
    Delete(Target),
}

impl Operation {
    /// The queue or topic whose own Manage rule may authorise this operation: reading or
    /// updating that entity, or a topic's subscriptions and rules (`None`: only a namespace
    /// rule may — lists, the namespace, deletions).
    pub(crate) fn own_entity(&self) -> Option<&str> {
        match self {
            Operation::Get(target) | Operation::Put(target) => Some(match target {
                Target::Entity { name } => name,
                Target::Subscription { topic, .. } | Target::Rule { topic, .. } => topic,
            }),
            Operation::NamespaceInfo | Operation::List(_) | Operation::Delete(_) => None,
        }
    }
}

/// A list endpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Listing {
    /// `/$Resources/Queues`.
    Queues,
    /// `/$Resources/Topics`.
    Topics,
    /// `/{topic}/Subscriptions`.
    Subscriptions {
        /// The topic.
        topic: String,
    },
    /// `/{topic}/Subscriptions/{subscription}/Rules`.
    Rules {
        /// The topic.
        topic: String,
        /// The subscription.
        subscription: String,
    },
}

/// One entity's path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Target {
    /// `/{name}`: a queue or a topic (only a `PUT` body says which).
    Entity {
        /// The name, segments joined with `/`.
        name: String,
    },
    /// `/{topic}/Subscriptions/{name}`.
    Subscription {
        /// The topic.
        topic: String,
        /// The subscription.
        name: String,
    },
    /// `/{topic}/Subscriptions/{subscription}/Rules/{name}`.
    Rule {
        /// The topic.
        topic: String,
        /// The subscription.
        subscription: String,
        /// The rule.
        name: String,
    },
}

/// Why no operation matches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RouteError {
    /// No resource at this path (404).
    NotFound,
    /// The resource exists but not with this method (405); `allow` lists the methods it takes.
    MethodNotAllowed {
        /// The `Allow` header's value.
        allow: &'static str,
    },
}

const READ_ONLY: &str = "GET";
const READ_WRITE: &str = "GET, PUT, DELETE";

/// Whether a request is the emulator's health probe, `GET /health` without an `api-version`,
/// answered without authorisation or broker. (A queue may be called `health`: only the probe's
/// bare GET is the health check.)
pub(crate) fn is_health_probe(method: &Method, path: &str, has_api_version: bool) -> bool {
    method == Method::GET && matches!(path, "/health" | "/health/") && !has_api_version
}

/// Whether a request could be a browser's first visit, `GET /` without an `api-version`: with
/// `Accept: text/html` it is sent to the explorer (the SDKs never ask for HTML).
pub(crate) fn is_browser_home(method: &Method, path: &str, has_api_version: bool) -> bool {
    method == Method::GET && path == "/" && !has_api_version
}

/// Whether a request is a Prometheus scrape, `GET /metrics` without an `api-version`, answered
/// without authorisation (a queue may be called `metrics`, as for [`is_health_probe`]).
pub(crate) fn is_metrics_scrape(method: &Method, path: &str, has_api_version: bool) -> bool {
    method == Method::GET && matches!(path, "/metrics" | "/metrics/") && !has_api_version
}

/// Routes `method` on `path` (the raw, still percent-encoded path of the request line), once
/// [`is_health_probe`] said it is not the probe.
pub(crate) fn route(method: &Method, path: &str) -> Result<Routed, RouteError> {
    let path = path.strip_prefix('/').unwrap_or(path);
    let path = path.strip_suffix('/').unwrap_or(path);
    if path.is_empty() {
        return Err(RouteError::NotFound);
    }
    let segments: Vec<String> = path.split('/').map(percent_decode).collect();
    let operation = match resource(&segments)? {
        Resource::Controls(rest) => return Ok(Routed::Controls(rest)),
        Resource::ReadOnly(operation) if method == Method::GET => operation,
        Resource::ReadOnly(_) => return Err(RouteError::MethodNotAllowed { allow: READ_ONLY }),
        Resource::Entity(target) => match *method {
            Method::GET => Operation::Get(target),
            Method::PUT => Operation::Put(target),
            Method::DELETE => Operation::Delete(target),
            _ => return Err(RouteError::MethodNotAllowed { allow: READ_WRITE }),
        },
    };
    Ok(Routed::Api(operation))
}

/// What a path names, before the method is considered.
enum Resource {
    /// Busbar's controls: the segments after `$busbar`.
    Controls(Vec<String>),
    /// Something only `GET` reads.
    ReadOnly(Operation),
    /// An entity, which `GET`, `PUT` and `DELETE` act on.
    Entity(Target),
}

fn resource(segments: &[String]) -> Result<Resource, RouteError> {
    let is = |segment: &String, word: &str| segment.eq_ignore_ascii_case(word);
    match segments {
        [busbar, rest @ ..] if is(busbar, "$busbar") => {
            return Ok(Resource::Controls(rest.to_vec()));
        }
        [only] if is(only, "$namespaceinfo") => {
            return Ok(Resource::ReadOnly(Operation::NamespaceInfo));
        }
        [resources, kind] if is(resources, "$Resources") => {
            let listing = if is(kind, "Queues") {
                Listing::Queues
            } else if is(kind, "Topics") {
                Listing::Topics
            } else {
                return Err(RouteError::NotFound);
            };
            return Ok(Resource::ReadOnly(Operation::List(listing)));
        }
        // Every other `$` path is reserved; no entity name starts with `$`.
        [first, ..] if first.starts_with('$') => return Err(RouteError::NotFound),
        _ => {}
    }
    let topic = |end: usize| segments[..end].join("/");
    let n = segments.len();
    let resource =
        if n >= 5 && is(&segments[n - 4], "Subscriptions") && is(&segments[n - 2], "Rules") {
            Resource::Entity(Target::Rule {
                topic: topic(n - 4),
                subscription: segments[n - 3].clone(),
                name: segments[n - 1].clone(),
            })
        } else if n >= 4 && is(&segments[n - 3], "Subscriptions") && is(&segments[n - 1], "Rules") {
            Resource::ReadOnly(Operation::List(Listing::Rules {
                topic: topic(n - 3),
                subscription: segments[n - 2].clone(),
            }))
        } else if n >= 3 && is(&segments[n - 2], "Subscriptions") {
            Resource::Entity(Target::Subscription {
                topic: topic(n - 2),
                name: segments[n - 1].clone(),
            })
        } else if n >= 2 && is(&segments[n - 1], "Subscriptions") {
            Resource::ReadOnly(Operation::List(Listing::Subscriptions {
                topic: topic(n - 1),
            }))
        } else {
            Resource::Entity(Target::Entity { name: topic(n) })
        };
    Ok(resource)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn get(path: &str) -> Result<Routed, RouteError> {
        route(&Method::GET, path)
    }

    fn api(operation: Operation) -> Result<Routed, RouteError> {
        Ok(Routed::Api(operation))
    }

    fn entity(name: &str) -> Target {
        Target::Entity { name: name.into() }
    }

    fn subscription(topic: &str, name: &str) -> Target {
        Target::Subscription {
            topic: topic.into(),
            name: name.into(),
        }
    }

    fn rule(topic: &str, subscription: &str, name: &str) -> Target {
        Target::Rule {
            topic: topic.into(),
            subscription: subscription.into(),
            name: name.into(),
        }
    }

    #[test]
    fn every_sdk_spelling_of_the_lists() {
        for path in [
            "/$Resources/Queues",
            "/$Resources/queues",
            "/%24resources/QUEUES/",
        ] {
            assert_eq!(get(path), api(Operation::List(Listing::Queues)), "{path}");
        }
        assert_eq!(
            get("/$Resources/topics"),
            api(Operation::List(Listing::Topics))
        );
        for path in [
            "/t-full/Subscriptions",
            "/t-full/subscriptions",
            "/t-full/Subscriptions/",
        ] {
            assert_eq!(
                get(path),
                api(Operation::List(Listing::Subscriptions {
                    topic: "t-full".into()
                })),
                "{path}"
            );
        }
        for path in [
            "/t/Subscriptions/s/Rules",
            "/t/subscriptions/s/rules",
            "/t/Subscriptions/s/Rules/",
        ] {
            assert_eq!(
                get(path),
                api(Operation::List(Listing::Rules {
                    topic: "t".into(),
                    subscription: "s".into()
                })),
                "{path}"
            );
        }
        assert_eq!(get("/$namespaceinfo"), api(Operation::NamespaceInfo));
        assert_eq!(get("/$NamespaceInfo/"), api(Operation::NamespaceInfo));
    }

    #[test]
    fn entities_subscriptions_and_rules() {
        assert_eq!(get("/q-full"), api(Operation::Get(entity("q-full"))));
        assert_eq!(get("/orders/eu"), api(Operation::Get(entity("orders/eu"))));
        assert_eq!(
            route(&Method::PUT, "/t/subscriptions/s-full"),
            api(Operation::Put(subscription("t", "s-full")))
        );
        assert_eq!(
            route(&Method::DELETE, "/a/b/Subscriptions/s/Rules/%24Default"),
            api(Operation::Delete(rule("a/b", "s", "$Default")))
        );
        // A subscription may be called `Rules`.
        assert_eq!(
            get("/t/Subscriptions/Rules"),
            api(Operation::Get(subscription("t", "Rules")))
        );
        // Percent-encoded characters are decoded; names are checked later.
        assert_eq!(get("/a%20b"), api(Operation::Get(entity("a b"))));
        assert_eq!(get("/a//b"), api(Operation::Get(entity("a//b"))));
    }

    #[test]
    fn health_is_the_bare_probe_only() {
        assert!(is_health_probe(&Method::GET, "/health", false));
        assert!(!is_health_probe(&Method::GET, "/health", true));
        assert!(!is_health_probe(&Method::PUT, "/health", false));
        assert!(is_health_probe(&Method::GET, "/health/", false));
        assert!(!is_health_probe(&Method::GET, "/Health", false));
        assert_eq!(get("/health"), api(Operation::Get(entity("health"))));
    }

    #[test]
    fn metrics_is_the_bare_scrape_only() {
        assert!(is_metrics_scrape(&Method::GET, "/metrics", false));
        assert!(is_metrics_scrape(&Method::GET, "/metrics/", false));
        assert!(!is_metrics_scrape(&Method::GET, "/metrics", true));
        assert!(!is_metrics_scrape(&Method::PUT, "/metrics", false));
        assert_eq!(get("/metrics"), api(Operation::Get(entity("metrics"))));
    }

    #[test]
    fn busbar_paths_are_the_controls() {
        assert_eq!(
            route(&Method::POST, "/$busbar/purge/t/Subscriptions/s%20x"),
            Ok(Routed::Controls(vec![
                "purge".into(),
                "t".into(),
                "Subscriptions".into(),
                "s x".into()
            ]))
        );
        assert_eq!(
            get("/%24Busbar/clock/"),
            Ok(Routed::Controls(vec!["clock".into()]))
        );
        assert_eq!(get("/$busbar"), Ok(Routed::Controls(vec![])));
    }

    #[test]
    fn unknown_paths_are_not_found() {
        for path in [
            "/",
            "",
            "/$Resources",
            "/$Resources/Subscriptions",
            "/$Resources/Queues/q",
            "/$cbs",
            "/$namespaceinfo/x",
        ] {
            assert_eq!(get(path), Err(RouteError::NotFound), "{path}");
        }
        // Without a topic before it, `Subscriptions` is just a name.
        assert_eq!(
            get("/Subscriptions"),
            api(Operation::Get(entity("Subscriptions")))
        );
    }

    #[test]
    fn wrong_methods_are_not_allowed() {
        assert_eq!(
            route(&Method::PUT, "/$Resources/Queues"),
            Err(RouteError::MethodNotAllowed { allow: "GET" })
        );
        assert_eq!(
            route(&Method::DELETE, "/t/Subscriptions"),
            Err(RouteError::MethodNotAllowed { allow: "GET" })
        );
        assert_eq!(
            route(&Method::POST, "/q"),
            Err(RouteError::MethodNotAllowed {
                allow: "GET, PUT, DELETE"
            })
        );
        assert_eq!(
            route(&Method::HEAD, "/$namespaceinfo"),
            Err(RouteError::MethodNotAllowed { allow: "GET" })
        );
    }
}
