//! Running the broker: the tokio runtime, the storage chosen on the command line, the listeners
//! (the admin port's https certificate included), the stable start-up lines, and SIGINT/SIGTERM
//! handling.

use std::io::Write as _;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use busbar_admin::http::ServerConfig;
use busbar_admin::tls::{DevelopmentCa, Identity, TlsConfig, TlsError};

use busbar_broker::config::Config;
use busbar_broker::runtime::{self, Clock, RuntimeError};
use busbar_store::{FileOptions, FileStorage, MemoryStorage, Storage, StoreError};
use tokio::net::TcpListener;

use crate::admin::{self, BrokerNamespace};
use crate::cli::{DEFAULT_DATA_DIR, ServeOptions, StorageChoice};
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
    /// The admin port's certificate could not be read, created or used.
    #[error("cannot set up https for the administration API: {0}")]
    Tls(#[from] TlsError),
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
        Some(address) => Some(bind_admin(address, options).await?),
        None => None,
    };
    tracing::info!(%bound, "serving");
    let (admin_stop, admin_stopped) = tokio::sync::watch::channel(false);
    let mut admin_task = None;
    let namespace = config.namespace.name.clone();
    let started = unix_millis_now();
    let ready = |control| {
        if let Some((listener, tls)) = admin {
            let namespace = Arc::new(BrokerNamespace::new(control, namespace, started));
            let shutdown = async move {
                let mut stopped = admin_stopped;
                let _ = stopped.wait_for(|stopped| *stopped).await;
            };
            let mut server_config = ServerConfig::new(admin::authorization());
            server_config.tls = Some(tls);
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
    let clock = if options.test_controls {
        // Never on by accident: said on standard output, in the log and in /health.
        println!("test controls: on (virtual clock and fault injection; not for production)");
        tracing::warn!("test controls are on: virtual clock and fault injection");
        Clock::anchored_now().virtual_time()
    } else {
        Clock::anchored_now()
    };
    let _ = std::io::stdout().flush();
    runtime::run(config, storage, listener, stop, clock, ready).await?;
    if let Some(task) = admin_task {
        let _ = task.await;
    }
    tracing::info!("stopped");
    Ok(())
}

/// Binds the administration API's listener, reads or creates its https certificate, and prints
/// the stable start-up lines.
async fn bind_admin(
    address: SocketAddr,
    options: &ServeOptions,
) -> Result<(TcpListener, TlsConfig), ServeError> {
    let listener = TcpListener::bind(address)
        .await
        .map_err(|source| ServeError::Bind { address, source })?;
    let bound = listener
        .local_addr()
        .map_err(|source| ServeError::Bind { address, source })?;
    let (identity, development) = match &options.tls {
        Some(files) => (Identity::from_pem_files(&files.cert, &files.key)?, None),
        None => {
            let development = DevelopmentCa::load_or_create(&development_dir(options))?;
            if development.created {
                tracing::info!(
                    ca = %development.ca_cert.display(),
                    "created a development CA for the admin port's https; trust it in https clients"
                );
            }
            (development.identity, Some(development.ca_cert))
        }
    };
    let tls = TlsConfig::new(identity)?;
    // Tests and scripts read the port and the CA's path from these lines: keep their shape.
    println!("admin listening on {bound}");
    if let Some(ca_cert) = development {
        println!("admin tls ca: {}", ca_cert.display());
    }
    let _ = std::io::stdout().flush();
    Ok((listener, tls))
}

/// Where the development CA lives: `<data-dir>/tls`, or with `--memory` the default data
/// directory's, so that a CA trusted once serves runs with and without `--memory` alike.
fn development_dir(options: &ServeOptions) -> PathBuf {
    match &options.storage {
        StorageChoice::Directory(dir) => dir.join("tls"),
        StorageChoice::Memory => PathBuf::from(DEFAULT_DATA_DIR).join("tls"),
    }
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
