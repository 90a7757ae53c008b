//! Raw HTTP to the admin port (hyper-util's client over plain HTTP, SAS-signed with the
//! emulator key), and the `HttpClient` that points the REST crate at the broker.

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use async_trait::async_trait;
use azure_core_021::{HttpClient, Request, Response};
use busbar_broker::auth::sign_token;
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::{HeaderMap, Method, StatusCode};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;

/// The emulator's root key, which the broker checks tokens against.
pub const KEY_NAME: &str = "RootManageSharedAccessKey";
pub const KEY: &str = "SAS_KEY_VALUE";

/// A response, whole.
#[derive(Debug)]
pub struct Reply {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: Bytes,
}

impl Reply {
    /// A header's text.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|value| value.to_str().ok())
    }

    /// The `BrokerProperties` header, parsed.
    pub fn broker_properties(&self) -> serde_json::Value {
        serde_json::from_str(self.header("brokerproperties").unwrap()).unwrap()
    }
}

/// Requests to one broker's admin port, SAS-signed unless made [`Http::unsigned`].
#[derive(Clone)]
pub struct Http {
    client: Client<HttpConnector, Full<Bytes>>,
    origin: String,
    signed: bool,
}

impl Http {
    pub fn new(admin_port: u16) -> Http {
        Http {
            client: Client::builder(TokioExecutor::new()).build_http(),
            origin: format!("http://127.0.0.1:{admin_port}"),
            signed: true,
        }
    }

    /// The same, sending no `Authorization` but the one a request names.
    pub fn unsigned(&self) -> Http {
        Http {
            signed: false,
            ..self.clone()
        }
    }

    /// A request; `path` is absolute (`/queue.1/messages`) or a full URL (a `Location`).
    pub async fn send(
        &self,
        method: Method,
        path: &str,
        headers: &[(&str, &str)],
        body: impl Into<Bytes>,
    ) -> Reply {
        let url = if path.starts_with("http") {
            path.to_owned()
        } else {
            format!("{}{path}", self.origin)
        };
        let mut request = hyper::Request::builder().method(method).uri(url);
        if self.signed {
            let token = sign_token("http://localhost/", KEY_NAME, KEY, expiry());
            request = request.header("authorization", token);
        }
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        let response = self
            .client
            .request(request.body(Full::new(body.into())).unwrap())
            .await
            .unwrap();
        let (parts, body) = response.into_parts();
        Reply {
            status: parts.status,
            headers: parts.headers,
            body: body.collect().await.unwrap().to_bytes(),
        }
    }

    /// Moves the broker's virtual clock ahead (test controls).
    pub async fn advance_clock(&self, by: &str) {
        let path = format!("/$busbar/clock/advance?by={by}");
        let reply = self.send(Method::POST, &path, &[], "").await;
        assert_eq!(reply.status, StatusCode::OK, "{reply:?}");
    }
}

fn expiry() -> u64 {
    let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap();
    (now + Duration::from_secs(3_600)).as_secs()
}

/// azure_core's reqwest client, sending what the crate addresses to
/// `https://{namespace}.servicebus.windows.net/…` to the broker's admin port over plain HTTP.
#[derive(Debug)]
pub struct ToBroker {
    inner: Arc<dyn HttpClient>,
    admin_port: u16,
}

impl ToBroker {
    pub fn client(admin_port: u16) -> Arc<dyn HttpClient> {
        Arc::new(ToBroker {
            inner: azure_core_021::new_http_client(),
            admin_port,
        })
    }
}

#[async_trait]
impl HttpClient for ToBroker {
    async fn execute_request(&self, request: &Request) -> azure_core_021::Result<Response> {
        let mut request = request.clone();
        let url = request.url_mut();
        url.set_scheme("http").unwrap();
        url.set_host(Some("127.0.0.1")).unwrap();
        url.set_port(Some(self.admin_port)).unwrap();
        self.inner.execute_request(&request).await
    }
}
