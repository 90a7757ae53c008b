//! Clients for the tests: `Client` sends one well-formed request per connection with hyper's
//! client half; `raw_exchange` writes bytes as given and reads whatever comes back, for
//! hostile input.

use std::net::SocketAddr;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::header::{AUTHORIZATION, HOST, IF_MATCH};
use hyper::{HeaderMap, Method, Request};
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use super::valid_token;

/// A response, body as text.
#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    pub headers: HeaderMap,
    pub body: String,
}

impl Reply {
    /// The `Content-Type` header.
    pub fn content_type(&self) -> &str {
        self.headers
            .get("content-type")
            .and_then(|value| value.to_str().ok())
            .unwrap_or("")
    }
}

/// Sends requests to one server, with a valid token unless told otherwise.
#[derive(Debug, Clone)]
pub struct Client {
    pub addr: SocketAddr,
    pub token: Option<String>,
}

impl Client {
    pub fn new(addr: SocketAddr) -> Client {
        Client {
            addr,
            token: Some(valid_token()),
        }
    }

    /// The same server, sending `token` (or none).
    pub fn with_token(&self, token: Option<&str>) -> Client {
        Client {
            addr: self.addr,
            token: token.map(str::to_owned),
        }
    }

    pub async fn get(&self, path: &str) -> Reply {
        self.send(Method::GET, path, &[], "").await
    }

    /// A create.
    pub async fn put(&self, path: &str, body: &str) -> Reply {
        self.send(Method::PUT, path, &[], body).await
    }

    /// An update: PUT with `If-Match: *`.
    pub async fn update(&self, path: &str, body: &str) -> Reply {
        self.send(Method::PUT, path, &[(IF_MATCH.as_str(), "*")], body)
            .await
    }

    pub async fn delete(&self, path: &str) -> Reply {
        self.send(Method::DELETE, path, &[], "").await
    }

    pub async fn send(
        &self,
        method: Method,
        path: &str,
        headers: &[(&str, &str)],
        body: &str,
    ) -> Reply {
        let stream = TcpStream::connect(self.addr).await.expect("connect");
        let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
            .await
            .expect("handshake");
        tokio::spawn(connection);
        let mut request = Request::builder()
            .method(method)
            .uri(path)
            .header(HOST, format!("localhost:{}", self.addr.port()));
        if let Some(token) = &self.token {
            request = request.header(AUTHORIZATION, token);
        }
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        let request = request
            .body(Full::new(Bytes::copy_from_slice(body.as_bytes())))
            .expect("request");
        let response = sender.send_request(request).await.expect("response");
        let (parts, body) = response.into_parts();
        let body = body.collect().await.expect("response body").to_bytes();
        Reply {
            status: parts.status.as_u16(),
            headers: parts.headers,
            body: String::from_utf8(body.to_vec()).expect("UTF-8 body"),
        }
    }
}

/// Writes `request` on a new connection and reads until the server closes it.
pub async fn raw_exchange(addr: SocketAddr, request: &[u8]) -> String {
    let mut stream = TcpStream::connect(addr).await.expect("connect");
    stream.write_all(request).await.expect("write");
    read_to_close(&mut stream).await
}

/// Reads until the peer closes (or resets) the connection.
pub async fn read_to_close(stream: &mut TcpStream) -> String {
    let mut received = Vec::new();
    let mut buffer = [0u8; 8192];
    loop {
        match stream.read(&mut buffer).await {
            Ok(0) | Err(_) => break,
            Ok(read) => received.extend_from_slice(&buffer[..read]),
        }
    }
    String::from_utf8_lossy(&received).into_owned()
}

/// The status code of a raw HTTP/1.1 response.
pub fn status_of(response: &str) -> Option<u16> {
    response.strip_prefix("HTTP/1.1 ")?.get(..3)?.parse().ok()
}
