//! TLS and plain HTTP on one port: an https client that trusts the development CA and checks
//! the name `localhost`, and a plain one, both answered; clients that send garbage, send
//! nothing, stall their handshake or distrust the certificate lose only their own connection,
//! and the server goes on serving both kinds.
//!
//! Deadlines are observed on tokio's paused clock (see `http_hostile.rs`).

#![allow(clippy::unwrap_used)]

mod support;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use busbar_admin::http::ServerConfig;
use busbar_admin::tls::{DevelopmentCa, TlsConfig};
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::Request;
use hyper::header::{AUTHORIZATION, HOST};
use hyper_util::rt::TokioIo;
use support::{
    TestServer, queue_body, raw_exchange, read_to_close, status_of, text_of, valid_token,
};
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;
use tokio::time::Instant;
use tokio_rustls::TlsConnector;
use tokio_rustls::client::TlsStream;
use tokio_rustls::rustls::crypto::ring;
use tokio_rustls::rustls::pki_types::pem::PemObject;
use tokio_rustls::rustls::pki_types::{CertificateDer, ServerName};
use tokio_rustls::rustls::{ClientConfig, RootCertStore};

const V: &str = "?api-version=2021-05";

/// A development CA in a fresh directory of the target's scratch space, removed when dropped.
struct Certificates {
    dir: PathBuf,
    set: DevelopmentCa,
}

impl Certificates {
    fn new() -> Certificates {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!(
            "admin-tls-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        let set = DevelopmentCa::load_or_create(&dir.join("tls")).unwrap();
        Certificates { dir, set }
    }

    /// The CA certificate, as a client given `ca.crt` reads it.
    fn ca(&self) -> CertificateDer<'static> {
        CertificateDer::from_pem_file(&self.set.ca_cert).unwrap()
    }

    /// A server serving this set's certificate, with settings `configure` adjusts.
    async fn serve(&self, configure: impl FnOnce(&mut ServerConfig)) -> TestServer {
        let dir = self.set.ca_cert.parent().unwrap();
        let identity = DevelopmentCa::load_or_create(dir).unwrap().identity;
        let tls = TlsConfig::new(identity).unwrap();
        TestServer::start_with(move |config| {
            config.tls = Some(tls);
            configure(config);
        })
        .await
    }
}

