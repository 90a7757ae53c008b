//! A gateway on a loopback port with a test dispatch: AMQP connections echo their bytes, HTTP
//! connections answer `200 http` or `200 https` and upgrade `/$servicebus/websocket` to an echo
//! over WebSocket messages. And the clients the tests use: plain TCP, TLS trusting a
//! development CA made for the test, HTTP/1.1 and a WebSocket client.

#![allow(dead_code, unreachable_pub, clippy::unwrap_used)]

use std::convert::Infallible;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use busbar_gateway::tls::{DevelopmentCa, TlsConfig};
use busbar_gateway::{BoxedIo, Connection, Dispatch, Gateway, Limits, Stopping, websocket};
use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio_rustls::TlsConnector;
use tokio_rustls::client::TlsStream;
use tokio_rustls::rustls::crypto::ring;
use tokio_rustls::rustls::pki_types::pem::PemObject;
use tokio_rustls::rustls::pki_types::{CertificateDer, ServerName};
use tokio_rustls::rustls::{ClientConfig, RootCertStore};

/// Echoes AMQP; answers HTTP; upgrades WebSockets to an echo.
struct Echo;

fn echo(stream: BoxedIo) {
    tokio::spawn(async move {
        let (mut read, mut write) = tokio::io::split(stream);
        let _ = tokio::io::copy(&mut read, &mut write).await;
    });
}

impl Dispatch for Echo {
    async fn amqp(&self, connection: Connection) {
        echo(connection.stream);
    }

    async fn http(&self, connection: Connection, stopping: Stopping) {
        let scheme = if connection.secure { "https" } else { "http" };
        let service = service_fn(move |request: Request<Incoming>| async move {
            if websocket::is_upgrade(&request) {
                return Ok::<_, Infallible>(websocket::upgrade(request, |stream| async move {
                    echo(stream);
                }));
            }
            Ok(Response::new(Full::new(Bytes::from_static(
                scheme.as_bytes(),
            ))))
        });
        let served = http1::Builder::new()
            .serve_connection(TokioIo::new(connection.stream), service)
            .with_upgrades();
        tokio::select! {
            _ = served => {}
            () = stopping.wait() => {}
        }
    }
}

/// A gateway serving one loopback port, stopped when dropped.
pub struct TestGateway {
    pub addr: SocketAddr,
    pub ca: CertificateDer<'static>,
    dir: PathBuf,
    stop: watch::Sender<bool>,
}

impl TestGateway {
    pub async fn start(limits: Limits) -> TestGateway {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!(
            "gateway-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        let set = DevelopmentCa::load_or_create(&dir).unwrap();
        let ca = CertificateDer::from_pem_file(&set.ca_cert).unwrap();
        let tls = TlsConfig::new(set.identity).unwrap();
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let (stop, stopping) = watch::channel(false);
        let gateway = Gateway::new(Echo, Some(tls), limits);
        tokio::spawn(busbar_gateway::serve(
            listener,
            gateway,
            Stopping::new(stopping),
        ));
        TestGateway {
            addr,
            ca,
            dir,
            stop,
        }
    }

    pub async fn tcp(&self) -> TcpStream {
        TcpStream::connect(self.addr).await.unwrap()
    }

    /// A TLS connection trusting the test's CA and checking the name `localhost`.
    pub async fn tls(&self) -> std::io::Result<TlsStream<TcpStream>> {
        let mut roots = RootCertStore::empty();
        roots.add(self.ca.clone()).unwrap();
        let config = ClientConfig::builder_with_provider(Arc::new(ring::default_provider()))
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_root_certificates(roots)
            .with_no_client_auth();
        TlsConnector::from(Arc::new(config))
            .connect(ServerName::try_from("localhost").unwrap(), self.tcp().await)
            .await
    }

    /// Checks that a plain AMQP client is still echoed.
    pub async fn still_serves(&self) {
        assert_eq!(amqp_echo(self.tcp().await).await, AMQP_HEADER);
    }
}

impl Drop for TestGateway {
    fn drop(&mut self) {
        let _ = self.stop.send(true);
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The AMQP protocol header.
pub const AMQP_HEADER: &[u8; 8] = b"AMQP\x00\x01\x00\x00";

/// Sends the AMQP header on `stream` and reads back what the server echoes.
pub async fn amqp_echo<S: AsyncRead + AsyncWrite + Unpin>(mut stream: S) -> Vec<u8> {
    stream.write_all(AMQP_HEADER).await.unwrap();
    let mut echoed = vec![0u8; AMQP_HEADER.len()];
    stream.read_exact(&mut echoed).await.unwrap();
    echoed
}

/// A GET of `/` on `stream`: the body.
pub async fn http_get<S: AsyncRead + AsyncWrite + Unpin + Send + 'static>(stream: S) -> String {
    use http_body_util::BodyExt;
    let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .unwrap();
    tokio::spawn(connection);
    let request = Request::get("/")
        .header("host", "localhost")
        .body(Full::new(Bytes::new()))
        .unwrap();
    let response = sender.send_request(request).await.unwrap();
    assert_eq!(response.status(), 200);
    let body = response.into_body().collect().await.unwrap().to_bytes();
    String::from_utf8(body.to_vec()).unwrap()
}

/// Reads until the server closes: everything it sent (`Err` if the connection was reset).
pub async fn read_to_close<S: AsyncRead + Unpin>(mut stream: S) -> std::io::Result<Vec<u8>> {
    let mut all = Vec::new();
    stream.read_to_end(&mut all).await?;
    Ok(all)
}
