//! Where [`serve`](super::serve) takes its connections from: a TCP listener, or a channel of
//! byte streams opened elsewhere (the broker's gateway, which first tells AMQP from TLS and
//! HTTP and unwraps TLS and WebSockets).

use std::future::Future;
use std::io;
use std::net::SocketAddr;

use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;

/// A source of accepted connections.
pub trait Acceptor: Send {
    /// The byte stream of one connection.
    type Stream: AsyncRead + AsyncWrite + Unpin + Send + 'static;

    /// The next connection and its peer's address; `None` once no more will come. An error
    /// concerns one connection only: accepting goes on.
    fn accept(
        &mut self,
    ) -> impl Future<Output = Option<io::Result<(Self::Stream, SocketAddr)>>> + Send;
}

impl Acceptor for TcpListener {
    type Stream = TcpStream;

    async fn accept(&mut self) -> Option<io::Result<(TcpStream, SocketAddr)>> {
        let accepted = TcpListener::accept(self).await;
        if let Ok((stream, _)) = &accepted {
            // Small frames go out at once rather than waiting for Nagle.
            let _ = stream.set_nodelay(true);
        }
        Some(accepted)
    }
}

impl<S> Acceptor for mpsc::Receiver<(S, SocketAddr)>
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    type Stream = S;

    async fn accept(&mut self) -> Option<io::Result<(S, SocketAddr)>> {
        self.recv().await.map(Ok)
    }
}