impl Drop for Certificates {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Connects over TLS, trusting only `ca` and checking the certificate for `name`.
async fn connect_tls(
    addr: SocketAddr,
    ca: CertificateDer<'static>,
    name: &str,
) -> std::io::Result<TlsStream<TcpStream>> {
    let mut roots = RootCertStore::empty();
    roots.add(ca).unwrap();
    let config = ClientConfig::builder_with_provider(Arc::new(ring::default_provider()))
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    let stream = TcpStream::connect(addr).await?;
    TlsConnector::from(Arc::new(config))
        .connect(ServerName::try_from(name.to_owned()).unwrap(), stream)
        .await
}

/// A GET over https to `localhost`, trusting `ca`: the status and the body.
async fn https_get(addr: SocketAddr, ca: CertificateDer<'static>, path: &str) -> (u16, String) {
    let stream = connect_tls(addr, ca, "localhost").await.unwrap();
    let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .unwrap();
    tokio::spawn(connection);
    let request = Request::get(path)
        .header(HOST, format!("localhost:{}", addr.port()))
        .header(AUTHORIZATION, valid_token())
        .body(Full::new(Bytes::new()))
        .unwrap();
    let response = sender.send_request(request).await.unwrap();
    let status = response.status().as_u16();
    let body = response.into_body().collect().await.unwrap().to_bytes();
    (status, String::from_utf8(body.to_vec()).unwrap())
}

/// Checks the server answers both a plain and an https request.
async fn assert_serving_both(server: &TestServer, ca: CertificateDer<'static>) {
    server.assert_serving().await;
    let (status, body) = https_get(server.addr, ca, &format!("/$namespaceinfo{V}")).await;
    assert_eq!(status, 200, "{body}");
}

#[tokio::test]
async fn plain_http_and_https_share_the_port() {
    let certificates = Certificates::new();
    let server = certificates.serve(|_| {}).await;
    let port = server.addr.port();

    let created = server
        .client()
        .put(&format!("/made-plain{V}"), &queue_body(""))
        .await;
    assert_eq!(created.status, 201, "{}", created.body);
    let (status, body) =
        https_get(server.addr, certificates.ca(), &format!("/made-plain{V}")).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(text_of(&body, "title"), Some("made-plain"));
    // Each answer names the scheme its request came over.
    assert_eq!(
        text_of(&body, "id"),
        Some(format!("https://localhost:{port}/made-plain{V}").as_str())
    );
    let plain = server.client().get(&format!("/made-plain{V}")).await;
    assert_eq!(
        text_of(&plain.body, "id"),
        Some(format!("http://localhost:{port}/made-plain{V}").as_str())
    );
    server.shut_down().await;
}

#[tokio::test]
async fn a_client_that_distrusts_the_certificate_fails_alone() {
    let certificates = Certificates::new();
    let server = certificates.serve(|_| {}).await;
    let stranger = Certificates::new();
    assert!(
        connect_tls(server.addr, stranger.ca(), "localhost")
            .await
            .is_err()
    );
    assert!(
        connect_tls(server.addr, certificates.ca(), "example.com")
            .await
            .is_err()
    );
    for name in ["127.0.0.1", "localhost"] {
        connect_tls(server.addr, certificates.ca(), name)
            .await
            .unwrap();
    }
    assert_serving_both(&server, certificates.ca()).await;
    server.shut_down().await;
}

#[tokio::test]
async fn garbage_closes_only_its_own_connection() {
    let certificates = Certificates::new();
    let server = certificates.serve(|_| {}).await;
    // A handshake record type followed by nonsense: the TLS accept fails.
    let response = raw_exchange(server.addr, b"\x16\x03\x01\x00\x05hello, not TLS").await;
    assert_eq!(response, "");
    // Not a handshake record: plain HTTP, which refuses it.
    let response = raw_exchange(server.addr, b"\x00\x01\x02\x03 binary\r\n\r\n").await;
    assert!(
        status_of(&response).is_none_or(|status| status == 400),
        "{response}"
    );
    // Connected and gone at once.
    drop(TcpStream::connect(server.addr).await.unwrap());
    assert_serving_both(&server, certificates.ca()).await;
    server.shut_down().await;
}

#[tokio::test(start_paused = true)]
async fn a_silent_client_is_closed_at_the_header_timeout() {
    let certificates = Certificates::new();
    let server = certificates
        .serve(|config| config.header_read_timeout = Duration::from_secs(10))
        .await;
    let mut stream = TcpStream::connect(server.addr).await.unwrap();
    let started = Instant::now();
    assert_eq!(read_to_close(&mut stream).await, "");
    let waited = started.elapsed();
    assert!(waited >= Duration::from_secs(10), "closed after {waited:?}");
    assert!(waited < Duration::from_secs(11), "closed after {waited:?}");
    assert_serving_both(&server, certificates.ca()).await;
    server.shut_down().await;
}

#[tokio::test(start_paused = true)]
async fn a_stalled_handshake_is_closed_at_the_handshake_deadline() {
    let certificates = Certificates::new();
    let server = certificates
        .serve(|config| {
            config.header_read_timeout = Duration::from_secs(3600);
            config.tls.as_mut().unwrap().handshake_timeout = Duration::from_secs(5);
        })
        .await;
    let mut stalled = TcpStream::connect(server.addr).await.unwrap();
    // The first bytes of a TLS record header, and no more.
    stalled.write_all(b"\x16\x03\x01").await.unwrap();
    let started = Instant::now();
    // Meanwhile others are served.
    assert_serving_both(&server, certificates.ca()).await;
    assert_eq!(read_to_close(&mut stalled).await, "");
    let waited = started.elapsed();
    assert!(waited >= Duration::from_secs(5), "closed after {waited:?}");
    assert!(waited < Duration::from_secs(6), "closed after {waited:?}");
    assert_serving_both(&server, certificates.ca()).await;
    server.shut_down().await;
}

#[tokio::test(start_paused = true)]
async fn shutdown_does_not_wait_for_a_client_that_has_not_spoken() {
    let certificates = Certificates::new();
    let server = certificates
        .serve(|config| {
            config.header_read_timeout = Duration::from_secs(3600);
            config.shutdown_grace = Duration::from_secs(60);
        })
        .await;
    let _silent = TcpStream::connect(server.addr).await.unwrap();
    let mut stalled = TcpStream::connect(server.addr).await.unwrap();
    stalled.write_all(b"\x16").await.unwrap();
    server.assert_serving().await;
    let started = Instant::now();
    server.shut_down().await;
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "{:?}",
        started.elapsed()
    );
}
