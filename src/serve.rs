//! Running the broker: the tokio runtime, the storage chosen on the command line, the listener,
//! the stable start-up lines, and SIGINT/SIGTERM handling.

use std::io::Write as _;
use std::net::SocketAddr;
use std::sync::Arc;

use busbar_admin::http::ServerConfig;

use busbar_broker::config::Config;
use busbar_broker::runtime::{self, RuntimeError};
use busbar_store::{FileOptions, FileStorage, MemoryStorage, Storage, StoreError};
use tokio::net::TcpListener;

use crate::admin::{self, BrokerNamespace};
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
        address: SocketAddr,
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
    let admin = match options.admin_listen {
        Some(address) => Some(bind_admin(address).await?),
        None => None,
    };
    tracing::info!(%bound, "serving");
    let (admin_stop, admin_stopped) = tokio::sync::watch::channel(false);
    let mut admin_task = None;
    let namespace = config.namespace.name.clone();
    let started = unix_millis_now();
    let ready = |control| {
        if let Some(listener) = admin {
            let namespace = Arc::new(BrokerNamespace::new(control, namespace, started));
            let shutdown = async move {
                let mut stopped = admin_stopped;
                let _ = stopped.wait_for(|stopped| *stopped).await;
            };
            let server_config = ServerConfig::new(admin::authorization());
            admin_task = Some(tokio::spawn(busbar_admin::http::serve(
                listener,
                namespace,
                server_config,
                shutdown,
            )));
        }
    };
    let stop = async move {
        stop_signal().await;
        let _ = admin_stop.send(true);
    };
    runtime::run(config, storage, listener, stop, ready).await?;
    if let Some(task) = admin_task {
        let _ = task.await;
    }
    tracing::info!("stopped");
    Ok(())
}

/// Binds the administration API's listener and prints its stable start-up line.
async fn bind_admin(address: SocketAddr) -> Result<TcpListener, ServeError> {
    let listener = TcpListener::bind(address)
        .await
        .map_err(|source| ServeError::Bind { address, source })?;
    let bound = listener
        .local_addr()
        .map_err(|source| ServeError::Bind { address, source })?;
    // Tests and scripts read the port from this line: keep its shape stable.
    println!("admin listening on {bound}");
    let _ = std::io::stdout().flush();
    Ok(listener)
}

fn unix_millis_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |since| {
            i64::try_from(since.as_millis()).unwrap_or(i64::MAX)
        })
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
