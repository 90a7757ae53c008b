//! A TCP stream that acknowledges every read at once, so a client's Nagle never waits on our
//! delayed ACK.
//!
//! A client without `TCP_NODELAY` (fe2o3-amqp, for one) sends its first small frame (a
//! disposition) and holds the rest (more dispositions and the credit top-up) until that frame is
//! acknowledged. When we have nothing to send back — every credited delivery is out — Linux
//! delays that ACK by up to 40 ms, and the receive link stalls that long. `TCP_QUICKACK` is not
//! sticky (the kernel drops back to delayed ACKs once it sees request/response traffic), so it is
//! set again after every read.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;

/// A [`TcpStream`] that re-arms quick ACKs after each read that returned data.
pub(crate) struct QuickAckStream(pub(crate) TcpStream);

impl AsyncRead for QuickAckStream {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.0).poll_read(cx, buf);
        if matches!(polled, Poll::Ready(Ok(()))) && buf.filled().len() > before {
            rearm_quick_ack(&self.0);
        }
        polled
    }
}

#[cfg(target_os = "linux")]
fn rearm_quick_ack(stream: &TcpStream) {
    // Only a latency hint: a socket that refuses it still works.
    let _ = stream.set_quickack(true);
}

#[cfg(not(target_os = "linux"))]
fn rearm_quick_ack(_stream: &TcpStream) {}

impl AsyncWrite for QuickAckStream {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.0).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.0).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.0).poll_shutdown(cx)
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::{TcpListener, TcpStream};

    use super::QuickAckStream;

    #[tokio::test]
    async fn a_read_turns_quick_acks_back_on() {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let mut client = TcpStream::connect(listener.local_addr().unwrap())
            .await
            .unwrap();
        let (accepted, _) = listener.accept().await.unwrap();
        // Delayed ACKs, as the kernel chooses once it sees request/response traffic.
        accepted.set_quickack(false).unwrap();
        let mut server = QuickAckStream(accepted);
        client.write_all(b"disposition").await.unwrap();

        let mut received = [0u8; 11];
        server.read_exact(&mut received).await.unwrap();

        assert_eq!(&received, b"disposition");
        assert!(server.0.quickack().unwrap());
    }
}
