//! Running the broker: the tokio runtime, the storage chosen on the command line, the listener,
//! the stable start-up lines, and SIGINT/SIGTERM handling.

use std::io::Write as _;

use busbar_broker::config::Config;
use busbar_broker::runtime::{self, RuntimeError};
use busbar_store::{FileOptions, FileStorage, MemoryStorage, Storage, StoreError};
use tokio::net::TcpListener;

use crate::cli::{ServeOptions, StorageChoice};
use crate::summary::connection_string;

/// Why serving stopped with an error.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ServeError {
    /// The tokio runtime could not start.
    #[error("cannot start the async runtime: {0}")]
    Runtime(std::io::Error),
    /// The listen address could not be bound.
    #[error("cannot listen on {address}: {source}")]
    Bind {
        /// The address asked for.
        address: std::net::SocketAddr,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// The data directory could not be opened.
    #[error("cannot open the data directory: {0}")]
    Storage(#[from] StoreError),
    /// The broker failed.
    #[error("{0}")]
    Broker(#[from] RuntimeError),
}

/// Serves until SIGINT or SIGTERM, then shuts down cleanly.
pub(crate) fn serve(config: &Config, options: &ServeOptions) -> Result<(), ServeError> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(ServeError::Runtime)?;
    runtime.block_on(async {
        match &options.storage {
            StorageChoice::Memory => run(config, options, MemoryStorage::volatile()).await,
            StorageChoice::Directory(dir) => {
                let storage = FileStorage::open(dir, FileOptions::default())?;
                run(config, options, storage).await
            }
        }
    })
}

async fn run<S: Storage + 'static>(
    config: &Config,
    options: &ServeOptions,
    storage: S,
) -> Result<(), ServeError> {
    let listener = TcpListener::bind(options.listen)
        .await
        .map_err(|source| ServeError::Bind {
            address: options.listen,
            source,
        })?;
    let bound = listener.local_addr().map_err(|source| ServeError::Bind {
        address: options.listen,
        source,
    })?;
    // Tests and scripts read the port from this line: keep its shape stable.
    println!("listening on {bound}");
    println!("connection string: {}", connection_string(bound));
    let _ = std::io::stdout().flush();
    tracing::info!(%bound, "serving");
    runtime::run(config, storage, listener, stop_signal(), |_| {}).await?;
    tracing::info!("stopped");
    Ok(())
}

/// Resolves on SIGINT or SIGTERM (Ctrl-C only where there are no Unix signals).
async fn stop_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match (
            signal(SignalKind::interrupt()),
            signal(SignalKind::terminate()),
        ) {
            (Ok(mut interrupt), Ok(mut terminate)) => {
                tokio::select! {
                    _ = interrupt.recv() => {}
                    _ = terminate.recv() => {}
                }
            }
            _ => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}
