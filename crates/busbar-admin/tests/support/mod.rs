//! Shared by the HTTP integration tests: a server on 127.0.0.1:0 over the in-memory control,
//! a token verifier, clients, and request bodies.

#![allow(dead_code, unreachable_pub, unused_imports)] // Each test crate uses its own subset.

pub mod client;
pub mod memory;

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use busbar_admin::auth::{Authorization, Need, Right};
use busbar_admin::http::{ServerConfig, serve};
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

pub use client::{Client, Reply, raw_exchange, read_to_close, status_of};
pub use memory::{MemoryNamespace, NAMESPACE};

/// The emulator's key name.
pub const KEY_NAME: &str = "RootManageSharedAccessKey";

/// A token the test verifier accepts (it expires in 2100).
pub fn valid_token() -> String {
    format!("SharedAccessSignature sr=http%3A%2F%2Flocalhost&sig=test&se=4102444800&skn={KEY_NAME}")
}

/// A token the test verifier refuses as expired (in 1970).
pub fn expired_token() -> String {
    valid_token().replace("se=4102444800", "se=1000")
}

/// A token whose signature the test verifier refuses.
pub fn forged_token() -> String {
    valid_token().replace("sig=test", "sig=forged")
}

/// The key name of a rule with the Send right only.
pub const SENDER_KEY_NAME: &str = "Sender";

/// A token the test verifier accepts for sending only.
pub fn sender_token() -> String {
    valid_token().replace(KEY_NAME, SENDER_KEY_NAME)
}

/// Every token the verifier was asked about, in order.
pub type TokenLog = Arc<Mutex<Vec<String>>>;

/// Stands in for the broker's SAS check: a token verifies if it names the emulator's key, its
/// signature is not `forged`, and its `se` is after `now`; one naming [`SENDER_KEY_NAME`] is
/// good for sending only. It logs every token it sees.
pub fn authorization() -> (Authorization, TokenLog) {
    let log = TokenLog::default();
    let seen = Arc::clone(&log);
    let verify = move |token: &str, need: Need<'_>, now_unix_millis: i64| {
        seen.lock().unwrap().push(token.to_owned());
        let fields: Vec<&str> = token
            .trim_start_matches("SharedAccessSignature ")
            .split('&')
            .collect();
        let expiry: i64 = fields
            .iter()
            .find_map(|field| field.strip_prefix("se="))
            .and_then(|se| se.parse().ok())
            .ok_or("no expiry")?;
        let sender = fields.contains(&format!("skn={SENDER_KEY_NAME}").as_str());
        if !sender && !fields.contains(&format!("skn={KEY_NAME}").as_str()) {
            return Err("unknown key".to_owned());
        }
        if fields.contains(&"sig=forged") {
            return Err("signature mismatch".to_owned());
        }
        if now_unix_millis >= expiry.saturating_mul(1000) {
            return Err("expired".to_owned());
        }
        if sender && need.right != Right::Send {
            return Err(format!("the {:?} claim is required", need.right));
        }
        Ok(())
    };
    (Authorization::SharedAccessSignature(Arc::new(verify)), log)
}

/// A running server and the namespace behind it.
pub struct TestServer {
    pub addr: SocketAddr,
    pub control: Arc<MemoryNamespace>,
    pub tokens: TokenLog,
    stop: oneshot::Sender<()>,
    task: JoinHandle<()>,
}

impl TestServer {
    /// A server with the default settings and the test verifier.
    pub async fn start() -> TestServer {
        TestServer::start_with(|_| {}).await
    }

    /// A server whose settings `configure` adjusts.
    pub async fn start_with(configure: impl FnOnce(&mut ServerConfig)) -> TestServer {
        let (authorization, tokens) = authorization();
        let mut config = ServerConfig::new(authorization);
        configure(&mut config);
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("local address");
        let control = Arc::new(MemoryNamespace::default());
        let (stop, stopped) = oneshot::channel();
        let task = tokio::spawn(serve(listener, Arc::clone(&control), config, async move {
            let _ = stopped.await;
        }));
        TestServer {
            addr,
            control,
            tokens,
            stop,
            task,
        }
    }

    pub fn client(&self) -> Client {
        Client::new(self.addr)
    }

    /// Signals shutdown and waits for `serve` to return.
    pub async fn shut_down(self) {
        let _ = self.stop.send(());
        self.task.await.expect("serve returned");
    }

    /// Checks the server still answers a plain request.
    pub async fn assert_serving(&self) {
        let reply = self
            .client()
            .get("/$namespaceinfo?api-version=2021-05")
            .await;
        assert_eq!(reply.status, 200, "{}", reply.body);
    }
}

const SERVICE_BUS: &str = "http://schemas.microsoft.com/netservices/2010/10/servicebus/connect";

/// An Atom entry holding `<{kind}>{children}</{kind}>`, as .NET writes it.
pub fn entry(kind: &str, children: &str) -> String {
    format!(
        r#"<?xml version="1.0" encoding="utf-8"?><entry xmlns="http://www.w3.org/2005/Atom"><content type="application/xml"><{kind} xmlns="{SERVICE_BUS}" xmlns:i="http://www.w3.org/2001/XMLSchema-instance">{children}</{kind}></content></entry>"#
    )
}

pub fn queue_body(children: &str) -> String {
    entry("QueueDescription", children)
}

pub fn topic_body(children: &str) -> String {
    entry("TopicDescription", children)
}

pub fn subscription_body(children: &str) -> String {
    entry("SubscriptionDescription", children)
}

pub fn rule_body(children: &str) -> String {
    entry("RuleDescription", children)
}

/// A SQL filter rule body.
pub fn sql_rule_body(expression: &str) -> String {
    rule_body(&format!(
        r#"<Filter i:type="SqlFilter"><SqlExpression>{expression}</SqlExpression></Filter>"#
    ))
}

/// The text of the first element named `local_name` (any prefix).
pub fn text_of<'a>(xml: &'a str, local_name: &str) -> Option<&'a str> {
    let mut rest = xml;
    while let Some(open) = rest.find('<') {
        rest = &rest[open + 1..];
        let tag_end = rest.find('>')?;
        let tag = &rest[..tag_end];
        let name = tag.split(' ').next().unwrap_or("");
        let local = name.rsplit(':').next().unwrap_or(name);
        if local == local_name && !tag.ends_with('/') {
            let content = &rest[tag_end + 1..];
            return Some(&content[..content.find('<')?]);
        }
    }
    None
}

/// The texts of every `<title>` of the entries of a feed.
pub fn entry_titles(feed: &str) -> Vec<String> {
    feed.split("<entry ")
        .skip(1)
        .map(|entry| text_of(entry, "title").expect("entry title").to_owned())
        .collect()
}

/// The `href` of the feed's `rel="next"` link, unescaped.
pub fn next_link(feed: &str) -> Option<String> {
    let start = feed.find(r#"<link rel="next" href=""#)? + r#"<link rel="next" href=""#.len();
    let end = feed[start..].find('"')? + start;
    Some(feed[start..end].replace("&amp;", "&"))
}
